"""The server's warm paths, tested by counting work (not by timing): the lightweight tree sets
each tool call once (it was copied at every assistant message: quadratic), and answers as the
old projection did, byte for byte."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stree.core.store import read_session
from stree.service.protocol import encode
from stree.service import projection
from stree.service.projection import DROPPED, _calls, _node, _visible_leaf

ROOT = Path(__file__).resolve().parent.parent


def old_project(session, tree):
    """The projection as it was before the map was shared (kept here to compare answers)."""
    everywhere = {}
    loaded = {}
    for row, node in enumerate(tree.nodes):
        if node.type == "message" and node.role == "assistant":
            loaded[row] = tree.load(node)
            for call_id, name, args in _calls(loaded[row].get("message")):
                everywhere[call_id] = (name, args)
    roots = []
    stack = [(tree.row_of(n), roots, None, {}) for n in reversed(tree.roots)]
    while stack:
        row, target, parent_id, calls = stack.pop()
        node = tree.node(row)
        children = tree.child_rows(row)
        if node.type in DROPPED:
            for child in reversed(children):
                stack.append((child, target, parent_id, calls))
            continue
        entry = loaded.pop(row, None) or tree.load(node)
        base = {"id": node.id, "parentId": parent_id, "timestamp": entry.get("timestamp")}
        label = tree.labels.get(node.id)
        if label is not None:
            base["label"] = label
        kids = []
        base["children"] = kids
        child_calls = calls
        if node.type == "message" and node.role == "assistant":
            own = _calls(entry.get("message"))
            if own:
                child_calls = dict(calls)
                for call_id, name, args in own:
                    child_calls[call_id] = (name, args)
        target.append(_node(base, entry, calls, everywhere))
        for child in reversed(children):
            stack.append((child, kids, node.id, child_calls))
    return {"tree": roots, "leafId": _visible_leaf(tree)}


def generated(tmp_path, entries, seed=1):
    path = tmp_path / f"gen-{entries}-{seed}.jsonl"
    subprocess.run([sys.executable, str(ROOT / "tools" / "bench" / "gen.py"), str(entries), str(path),
                    "--seed", str(seed)], check=True, capture_output=True)
    return path


def tool_calls_in(path):
    n = 0
    with open(path) as f:
        for line in f:
            entry = json.loads(line)
            message = entry.get("message") if entry.get("type") == "message" else None
            if isinstance(message, dict) and message.get("role") == "assistant":
                n += len(_calls(message))
    return n


def projected(path):
    session, tree = read_session(str(path), True)
    try:
        before = projection.STATS["calls"]
        new = projection.project(session, tree)
        work = projection.STATS["calls"] - before
        old = old_project(session, tree)
        return new, old, work
    finally:
        session.close()


def test_lightweight_tree_of_the_demo_is_as_before(demo):
    new, old, work = projected(demo)
    assert encode(new) == encode(old)
    assert work == tool_calls_in(demo)


@pytest.mark.parametrize("seed", [1, 2])
def test_lightweight_tree_sets_each_call_once_at_any_size(tmp_path, seed):
    works = []
    for entries in (500, 1000, 2000, 4000):
        path = generated(tmp_path, entries, seed)
        new, old, work = projected(path)
        assert encode(new) == encode(old), entries
        calls = tool_calls_in(path)
        assert calls > entries // 10  # (the generated sessions do call tools)
        assert work == calls  # each call set once: linear in the session (the old walk copied them all
        works.append(work)    #  at every assistant message below them)
    assert works[-1] <= 10 * works[0]
