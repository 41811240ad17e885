"""The rows of a path found through the path of its last row an index keeps
(stree.storage.shape.Shape.path_flags): the same rows as a walk up the parents, for every row
of the session, before and after lines are appended (on the kept path, beside it, past it)."""

import pytest

from builders import SessionBuilder
from clock import past_the_tick


def _session(turns):
    b = SessionBuilder()
    prompts = []
    for turn in range(turns):
        prompts.append(b.user(f"prompt {turn}"))
        b.tool_round("read", {"path": f"f{turn}.py"}, "text")
        b.assistant(f"answer {turn}")
        if turn % 4 == 3:
            b.at(prompts[turn - 2])  # a branch off the middle of the path
    return b, prompts


def _every_path(tree):
    ids = tree.nodes.col("id")
    for row, id in enumerate(ids):
        flags = tree.shape.path_flags(row)
        assert [r for r, on in enumerate(flags) if on] == sorted(tree.path_rows(id)), row


@pytest.mark.parametrize("appended", [0, 3, 40])
def test_the_kept_path_gives_every_rows_path(tmp_path, monkeypatch, appended):
    from stree.core.loading import open_session
    from stree.storage import index

    b, prompts = _session(24)
    path = b.write(tmp_path / "s.jsonl")
    monkeypatch.setattr(index, "_LOADED", {})  # (each open reads the index again)
    past_the_tick(path)
    open_session(str(path)).session.close()  # (the index, with the last row's path)
    if appended:
        b.at(prompts[5])  # off the kept path: the new rows' paths meet it at prompt 5
        for k in range(appended):
            b.user(f"later {k}") if k % 2 else b.assistant(f"later {k}")
        with open(path, "a", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in b.lines()[-appended:]))
        past_the_tick(path)
    index._LOADED.clear()
    session, tree, _ = open_session(str(path))
    try:
        assert session.nodes.shape._path is not None  # (the index kept a path: it is read here)
        _every_path(tree)
    finally:
        session.close()


def test_a_walk_that_meets_the_kept_path_stops_there(tmp_path, monkeypatch):
    """From the leaf: no row walked; from a row just below the kept path: one."""
    from stree.core.loading import open_session
    from stree.storage import counters, index

    b, prompts = _session(40)
    path = b.write(tmp_path / "s.jsonl")
    monkeypatch.setattr(index, "_LOADED", {})
    past_the_tick(path)
    open_session(str(path)).session.close()
    index._LOADED.clear()
    session, tree, _ = open_session(str(path))
    try:
        shape = tree.shape
        walked = counters("path")
        before = walked["walked"]
        leaf = len(tree.nodes) - 1
        assert shape.path_flags(leaf)[leaf] == 1 and walked["walked"] == before
        off = next(r for r in range(leaf) if not shape.path_flags(leaf)[r] and shape.path_flags(leaf)[shape.prow[r]])
        before = walked["walked"]
        assert shape.path_flags(off)[off] == 1 and walked["walked"] == before + 1
    finally:
        session.close()
