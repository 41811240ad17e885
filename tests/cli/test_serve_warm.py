"""The server's warm paths, tested by counting work (not by timing): the lightweight tree sets
each tool call once (it was copied at every assistant message: quadratic), and answers as the
old projection did, byte for byte."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stree.core.loading import open_session
from stree.service.protocol import encode
from stree.service import projection
from stree.service.projection import DROPPED, _calls, _node, _visible_leaf

ROOT = Path(__file__).resolve().parents[2]


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
    session, tree, _ = open_session(str(path), no_cache=True)
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


# -- a server that stays warm: a request decodes only what it has not decoded yet ---------------

from serve_kit import Server  # noqa: E402


def decoded_per_request(stderr):
    """[(kind, entries decoded)] from the server's STREE_DEBUG_STATS lines, in order."""
    out = []
    for line in stderr.splitlines():
        if line.startswith("stree: stats: ") and ": decoded " in line:
            kind, rest = line[len("stree: stats: "):].split(": decoded ")
            out.append((kind, int(rest.split()[0])))
    return out


def answers(server):
    return [server.data("get_state"), server.data("get_entries"), server.data("log", maxCount=50),
            server.data("context"), server.data("get_tree")]


@pytest.mark.parametrize("cache", ["index", "no-cache"])
def test_a_warm_server_decodes_only_what_it_has_not_decoded(tmp_path, cache):
    whole = generated(tmp_path, 1200)
    lines = whole.read_bytes().splitlines(keepends=True)
    path = tmp_path / "served.jsonl"
    path.write_bytes(b"".join(lines[:1001]))  # the header and 1000 entries; 199 appended below
    env = {"STREE_DEBUG_STATS": "1", "STREE_CACHE_DIR": str(tmp_path / "cache")}
    if cache == "no-cache":
        env["STREE_NO_CACHE"] = "1"
    s = Server(path, env=env)
    try:
        for _ in range(2):
            s.data("get_state")
            s.data("get_entries")
            s.data("log", maxCount=50)
        with open(path, "ab") as f:  # as pi appends
            f.write(b"".join(lines[1001:]))
        appended = len(lines) - 1001
        seen = []
        while len(seen) < appended:
            event = s.event()
            if event["type"] == "entries_appended":
                seen += event["ids"]
        after = [s.data("get_entries"), s.data("get_state"), s.data("log", maxCount=50)]
        warm = answers(s)
        assert s.close() == 0
    finally:
        s.kill()
    counts = decoded_per_request(s.stderr())
    kinds = [k for k, _ in counts]
    assert kinds[:9] == ["get_state", "get_entries", "log"] * 2 + ["get_entries", "get_state", "log"]
    first, second, third = counts[0:3], counts[3:6], counts[6:9]
    assert first[0][1] > 0 and first[1][1] > 0  # the first requests decode
    assert [n for _, n in second] == [0, 0, 0]  # asked again: nothing decoded again
    assert third[0][1] == appended  # after the append: the appended entries, each once
    assert [n for _, n in third[1:]] == [0, 0]
    assert all(n == 0 for _, n in counts[9:14])  # (get_tree, context: every entry decoded already)
    assert len(after[0]["entries"]) == 1200 and after[0]["leafId"] == seen[-1]
    fresh = Server(path)
    try:
        assert encode(answers(fresh)) == encode(warm)  # as a fresh server answers
        assert encode([fresh.data("get_entries"), fresh.data("get_state"), fresh.data("log", maxCount=50)]) \
            == encode(after)
        assert fresh.close() == 0
    finally:
        fresh.kill()


def test_serve_mcp_keeps_what_it_decoded_between_tool_calls(tmp_path):
    from mcp_kit import McpServer

    whole = generated(tmp_path, 600)
    lines = whole.read_bytes().splitlines(keepends=True)
    path = tmp_path / "served.jsonl"
    path.write_bytes(b"".join(lines[:501]))
    s = McpServer("-s", path, env={"STREE_DEBUG_STATS": "1", "STREE_NO_CACHE": "1"})
    try:
        first = [s.call("context")["structuredContent"], s.call("show", revisions=["@", "@~3"])["structuredContent"]]
        again = [s.call("context")["structuredContent"], s.call("show", revisions=["@", "@~3"])["structuredContent"]]
        with open(path, "ab") as f:
            f.write(b"".join(lines[501:]))
        after = s.call("show", revisions=["@", "@~3"])["structuredContent"]
        assert s.close() == 0
    finally:
        s.kill()
    assert again == first
    counts = decoded_per_request(s.stderr())
    assert [k for k, _ in counts] == ["context", "show", "context", "show", "show"]
    assert counts[0][1] > 0 and counts[2][1] == 0 and counts[3][1] == 0
    assert 0 < counts[4][1] <= 2  # after the append: the new entries it shows, and nothing else
    assert [e["id"] for e in after["entries"]][0] == json.loads(lines[-1])["id"]


def test_entries_spliced_as_text_are_the_entries_encoded(tmp_path, demo):
    from stree.service.protocol import Texts, json_bytes, success

    for path in (demo, generated(tmp_path, 800, seed=3)):
        session, tree, _ = open_session(str(path), no_cache=True)
        try:
            entries = [tree.load(node) for node in tree.nodes]
        finally:
            session.close()
        entries.append({"type": "custom", "id": "x", "data": {"a": "\u2028\x1b[31m", "n": 1e400}})  # escaped alike
        plain = success("r1", "get_entries", {"entries": entries, "leafId": tree.leaf})
        spliced = success("r1", "get_entries", {"entries": Texts([json_bytes(e) for e in entries]),
                                                "leafId": tree.leaf})
        assert encode(spliced) == encode(plain)
        empty = success("r2", "get_entries", {"entries": Texts([]), "leafId": None})
        assert encode(empty) == encode(success("r2", "get_entries", {"entries": [], "leafId": None}))


def test_past_its_budget_a_server_decodes_again_and_answers_the_same(tmp_path):
    """STREE_SERVE_KEEP bounds what a server keeps decoded (a session far larger than memory
    would otherwise be kept whole): past it, entries are decoded at each request, the answers
    unchanged."""
    path = generated(tmp_path, 600)
    size = path.stat().st_size
    for budget, again in ((0, True), (size // 4, True), (size * 2, False)):
        s = Server(path, env={"STREE_DEBUG_STATS": "1", "STREE_SERVE_KEEP": str(budget)})
        try:
            got = [s.data("get_entries"), s.data("get_entries"), s.data("log", maxCount=600)]
            assert s.close() == 0
        finally:
            s.kill()
        first, second = [n for _, n in decoded_per_request(s.stderr())][:2]
        assert first >= 600 and (second > 0) == again, (budget, first, second)
        fresh = Server(path)
        try:
            assert encode([fresh.data("get_entries"), fresh.data("get_entries"),
                           fresh.data("log", maxCount=600)]) == encode(got)
            assert fresh.close() == 0
        finally:
            fresh.kill()
