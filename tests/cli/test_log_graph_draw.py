"""`log --graph` drawn whole into a pipe: its rows go out as bytes as they are drawn
(stree.output.keptgraph.pipe), byte for byte what the row-by-row text drawing prints (the one a
terminal and --color always use), and a deep tree's connectors cost work in proportion to
its branch points, not to its rows times its depth (stree.output.graph)."""

import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from builders import SessionBuilder, branchy
from clock import past_the_tick

SGR = re.compile(rb"\x1b\[[0-9;]*m")
OPTION_SETS = (
    (),
    ("--no-ids",),
    ("-z",),
    ("--filter", "all"),
    ("--filter", "no-tools"),
    ("-n", "5"),
)


def comb(points, text="step"):
    """A comb: a main line to the leaf with a side entry at each of `points` branch points (pi
    draws the main line first, each side entry one level deeper than the one before)."""
    b = SessionBuilder()
    for i in range(points):
        main = b.user(f"{text} {i}")
        b.assistant(f"side {i}")
        b.at(main)
    b.user("the leaf")
    return b


def streamed_and_drawn(stree, path, options, env=None):
    """(the plain drawing into a pipe, the --color always drawing with its colours taken out)."""
    env = dict({"STREE_NO_CACHE": "1"}, **(env or {}))
    plain = stree("-s", path, "log", "--graph", *options, env=env)
    coloured = stree("--color", "always", "-s", path, "log", "--graph", *options, env=env)
    assert plain.code == 0 and coloured.code == 0, (plain, coloured)
    assert b"\x1b[" in coloured.raw  # (the text drawing was used)
    return plain.raw, SGR.sub(b"", coloured.raw)


def test_a_graph_streamed_as_bytes_is_the_text_drawing_byte_for_byte(stree, tmp_path):
    for name, builder in (("branchy", branchy()), ("comb", comb(40))):
        path = builder.write(tmp_path / f"{name}.jsonl")
        for options in OPTION_SETS:
            plain, drawn = streamed_and_drawn(stree, path, options)
            assert plain == drawn, (name, options)
            assert plain.count(b"\0" if "-z" in options else b"\n") >= 5


def test_a_first_graph_laid_out_whole_is_the_graph_laid_out_row_by_row(stree, tmp_path, isolated_home):
    """A first `log --graph` (no index yet: the whole file parsed before the first row) lays out
    every row at once (stree.output.graph); with the index, rows are laid out as they are read
    (stree.output.graph_walk). Both print the same bytes, and so does the next command (kept)."""
    for name, builder in (("branchy", branchy()), ("comb", comb(40))):
        for options in OPTION_SETS:
            path = builder.write(tmp_path / f"{name}-{len(options)}-{options[-1:]}.jsonl")
            past_the_tick(path)
            stats = {"STREE_DEBUG_STATS": "1"}
            first = stree("-s", path, "log", "--graph", *options, env=stats)
            walked = stree("-s", path, "log", "--graph", *options, env={**stats, "STREE_GRAPH_MAX": "1"})
            kept = stree("-s", path, "log", "--graph", *options)
            assert "index built" in first.err and "index built" not in walked.err, (first.err, walked.err)
            assert first.raw == walked.raw == kept.raw, (name, options)


def test_hostile_text_is_made_safe_the_same_way_in_both_drawings(stree, tmp_path):
    b = SessionBuilder()
    first = b.user("bell\x07 esc\x1b[31mred tab\there\nnewline \u202eevil\u202c wide 漢字 é")
    b.assistant("lone \ud800 surrogate and \x9b csi")
    b.label(first, "lab\x1b]0;title\x07el\ttab")
    b.at(first)
    b.append("message", id="id\x1b[2Jx\u2066", message={"role": "user", "content": "an odd id"})
    b.user("after the odd id")
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(b.lines()) + "\n", encoding="utf-8", errors="surrogatepass")
    for options in ((), ("--no-ids",), ("--filter", "all")):
        plain, drawn = streamed_and_drawn(stree, path, options)
        assert plain == drawn, options
        assert b"\x1b" not in plain and b"\x07" not in plain and "\u202e".encode() not in plain
        assert b"\\x1b" in plain


def test_the_kept_output_is_what_was_streamed(stree, tmp_path):
    path = comb(30).write(tmp_path / "comb.jsonl")
    past_the_tick(path)  # what is drawn now is kept (stree.storage.index.racy)
    first = stree("-s", path, "log", "--graph", env={"STREE_DEBUG_STATS": "1"})
    again = stree("-s", path, "log", "--graph", env={"STREE_DEBUG_STATS": "1"})
    assert first.code == again.code == 0
    assert "(drawn)" in first.err and "graph rows drawn 0" not in first.err
    assert "index graph-cache" in again.err  # printed again as kept, not drawn
    assert again.raw == first.raw == streamed_and_drawn(stree, path, ())[1]


def test_connectors_of_a_deep_comb_cost_its_branch_points_not_its_depth_per_row(stree, tmp_path):
    points = 150
    path = comb(points).write(tmp_path / "comb.jsonl")
    r = stree("-s", path, "log", "--graph", "--filter", "all", env={"STREE_NO_CACHE": "1", "STREE_DEBUG_STATS": "1"})
    assert r.code == 0, r
    rows = r.out.splitlines()
    deepest = max(len(row) for row in rows)
    assert deepest > 3 * points  # each side entry one level deeper: rows as long as the comb is deep
    levels = int(re.search(r"connector levels walked (\d+)", r.err).group(1))
    # level by level, every distinct drawing walks its depth: about points² / 2 levels
    assert levels <= 4 * len(rows), (levels, len(rows))


TEXT = st.text(alphabet=st.sampled_from("ab \t\n\x1b\x07\u202e漢é│"), min_size=1, max_size=10)


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.lists(st.tuples(st.integers(min_value=0, max_value=10_000), TEXT, st.booleans()),
                      min_size=1, max_size=25),
       options=st.sampled_from(OPTION_SETS))
def test_any_tree_streams_as_it_draws(stree, tmp_path_factory, shape, options):
    """Random trees (each entry under any earlier one), labels, hostile text."""
    b = SessionBuilder()
    ids = []
    for pick, text, labelled in shape:
        if ids:
            b.at(ids[pick % len(ids)])
        ids.append(b.user(text))
        if labelled:
            b.label(ids[-1], text)
    path = b.write(tmp_path_factory.mktemp("any") / "s.jsonl")
    plain, drawn = streamed_and_drawn(stree, path, options)
    assert plain == drawn


GUTTERS = st.lists(st.tuples(st.integers(min_value=0, max_value=3), st.booleans(), st.booleans()), max_size=8)


@settings(max_examples=300, deadline=None)
@given(steps=GUTTERS, indent=st.integers(min_value=0, max_value=14), connector=st.booleans(),
       is_last=st.booleans(), virtual=st.booleans(), roots=st.booleans())
def test_connectors_drawn_from_kept_gutters_are_the_level_by_level_drawing(steps, indent, connector, is_last,
                                                                          virtual, roots):
    """Any gutter list (newest first; positions usually growing, sometimes not)."""
    from stree.output import graph_prefix as drawing

    gutters = None
    for step, show, jump in steps:
        position = (gutters[0] + step if gutters is not None else step) if not jump else step * 3
        gutters = (position, show, gutters)
    display = max(0, indent - 1) if roots else indent
    at = display - 1 if connector and not virtual else -1
    assert drawing.prefix((indent, connector, is_last, gutters, virtual), roots) == \
        drawing._draw_levels(display, at, is_last, gutters)


STAMPS = st.sampled_from(["2026-01-01T00:00:00.000Z", "2026-01-01T00:00:01.000Z", "2025-12-31T23:59:59.000Z",
                          "not a time", None, 5])


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(st.tuples(st.integers(min_value=0, max_value=40), st.integers(min_value=0, max_value=9),
                                  st.integers(min_value=0, max_value=40), STAMPS), max_size=30),
       first=st.integers(min_value=-1, max_value=40))
def test_the_graphs_walk_is_the_trees_depth_first_order(entries, first):
    """Any parents (roots, missing ones, later rows, loops), repeated ids, equal timestamps."""
    from stree.core.tree import Tree
    from stree.errors import CycleError
    from stree.output.graph import preorder
    from stree.storage.nodes import Node

    ids = [f"e{i if kind else i % 4}" for i, (_, kind, _, _) in enumerate(entries)]  # kind 0: an id used again
    nodes = []
    for i, (pick, kind, later, ts) in enumerate(entries):
        parent = None if kind == 1 else "missing" if kind == 2 else ids[later % len(ids)] if kind == 3 else \
            ids[pick % i] if i else None
        nodes.append(Node(ids[i], parent, "message", "user", ts, i, 1, i + 1, i + 1))
    leaf = ids[first % len(ids)] if ids and first >= 0 else None
    try:
        expected = Tree(nodes).depth_first_rows(leaf)
    except CycleError:
        expected = CycleError
    try:
        got = list(preorder(Tree(nodes), leaf))
    except CycleError:
        got = CycleError
    assert got == expected


def test_a_first_graph_of_a_large_file_is_parsed_in_this_process(stree, tmp_path):
    """No index: `log --graph` parses without a worker, even where `log` would share the parse
    (its drawing costs more than the parse: a worker would add its memory to the peak for
    little time), and draws what a parse in one process draws."""
    import os

    from stree.storage import parallel

    b = SessionBuilder()
    filler = "x" * 2000
    while len(b.entries) * 2100 < 2 * parallel.PER_JOB + (1 << 20):
        b.user(f"q {len(b.entries)} {filler}")
        if len(b.entries) % 40 == 0:
            b.at(b.entries[-20]["id"])  # branches
    path = b.write(tmp_path / "big.jsonl")
    assert os.path.getsize(path) > 2 * parallel.PER_JOB
    stats = {"STREE_DEBUG_STATS": "1"}
    first = stree("-s", path, "log", "--graph", env=stats)
    assert first.code == 0 and "index built" in first.err and "parse worker" not in first.err, first.err
    alone = stree("--no-cache", "-s", path, "log", "--graph", env={"STREE_JOBS": "1"})
    assert first.out == alone.out and len(first.out.splitlines()) == len(b.entries)
    if len(os.sched_getaffinity(0)) > 1:  # (the same file is shared by a plain log)
        listed = stree("--no-cache", "-s", path, "log", "-n", "1", env=stats)
        assert "parse worker(s)" in listed.err, listed.err


def test_a_drawing_into_a_pipe_widens_it(stree, tmp_path, isolated_home):
    """Megabytes of rows go through a pipe of 1 MiB (Linux), not the 64 KiB it starts with:
    stree and its reader take turns sixteen times less often (a third of the drawing's time at
    100k entries). The rows are what they were."""
    import fcntl
    import os
    import subprocess
    import sys

    if not hasattr(fcntl, "F_GETPIPE_SZ"):
        pytest.skip("no F_GETPIPE_SZ on this system")
    try:
        with open("/proc/sys/fs/pipe-max-size") as f:
            if int(f.read()) < 1 << 20:
                pytest.skip("this system's pipes may not hold 1 MiB")
    except OSError:
        pass
    path = comb(40).write(tmp_path / "comb.jsonl")
    expected = stree("-s", path, "log", "--graph", env={"STREE_NO_CACHE": "1"}).raw
    read, write = os.pipe()
    before = fcntl.fcntl(read, fcntl.F_GETPIPE_SZ)
    proc = subprocess.Popen([sys.executable, "-m", "stree", "-s", str(path), "log", "--graph"], stdout=write,
                            env={**os.environ, "STREE_NO_CACHE": "1", "NO_COLOR": "1"})
    os.close(write)
    with os.fdopen(read, "rb") as f:
        got = f.read()
        after = fcntl.fcntl(f.fileno(), fcntl.F_GETPIPE_SZ)
    assert proc.wait(timeout=60) == 0
    assert got == expected and got.count(b"\n") > 40
    assert before < 1 << 20 and after == 1 << 20


def tool_results(b):
    """An assistant message with no text whose three calls have results, and a tool round."""
    b.user("go")
    b.assistant(None, tools=[("read", {"path": f"f{i}.py"}) for i in range(3)])  # no text: not shown
    for call in b.entries[-1]["message"]["content"]:
        b.tool_result(call["id"], "read", f"contents of {call['arguments']['path']}")
    b.tool_round("bash", {"command": "ls"}, "a b c", text="listing")  # shown: its row read first
    return b


def test_a_message_whose_tool_calls_several_results_show_is_read_once(stree, tmp_path):
    """A drawing without previews kept (--no-cache) reads each entry it shows once, and the
    assistant message holding the calls its tool results show once more at most: once for all
    of its results, not once each, and not again when its own row was just drawn (counted:
    STREE_DEBUG_STATS)."""
    b = tool_results(SessionBuilder())
    path = b.write(tmp_path / "s.jsonl")
    got = stree("--no-cache", "-s", path, "log", "--graph", "--no-ids", env={"STREE_DEBUG_STATS": "1"})
    shown = len(got.out.splitlines())
    assert got.code == 0 and shown == len(b.entries) - 1, got.out  # all but the message with no text
    assert all(f"f{i}.py" in got.out for i in range(3)) and "ls" in got.out, got.out  # each result shows its call
    decoded = int(re.search(r"decoded (\d+) entries", got.err).group(1))
    assert decoded == shown + 1, got.err  # + the message with no text, once for its three results


@pytest.mark.parametrize("repeated", [False, True])
def test_a_first_graph_draws_from_the_previews_its_parse_made(stree, tmp_path, repeated):
    """No index: the parse makes each entry's preview as it decodes it, so the drawing reads
    no entry again (counted), and draws what a drawing from the entries draws. A call id that
    two messages give (pi's walk decides which one a result shows) leaves the tool results to
    the drawing."""
    b = tool_results(SessionBuilder())
    if repeated:
        b.entries[-2]["message"]["content"][-1]["id"] = b.entries[1]["message"]["content"][0]["id"]
        b.entries[-1]["message"]["toolCallId"] = b.entries[-2]["message"]["content"][-1]["id"]
    b.label(b.entries[0]["id"], "start")
    stats = {"STREE_DEBUG_STATS": "1"}
    for k, options in enumerate(((), ("--filter", "all"))):
        path = b.write(tmp_path / f"s{k}.jsonl")  # (a new file: no index)
        first = stree("-s", path, "log", "--graph", *options, env=stats)
        plain = stree("--no-cache", "-s", path, "log", "--graph", *options)
        assert first.code == 0 and "index built" in first.err and first.out == plain.out, first.err
        decoded = int(re.search(r"decoded (\d+) entries", first.err).group(1))
        results = sum(e["type"] == "message" and e["message"]["role"] == "toolResult" for e in b.entries)
        assert decoded >= results if repeated else decoded == 0, first.err  # (left to the drawing: the results)
