"""`stree log --graph --follow`: the graph, then what pi's appends change in it; into a pipe
each new row once, on a terminal the graph redrawn in place."""

import os
import signal
import subprocess
import sys
import time

from conftest import interruptible
from pi_harness import pi_write
from test_log_follow import HEADER, _read_until, append, entry, follow, line, session  # noqa: F401 (fixtures)


def test_into_a_pipe_the_graph_then_each_new_row(session, follow):
    f = follow(session, "--graph", "--no-ids")
    assert f.next() == "• user: hello\n"
    assert f.next() == "• assistant: hi  ← active\n"
    f.nothing_for(0.4)
    append(session, line(entry("a3", "a2", "next")))
    assert f.next() == "• user: next  ← active\n"
    torn = line(entry("b1", "a1", "a branch"))  # under an older entry, written in two pieces
    append(session, torn[:25])
    f.nothing_for(0.5)
    append(session, torn[25:])
    got = f.next()
    now = subprocess.run([sys.executable, "-m", "stree", "--no-cache", "-s", str(session), "log", "--graph",
                          "--no-ids"], capture_output=True, text=True, timeout=30).stdout.splitlines(True)
    assert got == "├─ • user: a branch  ← active\n" and got in now  # drawn as the graph has it now


def test_json_prints_records_of_new_rows(session, follow):
    f = follow(session, "--graph", "--json")
    assert [f.json()["id"], f.json()["id"]] == ["a1", "a2"]
    append(session, line(entry("a3", "a2", "next")))
    rec = f.json()
    assert rec["id"] == "a3" and rec["active"] is True and rec["leaf"] is True and rec["graph"] == ""
    assert rec["row"] == "• user: next"


def test_real_pi_appending_is_followed(session, follow):
    f = follow(session, "--graph", "--json", "--filter", "user-only")
    assert f.json()["id"] == "a1"
    seen = pi_write(str(session), [["appendMessage", {"role": "user", "content": "from pi", "timestamp": 5}]])
    rec = f.json(timeout=30)
    assert rec["id"] == seen["ids"][0] and rec["preview"] == "user: from pi"


def test_replaced_file_stops_with_exit_4_and_ctrl_c_with_130(session, follow, tmp_path):
    f = follow(session, "--graph")
    f.next()
    f.next()
    other = tmp_path / "new.jsonl"
    other.write_bytes(session.read_bytes())
    os.replace(other, session)
    code, err = f.end()
    assert code == 4 and "replaced" in err and "Traceback" not in err
    g = follow(session, "--graph")
    g.next()
    g.next()
    g.nothing_for(0.5)
    g.proc.send_signal(signal.SIGINT)
    assert g.end() == (130, "")


def test_on_a_terminal_the_graph_is_redrawn_in_place(tmp_path):
    import pty

    path = tmp_path / "long.jsonl"
    data = line(HEADER) + line(entry("e0", None, "first"))
    for i in range(1, 60):  # longer than the terminal: the rows up to the leaf mark are shown
        data += line(entry(f"e{i}", f"e{i - 1}", f"entry {i}"))
    path.write_bytes(data)
    master, slave = pty.openpty()
    env = dict(os.environ, PAGER="less", LINES="24", COLUMNS="100")
    proc = subprocess.Popen([sys.executable, "-m", "stree", "-s", str(path), "log", "--graph", "--follow"],
                            stdin=slave, stdout=slave, stderr=slave, env=env, preexec_fn=interruptible)
    os.close(slave)
    try:
        deadline = time.monotonic() + 60
        seen = _read_until(master, "← active".encode(), deadline)
        assert seen.startswith(b"\x1b[H\x1b[2J") and b"entry 59" in seen and b"first" not in seen
        assert seen.count(b"\n") == 23  # a screen, the last line left for the cursor
        append(path, line(entry("e60", "e59", "live")))
        seen = _read_until(master, b"live", deadline)
        assert b"\x1b[H\x1b[2J" in seen and b"e60" in seen and b"entry 59" in seen
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


def test_graph_follow_is_refused_with_reverse(session):
    proc = subprocess.run([sys.executable, "-m", "stree", "-s", str(session), "log", "--graph", "--follow",
                           "--reverse"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "--reverse" in proc.stderr and proc.stdout == ""
