"""Progress shows on a terminal only: never in pipes, never with --json or --format.

Progress is shown by several commands: one concern, so one module."""

import os
import pty
import subprocess
import sys

import pytest
from conftest import read_pty

from builders import SessionBuilder


def run_tty(args, stdout_tty=True, stderr_tty=True, env=None, cwd=None):
    """Run stree with stdout/stderr on a pseudo-terminal or a pipe: (tty bytes, pipe bytes)."""
    master, slave = pty.openpty()
    full_env = dict(os.environ, TERM="xterm", **(env or {}))
    proc = subprocess.Popen([sys.executable, "-m", "stree", *map(str, args)], stdin=subprocess.DEVNULL,
                            stdout=slave if stdout_tty else subprocess.PIPE,
                            stderr=slave if stderr_tty else subprocess.PIPE, env=full_env, cwd=cwd)
    os.close(slave)
    tty = read_pty(master, proc)
    pipe = proc.stdout or proc.stderr
    piped = pipe.read() if pipe else b""
    proc.wait(timeout=30)
    os.close(master)
    assert proc.returncode == 0, (tty, piped)
    return tty, piped


@pytest.fixture
def many_sessions(isolated_home, tmp_path):
    from stree.core.store import encode_cwd

    for n in range(12):
        cwd = tmp_path / f"proj{n}"
        b = SessionBuilder(cwd=str(cwd), id=f"{n:08x}-0000-7000-8000-000000000000")
        b.user(f"task {n}")
        b.assistant("done")
        d = isolated_home / ".pi" / "agent" / "sessions" / encode_cwd(cwd)
        d.mkdir(parents=True)
        b.write(d / f"s{n}.jsonl")
    return tmp_path


NOW = {"STREE_PROGRESS_DELAY": "0"}


def test_ls_all_shows_progress_on_a_terminal(many_sessions):
    tty, _ = run_tty(["ls", "--all"], env=NOW, cwd=many_sessions)
    assert b"\rreading sessions: 8% (1/12)\x1b[K" in tty  # drawn from the first file on (delay 0)
    assert b"\r\x1b[K" in tty  # the line is cleared before the listing
    listing = tty.split(b"\r\x1b[K")[-1]
    assert listing.count(b"entries") == 12 and b"reading sessions" not in listing


def test_no_progress_in_pipes_or_machine_output(many_sessions):
    tty, err = run_tty(["ls", "--all"], stderr_tty=False, env=NOW, cwd=many_sessions)
    assert err == b"" and b"reading sessions" not in tty
    tty, out = run_tty(["ls", "--all"], stdout_tty=False, env=NOW, cwd=many_sessions)
    assert tty == b"" and out.count(b"entries") == 12
    for machine in (["--json"], ["--format", "{id}"]):
        tty, _ = run_tty(["ls", "--all", *machine], env=NOW, cwd=many_sessions)
        assert b"reading sessions" not in tty and tty.count(b"\n") == 12


def test_quick_work_stays_quiet(many_sessions):
    tty, _ = run_tty(["ls", "--all"], env={"STREE_PROGRESS_DELAY": "30"}, cwd=many_sessions)
    assert b"reading sessions" not in tty and tty.count(b"entries") == 12


def test_waiting_spinner_draws_on_a_terminal_only(tmp_path):
    probe = ("import time\nfrom stree.output.progress import Waiting\n"
             "with Waiting('asking the model'):\n    time.sleep(0.5)\nprint('answer')\n")
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", probe], stdout=slave, stderr=slave,
                            env=dict(os.environ, TERM="xterm", **NOW))
    os.close(slave)
    out = read_pty(master, proc)
    proc.wait(timeout=30)
    os.close(master)
    assert b"asking the model |" in out and out.endswith(b"\r\x1b[Kanswer\r\n")
    piped = subprocess.run([sys.executable, "-c", probe], capture_output=True, env=dict(os.environ, **NOW))
    assert piped.stdout == b"answer\n" and piped.stderr == b""
