"""The read commands stree.fastread answers without click print what click's path prints,
byte for byte, with the same exit codes and errors; anything it does not know goes to click.

The fast path answers log, rev-parse and label, each compared with click's: one concern across
these commands, so one module."""

import os
import subprocess
import sys

import pytest

from builders import branchy

INVOCATIONS = (
    ["log"],
    ["log", "-n", "3"],
    ["log", "--max-count", "2", "@~2"],
    ["log", "--max-count=2", "start"],
    ["log", "-n", "0"],
    ["log", "--json", "-n", "4"],
    ["log", "--format", "{id}\\t{label}\\t{preview}", "-z"],
    ["log", "--date", "unix", "-n", "3"],
    ["log", "--date", "relative"],
    ["--color", "always", "log", "-n", "5"],
    ["--no-pager", "log", "-n", "2"],
    ["log", "-n", "2", "--color", "never"],
    ["rev-parse"],
    ["rev-parse", "@", "@~1", "start"],
    ["rev-parse", "--short", "@", "root"],
    ["rev-parse", "start..@", "start...@"],
    ["rev-parse", "--json", "@^"],
    ["rev-parse", "@{0}", "@{1}", "HEAD@{3}", "@{2}~1"],  # moves: commits (entries appended) included
    ["log", "-n", "2", "@{1}"],
    ["rev-parse", "@{999}"],
    ["label"],
    ["label", "--json"],
    ["label", "--format", "{label}={id}"],
    # what click answers (the fast path gives up before writing anything)
    ["log", "nosuchrev"],
    ["log", "-n", "-1"],
    ["log", "-n", "x"],
    ["log", "--date", "never"],
    ["log", "--json", "--format", "{id}"],
    ["log", "--format", "{nosuch}"],
    ["log", "start..@"],
    ["log", "--bogus"],
    ["rev-parse", "nosuchrev"],
    ["rev-parse", "@", "nosuchrev"],
    ["rev-parse", "--verify", "-q", "nosuchrev"],
    ["label", "--bogus"],
    ["--color", "sometimes", "log"],
    ["log", "--help"],
)


def run(path, args, **env):
    return subprocess.run([sys.executable, "-m", "stree", "-s", str(path), *args], capture_output=True,
                          env=dict(os.environ, **env), timeout=60)


@pytest.mark.parametrize("args", INVOCATIONS, ids=" ".join)
def test_the_fast_path_prints_what_click_prints(tmp_path, isolated_home, args):
    path = branchy().write(tmp_path / "s.jsonl")
    for _ in range(2):  # without an index, then with it
        fast = run(path, args)
        slow = run(path, args, STREE_NO_FAST="1")
        assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)


@pytest.mark.parametrize("args", [["log", "-n", "3"], ["rev-parse", "@~1"], ["label"]], ids=" ".join)
def test_plain_reads_do_not_load_click(tmp_path, isolated_home, args):
    path = branchy().write(tmp_path / "s.jsonl")
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "stree", "-s", str(path), *args],
                          capture_output=True, timeout=60)
    imported = {line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines()}
    assert proc.returncode == 0 and proc.stdout == run(path, args, STREE_NO_FAST="1").stdout
    assert "stree.fastread" in imported and "click" not in imported and "stree.cli" not in imported


def test_a_session_with_warnings_and_an_empty_one_go_to_click(tmp_path, isolated_home):
    path = branchy().write(tmp_path / "s.jsonl")
    with open(path, "a", encoding="utf-8") as f:
        f.write("{not json\n")
    fast, slow = run(path, ["log", "-n", "2"]), run(path, ["log", "-n", "2"], STREE_NO_FAST="1")
    assert b"malformed" in fast.stderr and (fast.returncode, fast.stdout, fast.stderr) == \
        (slow.returncode, slow.stdout, slow.stderr)
    empty = tmp_path / "e.jsonl"
    empty.write_text('{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n')
    for args in (["log"], ["rev-parse"], ["label"]):
        fast, slow = run(empty, args), run(empty, args, STREE_NO_FAST="1")
        assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)


def test_on_a_terminal_the_same_bytes(tmp_path, isolated_home):
    import pty

    from conftest import read_pty

    path = branchy().write(tmp_path / "s.jsonl")
    seen = []
    for env in ({}, {"STREE_NO_FAST": "1"}):
        master, slave = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "stree", "-s", str(path), "log"], stdin=slave, stdout=slave,
                                stderr=slave, env=dict(os.environ, COLUMNS="50", LINES="40", PAGER="cat", **env))
        os.close(slave)
        seen.append(read_pty(master, proc))
        assert proc.wait(timeout=30) == 0
    assert seen[0] == seen[1] and b"\x1b[" in seen[0]


def test_statistics_do_not_turn_the_fast_path_off(tmp_path, isolated_home):
    """`make bench` times with STREE_DEBUG_STATS=1: the fast path must answer then too, and its
    statistics line must say what click's says (lines parsed, index state, entries decoded)."""
    path = branchy().write(tmp_path / "s.jsonl")
    run(path, ["log"])  # the index, with every preview
    args = ["log", "-n", "3"]
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "stree", "-s", str(path), *args],
                          capture_output=True, env=dict(os.environ, STREE_DEBUG_STATS="1"), timeout=60)
    lines = proc.stderr.decode().splitlines()
    imported = {line.split("|")[-1].strip() for line in lines if line.startswith("import time:")}
    stats = [line for line in lines if line.startswith("stree: stats:")]
    slow = run(path, args, STREE_NO_FAST="1", STREE_DEBUG_STATS="1")
    assert proc.returncode == 0 and "click" not in imported
    assert proc.stdout == slow.stdout
    strip = lambda line: line.split(", peak rss")[0]  # noqa: E731 (the memory differs, of course)
    assert [strip(s) for s in stats] == [strip(s) for s in slow.stderr.decode().splitlines()]
    assert stats and "index fresh" in stats[0]
