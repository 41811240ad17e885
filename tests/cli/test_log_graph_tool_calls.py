"""A tool result's row in `log --graph` names its call (`[read: src/f.py]`), found through the
index's table of call ids (stree.storage.calltable) when the index proves no id repeats, by
pi's walk of the whole tree when one does. Either way the rows are those drawn without any
cache, byte for byte; the table spares reading every row's call ids (counted: index values)."""

import re

import pytest

from builders import SessionBuilder
from clock import past_the_tick


def _no_kept_drawings():
    from pathlib import Path

    from stree.storage.cachedir import cache_dir

    for kept in Path(cache_dir()).glob("*.graph"):
        kept.unlink()


def _drawn(stree, path, warm=True):
    """(`log --graph` rows through the index, index values read, the index's state), with no
    kept drawing: the rows are made here (from the previews of an earlier drawing, if any).
    `warm`: the index brought up to date first by `log -n 1` (else the drawing parses what
    was appended since: rows its table does not cover)."""
    _no_kept_drawings()
    past_the_tick(path)
    if warm:
        assert stree("-s", path, "log", "-n", "1").code == 0  # (the index; no previews in a new one)
    r = stree("-s", path, "log", "--graph", env={"STREE_DEBUG_STATS": "1"})
    assert r.code == 0, r
    assert "kept 0 (drawn)" in r.err, r.err
    values = int(re.search(r"index values (\d+)", r.err).group(1))
    state = re.search(r"index (fresh|updated|built)", r.err).group(1)
    return r.out, values, state


def _plain(stree, path, *args):
    r = stree("-s", path, "log", "--graph", *args, env={"STREE_NO_CACHE": "1"})
    assert r.code == 0, r
    return r.out


def _meta(path):
    import os

    from stree.storage.index import index_path
    from stree.storage.indexfile import meta_of

    return meta_of(index_path(os.stat(path)))[0]


def _rounds(b, turns, start=0):
    """Prompts, tool rounds and answers, a branch every third turn: the ids the builder gives (unique)."""
    for turn in range(start, start + turns):
        prompt = b.user(f"prompt {turn}")
        for k in range(turn % 3 + 1):
            b.tool_round("read", {"path": f"src/f{turn}_{k}.py"}, f"contents {turn}.{k}")
        b.assistant(f"answer {turn}")
        if turn % 3 == 2:
            b.at(prompt)
    return b


def _call(b, call_id, name, args, parent="leaf"):
    """An assistant message making one call with the id given, and its result."""
    a = b.assistant(tools=[(name, args)], parent=parent)
    b.entries[-1]["message"]["content"][-1]["id"] = call_id
    return a, b.tool_result(call_id, name, f"result of {call_id}")


def test_unique_ids_are_found_through_the_table(stree, tmp_path):
    path = _rounds(SessionBuilder(), 60).write(tmp_path / "s.jsonl")
    out, values, state = _drawn(stree, path)
    assert state == "fresh" and out == _plain(stree, path)
    assert out.count("[read: src/f") >= 60
    meta = _meta(path)
    assert meta["calls"][0] is True and len(meta["calls"][1]) == 1
    assert values == 0  # (no row's call ids read: before the table, every row's)


@pytest.mark.parametrize("leaf_branch", [0, 1])
def test_an_id_two_calls_share_is_named_as_pi_walks_the_tree(stree, tmp_path, leaf_branch):
    """Two calls with one id on two branches: the call pi's walk meets last, which depends on
    the leaf's branch (walked first): no table is kept, the walk decides as without an index."""
    b = _rounds(SessionBuilder(), 4)
    fork = b.user("fork here")
    tips = []
    for branch, (name, args) in enumerate((("read", {"path": "left.py"}), ("bash", {"command": "ls right"}))):
        b.at(fork)
        _call(b, "call_shared", name, args)
        tips.append(b.assistant(f"done {branch}"))
    b.at(tips[leaf_branch])
    b.user("the leaf")
    path = b.write(tmp_path / "s.jsonl")
    out, _, _ = _drawn(stree, path)
    assert out == _plain(stree, path)
    assert "[read: left.py]" in out or "[bash: ls right]" in out
    assert _meta(path)["calls"] == (False, ())


def test_ids_repeated_in_one_message_or_not_strings_keep_no_table(stree, tmp_path):
    b = _rounds(SessionBuilder(), 3)
    b.assistant(tools=[("read", {"path": "a.py"}), ("read", {"path": "b.py"})])
    for block in b.entries[-1]["message"]["content"]:
        block["id"] = "call_twice"
    b.tool_result("call_twice", "read", "which one")
    path = b.write(tmp_path / "twice.jsonl")
    out, _, _ = _drawn(stree, path)
    assert out == _plain(stree, path) and "[read: b.py]" in out  # (the message's last call, as pi's map)
    assert _meta(path)["calls"] == (False, ())

    b = _rounds(SessionBuilder(), 3)
    _call(b, 7, "read", {"path": "seven.py"})
    path = b.write(tmp_path / "number.jsonl")
    out, _, _ = _drawn(stree, path)
    assert out == _plain(stree, path) and "[read: seven.py]" in out
    assert _meta(path)["calls"] == (False, ())


def test_a_result_whose_call_is_missing_or_not_a_string_names_none(stree, tmp_path):
    b = _rounds(SessionBuilder(), 3)
    b.tool_result("call_nowhere", "read", "orphan")
    b.tool_result(["call_1_0"], "read", "a list names no call")
    b.tool_result(7, "read", "a number no str id equals")
    path = b.write(tmp_path / "s.jsonl")
    out, values, _ = _drawn(stree, path)
    assert out == _plain(stree, path)
    assert _meta(path)["calls"][0] is True and values == 0


def _append(path, b, start):
    with open(path, "a", encoding="utf-8") as f:
        for line in b.lines()[1 + start:]:
            f.write(line + "\n")


def test_rows_appended_after_the_index_are_read_with_it(stree, tmp_path):
    """A few appended lines (parsed by each command, not yet in the index: its table covers
    the rows before them), then more (the index written again: a second part of the table)."""
    b = _rounds(SessionBuilder(), 20)
    path = b.write(tmp_path / "s.jsonl")
    _drawn(stree, path)
    rows = len(b.entries)
    _call(b, "call_new", "bash", {"command": "make"})
    _append(path, b, rows)
    out, _, state = _drawn(stree, path, warm=False)
    assert state == "updated" and out == _plain(stree, path) and "[bash: make]" in out

    rows = len(b.entries)
    _rounds(b, 10, start=20)
    _append(path, b, rows)
    out, _, _ = _drawn(stree, path)
    assert out == _plain(stree, path)
    meta = _meta(path)
    assert meta["rows"] == len(b.entries) and meta["calls"][0] is True and len(meta["calls"][1]) >= 2


@pytest.mark.parametrize("many", [False, True])
def test_an_appended_call_repeating_an_indexed_id_is_walked_for(stree, tmp_path, many):
    """An appended call reuses an id the index's table holds: a few lines (the table is not
    trusted for it) or many (the index written again without a table): as without an index."""
    b = _rounds(SessionBuilder(), 20)
    path = b.write(tmp_path / "s.jsonl")
    _drawn(stree, path)
    rows = len(b.entries)
    first = next(e for e in b.entries if e["message"].get("role") == "assistant"
                 and e["message"]["content"] and e["message"]["content"][-1]["type"] == "toolCall")
    b.at(first["parentId"])
    _call(b, first["message"]["content"][-1]["id"], "bash", {"command": "echo again"})  # (its result: the leaf)
    if many:
        _rounds(b, 10, start=20)
    _append(path, b, rows)
    out, _, _ = _drawn(stree, path, warm=many)
    # (pi walks the leaf's branch first: the new call, then the first one, whose arguments win)
    assert out == _plain(stree, path) and out.count("[read: src/f0_0.py]") == 2
    if many:
        assert _meta(path)["calls"] == (False, ())


def test_ids_sharing_a_hash_are_told_apart_by_the_messages(tmp_path, monkeypatch):
    """Every id given one hash: each tool result still names its own call (the candidates are
    confirmed by the message's calls), as the walk without an index does."""
    from stree.core.loading import open_session
    from stree.output.graph import graph
    from stree.storage import calltable, index

    b = _rounds(SessionBuilder(), 8)
    b.tool_result("call_nowhere", "read", "orphan")
    path = b.write(tmp_path / "s.jsonl")
    monkeypatch.setattr(calltable, "keys", lambda ids: [12345] * len(ids))
    monkeypatch.setattr(index, "_LOADED", {})  # (each open below reads the file or the index again)
    past_the_tick(path)
    open_session(str(path)).session.close()  # (the index)
    index._LOADED.clear()
    session, tree, _ = open_session(str(path))
    plain_session, plain_tree, _ = open_session(str(path), no_cache=True)
    try:
        assert getattr(session.nodes, "calls", None) is not None
        assert tree.previews is not None and not tree.previews.new
        texts = [(row.node.id, row.text()) for row in graph(tree, "all")]
        assert texts == [(row.node.id, row.text()) for row in graph(plain_tree, "all")]
        assert sum("[read: src/f" in text for _, text in texts) >= 8
    finally:
        session.close()
        plain_session.close()


def test_a_damaged_table_is_a_miss(stree, tmp_path):
    """A table whose bytes changed: the index is not used (its CRC), the rows are right."""
    import os

    from stree.storage.index import index_path

    path = _rounds(SessionBuilder(), 20).write(tmp_path / "s.jsonl")
    _drawn(stree, path)
    meta = _meta(path)
    target = index_path(os.stat(path))
    with open(target, "rb") as f:
        data = bytearray(f.read())
    keys = meta["calls"][1][0][0]
    head = len(data) - meta["data_len"] - (meta["previews"][1] if meta.get("previews") else 0)
    data[head + keys[0]] ^= 0xFF
    with open(target, "wb") as f:
        f.write(data)
    _no_kept_drawings()
    r = stree("-s", path, "log", "--graph", env={"STREE_DEBUG_STATS": "1"})
    assert r.code == 0 and "index built" in r.err and r.out == _plain(stree, path)

