"""stree reads files written by today's pi (1.6.0) as pi 1.6.0 does.

The corpus (tests/corpus_pi15.py, its files as pi 1.5 and later write them) is written by
pi 1.6.0's own SessionManager through the harness (plus a few raw lines, as ports write
them); pi 1.6.0 then says what it reads from each file (context at every entry, /tree rows
for every filter, searches) and stree, driven as a user drives it, must say the same. The
same files go to every pinned pi: where an older one reads them differently (OLDER below),
1.6.0 is the answer and the test records where the older version disagreed (1.5.2: nowhere).
"""

import json
import os
import shutil

import pytest
from corpus_pi15 import BUILDERS, ODD_FILES, write
from pi_harness import REFERENCE, VERSIONS, pi_batch

from stree.output.graph import graph
from stree.storage.session import parse
from stree.core.tree import Tree

FILTERS = ["default", "no-tools", "user-only", "labeled-only", "all"]
QUERIES = ["context", "omit", "replace", "edit", "system", "usage", "hello", "note", "ok", "first", "toolresult 8",
           "port", "null", "undefined", "false", "summed"]
NAMES = sorted(BUILDERS)
# where an older pi reads this corpus differently from 1.6.0 (found by running them; stree follows 1.6.0)
OLDER = {
    "1.5.2": {"context": set(), "rows": set()},
    "0.87.1": {"context": set(),
               "rows": {"read_ranges", "home_paths"}},  # 1.3.0: read line ranges; 1.5.0: ~ only inside $HOME
    "0.73.1": {"context": {"context_edits", "edits_and_compaction", "system_messages", "null_content"},  # no
               # context_edit, no compaction systemMessage, no content normalisation
               "rows": {"context_edits", "edits_and_compaction", "usage_entries", "read_ranges", "home_paths",
                        "missing_fields"}},  # context_edit rows shown
}

NEWER = {"context": set(), "rows": set()}  # a newer pi (make test-latest) is expected to agree everywhere


def ask(requests, home, version=REFERENCE):
    old = os.environ.get("HOME")
    os.environ["HOME"] = home  # pi shortens paths under $HOME
    try:
        return pi_batch(requests, version=version, allow_errors=True)
    finally:
        os.environ["HOME"] = old


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """name -> (path, home, pi 1.6.0's answers: inspect, graph per filter, search per query)."""
    root = tmp_path_factory.mktemp("pi15")
    home = str(root / "home")
    files = {name: write(root / f"{name}.jsonl", build(home), home) for name, build in BUILDERS.items()}
    requests = []
    for name, path in files.items():
        ids = [n.id for n in parse(str(path)).nodes]
        requests.append(["inspect", path, *[a for id in ids for a in ("--context-at", id)]])
        requests += [["graph", path, "--filter", f] for f in FILTERS]
        requests += [["graph", path, "--filter", "all", "--search", q] for q in QUERIES]
    answers = iter(ask(requests, home))
    out = {}
    for name, path in files.items():
        inspect = next(answers)
        graph = {f: next(answers) for f in FILTERS}
        search = {q: next(answers) for q in QUERIES}
        out[name] = (path, home, {"inspect": inspect, "graph": graph, "search": search})
    return out


def test_corpus_covers_every_rule(corpus):
    kinds = set()
    for path, _, _ in corpus.values():
        for line in path.read_text(encoding="utf-8").splitlines():
            obj = json.loads(line)
            kinds.add(obj["type"])
            if obj["type"] == "message":
                kinds.add("role:" + str(obj["message"].get("role")))
            if obj["type"] == "compaction" and "systemMessage" in obj:
                kinds.add("compaction+systemMessage")
            if obj["type"] == "compaction" and obj.get("firstKeptEntryId") == obj["id"]:
                kinds.add("compaction keeps nothing")
            if obj["type"] == "context_edit":
                kinds.add("edit:" + ("omit" if obj["replacement"] is None else "replace"))
    assert kinds >= {"context_edit", "usage", "edit:omit", "edit:replace", "role:system", "compaction+systemMessage",
                     "compaction keeps nothing", "label", "custom_message", "leaf"}


@pytest.mark.parametrize("name", NAMES)
def test_context_is_pi_buildSessionContext_at_the_leaf_and_every_entry(name, corpus, stree):
    path, _, seen = corpus[name]
    inspect = seen["inspect"]
    r = stree("-s", path, "context", "--json")
    assert r.code == 0, r
    assert json.loads(r.out) == inspect["context"]
    s = parse(str(path))
    tree = Tree(s.nodes, s.load)
    assert tree.leaf == inspect["leafId"]
    assert [s.load(n) for n in s.nodes] == inspect["entries"]
    for id, context in inspect["contexts"].items():
        assert json.loads(json.dumps(tree.build_context(id))) == context, id
    for id in list(inspect["contexts"])[1::6]:  # and a few through the command line
        r = stree("-s", path, "context", id, "--json")
        assert json.loads(r.out) == inspect["contexts"][id], id


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("filter", FILTERS)
def test_graph_rows_are_pi_tree_selector(name, filter, corpus, stree, monkeypatch):
    path, home, seen = corpus[name]
    expected = seen["graph"][filter]
    monkeypatch.setenv("HOME", home)  # the home pi shortened paths under
    r = stree("-s", path, "log", "--graph", "--filter", filter, "--format", "{id}\t{row}")
    assert r.code == 0, r
    if "error" in expected:  # pi's /tree fails on this file (a custom_message with null content)
        assert name == "null_content" and "reading 'filter'" in expected["error"]
        assert "[nothing]: " in r.out  # stree draws the row, with no text
        return
    ours = [line.split("\t", 1) for line in r.out.splitlines()]
    assert [id for id, _ in ours] == expected["ids"]
    # pi draws fold markers (⊟/⊞) in connectors for its interactive folding; stree draws plain ─
    assert [row.rstrip() for _, row in ours] == [row.replace("⊟", "─").replace("⊞", "─")
                                                 for row in expected["rows"]]


@pytest.mark.parametrize("name", NAMES)
def test_search_matches_pi(name, corpus, stree, monkeypatch):
    path, home, seen = corpus[name]
    monkeypatch.setenv("HOME", home)
    found = [q for q, result in seen["search"].items() if result.get("ids")]
    empty = [q for q, result in seen["search"].items() if result.get("ids") == []]
    assert found or name == "null_content"
    s = parse(str(path))
    tree = Tree(s.nodes, s.load)
    for query, result in seen["search"].items():  # every query in process, a few on the command line
        if "ids" in result:
            assert [row.node.id for row in graph(tree, "all", query)] == result["ids"], query
    for query in found[:3] + empty[:1]:
        r = stree("-s", path, "log", "--graph", "--filter", "all", "--search", query, "--format", "{id}")
        assert r.out.split() == seen["search"][query]["ids"], query


def test_context_edits_show_as_pi_1_5_shows_them(corpus):
    """What the comparisons above cover, spelled out: the edits' rows, and their effect."""
    _, _, seen = corpus["context_edits"]
    rows = seen["graph"]["all"]["rows"]
    assert any("[context omit: " in row for row in rows) and any("[context replace: " in row for row in rows)
    assert not any("[context" in row for row in seen["graph"]["default"]["rows"])
    assert seen["search"]["omit"]["ids"]
    texts = [json.dumps(m) for m in seen["inspect"]["contexts"]["e0000001"]["messages"]]  # the raw edit's context
    assert any("hello, edited twice" in t for t in texts) and not any("edited once" in t for t in texts)
    assert not any("contents of a.py" in t for t in texts)  # the omitted tool result
    assert any('"raw string"' in t and '"type": "text"' in t for t in texts)  # a string became a text block


def test_older_pi_ignores_what_it_does_not_know(corpus):
    """pi 0.73.1 predates context_edit and usage entries: it ignores edits and shows the
    entries as rows. stree follows 1.6.0 (compared above); this records the difference."""
    path, home, seen = corpus["context_edits"]
    old_inspect, old_graph = ask([["inspect", path, "--context-at", "e0000001"],
                                  ["graph", path, "--filter", "default"]], home, version="0.73.1")
    old, new = old_inspect["contexts"]["e0000001"], seen["inspect"]["contexts"]["e0000001"]
    assert old != new
    assert any("contents of a.py" in json.dumps(m) for m in old["messages"])  # the omitted tool result is back
    assert len(old_graph["ids"]) > len(seen["graph"]["default"]["ids"])  # edit entries are rows there


def test_usage_entries_are_never_rows(corpus, stree):
    path, _, _ = corpus["usage_entries"]
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
def test_fsck_knows_the_new_entry_types(name, corpus, stree):
    path, _, _ = corpus[name]
    r = stree("-s", path, "fsck", "--json")
    kinds = [json.loads(line)["kind"] for line in r.out.splitlines() if line.strip()]
    if name == "unknown_types":  # entries a port wrote (a `leaf` entry) and a type no pi writes
        assert r.code == 1 and kinds == ["unknown-type", "unknown-type"], r
    elif name == "missing_fields":  # an edit with a null targetId, compactions without firstKeptEntryId
        assert r.code == 1 and kinds == ["dangling-edit", "dangling-first-kept", "dangling-first-kept"], r
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
    # and the context still reads (pi 1.6.0 would fail on the edit without a replacement)
    assert stree("-s", path, "context", "--json").code == 0


@pytest.fixture(scope="module")
def odd_files(tmp_path_factory):
    """name -> (path, pi 1.6.0's inspect of it, or its error)."""
    root = tmp_path_factory.mktemp("odd")
    paths = {}
    for name, text in ODD_FILES.items():
        paths[name] = root / f"{name}.jsonl"
        paths[name].write_bytes(text.encode("utf-8"))
    seen = ask([["inspect", p] for p in paths.values()], str(root))
    return {name: (path, answer) for (name, path), answer in zip(paths.items(), seen)}


@pytest.mark.parametrize("name", sorted(ODD_FILES))
def test_files_other_writers_leave_read_as_pi_opens_them(name, odd_files, stree):
    path, seen = odd_files[name]
    before = path.read_bytes()
    r = stree("-s", path, "log", "--format", "{id}", "--reverse")
    assert path.read_bytes() == before  # pi appends a missing newline when it opens a file; stree never writes on read
    if "error" in seen:
        assert "not a valid pi session" in seen["error"]
        assert r.code == 4 and "not a session header" in r.err, r
        return
    assert r.code == 0, r
    assert r.out.split() == [e["id"] for e in seen["entries"]]
    assert stree("-s", path, "rev-parse", "@").out.strip() == seen["leafId"]


def _session(directory, cwd, id, text):
    from builders import SessionBuilder

    b = SessionBuilder(cwd=str(cwd), id=id)
    b.user(text)
    return b.write(directory / f"2026-11-01T00-00-00-000Z_{id}.jsonl")


def test_a_custom_session_dir_serves_the_sessions_of_this_cwd(tmp_path, stree):
    """pi 1.5 (continueRecent, list, findById): with --session-dir or $PI_CODING_AGENT_SESSION_DIR
    naming a directory that is not the project's own, -c and the list keep only the sessions
    whose header cwd is this directory; an id from another cwd is still found by id."""
    flat, here, there = tmp_path / "flat", tmp_path / "here", tmp_path / "there"
    for d in (flat, here, there):
        d.mkdir()
    _session(flat, here, "0199aaaa-0000-7000-8000-00000000000a", "here's session")
    other = _session(flat, str(there) + "/", "0199bbbb-0000-7000-8000-00000000000b", "there's session")
    later = other.stat().st_mtime + 10
    os.utime(other, (later, later))  # the newest file of the dir belongs to another cwd
    for how in (["--session-dir", flat], []):
        env = {} if how else {"PI_CODING_AGENT_SESSION_DIR": str(flat)}
        assert "here's session" in stree(*how, "log", cwd=here, env=env).out
        assert stree(*how, "ls", "--format", "{id}", cwd=here, env=env).out.split() == \
            ["0199aaaa-0000-7000-8000-00000000000a"]
        assert "there's session" in stree(*how, "log", cwd=there, env=env).out  # (a trailing / in its cwd)
        assert "there's session" in stree(*how, "-s", "0199bbbb", "log", cwd=here, env=env).out
        nowhere = stree(*how, "log", cwd=tmp_path, env=env)
        assert nowhere.code == 3 and "no pi session" in nowhere.err


def test_an_exact_session_id_beats_a_prefix(tmp_path, stree):
    """pi 1.5: session ids are any [A-Za-z0-9._-] string; an exact id wins over ids it prefixes."""
    flat = tmp_path / "flat"
    flat.mkdir()
    for id in ("run.1", "run.10", "run.1-b"):
        _session(flat, tmp_path, id, f"session {id}")
    r = stree("--session-dir", flat, "-s", "run.1", "log", "--format", "{preview}", cwd=tmp_path)
    assert r.code == 0 and r.out.strip() == "user: session run.1", r
    assert stree("--session-dir", flat, "-s", "run.10", "log", "--format", "{preview}", cwd=tmp_path).out.strip() == \
        "user: session run.10"
    ambiguous = stree("--session-dir", flat, "-s", "run.1-", "log", cwd=tmp_path)
    assert ambiguous.code == 0 and "run.1-b" in ambiguous.out
    both = stree("--session-dir", flat, "-s", "run", "log", cwd=tmp_path)
    assert both.code == 3 and "ambiguous" in both.err  # stree asks where pi would take the newest


def test_names_have_newlines_turned_into_spaces_as_pi_writes_them(tmp_path, stree):
    from pi_harness import pi_write

    name = "  first line\r\n\nsecond\rthird  "
    ours, theirs = tmp_path / "ours.jsonl", tmp_path / "theirs.jsonl"
    pi_write(ours, [["appendMessage", {"role": "user", "content": "hi", "timestamp": 1}]], cwd=str(tmp_path))
    shutil.copyfile(ours, theirs)
    seen = pi_write(theirs, [["appendSessionInfo", name]])
    assert stree("-s", ours, "name", name).code == 0
    written = json.loads(ours.read_text().splitlines()[-1])
    assert written["name"] == seen["appendedEntries"][0]["name"] == "first line second third"


@pytest.mark.parametrize("api,as_", [("openai-completions", "openai"), ("anthropic-messages", "anthropic")])
def test_replayed_context_carries_the_system_prompt_and_tools_as_pi_ai_sends_them(api, as_, corpus, stree):
    """(The whole body against pi 1.6.0's: tests/interop/test_request.py.) The session's system
    messages declare its tools: they are the request's, not pi's defaults."""
    path, home, _ = corpus["system_messages"]
    sent = ask([["request", path, "--api", api]], home)[0]["body"]
    body = json.loads(stree("-s", path, "context", "--as", as_, "--model", "m1", "--provider", "vllm",
                            "--base-url", "http://127.0.0.1:9/v1").out)
    names = [t["function"]["name"] if as_ == "openai" else t["name"] for t in body["tools"]]
    assert names == ["read", "edit"]  # the session's (bash was removed)
    if as_ == "openai":
        assert sent["messages"][0]["role"] == "system"
        assert body["messages"][0] == sent["messages"][0]
        assert not [m for m in body["messages"][1:] if m["role"] == "system"]
        assert body["tools"] == [{"type": "function", "function": {k: t["function"][k] for k in
                                                          ("name", "description", "parameters")}}
                        for t in sent["tools"]]
    else:
        assert [{"type": b["type"], "text": b["text"]} for b in sent["system"]] == \
            [{"type": b["type"], "text": b["text"]} for b in body["system"]]
        ours = [{k: t[k] for k in ("name", "description", "input_schema")} for t in body["tools"]]
        assert ours == [{k: t[k] for k in ("name", "description", "input_schema")} for t in sent["tools"]]
    assert "Today is Tuesday." in json.dumps(body) and "bash" not in json.dumps(body.get("tools"))


def test_a_context_without_system_messages_sends_no_system_prompt(corpus, stree):
    path, _, _ = corpus["context_edits"]
    for as_ in ("openai", "anthropic"):
        body = json.loads(stree("-s", path, "context", "--as", as_).out)
        assert "system" not in body and body["messages"][0]["role"] == "user"
        names = [t["function"]["name"] if as_ == "openai" else t["name"] for t in body["tools"]]
        assert names == ["read", "bash", "edit", "write"]  # pi's default tools


@pytest.fixture(scope="module")
def older(corpus):
    """version -> name -> (inspect at every entry, rows per filter) of the older pis."""
    out = {}
    for version in VERSIONS:
        if version == REFERENCE:
            continue
        requests = []
        for name in NAMES:
            path, home, seen = corpus[name]
            requests.append(["inspect", path, *[a for id in seen["inspect"]["contexts"] for a in ("--context-at", id)]])
            requests += [["graph", path, "--filter", f] for f in FILTERS]
        answers = iter(ask(requests, corpus[NAMES[0]][1], version=version))
        out[version] = {name: (next(answers), {f: next(answers) for f in FILTERS}) for name in NAMES}
    return out


def _view(answer):
    return answer.get("rows"), answer.get("ids"), "error" in answer


@pytest.mark.parametrize("version", [v for v in VERSIONS if v != REFERENCE])
@pytest.mark.parametrize("name", NAMES)
def test_older_pis_differ_only_where_recorded(name, version, corpus, older, stree, monkeypatch):
    """stree's answer is 1.6.0's (tested above); each older pi agrees with it except on the
    files OLDER names for that version."""
    path, home, seen = corpus[name]
    inspect, graph = older[version][name]
    same_context = (inspect["contexts"] == seen["inspect"]["contexts"]
                    and inspect["context"] == seen["inspect"]["context"])
    assert same_context == (name not in OLDER.get(version, NEWER)["context"]), f"pi {version} on {name}: context"
    same_rows = all(_view(graph[f]) == _view(seen["graph"][f]) for f in FILTERS)
    assert same_rows == (name not in OLDER.get(version, NEWER)["rows"]), f"pi {version} on {name}: /tree rows"
    if not same_rows:  # and stree shows 1.6.0's rows, not this version's
        monkeypatch.setenv("HOME", home)
        r = stree("-s", path, "log", "--graph", "--filter", "all", "--format", "{row}")
        rows = [row.rstrip() for row in r.out.splitlines()]
        expected = [row.replace("⊟", "─").replace("⊞", "─") for row in seen["graph"]["all"].get("rows") or []]
        assert rows == expected
