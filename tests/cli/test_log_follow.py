"""`stree log --follow`: a real stree process following a real file while entries are appended
(by hand, in pieces, and by the real pi 1.5.2's SessionManager), read line by line with timeouts."""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import interruptible
from pi_harness import pi_write

HEADER = {"type": "session", "version": 3, "id": "s-follow", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}


def entry(id, parent, text, role="user"):
    content = text if role == "user" else [{"type": "text", "text": text}]
    return {"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": role, "content": content, "timestamp": 1}}


def line(obj):
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def append(path, data):
    with open(path, "ab") as f:
        f.write(data)


class Follow:
    """A `stree log --follow` subprocess whose stdout lines are read by a thread."""

    def __init__(self, path, *args):
        self.proc = subprocess.Popen([sys.executable, "-m", "stree", "-s", str(path), "log", "--follow", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     preexec_fn=interruptible)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for text in self.proc.stdout:
            self.lines.put(text)
        self.lines.put(None)

    def next(self, timeout=60):
        try:
            text = self.lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail("no line from stree log --follow in time")
        assert text is not None, f"stree ended: {self.proc.wait()} {self.proc.stderr.read()}"
        return text

    def json(self, timeout=60):
        return json.loads(self.next(timeout))

    def nothing_for(self, seconds):
        try:
            text = self.lines.get(timeout=seconds)
        except queue.Empty:
            return
        pytest.fail(f"unexpected output: {text!r}")

    def loaded(self, home, timeout=60):
        """Wait until stree has read the file (its index appears in the cache, written once the
        session is read, before the following starts): a sign, where -n 0 prints nothing."""
        deadline = time.monotonic() + timeout
        while not any((home / ".cache").rglob("*.idx")):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"stree never read the file: {self.proc.poll()} {self.proc.stderr.read()}")
            time.sleep(0.01)

    def end(self, timeout=30):
        code = self.proc.wait(timeout=timeout)
        return code, self.proc.stderr.read()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def session(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER) + line(entry("a1", None, "hello")) + line(entry("a2", "a1", "hi", "assistant")))
    return path


@pytest.fixture
def follow():
    started = []

    def start(path, *args):
        f = Follow(path, *args)
        started.append(f)
        return f
    yield start
    for f in started:
        f.close()


def test_follow_json_prints_the_path_then_appended_entries_and_waits_for_a_torn_line(session, follow):
    f = follow(session, "--json")
    assert [f.json()["id"], f.json()["id"]] == ["a2", "a1"]  # the path, newest first, as log prints it
    append(session, line(entry("a3", "a2", "next")))
    rec = f.json()
    assert rec["id"] == "a3" and rec["parentId"] == "a2" and rec["preview"] == "user: next"
    assert rec["leaf"] is True and rec["active"] is True and rec["line"] == 4
    # pi writes a line in pieces: nothing is printed until the line ends
    whole = line(entry("a4", "a3", "in two pieces", "assistant"))
    append(session, whole[:25])
    f.nothing_for(0.6)
    append(session, whole[25:] + line(entry("a5", "a4", "and one more")))
    assert [f.json()["id"], f.json()["id"]] == ["a4", "a5"]  # file order
    assert f.proc.poll() is None


def test_follow_human_and_format(session, follow, isolated_home):
    f = follow(session, "-n", "0", "--format", "{id} {line} {preview}")
    f.loaded(isolated_home)
    f.nothing_for(0.5)  # -n 0: nothing of the path (tail -n 0 -f)
    append(session, line(entry("b1", "a2", "formatted")))
    assert f.next() == "b1 4 user: formatted\n"
    h = follow(session, "-n", "1")
    assert h.next().startswith("b1 (@) ")
    append(session, line(entry("b2", "b1", "human")))
    text = h.next()
    assert text.startswith("b2 2026-") and text.rstrip().endswith("user: human")
    # lines printed as they come carry no (@): it could not be taken back when @ moves on
    append(session, line(entry("b3", "b2", "three")) + line(entry("b4", "b3", "four")))
    append(session, line(entry("b5", "b4", "five")))
    later = [h.next() for _ in range(3)]
    assert [t.split()[0] for t in later] == ["b3", "b4", "b5"] and not any("(@)" in t for t in later)
    assert stree_log_n1(session).startswith("b5 (@) ")  # where @ is: log says it


def stree_log_n1(path):
    return subprocess.run([sys.executable, "-m", "stree", "-s", str(path), "log", "-1"], capture_output=True,
                          text=True, timeout=60).stdout


def test_follow_with_a_torn_last_line_at_start(session, follow):
    whole = line(entry("c1", "a2", "begun before stree started"))
    append(session, whole[:30])
    f = follow(session, "--json", "-n", "1")
    assert f.json()["id"] == "a2"
    append(session, whole[30:])
    rec = f.json()
    assert rec["id"] == "c1" and rec["line"] == 4


def test_real_pi_appending_is_followed(session, follow, isolated_home):
    f = follow(session, "--json", "-n", "0")
    f.loaded(isolated_home)
    seen = pi_write(str(session), [["appendMessage", {"role": "user", "content": "from pi", "timestamp": 5}]])
    rec = f.json(timeout=30)
    assert rec["id"] == seen["ids"][0] and rec["parentId"] == "a2" and rec["preview"] == "user: from pi"


def test_a_replaced_file_stops_with_exit_4(session, follow, tmp_path):
    f = follow(session, "--json", "-n", "1")
    assert f.json()["id"] == "a2"  # the path is out: the file was read, and is followed from now on
    other = tmp_path / "new.jsonl"
    other.write_bytes(session.read_bytes())
    os.replace(other, session)
    code, err = f.end()
    assert code == 4 and "replaced" in err and "Traceback" not in err


def test_a_truncated_or_rewritten_file_stops_with_exit_4(session, follow):
    f = follow(session, "--json", "-n", "1")
    assert f.json()["id"] == "a2"
    with open(session, "r+b") as fh:
        fh.truncate(100)
    code, err = f.end()
    assert code == 4 and "truncated" in err
    session.write_bytes(line(HEADER) + line(entry("a1", None, "hello")))
    g = follow(session, "--json", "-n", "1")
    assert g.json()["id"] == "a1"
    data = bytearray(session.read_bytes())
    data[-5] = ord("X")  # same size, a byte before the old end changed, then more appended
    with open(session, "r+b") as fh:
        fh.write(bytes(data) + line(entry("a2", "a1", "after")))
    code, err = g.end()
    assert code == 4 and "rewritten" in err


def test_ctrl_c_ends_quietly_with_130(session, follow):
    f = follow(session, "--json")
    f.json()
    f.json()
    f.nothing_for(0.5)  # following, idle
    f.proc.send_signal(signal.SIGINT)
    code, err = f.end()
    assert code == 130 and err == ""


def test_reader_gone_ends_with_0_while_waiting(session):
    proc = subprocess.Popen(f"{sys.executable} -m stree -s {session} log --follow | head -1",
                            shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=interruptible)
    try:
        out, err = proc.communicate(timeout=60)  # head exits after one line; stree notices while idle
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert out.startswith("a2 ") and err == "" and proc.returncode == 0


def test_waiting_costs_no_cpu(session, follow):
    f = follow(session, "--json")
    f.json()
    f.json()  # started and idle

    def cpu():
        with open(f"/proc/{f.proc.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    before = cpu()
    time.sleep(2)
    assert cpu() - before < 0.3
    assert f.proc.poll() is None


@pytest.mark.parametrize("args, said", [(["--reverse"], "--reverse"), (["a1..a2"], "range")])
def test_combinations_that_make_no_sense_are_refused(session, args, said):
    proc = subprocess.run([sys.executable, "-m", "stree", "-s", str(session), "log", "--follow", *args],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and said in proc.stderr and proc.stdout == ""


def test_on_a_terminal_the_path_is_not_paged_and_entries_follow(tmp_path):
    import pty

    path = tmp_path / "long.jsonl"
    data = line(HEADER) + line(entry("e0", None, "first"))
    for i in range(1, 60):  # longer than the terminal: a plain log would page it
        data += line(entry(f"e{i}", f"e{i - 1}", f"entry {i}"))
    path.write_bytes(data)
    master, slave = pty.openpty()
    env = dict(os.environ, PAGER="less", LINES="24", COLUMNS="100")
    proc = subprocess.Popen([sys.executable, "-m", "stree", "-s", str(path), "log", "--follow"], stdin=slave,
                            stdout=slave, stderr=slave, env=env, preexec_fn=interruptible)
    os.close(slave)
    try:
        deadline = time.monotonic() + 60
        seen = _read_until(master, b"first", deadline)
        assert b"first" in seen and b"e0" in seen  # the whole path, printed (no pager waiting for a key)
        append(path, line(entry("e60", "e59", "live")))
        seen = _read_until(master, b"live", deadline)
        assert b"e60" in seen and b"live" in seen
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


def _read_until(master, text, deadline):
    import select

    seen = b""
    while text not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], max(0.0, deadline - time.monotonic()))
        if ready:
            seen += os.read(master, 65536)
    return seen
