"""An update of the catalogue stopped part-way (Ctrl-C, SIGKILL, a request cancelled or past
its deadline) is whole or absent: whatever point it was stopped at, the next `grep` and
`ls --all` answer what they answer without the catalogue (--no-cache). Real processes,
real signals, real files in a temporary HOME."""

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest
from builders import SessionBuilder
from conftest import interruptible
from pgkit import pg_server, pg_url  # noqa: F401  (fixtures)


@pytest.fixture(autouse=True)
def each_command_past_the_tick(monkeypatch, tmp_path):
    """These tests count the work a command does after files were just written, and a file read
    in the same tick of the clock as its last change is checked again by the next command
    (storage.index.racy): each command here starts once every file under tmp_path (the HOME,
    the sessions, the caches) is past that tick, as a process's start would have let it be."""
    import clock

    clock.each_command_past_the_tick(monkeypatch, tmp_path)

PROJECT = "--home-dev-proj--"
SESSIONS = 300
WORD = "zebra"


def corpus(home, n=SESSIONS, big=0):
    """`n` sessions of a few kB each (under the per-session index's threshold: each is parsed
    whole, the longest part of an update), every one with WORD in it; the first `big` of them
    over the threshold (read through their per-session index, only appended lines parsed)."""
    d = home / ".pi/agent/sessions" / PROJECT
    d.mkdir(parents=True)
    paths = []
    for i in range(n):
        b = SessionBuilder(cwd="/home/dev/proj", id=f"0199aaaa-0000-7000-8000-{i:012d}",
                           start_ms=1_795_000_000_000 + i * 1000)
        for j in range(6 if i >= big else 80):
            b.user(f"{WORD} question {i} {j} " + "filler words " * 25)
            b.assistant(f"answer {i} {j} " + "more text here " * 25)
        paths.append(b.write(d / f"s{i:04d}.jsonl"))
    return paths


def stree_cmd(*args):
    return [sys.executable, "-m", "stree", *args]


def answers(stree, *extra):
    """What a user reads: grep's count per session and ls --all's records."""
    g = stree(*extra, "grep", "-c", WORD)
    assert g.code == 0 and "Traceback" not in g.err, g
    ls = stree(*extra, "ls", "--all", "--json")
    assert ls.code == 0 and "Traceback" not in ls.err, ls
    return sorted(g.out.splitlines()), [json.loads(x) for x in ls.out.splitlines()]


def grow(path, rng, step):
    """A user message appended to the session file at `path`, as pi appends it."""
    last = json.loads(path.read_text().splitlines()[-1])
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({"type": "message", "id": f"{rng.getrandbits(32):08x}", "parentId": last["id"],
                            "timestamp": "2027-01-01T00:00:00.000Z",
                            "message": {"role": "user", "content": f"{WORD} again {step}",
                                        "timestamp": 1798761600000}}) + "\n")


def change(paths, rng, step):
    """Work for the next update: lines appended to some files (read incrementally), others
    rewritten (read whole)."""
    for p in rng.sample(paths, len(paths) // 3):
        grow(p, rng, step)
    for p in rng.sample(paths, len(paths) // 10):
        tmp = p.with_suffix(".tmp")
        tmp.write_text(p.read_text().replace("filler", f"padding{step}"))
        os.replace(tmp, p)


def catalogue(home):
    return home / ".cache" / "stree" / "catalog.sqlite"


def test_ctrl_c_or_sigkill_at_any_point_of_an_update_leaves_grep_and_ls_right(stree, isolated_home):
    paths = corpus(isolated_home, big=8)
    rng = random.Random(20261126)
    landed = 0
    start = time.monotonic()
    assert stree("grep", "-c", WORD).code == 0  # (how long a whole update takes here, to spread the signals over)
    span = time.monotonic() - start
    step = 0
    while step < 9 or landed < 2 and step < 15:
        # (at any point of the update: before, during, after; once the 9 are done, more first builds
        # stopped early until two signals came while a command was under way, whatever this machine's speed)
        late = step >= 9
        if step % 3 == 0 or late:
            for suffix in ("", "-wal", "-shm"):  # (a first build: every file read)
                path = str(catalogue(isolated_home)) + suffix
                if os.path.exists(path):
                    os.unlink(path)
        else:
            change(paths, rng, step)
        expected = answers(stree, "--no-cache")
        sig = signal.SIGKILL if step % 4 == 3 else signal.SIGINT
        command = ["grep", "-c", WORD] if step % 2 else ["ls", "--all"]
        proc = subprocess.Popen(stree_cmd(*command), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=interruptible)
        try:
            proc.communicate(timeout=rng.uniform(0.02, 0.2 if late else 1.2) * span)
        except subprocess.TimeoutExpired:
            proc.send_signal(sig)
        proc.communicate(timeout=60)
        landed += proc.returncode in (130, -signal.SIGINT, -signal.SIGKILL)
        for _ in range(2):  # the next run repairs what was left; the one after agrees too
            assert answers(stree) == expected, (step, sig, command)
        step += 1
    assert landed >= 2, landed  # (signals came while the command was under way)


CANCEL = r"""
import sys, threading
from stree.core.budget import Cancelled, request
from stree.core.listing import session_paths, session_records

at = int(sys.argv[1])
paths, listed, _ = session_paths(sys.argv[2], all_=True)
cancelled = threading.Event()
seen = [0]

def advance():  # (called as each file is read into the catalogue)
    seen[0] += 1
    if seen[0] == at:
        cancelled.set()  # (the next tick of the budget raises Cancelled, wherever the work is then)

with request("a test's update", None, cancelled):
    try:
        session_records(paths, listed, None, advance)
        print("finished")
    except Cancelled:
        print("cancelled")
"""


def test_an_update_cancelled_anywhere_is_redone_by_the_next_command(stree, isolated_home):
    """The cancellation of the MCP server (stree.core.budget: raised by a timer tick in the
    middle of whatever runs, a parse too), the catalogue updated by `ls`'s own code: the file
    being read when it came is read again next time, not kept as unreadable."""
    paths = corpus(isolated_home)
    rng = random.Random(7)
    outcomes = []
    for step, at in enumerate((1, 30, 90, 160, 230, 5, 60, 120, 10, 45, 200, 20)):
        if step % 2 == 0:
            for suffix in ("", "-wal", "-shm"):
                path = str(catalogue(isolated_home)) + suffix
                if os.path.exists(path):
                    os.unlink(path)
        else:
            change(paths, rng, step)
        expected = answers(stree, "--no-cache")
        r = subprocess.run([sys.executable, "-c", CANCEL, str(at), "/home/dev/proj"], capture_output=True,
                           timeout=120)
        assert r.returncode == 0 and b"Traceback" not in r.stderr, r
        outcomes.append(r.stdout.decode().strip())
        assert answers(stree) == expected, (step, at, outcomes[-1])  # (the update redone by this grep)
    assert "cancelled" in outcomes, outcomes  # (the update was stopped part-way at least once)


def stopped_at_each_line(home, mode, stride):
    """tests/lib/stop_anywhere.py: an update of the catalogue stopped at every `stride`-th line
    of stree's code that it runs (the budget's own tick, raised there by a trace function), each
    from the same catalogue, then run again whole; its report."""
    lib = os.path.join(os.path.dirname(os.path.dirname(__file__)), "lib")
    r = subprocess.run([sys.executable, os.path.join(lib, "stop_anywhere.py"), str(home), mode, str(stride)],
                       capture_output=True, timeout=1200, env=dict(os.environ, PYTHONPATH=lib))
    assert r.returncode == 0 and b"Traceback" not in r.stderr and b"Exception ignored" not in r.stderr, r
    return json.loads(r.stdout)


def a_history(home):
    """Sessions as a day of work leaves them for the next update: small and large ones (over the
    per-session index's threshold), read before by `ls` and `grep`, half of them grown twice since
    (the second time, their index is read, then the lines appended), some rewritten in place."""
    import clock

    paths = corpus(home, n=12, big=4)
    rng = random.Random(3)

    def command(*args):
        clock.settle(home)  # (each file past its tick of the clock: its row and index proved current)
        r = subprocess.run(stree_cmd(*args), capture_output=True, timeout=120)
        assert r.returncode == 0, r

    command("grep", "-c", WORD)
    for path in paths[::2]:
        grow(path, rng, 1)
    command("ls", "--all")
    command("grep", "-c", WORD)
    for path in paths[::2]:
        grow(path, rng, 2)
    change(paths, rng, 2)
    clock.settle(home)


@pytest.mark.parametrize("mode", ["rows", "content"])
def test_a_stop_at_any_line_of_an_update_is_never_taken_for_news_about_a_file(isolated_home, mode):
    """A cancellation or deadline comes wherever the work is (a timer), inside code that takes a
    failure for news about a file or a cache too (`except Exception`: a damaged index is a miss,
    an unreadable file is listed as such): stopped at each line of an update in turn (`ls`'s: the
    rows; grep's: the entries too), the next update leaves the catalogue the uninterrupted one
    leaves, with no session kept as unreadable. Every 4th line here; every line under
    `make soak`."""
    a_history(isolated_home)
    report = stopped_at_each_line(isolated_home, mode, 4)
    assert report["wrong"] == [], report["wrong"]
    assert report["lines"] > 200 and report["outcomes"]["cancelled"] > 200, report
    assert {"stree/core/catalog_read.py", "stree/storage/index.py", "stree/storage/columns.py",
            "stree/storage/catalog/sqlite.py"} <= set(report["files"]), report["files"]  # (the index was read)


@pytest.mark.soak
@pytest.mark.parametrize("mode", ["rows", "content"])
def test_a_stop_at_every_line_of_an_update(isolated_home, mode):
    a_history(isolated_home)
    report = stopped_at_each_line(isolated_home, mode, 1)
    assert report["wrong"] == [], report["wrong"]


@pytest.mark.pg
def test_a_push_stopped_at_any_point_is_whole_or_absent_in_the_shared_catalogue(stree, isolated_home, pg_url):
    """The same of the shared catalogue (tests/lib/pgkit.py: a throwaway PostgreSQL server):
    `stree catalog push` interrupted by Ctrl-C or SIGKILL, then pushed again: grep through
    the shared catalogue answers what grep answers from the files."""
    paths = corpus(isolated_home, n=200, big=4)
    rng = random.Random(11)
    push = ["--catalog", pg_url, "catalog", "push"]
    assert stree(*push).code == 0
    change(paths, rng, -1)
    start = time.monotonic()
    assert stree(*push).code == 0
    span = time.monotonic() - start  # (how long a push of what changed takes here, to spread the signals over)
    landed = 0
    for step in range(6):
        change(paths, rng, step)
        expected = sorted(stree("--no-cache", "grep", "-c", WORD).out.splitlines())
        sig = signal.SIGKILL if step % 3 == 2 else signal.SIGINT
        proc = subprocess.Popen(stree_cmd(*push), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=interruptible)
        try:
            proc.communicate(timeout=rng.uniform(0.05, 1.2) * span)
        except subprocess.TimeoutExpired:
            proc.send_signal(sig)
        proc.communicate(timeout=60)
        landed += proc.returncode in (130, -signal.SIGINT, -signal.SIGKILL)
        r = stree(*push)
        assert r.code == 0 and "Traceback" not in r.err, r
        shared = stree("--catalog", pg_url, "grep", "-c", WORD)
        assert shared.code == 0 and "Traceback" not in shared.err, shared
        assert sorted(shared.out.splitlines()) == expected, (step, sig)
    assert landed >= 2, landed
