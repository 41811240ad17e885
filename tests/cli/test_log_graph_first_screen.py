"""`log --graph`'s first rows are laid out as they are written (stree.output.graph_walk), not after
the whole tree (issue 28: the first screen on a terminal in a time independent of the file's
size, once the index exists). Work is counted (STREE_DEBUG_STATS), never timed; the rows are
the whole layout's, byte for byte."""

import re

import pytest

from hypothesis import HealthCheck, given, settings, strategies as st

from builders import SessionBuilder
from clock import past_the_tick


def grown(entries):
    """A session like a working day's, `entries` long: prompts, tool rounds (an assistant message
    of tool calls alone, hidden in the graph), answers, a model change now and then, a label,
    and every few rounds a step back up the path (a /tree navigation) that makes a branch."""
    b = SessionBuilder()
    b.model_change("anthropic", "claude-sonnet-4-5")
    b.thinking("high")
    turn = 0
    while len(b.entries) < entries:
        turn += 1
        prompt = b.user(f"prompt {turn}: read the parser and fix the quoting")
        for k in range(turn % 3 + 1):
            b.tool_round("read", {"path": f"src/f{k}.py"}, f"contents {turn}.{k}")
        b.assistant(f"answer {turn}: fixed")
        if turn % 5 == 0:
            b.label(prompt, f"turn-{turn}")
        if turn % 7 == 0:
            b.model_change("openai", "gpt-5")
        if turn % 4 == 0:
            b.at(prompt)  # back up the path: the next prompt starts a branch beside the answer
    return b


def counted(stree, path):
    """(the rows of `log --graph -n 40`, entries tested, parent bytes searched, entries decoded,
    index values read, path rows walked) with the index warm, as `log -n 1` leaves it (no
    previews in it)."""
    assert stree("-s", path, "log", "-n", "1").code == 0  # (the index)
    past_the_tick(path)
    assert stree("-s", path, "log", "-n", "1").code == 0  # (the index, recorded past the file's tick)
    r = stree("-s", path, "log", "--graph", "-n", "40", env={"STREE_DEBUG_STATS": "1"})
    assert r.code == 0, r
    assert "index fresh" in r.err, r.err
    found = re.search(r"entries tested (\d+) and parent bytes searched (\d+)", r.err)
    read = re.search(r"decoded (\d+) entries, index values (\d+)", r.err)
    assert found and read, r.err
    walked = re.search(r"path rows walked (\d+)", r.err)
    return (r.out.splitlines(), int(found.group(1)), int(found.group(2)), int(read.group(1)), int(read.group(2)),
            int(walked.group(1)) if walked else 0)


def test_the_first_rows_cost_the_same_in_a_session_25_times_longer(stree, tmp_path):
    small = grown(2_000).write(tmp_path / "small.jsonl")
    large = grown(50_000).write(tmp_path / "large.jsonl")
    rows_small, tested_small, searched_small, decoded_small, values_small, walked_small = counted(stree, small)
    rows_large, tested_large, searched_large, decoded_large, values_large, walked_large = counted(stree, large)
    assert len(rows_small) == 40 and rows_small == rows_large  # (the same first rows: the same top of the tree)
    assert any("├─" in row for row in rows_small) and any("[turn-5]" in row for row in rows_small)
    assert any("[read: src/f0.py]" in row for row in rows_small)  # a tool result's preview names its call
    assert tested_small == tested_large and searched_small == searched_large, \
        (tested_small, tested_large, searched_small, searched_large)
    assert tested_small < 200  # a few hidden entries and a row's next sibling past the 40 rows
    # the tool results' calls found through the index's table (stree.storage.calltable), not by
    # reading every row's call ids: the same entries decoded and index values read at any size
    assert (decoded_small, values_small) == (decoded_large, values_large), \
        (decoded_small, decoded_large, values_small, values_large)
    assert decoded_small < 100
    # the leaf's path (most of the session) found through the one the index keeps, not walked
    assert walked_small == walked_large == 0, (walked_small, walked_large)


def test_the_first_rows_on_a_terminal_are_the_whole_drawings(stree, tmp_path):
    """Into a pipe whole, and its head: the same rows (the head laid out alone)."""
    path = grown(3_000).write(tmp_path / "s.jsonl")
    whole = stree("-s", path, "log", "--graph", env={"STREE_NO_CACHE": "1"}).out.splitlines()
    assert len(whole) > 1000
    for n in ("1", "40", "700"):
        head = stree("-s", path, "log", "--graph", "-n", n).out.splitlines()
        assert head == whole[:int(n)]


# -- the walk's layout is the whole layout ------------------------------------------------------

STEPS = st.lists(st.tuples(st.integers(min_value=0, max_value=11), st.integers(min_value=0, max_value=60),
                           st.integers(min_value=-2, max_value=2)), min_size=1, max_size=60)


def _session(steps):
    b = SessionBuilder()
    ids = []
    for kind, pick, _ in steps:
        if ids and pick % 3 == 0:
            b.at(ids[pick % len(ids)])
        if kind == 0:
            ids.append(b.user(f"u{len(ids)} word"))
        elif kind == 1:
            ids.append(b.assistant(f"a{len(ids)} word"))
        elif kind == 2:
            ids += b.tool_round("read", {"path": "x.py"}, "word")  # (an assistant of tool calls alone: hidden)
        elif kind == 3:
            ids.append(b.model_change("openai", "gpt-5"))
        elif kind == 4 and ids:
            ids.append(b.label(ids[pick % len(ids)], f"L{pick}"))
        elif kind == 5:
            ids.append(b.user("another root", parent=None))
        elif kind == 6:
            ids.append(b.user("under a missing entry", parent="nowhere"))
        elif kind == 7:
            ids.append(b.thinking("low"))
        elif kind == 8:
            ids.append(b.assistant(tools=[("bash", {"command": "ls"})]))  # a call without its result
        elif kind == 9:
            ids.append(b.branch_summary("went back"))
        elif kind == 10:
            ids.append(b.custom("note"))
        else:
            ids.append(b.custom_message("note", "word"))
    for entry, (_, _, jitter) in zip(b.entries, steps):  # equal and out-of-order timestamps
        if jitter:
            entry["timestamp"] = b._iso(1_795_000_000_000 + 1000 * max(1, jitter + 2))
    return b


def _chain(drawing):
    return drawing.chain() if drawing.chain is not None else None


def _rows(drawing):
    return [(row.node.id, row.text(), row.prefix, row.active, row.label, row.leaf) for row in drawing]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=STEPS, cached=st.booleans(), limits=st.booleans())
def test_the_walks_layout_is_the_whole_layout(tmp_path_factory, steps, cached, limits):
    """Any tree (several roots, missing parents, hidden entries, settings, labels, equal and
    out-of-order timestamps), every filter, a search, a --since-like test, heads of it: the
    rows, the id column's width and what a patch after an append is given are the whole
    layout's (graph(whole=True), what graph() did before). `limits`: the walk's budgets spent at
    once (every row's children listed, columns decoded whole, no children lists kept)."""
    from stree.core.loading import open_session
    from stree.output import graph as drawing, graph_walk
    from stree.output.graph import FILTERS, graph


    path = _session(steps).write(tmp_path_factory.mktemp("walk") / "s.jsonl")
    if cached:
        open_session(str(path)).session.close()
        past_the_tick(path)
    session, tree, _ = open_session(str(path), no_cache=not cached)
    saved = graph_walk.SEARCH_BUDGET, graph_walk.MEMO_ROWS, drawing.COLUMNS_AFTER
    try:
        if limits:
            graph_walk.SEARCH_BUDGET = graph_walk.MEMO_ROWS = drawing.COLUMNS_AFTER = -1
        flags = drawing.path_flags(tree, tree.leaf, tree._row(tree.leaf))
        assert [r for r, on in enumerate(flags) if on] == sorted(tree.path_rows(tree.leaf))
        for filter_ in FILTERS:
            for search, keep in ((None, None), ("word", None), (None, lambda r: r % 3 != 1)):
                walked = graph(tree, filter_, search, keep=keep)
                whole = graph(tree, filter_, search, keep=keep, whole=True)
                assert _rows(walked) == _rows(whole)
                assert walked.id_width() == whole.id_width()
                for k in (0, 1, 3):
                    walked, whole = graph(tree, filter_, search, keep=keep), graph(tree, filter_, search, keep=keep,
                                                                                   whole=True)
                    head, whole_head = walked[:k], whole[:k]
                    assert _rows(head) == _rows(whole_head)
                    chain = _chain(whole_head)
                    shown = [row.node.id for row in whole_head]
                    # a head that ends above the marked row gives no chain (a patch would find none)
                    expected = chain if chain is None or tree.id_of(chain[0]) in shown else None
                    assert _chain(head) == expected
                walked = graph(tree, filter_, search, keep=keep)
                assert walked.chain() == _chain(graph(tree, filter_, search, keep=keep, whole=True))
    finally:
        session.close()
        graph_walk.SEARCH_BUDGET, graph_walk.MEMO_ROWS, drawing.COLUMNS_AFTER = saved


@pytest.mark.parametrize("filter_", ["default", "no-tools", "user-only", "labeled-only", "all"])
def test_a_loop_of_parents_above_the_leaf_is_an_error_under_every_filter(tmp_path, filter_):
    """The walk looks for the nearest shown entry above a hidden leaf; when the leaf's parents
    loop (a damaged file), that is exit 4 naming the loop, as before the walk, never a hang."""
    import json
    import subprocess
    import sys

    lines = [{"type": "session", "version": 3, "id": "0199aaaa-0000-7000-8000-000000000001",
              "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"},
             {"type": "message", "id": "aaaa0001", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
              "message": {"role": "user", "content": "hi", "timestamp": 1}}]
    for i, (me, parent) in enumerate((("bbbb0002", "cccc0003"), ("cccc0003", "bbbb0002"))):
        lines.append({"type": "message", "id": me, "parentId": parent, "timestamp": f"2026-01-01T00:00:0{i + 2}.000Z",
                      "message": {"role": "assistant", "content": [{"type": "text", "text": me}], "timestamp": i}})
    path = tmp_path / "loop.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    r = subprocess.run([sys.executable, "-m", "stree", "-s", str(path), "log", "--graph", "--filter", filter_],
                       capture_output=True, timeout=60)
    assert r.returncode == 4 and b"parent chain loops" in r.stderr and b"Traceback" not in r.stderr, r
