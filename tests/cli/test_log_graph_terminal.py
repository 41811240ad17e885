"""`log --graph` on a real terminal (a pseudo-terminal of 60, 80 and 200 columns): every row
is one line of the terminal's width and shows some of its entry, however deep the tree (the
outer connector levels fold into a `⋯N⋯` marker); into a pipe the rows stay whole."""

import os
import re
import subprocess
import sys

import pytest

from conftest import on_pty
from test_log_graph_draw import comb

SGR = re.compile(r"\x1b\[[0-9;]*m")
BOX = "│├└─ "


def on_terminal(args, columns, lines=50, by_env=False):
    """What `python -m stree ARGS` writes to a pseudo-terminal of `columns` x `lines`, its
    colours taken out, as lines. `by_env`: the width given by COLUMNS (the pty left 80 wide)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if by_env:
        env["COLUMNS"] = str(columns)
    env["TERM"] = "xterm"
    code, out = on_pty(args, 80 if by_env else columns, lines, env)
    assert code == 0, out[-2000:]
    return SGR.sub("", out.decode("utf-8")).split("\r\n")[:-1]


def entry_of(row):
    """A whole row's entry: what follows the id column, the connectors and the active mark."""
    rest = row[10:].lstrip(BOX)
    return rest[2:] if rest.startswith("• ") else rest


@pytest.fixture(scope="module")
def combs(tmp_path_factory):
    d = tmp_path_factory.mktemp("combs")
    return {depth: comb(depth).write(d / f"comb{depth}.jsonl") for depth in (10, 100, 1000)}


@pytest.mark.parametrize("depth", [10, 100, 1000])
@pytest.mark.parametrize("columns", [60, 80, 200])
def test_every_row_is_one_line_showing_its_entry(combs, depth, columns):
    from stree.output.modes import display_width

    path = combs[depth]
    whole = subprocess.run([sys.executable, "-m", "stree", "-s", path, "log", "--graph"], capture_output=True,
                           text=True, timeout=120).stdout.splitlines()
    rows = on_terminal(["--no-pager", "-s", path, "log", "--graph"], columns)
    assert len(rows) == len(whole) == 2 * depth + 1
    folded = 0
    for row, pipe_row in zip(rows, whole):
        assert display_width(row) <= columns, row
        assert row[:8] == pipe_row[:8]  # the same entry's id
        entry = entry_of(pipe_row)
        connectors = row[10:row.index(entry[:12])]  # (at least a dozen characters of the entry shown)
        half = (columns - 10) // 2
        assert len(connectors.removesuffix("• ")) <= half  # the connectors take at most half the width
        if "⋯" in connectors:
            folded += 1
            assert int(connectors.split("⋯")[1]) > 0
        else:
            assert row[10:].startswith(pipe_row[10:10 + len(connectors)])  # drawn as into a pipe
    assert (folded > 0) == (3 * depth > (columns - 10) // 2 - 2)  # folded where they would take more


def test_folded_rows_of_neighbouring_depths_stay_aligned(combs):
    rows = on_terminal(["--no-pager", "-s", combs[100], "log", "--graph"], 80)
    markers = {}
    for row in rows:
        m = re.match(r"\S+  (⋯\d+⋯)", row)
        if m:
            markers.setdefault(m.group(1), []).append(row)
    assert len(markers) > 5  # the fold moves in steps as the depth grows
    for same in markers.values():  # rows folded alike: their kept connectors line up
        branches = [row.index("├") if "├" in row else row.index("└") for row in same]
        assert max(branches) - min(branches) <= 3 * len(same)
        assert all(row.index("⋯") == same[0].index("⋯") for row in same)


def test_into_a_pipe_rows_stay_whole(combs, stree):
    r = stree("-s", combs[100], "log", "--graph", env={"COLUMNS": "60"})
    rows = r.out.splitlines()
    assert "⋯" not in r.out
    assert max(len(row) for row in rows) > 300  # the deepest rows' connectors, whole, as git does
    assert rows[100] == "000000c9  " + "│  " * 99 + "├─ • user: the leaf  ← active"


def test_a_kept_terminal_drawing_is_never_a_pipe_drawing_or_another_widths(combs, stree):
    """The graph kept for a pipe is printed again into pipes only; one kept on a terminal is
    printed again only on a terminal of the same width."""
    path = combs[10]
    piped = stree("-s", path, "log", "--graph").out  # kept
    assert stree("-s", path, "log", "--graph").out == piped  # and printed again
    for columns in (60, 200, 60):
        rows = on_terminal(["--no-pager", "-s", path, "log", "--graph"], columns)
        assert all(len(row) <= columns for row in rows)
        assert any("⋯" in row for row in rows) == (columns == 60)
    assert stree("-s", path, "log", "--graph").out == piped


def test_wide_and_control_characters_and_labels_still_fit(tmp_path):
    from stree.output.modes import display_width

    b = comb(40, text="漢字かな\x1b[2J\x07" * 6)
    b.label(b.entries[30]["id"], "a-label-" + "x" * 80)
    path = b.write(tmp_path / "hostile.jsonl")
    for columns in (60, 80):
        rows = on_terminal(["--no-pager", "-s", path, "log", "--graph", "--filter", "all"], columns)
        assert rows and all(display_width(row) <= columns for row in rows), columns
        assert not any("\x1b" in row or "\x07" in row for row in rows)  # shown, not obeyed (\x1b as text)
        assert any("[a-label-" in row for row in rows)
