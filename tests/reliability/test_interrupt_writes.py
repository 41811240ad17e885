"""Ctrl-C at any line of a writing command leaves a session pi can read, and nothing beside it.

Each write command runs again and again on a fresh copy of a session (its index built first),
interrupted each time at another line of stree's code (tests/lib/interrupt_anywhere.py: the
process's own SIGINT handler called there by a trace function, what a Ctrl-C arriving at that
line does; every child a forked process). After each, as a user would next: the session is
unchanged or has whole entries appended (`stree fsck`), a file the command makes is whole or
absent, `log --json` through the caches says what `--no-cache` says, and no lock or temp file
is left. Every 15th line here, and every line of stree/writing; every line under `make soak`.

The real kills (SIGKILL at random times: tests/lib/kill_runner.py) and pi appending meanwhile
are in test_faults.py and test_races_and_damage.py; this is the same promise for the
interruptions a program sees, at each line in turn."""

import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB = os.path.join(ROOT, "tests", "lib")

WRITES = {
    "label": ["label", "reviewed", "@~1"],
    "checkout": ["checkout", "@~2"],
    "name": ["name", "a name given under Ctrl-C"],
    "fork": ["fork", "@~3", "-o", "{dir}/forked.jsonl"],
}


def interrupted_at_each_line(home, argv, stride):
    session = home / "session.jsonl"
    shutil.copyfile(os.path.join(ROOT, "stree", "data", "demo.jsonl"), session)
    r = subprocess.run([sys.executable, os.path.join(LIB, "interrupt_anywhere.py"), str(session), str(stride),
                        json.dumps(argv)], capture_output=True, timeout=1800, cwd=home,
                       env=dict(os.environ, PYTHONPATH=LIB + os.pathsep + ROOT))
    assert r.returncode == 0 and b"Traceback" not in r.stderr, r
    return json.loads(r.stdout)


@pytest.mark.parametrize("command", sorted(WRITES))
def test_ctrl_c_at_any_line_of_a_write_leaves_the_session_whole(isolated_home, command):
    report = interrupted_at_each_line(isolated_home, WRITES[command], 15)
    assert report["wrong"] == [], report["wrong"]
    assert report["lines"] > 100 and report["outcomes"].get("130", 0) > 100, report
    assert report["diverged"] <= report["lines"] // 10, report  # (each attempt stopped where it was meant to)
    assert {"stree/writing/append.py" if command != "fork" else "stree/writing/atomic.py",
            "stree/storage/index.py"} <= set(report["files"]), report["files"]  # (the write itself was reached)


@pytest.mark.soak
@pytest.mark.parametrize("command", sorted(WRITES))
def test_ctrl_c_at_every_line_of_a_write(isolated_home, command):
    report = interrupted_at_each_line(isolated_home, WRITES[command], 1)
    assert report["wrong"] == [], report["wrong"]
