"""stree reads files written by today's pi (1.5.2) as pi 1.5.2 does.

The files under tests/pi15/ were written by pi 1.5.2's own SessionManager (and a few
raw lines, as ports write them) by tests/pi15/make_fixtures.mjs, which also recorded
what pi 1.5.2 reads from them: NAME.pi.json (its context at entries, its /tree rows for
every filter, search results) and files/files.pi.json (what SessionManager.open makes of
files other writers leave). Every test drives stree as a user does and compares.
"""

import json
import shutil
from pathlib import Path

import pytest

from stree.session import parse
from stree.tree import Tree

HERE = Path(__file__).resolve().parent / "pi15"
NAMES = sorted(p.stem for p in HERE.glob("*.jsonl"))
FILTERS = ["default", "no-tools", "user-only", "labeled-only", "all"]
FILE_VERDICTS = json.loads((HERE / "files" / "files.pi.json").read_text())["verdicts"]


def answers(name):
    return json.loads((HERE / f"{name}.pi.json").read_text(encoding="utf-8"))


@pytest.fixture
def copy(tmp_path):
    """A copy of a fixture (stree writes its index next to nothing it reads, but a test
    must never depend on the repository's files staying untouched)."""
    def make(name, folder=HERE):
        target = tmp_path / f"{name}.jsonl"
        shutil.copyfile(folder / f"{name}.jsonl", target)
        return target
    return make


def test_corpus_covers_every_rule():
    assert set(NAMES) >= {"context_edits", "edits_and_compaction", "system_messages", "null_content",
                          "usage_entries", "read_ranges", "home_paths", "unknown_types"}
    kinds = set()
    for name in NAMES:
        for line in (HERE / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            obj = json.loads(line)
            kinds.add(obj["type"])
            if obj["type"] == "message":
                kinds.add("role:" + obj["message"]["role"])
            if obj["type"] == "compaction" and "systemMessage" in obj:
                kinds.add("compaction+systemMessage")
            if obj["type"] == "compaction" and obj["firstKeptEntryId"] == obj["id"]:
                kinds.add("compaction keeps nothing")
            if obj["type"] == "context_edit":
                kinds.add("edit:" + ("omit" if obj["replacement"] is None else "replace"))
    assert kinds >= {"context_edit", "usage", "edit:omit", "edit:replace", "role:system", "compaction+systemMessage",
                     "compaction keeps nothing", "label", "custom_message", "leaf"}


@pytest.mark.parametrize("name", NAMES)
def test_context_at_the_leaf_is_pi_buildSessionContext(name, copy, stree):
    seen = answers(name)
    r = stree("-s", copy(name), "context", "--json")
    assert r.code == 0, r
    assert json.loads(r.out) == seen["context"]


@pytest.mark.parametrize("name", [n for n in NAMES if answers(n)["contexts"]])
def test_context_at_every_entry_is_pi_buildSessionContext(name, copy, stree):
    seen = answers(name)["contexts"]
    path = copy(name)
    s = parse(str(path))
    tree = Tree(s.nodes, s.load)
    for id, context in seen.items():
        assert json.loads(json.dumps(tree.build_context(id))) == context, id
    for id in list(seen)[1::5]:  # and a few through the command line
        r = stree("-s", path, "context", id, "--json")
        assert json.loads(r.out) == seen[id], id


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("filter", FILTERS)
def test_graph_rows_are_pi_tree_selector(name, filter, copy, stree, monkeypatch):
    seen = answers(name)
    expected = seen["graph"][filter]
    monkeypatch.setenv("HOME", seen["home"])  # the home pi shortened paths under
    r = stree("-s", copy(name), "log", "--graph", "--filter", filter, "--format", "{id}\t{row}")
    if "error" in expected:  # pi's /tree fails on this file (a custom_message with null content)
        assert name == "null_content" and r.code == 0, r
        return
    ours = [line.split("\t", 1) for line in r.out.splitlines()]
    assert [id for id, _ in ours] == expected["ids"]
    # pi draws fold markers (⊟/⊞) in connectors for its interactive folding; stree draws plain ─
    assert [row.rstrip() for _, row in ours] == [row.replace("⊟", "─").replace("⊞", "─") for row in expected["rows"]]


@pytest.mark.parametrize("name", NAMES)
def test_search_matches_pi(name, copy, stree, monkeypatch):
    seen = answers(name)
    monkeypatch.setenv("HOME", seen["home"])
    path = copy(name)
    queries = [q for q, ids in seen["search"].items() if ids]
    assert queries or name == "null_content"
    for query in queries + [q for q, ids in seen["search"].items() if ids == []][:1]:
        r = stree("-s", path, "log", "--graph", "--filter", "all", "--search", query, "--format", "{id}")
        assert r.out.split() == seen["search"][query], query


def test_context_edit_rows_and_search():
    """The rows pi 1.5.2 shows for edits, spelled out (the recorded answers hold them)."""
    rows = answers("context_edits")["graph"]["all"]["rows"]
    assert any("[context omit: " in row for row in rows)
    assert any("[context replace: " in row for row in rows)
    assert not any("context" in row for row in answers("context_edits")["graph"]["default"]["rows"])
    assert answers("context_edits")["search"]["omit"]


def test_usage_entries_are_never_rows(copy, stree):
    path = copy("usage_entries")
    usage = [json.loads(line)["id"] for line in path.read_text().splitlines() if '"type":"usage"' in line]
    assert len(usage) == 2
    for filter in FILTERS:
        r = stree("-s", path, "log", "--graph", "--filter", filter, "--format", "{id}")
        assert r.code == 0 and not set(r.out.split()) & set(usage), filter
    # ... but the leaf is one: the row above it carries the marker
    assert stree("-s", path, "rev-parse", "@").out.strip() == usage[-1]
    marked = [row for row in stree("--color", "never", "-s", path, "log", "--graph").out.splitlines()
              if "← active" in row]
    assert len(marked) == 1 and "assistant: answer" in marked[0]


@pytest.mark.parametrize("name", NAMES)
def test_fsck_knows_the_new_entry_types(name, copy, stree):
    r = stree("-s", copy(name), "fsck", "--json")
    kinds = [json.loads(line)["kind"] for line in r.out.splitlines() if line.strip()]
    if name == "unknown_types":  # entries a port wrote (a `leaf` entry) and a type no pi writes
        assert r.code == 1 and kinds == ["unknown-type", "unknown-type"], r
    else:
        assert r.code == 0 and kinds == [], r


def test_fsck_reports_edits_that_change_nothing(tmp_path, stree):
    from builders import SessionBuilder

    b = SessionBuilder()
    u = b.user("hello")
    b.append("context_edit", targetId="nowhere00", replacement=None)
    b.append("context_edit", targetId=u, replacement={"content": 5})
    b.append("context_edit", targetId=u)
    path = b.write(tmp_path / "s.jsonl")
    r = stree("-s", path, "fsck", "--json")
    problems = [json.loads(line) for line in r.out.splitlines()]
    assert r.code == 1
    assert [(p["line"], p["kind"]) for p in problems] == [(3, "dangling-edit"), (4, "bad-edit"), (5, "bad-edit")]
    # and the context still reads (pi 1.5.2 would fail on the edit without a replacement)
    assert stree("-s", path, "context", "--json").code == 0


@pytest.mark.parametrize("name", sorted(FILE_VERDICTS))
def test_files_other_writers_leave_read_as_pi_opens_them(name, copy, stree):
    seen = FILE_VERDICTS[name]
    path = copy(name, HERE / "files")
    before = path.read_bytes()
    r = stree("-s", path, "log", "--format", "{id}", "--reverse")
    assert path.read_bytes() == before  # pi appends a missing newline when it opens a file; stree never writes on read
    if "error" in seen:
        assert r.code == 4 and "not a session header" in r.err, r
        return
    assert r.code == 0, r
    assert r.out.split() == seen["entries"]
    assert stree("-s", path, "rev-parse", "@").out.strip() == seen["leafId"]
