"""Tables fit the terminal: `stats` (one session and --all) and `ls --all` on a pseudo-terminal
of 60, 80 and 120 columns (its size, or COLUMNS), every row one line of its width, narrower
columns first (short numbers and dates, optional columns left out), never a wrapped row; into
a pipe the table is whole. The human listings of `log`, `label` and `ls` fit a terminal too.

Tables are drawn by several commands: one concern, so one module."""

import json

import pytest

from builders import SessionBuilder
from test_log_graph_terminal import on_terminal

from stree.output.modes import display_width

WIDTHS = [60, 80, 120]


@pytest.fixture
def sessions(isolated_home, demo):
    """The demo and two more sessions, one with a long first message, one in a deep cwd."""
    root = isolated_home / ".pi" / "agent" / "sessions"
    texts = [("/home/dev/proj", "why is the csv parser slow on quoted fields, and how do we fix it for good"),
             ("/home/dev/a-rather-long-project-directory/with/sub/dirs", "hello")]
    for i, (cwd, text) in enumerate(texts):
        d = root / ("--" + cwd.strip("/").replace("/", "-") + "--")
        d.mkdir(parents=True, exist_ok=True)
        b = SessionBuilder(id=f"0199a{i}b2-0000-7000-8000-00000000000{i}", cwd=cwd)
        b.user(text)
        b.assistant("ok")
        b.write(d / f"s{i}.jsonl")
    d = root / "--home-dev-proj--"
    (d / "demo.jsonl").write_bytes(demo.read_bytes())
    return root


def piped(stree, *args):
    r = stree("--color=never", *args)
    assert r.code == 0, r
    return r.out.splitlines()


def check(rows, whole, columns):
    assert len(rows) == len(whole), "\n".join(rows)  # one line a row: nothing wrapped
    for row in rows:
        assert display_width(row) <= columns, row


@pytest.mark.parametrize("by_env", [False, True], ids=["pty-size", "COLUMNS"])
@pytest.mark.parametrize("columns", WIDTHS)
def test_stats_of_a_session_fits(stree, columns, by_env):
    whole = piped(stree, "-s", "demo", "stats")
    rows = on_terminal(["--no-pager", "--color=never", "-s", "demo", "stats"], columns, by_env=by_env)
    check(rows, whole, columns)
    for row, full in zip(rows, whole):
        if full:
            assert row[:16] == full[:16]  # the row's name begins as it does
        if "$" in full:
            assert row.split()[-1] == full.split()[-1]  # the cost column is always there, whole
    if columns >= 120:
        assert rows == whole  # room enough: the table as into a pipe
    if columns == 60:
        assert any("k " in row or "M " in row for row in rows)  # 48.8k: numbers shortened first


@pytest.mark.parametrize("columns", WIDTHS)
def test_stats_all_fits(stree, sessions, columns):
    whole = piped(stree, "stats", "--all")
    rows = on_terminal(["--no-pager", "--color=never", "stats", "--all"], columns)
    check(rows, whole, columns)
    assert any("0199a0b2  why is" in row for row in rows)  # an unnamed session: its first message


@pytest.mark.parametrize("by_env", [False, True], ids=["pty-size", "COLUMNS"])
@pytest.mark.parametrize("columns", WIDTHS)
def test_ls_all_fits(stree, sessions, columns, by_env):
    whole = piped(stree, "ls", "--all")
    rows = on_terminal(["--no-pager", "--color=never", "ls", "--all"], columns, by_env=by_env)
    check(rows, whole, columns)
    records = [json.loads(x) for x in stree("ls", "--all", "--json").out.splitlines()]
    for row, rec in zip(rows, records):
        assert rec["id"][:8] in row
        title = rec["name"] or rec["firstMessage"]
        assert title[:12] in row, row  # a title keeps room: the dates shorten first
    if columns < 80:
        assert not any("+0000" in row for row in rows)  # the zone goes before the titles do
    if columns >= 120:
        assert all("+0000" in row for row in rows)


def test_a_date_style_asked_for_is_kept(stree, sessions):
    rows = on_terminal(["--no-pager", "--color=never", "ls", "--all", "--date", "iso"], 60)
    assert all("+0000" in row and len(row) <= 60 for row in rows)


def test_a_one_entry_session_says_entry(stree, isolated_home):
    d = isolated_home / ".pi" / "agent" / "sessions" / "--home-dev-proj--"
    d.mkdir(parents=True)
    b = SessionBuilder(id="0199a9b2-0000-7000-8000-000000000009")
    b.user("only one")
    b.write(d / "one.jsonl")
    r = stree("ls", "--all")
    assert r.code == 0 and "    1 entry    only one" in r.out and "1 entries" not in r.out, r


def test_human_listings_fit_the_terminal(tmp_path, branchy_file):
    import os
    import pty
    import subprocess
    import sys

    from builders import SessionBuilder
    from conftest import run_stree, read_pty

    b = SessionBuilder(cwd=str(tmp_path))
    b.user("a very long first message " * 20)
    b.assistant("an even longer answer " * 30)
    b.label(b.leaf, "a-label")
    path = b.write(tmp_path / "long.jsonl")
    env = dict(os.environ, COLUMNS="60", LINES="50", TERM="xterm", STREE_PAGER="cat")
    for args in (["-s", path, "log"], ["-s", path, "label"], ["-C", tmp_path, "--session-dir", tmp_path, "ls"],
                 ["-s", branchy_file, "label"]):
        master, slave = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "stree", "--color", "never", *map(str, args)],
                                stdout=slave, stderr=subprocess.PIPE, env=env)
        os.close(slave)
        out = read_pty(master, proc).decode()
        proc.wait()
        lines = [line for line in out.replace("\r", "").split("\n") if line]
        assert lines and proc.returncode == 0, (args, out)
        assert all(len(line) <= 60 for line in lines), (args, lines)
    # aligned columns: the ids of `label` start in one column
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "stree", "--color", "never", "-s", str(branchy_file), "label"],
                            stdout=slave, stderr=subprocess.PIPE, env=env)
    os.close(slave)
    lines = [line for line in read_pty(master, proc).decode().replace("\r", "").split("\n") if line]
    proc.wait()
    assert len({line.index("0000000") for line in lines}) == 1, lines
