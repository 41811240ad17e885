"""The core module, tested directly: parsing, migration, paths, ranges, context."""

import json

import pytest
from builders import SessionBuilder, branchy, dumps

from stree.errors import BadFile, CycleError, NotFound
from stree.core.revs import Resolver
from stree.storage.session import parse
from stree.core.tree import Tree


def load(path):
    s = parse(str(path))
    return s, Tree(s.nodes, s.load)


def test_offsets_point_at_each_entry_line(branchy_file):
    s, tree = load(branchy_file)
    data = branchy_file.read_bytes()
    for node in s.nodes:
        obj = json.loads(data[node.offset:node.offset + node.length])
        assert obj["id"] == node.id
        assert data.count(b"\n", 0, node.offset) + 1 == node.line


def test_leaf_is_last_entry_whatever_its_type(branchy_file):
    s, tree = load(branchy_file)
    assert s.nodes[-1].type == "session_info"
    assert tree.leaf == s.nodes[-1].id


def test_malformed_lines_are_skipped_and_reported(tmp_path):
    b = SessionBuilder()
    b.user("one")
    b.assistant("two")
    lines = b.lines()
    lines.insert(2, "{not json")
    lines.insert(3, "[1,2]")
    lines.insert(4, '{"type":"message","id":"x","parentId":null,"n":NaN}')
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(lines) + "\n{\"type\":\"mess")  # and a torn last line
    s, tree = load(p)
    assert [n.type for n in s.nodes] == ["message", "message"]
    assert [line for line, _ in s.malformed] == [3, 4, 5, 7]
    assert s.malformed[-1][1] == "torn last line"
    assert not s.ends_with_newline


def test_no_header_empty_and_directory_are_bad_files(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(BadFile, match="empty file"):
        parse(str(tmp_path / "empty.jsonl"))
    (tmp_path / "nohead.jsonl").write_text(dumps({"type": "message", "id": "a", "parentId": None}) + "\n")
    with pytest.raises(BadFile, match="not a session header"):
        parse(str(tmp_path / "nohead.jsonl"))
    with pytest.raises(BadFile, match="directory"):
        parse(str(tmp_path))


def test_oh_my_pi_title_line_and_extra_types(tmp_path):
    b = SessionBuilder()
    u = b.user("hi")
    b.append("mode_change", mode="plan")
    b.append("model_change", model="anthropic/claude-opus-4")
    b.assistant("hello")
    title = dumps({"type": "title", "v": 1, "title": "My title", "pad": " " * 180})
    p = tmp_path / "omp.jsonl"
    p.write_text(title + "\n" + "\n".join(b.lines()) + "\n")
    s, tree = load(p)
    assert s.title["title"] == "My title"
    assert s.header["id"] == b.header["id"]
    assert [n.type for n in s.nodes] == ["message", "mode_change", "model_change", "message"]
    ctx = tree.build_context(tree.nodes[2].id)
    assert ctx["model"] == {"provider": "anthropic", "modelId": "claude-opus-4"}
    assert tree.path_ids(tree.leaf)[0] == u


def v1_lines():
    header = {"type": "session", "id": "v1-session", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/p"}
    entries = [
        {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": "hello", "timestamp": 1}},
        {"type": "message", "timestamp": "2025-01-01T00:00:02.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}], "provider": "p",
                     "model": "m", "stopReason": "stop", "timestamp": 2}},
        {"type": "message", "timestamp": "2025-01-01T00:00:03.000Z",
         "message": {"role": "hookMessage", "customType": "x", "content": "hook", "display": True,
                     "timestamp": 3}},
        {"type": "compaction", "timestamp": "2025-01-01T00:00:04.000Z", "summary": "sum",
         "firstKeptEntryIndex": 2, "tokensBefore": 1000},
        {"type": "message", "timestamp": "2025-01-01T00:00:05.000Z",
         "message": {"role": "user", "content": "after", "timestamp": 5}},
    ]
    return [dumps(header)] + [dumps(e) for e in entries]


def test_v1_gets_deterministic_ids_and_migrated_content(tmp_path):
    p = tmp_path / "v1.jsonl"
    p.write_text("\n".join(v1_lines()) + "\n")
    s1, t1 = load(p)
    s2, t2 = load(p)
    ids = [n.id for n in s1.nodes]
    assert ids == [n.id for n in s2.nodes]
    assert all(len(i) == 8 and int(i, 16) >= 0 for i in ids) and len(set(ids)) == 5
    assert [n.parent for n in s1.nodes] == [None] + ids[:-1]
    compaction = s1.load(s1.nodes[3])
    assert compaction["firstKeptEntryId"] == ids[1]  # index 2 counts the header, as pi does
    assert "firstKeptEntryIndex" not in compaction
    assert s1.load(s1.nodes[2])["message"]["role"] == "custom"
    ctx = t1.build_context(t1.leaf)
    assert [m["role"] for m in ctx["messages"]] == ["compactionSummary", "assistant", "custom", "user"]


def test_v2_hook_message_becomes_custom(tmp_path):
    b = SessionBuilder(version=2)
    b.append("message", message={"role": "hookMessage", "customType": "h", "content": "x", "display": True,
                                 "timestamp": 1})
    s, tree = load(b.write(tmp_path / "v2.jsonl"))
    assert s.version == 2 and s.needs_migration
    assert s.load(s.nodes[0])["message"]["role"] == "custom"


def test_paths_merge_base_ranges_and_abandoned(branchy_file):
    s, tree = load(branchy_file)
    r = Resolver(tree)
    csv = r.resolve("csv-attempt")
    leaf = tree.leaf
    base = tree.merge_base(csv, leaf)
    assert tree.get(base).role == "toolResult"  # the read result both branches hang from
    assert tree.path_ids(leaf)[:3] == tree.path_ids(base)
    assert [n.id for n in tree.range(csv, leaf)] == tree.path_ids(leaf)[3:]
    sym = {n.id for n in tree.symmetric_range(csv, leaf)}
    assert sym == (set(tree.path_ids(csv)) | set(tree.path_ids(leaf))) - set(tree.path_ids(base))
    entries, common = tree.abandoned(csv, leaf)
    assert common == base
    assert [n.id for n in entries] == tree.path_ids(csv)[3:]
    assert tree.is_ancestor(base, leaf) and tree.is_ancestor(leaf, leaf) and not tree.is_ancestor(csv, leaf)


def test_children_sorted_by_timestamp_not_file_order(tmp_path):
    b = SessionBuilder()
    root = b.user("root")
    late = b.assistant("late")
    b.at(root)
    early = b.assistant("early")
    b.entries[-1]["timestamp"] = "2020-01-01T00:00:00.000Z"
    s, tree = load(b.write(tmp_path / "s.jsonl"))
    assert [n.id for n in tree.children(root)] == [early, late]


def test_roots_include_orphans_and_self_parents(tmp_path):
    b = SessionBuilder()
    a = b.user("a")
    b.append("message", parent="missing1", message={"role": "user", "content": "orphan", "timestamp": 1})
    b.append("message", id="selfself", parent="selfself", message={"role": "user", "content": "s", "timestamp": 1})
    s, tree = load(b.write(tmp_path / "s.jsonl"))
    assert [n.id for n in tree.roots] == [a, s.nodes[1].id, "selfself"]
    assert tree.path_ids("selfself") == ["selfself"]


def test_cycles_are_reported_not_looped(tmp_path):
    b = SessionBuilder()
    b.user("a")
    b.append("message", id="cyc00001", parent="cyc00002", message={"role": "user", "content": "x", "timestamp": 1})
    b.append("message", id="cyc00002", parent="cyc00001", message={"role": "user", "content": "y", "timestamp": 1})
    s, tree = load(b.write(tmp_path / "s.jsonl"))
    with pytest.raises(CycleError):
        tree.path("cyc00002")
    assert {n.id for n in tree.unreachable()} == {"cyc00001", "cyc00002"}


def test_duplicate_ids_later_wins_like_pi(tmp_path):
    b = SessionBuilder()
    b.user("first", id="dupdup01")
    b.assistant("second", id="dupdup01", parent=None)
    s, tree = load(b.write(tmp_path / "s.jsonl"))
    assert tree.get("dupdup01").role == "assistant"
    assert len(tree.roots) == 1


def test_labels_latest_wins_and_empty_clears(tmp_path):
    b = SessionBuilder()
    u = b.user("a")
    a = b.assistant("b")
    b.label(u, "one")
    b.label(u, "two")
    b.label(a, "x")
    b.label(a, "")
    s, tree = load(b.write(tmp_path / "s.jsonl"))
    assert tree.labels == {u: "two"}


def test_context_with_compaction_keeps_from_first_kept(branchy_file):
    s, tree = load(branchy_file)
    ctx = tree.build_context(tree.leaf)
    roles = [m["role"] for m in ctx["messages"]]
    assert roles[0] == "compactionSummary"
    assert ctx["messages"][1]["content"][0]["text"] == "Write a regex-based parser instead"
    assert "branchSummary" not in roles  # before firstKeptEntryId, so compacted away
    assert ctx["thinkingLevel"] == "high"
    assert ctx["model"] == {"provider": "openai", "modelId": "gpt-5"}
    before = tree.build_context(Resolver(tree).resolve(":/regex-based"))
    assert [m["role"] for m in before["messages"]][:4] == ["user", "assistant", "toolResult", "branchSummary"]
    assert tree.build_context(None) == {"messages": [], "thinkingLevel": "off", "model": None}


def test_revisions(branchy_file):
    s, tree = load(branchy_file)
    r = Resolver(tree)
    path = tree.path_ids(tree.leaf)[:-2]  # the file ends with a label and a name entry: @ is before them
    leaf = path[-1]
    assert r.resolve("@") == r.resolve("HEAD") == leaf
    assert r.resolve("@^") == path[-2] and r.resolve("@~3") == path[-4] and r.resolve("@~") == path[-2]
    assert r.resolve("root") == path[0]
    assert r.resolve("start") == path[0]
    assert r.resolve(path[4]) == path[4]
    assert r.resolve(":/embedded newlines") == path[-2]
    with pytest.raises(NotFound, match="ambiguous"):
        r.resolve("0000")
    with pytest.raises(NotFound, match="no parent"):
        r.resolve("root^")
    with pytest.raises(NotFound):
        r.resolve("no-such-label")
    assert r.resolve_range("start..@") == ("range", path[0], leaf)
    assert r.resolve_range("csv-attempt...") == ("symmetric", r.resolve("csv-attempt"), leaf)


def test_exact_id_beats_label_beats_prefix(tmp_path):
    b = SessionBuilder()
    first = b.user("a", id="abcd0001")
    second = b.assistant("b", id="abcd")
    third = b.user("c", id="beef0001")
    b.label(third, "abcd0001")  # a label spelled like another entry's id
    b.label(first, "abcd00")  # a label that is also a prefix of abcd0001
    s, tree = load(b.write(tmp_path / "s.jsonl"))
    r = Resolver(tree)
    assert r.resolve("abcd0001") == first
    assert r.resolve("abcd") == second
    assert r.resolve("abcd00") == first
    assert r.resolve("beef") == third


@pytest.mark.slow  # (big inputs: left out of `make check`)
def test_fifty_thousand_deep_needs_no_recursion(tmp_path):
    b = SessionBuilder()
    for i in range(25_000):
        b.user(f"q{i}")
        b.assistant(f"a{i}")
    s, tree = load(b.write(tmp_path / "deep.jsonl"))
    assert len(tree.path(tree.leaf)) == 50_000
    assert len(tree.build_context(tree.leaf)["messages"]) == 50_000
    assert Resolver(tree).resolve("@~49999") == tree.roots[0].id
    from stree.output.graph import graph

    rows = graph(tree, "all")
    assert len(rows) == 50_000 and rows[-1].leaf


def test_a_dropped_session_closes_its_file(tmp_path):
    """Library callers that parse many files without close() do not run out of descriptors."""
    import gc
    import os

    from builders import branchy

    from stree.storage.session import parse

    path = branchy().write(tmp_path / "s.jsonl")
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    for _ in range(50):
        s = parse(str(path))
        assert s.nodes
        del s
    gc.collect()
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) <= before
