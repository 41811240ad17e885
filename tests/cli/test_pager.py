"""The pager on a real terminal (a pseudo-terminal, stree run as a process): a long answer goes
to the pager as it is made, so its first screen does not wait for the whole drawing, and a user
who quits the pager after the first screen stops the command (as git does); a short answer is
printed, never paged. What is drawn is counted (STREE_DEBUG_STATS), never timed.

The pager serves every command that prints for people: one concern, so one module."""

import os
import re
import sys
import textwrap

import pytest

from conftest import on_pty
from test_log_graph_draw import comb

SGR = re.compile(r"\x1b\[[0-9;]*m")


def on_terminal(args, pager, lines=40, env=None):
    """(exit status, what reached the terminal) of `python -m stree ARGS` on a pseudo-terminal
    of 120 x `lines`, with PAGER set to `pager`."""
    run_env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "STREE_PAGER", "LESS")}
    run_env.update({"TERM": "xterm", "PAGER": pager, "NO_COLOR": "1", **(env or {})})
    code, out = on_pty(args, 120, lines, run_env)
    return code, SGR.sub("", out.decode("utf-8")).replace("\r\n", "\n")


@pytest.fixture
def first_screen_pager(tmp_path):
    """A pager that keeps the first 30 lines it is given in a file and quits, as a user who
    reads the first screen and presses q."""
    script = tmp_path / "pager.py"
    script.write_text(textwrap.dedent(f"""\
        import sys
        with open({str(tmp_path / "paged.txt")!r}, "w") as f:
            for _ in range(30):
                f.write(sys.stdin.readline())
        """))
    return f"{sys.executable} {script}", tmp_path / "paged.txt"


def drawn(out):
    return int(re.search(r"graph rows drawn (\d+)", out).group(1))


def test_quitting_the_pager_after_the_first_screen_stops_the_drawing(tmp_path, first_screen_pager, stree):
    path = comb(3000).write(tmp_path / "comb.jsonl")
    whole = stree("-s", path, "log", "--graph", "--no-cache").out.splitlines()  # (into a pipe: every row)
    assert len(whole) > 6000
    pager, paged = first_screen_pager
    code, out = on_terminal(["-s", path, "log", "--graph"], pager, env={"STREE_DEBUG_STATS": "1"})
    assert code == 0, out
    assert "Traceback" not in out and "error" not in out, out
    first = paged.read_text().splitlines()
    assert len(first) == 30
    # the first screen is the graph's first rows (on a terminal fitted to its width: the
    # outer connectors folded, the text cut), each row the same entry as into a pipe
    for row, full in zip(first, whole):
        assert row.split()[0] == full.split()[0] and row.split()[-1].rstrip("…") in full, (row, full)
    # the drawing stopped once the pager was gone: far fewer rows drawn than the graph has
    assert drawn(out) < len(whole) // 2, out
    # and what was cut short is not kept as the file's graph: the next drawing is whole
    again = stree("-s", path, "log", "--graph")
    assert again.code == 0 and again.out.splitlines() == whole


def test_a_short_answer_is_printed_not_paged(tmp_path, first_screen_pager):
    path = comb(3).write(tmp_path / "short.jsonl")
    pager, paged = first_screen_pager
    code, out = on_terminal(["-s", path, "log", "--graph"], pager)
    assert code == 0 and not paged.exists()
    assert "the leaf" in out and "side 2" in out


def test_a_long_answer_reaches_the_pager_whole(tmp_path, stree):
    path = comb(300).write(tmp_path / "comb.jsonl")
    whole = stree("-s", path, "log", "--graph", "--no-cache").out.splitlines()
    kept = tmp_path / "paged.txt"
    code, out = on_terminal(["-s", path, "log", "--graph"], f"cat > {kept}")
    assert code == 0, out
    rows = kept.read_text().splitlines()
    assert [r.split()[0] for r in rows] == [r.split()[0] for r in whole]  # every row, in order
    assert out.strip() == ""  # everything went to the pager
