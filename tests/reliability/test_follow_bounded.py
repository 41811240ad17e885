"""Every stream reads in bounded blocks (issue 24, item 8): `log --follow`, `log --graph
--follow` and serve's watcher, after a crash left a sparse tail of hundreds of MiB with no
newline. The over-long line is skipped with the usual warning (the limit lowered to 1 MiB with
STREE_LINE_MAX, as the normal reader skips one over 256 MiB), the entry appended after it is
shown, the follower's peak RSS stays far below the tail's size, and serve still ends at the end
of its input."""

import json
import os
import queue
import signal
import subprocess
import sys
import threading

from conftest import interruptible
from serve_kit import Server

TAIL = 400 << 20  # bytes of zeros, no newline (sparse: no disk)
LIMIT = {"STREE_LINE_MAX": str(1 << 20)}
RSS_BOUND = 200 << 20  # bytes: generous for Python + stree; reading the tail whole costs > TAIL
HEADER = {"type": "session", "version": 3, "id": "s-tail", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}


def entry(id, parent, text):
    return {"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": text, "timestamp": 1}}


def line(obj):
    return (json.dumps(obj) + "\n").encode()


def _session(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER) + line(entry("a1", None, "hello")) + line(entry("a2", "a1", "again")))
    return path


def _crash_tail_then_entry(path):
    """What a crash mid-write leaves (a huge line of zeros, never ended), then pi's next entry."""
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) + TAIL)
    with open(path, "ab") as f:
        f.write(b"\n" + line(entry("a3", "a2", "after the crash")))


def _peak_rss(proc):
    """Peak RSS in bytes of a running child since it started stree (VmHWM of /proc/PID/status: the
    high-water mark of its own memory since exec; wait4's ru_maxrss would also count the copy of
    this test process the child was forked from before exec, which grows along a long test run)."""
    with open(f"/proc/{proc.pid}/status") as f:
        for text in f:
            if text.startswith("VmHWM:"):
                return int(text.split()[1]) * 1024  # kB
    raise AssertionError(f"no VmHWM for {proc.pid}")


class Lines:
    def __init__(self, *args):
        env = dict(os.environ, **LIMIT)
        self.proc = subprocess.Popen([sys.executable, "-m", "stree", *map(str, args)], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, preexec_fn=interruptible)
        self.q = queue.Queue()
        threading.Thread(target=lambda: [self.q.put(x) for x in self.proc.stdout], daemon=True).start()

    def until(self, word, timeout=120):
        while True:
            text = self.q.get(timeout=timeout).decode()
            if word in text:
                return text

    def stop(self):
        rss = _peak_rss(self.proc)  # (its tail was read: the entry after it was shown)
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(60)
        return self.proc.returncode, self.proc.stderr.read().decode(), rss


def test_log_follow_skips_an_endless_crash_tail_and_shows_what_follows(tmp_path):
    path = _session(tmp_path)
    f = Lines("-s", path, "log", "--follow", "--json", "-n", "1")
    try:
        assert json.loads(f.until("a2"))["id"] == "a2"
        _crash_tail_then_entry(path)
        rec = json.loads(f.until("a3"))
        assert rec["id"] == "a3" and rec["parentId"] == "a2" and rec["line"] == 5
        code, err, rss = f.stop()
        assert code == 130
        assert "skipped line 4: line longer than 1 MiB (not read)" in err and "Traceback" not in err, err
        assert rss < RSS_BOUND, f"peak RSS {rss >> 20} MiB"
    finally:
        if f.proc.poll() is None:
            f.proc.kill()


def test_log_graph_follow_into_a_pipe_skips_it_too(tmp_path):
    path = _session(tmp_path)
    f = Lines("-s", path, "log", "--graph", "--follow", "--json")
    try:
        f.until("a1")
        _crash_tail_then_entry(path)
        assert json.loads(f.until("a3"))["id"] == "a3"
        code, err, rss = f.stop()
        assert "skipped line 4" in err and rss < RSS_BOUND, (err, rss >> 20)
    finally:
        if f.proc.poll() is None:
            f.proc.kill()


def test_serve_watcher_announces_the_entry_after_the_tail_and_ends_at_end_of_input(tmp_path):
    path = _session(tmp_path)
    s = Server(path, env=LIMIT)
    try:
        assert s.data("get_state")["sessionFile"] == str(path)
        _crash_tail_then_entry(path)
        event = s.event(timeout=120)
        assert event["type"] == "entries_appended" and event["ids"] == ["a3"] and event["leafId"] == "a3", event
        assert s.data("get_entries", since="a2")["entries"][0]["id"] == "a3"
        rss = _peak_rss(s.proc)  # (the tail was read: the entry after it was announced)
        s.proc.stdin.close()
        assert s.proc.wait(60) == 0  # end of input: it ends by itself
        assert "skipped line 4" in s.proc.stderr.read().decode()
        assert rss < RSS_BOUND, f"peak RSS {rss >> 20} MiB"
    finally:
        s.kill()
