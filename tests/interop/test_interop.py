"""stree and the real pi agree on every file of the corpus: leaf, tree, labels, context, graph rows.

Every comparison runs against each pinned pi (0.73.1, 0.87.1, 1.5.2, 1.6.0; the version is in the
test id). pi's answers for a module come from one node process per version (pi_batch)."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from corpus import build
from conftest import ROOT
from pi_harness import NODE22, PI_DIR, REFERENCE, VERSIONS, each_version, package_dir, pi, pi_batch, pi_rpc

from stree.storage.session import parse
from stree.core.tree import Tree

NAMES = ["demo", "branchy", "kitchen", "roots", "compactions", "v1", "v2", "malformed", "deep"]
FILTERS = ["default", "no-tools", "user-only", "labeled-only", "all"]
QUERIES = ["csv", "user fix", "branch summary", "model gpt", "label", "test"]
SEARCHED = ("demo", "kitchen")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    return build(tmp_path_factory.mktemp("corpus"), home), home


@pytest.fixture
def home_env(corpus, monkeypatch):
    monkeypatch.setenv("HOME", str(corpus[1]))  # pi and stree shorten the same home to ~


def load(path):
    s = parse(str(path))
    return s, Tree(s.nodes, s.load)


class PiView:
    """The file pi should look at, and how to translate ids between pi and stree.

    pi gives v1 entries random ids on every load; stree deterministic ones. For a v1
    file pi migrates a copy once (in place), then ids are renamed by file position."""

    def __init__(self, path, tmp, version=REFERENCE):
        self.path = path
        self.version = version
        self.ours_of = {}
        s, _ = load(path)
        if s.version < 2:
            copy = tmp / f"pi-{version}-{path.name}"
            shutil.copyfile(path, copy)
            seen = pi("inspect", copy, "--in-place", version=version)
            self.path = copy
            self.ours_of = dict(zip([e["id"] for e in seen["entries"]], [n.id for n in s.nodes]))
        self.theirs_of = {v: k for k, v in self.ours_of.items()}

    def args(self, command, *args):
        """Harness arguments for `command` on this file, ids in pi's terms."""
        return [command, self.path, *[self.theirs_of.get(a, a) if isinstance(a, str) else a for a in args]]

    def translate(self, seen):
        text = json.dumps(seen)
        for old, new in self.ours_of.items():
            text = text.replace(f'"{old}"', f'"{new}"')
        return json.loads(text)

    def ask(self, *args):
        return self.translate(pi(*self.args(*args), version=self.version))


def sample(ids, k=12):
    if len(ids) <= k:
        return list(ids)
    step = len(ids) / k
    return [ids[int(i * step)] for i in range(k)] + [ids[-1]]


def context_points(path):
    """The entries whose context is compared: a sample along the file, then null."""
    s, _ = load(path)
    return sample([n.id for n in s.nodes])


class PiAnswers:
    """Everything this module asks pi, per version, each version's in one batch on first use."""

    def __init__(self, corpus, tmp):
        self.paths, self.home = corpus
        self.tmp = tmp
        self.cache = {}

    def _batch(self, version, keys, requests, home=False):
        old = os.environ.get("HOME")
        if home:
            os.environ["HOME"] = str(self.home)
        try:
            results = pi_batch(requests, version=version)
        finally:
            if home:
                os.environ["HOME"] = old
        return dict(zip(keys, results))

    def views(self, version):
        if ("views", version) not in self.cache:
            self.cache["views", version] = {name: PiView(self.paths[name], self.tmp, version) for name in NAMES}
        return self.cache["views", version]

    def inspect(self, version, name):
        """pi's inspect of the file, with the contexts at context_points() and at null."""
        if ("inspect", version) not in self.cache:
            views = self.views(version)
            requests = [views[n].args("inspect", *[a for id in context_points(self.paths[n])
                                                    for a in ("--context-at", id)], "--context-at", "null")
                        for n in NAMES]
            self.cache["inspect", version] = self._batch(version, NAMES, requests)
        return self.views(version)[name].translate(self.cache["inspect", version][name])

    def graph(self, version, name, filter):
        if ("graph", version) not in self.cache:
            views = self.views(version)
            keys = [(n, f) for n in NAMES for f in FILTERS]
            self.cache["graph", version] = self._batch(
                version, keys, [views[n].args("graph", "--filter", f) for n, f in keys], home=True)
        return self.views(version)[name].translate(self.cache["graph", version][name, filter])

    def search(self, version, name, query):
        if ("search", version) not in self.cache:
            keys = [(n, q) for n in SEARCHED for q in QUERIES]
            self.cache["search", version] = self._batch(
                version, keys, [["graph", self.paths[n], "--filter", "default", "--search", q] for n, q in keys],
                home=True)
        return self.cache["search", version][name, query]


@pytest.fixture(scope="module")
def answers(corpus, tmp_path_factory):
    return PiAnswers(corpus, tmp_path_factory.mktemp("views"))


@each_version
@pytest.mark.parametrize("name", NAMES)
def test_leaf_tree_labels_and_name_agree(corpus, answers, name, pi_version):
    path = corpus[0][name]
    seen = answers.inspect(pi_version, name)
    s, tree = load(path)
    assert tree.leaf == seen["leafId"]
    assert [n.id for n in tree.roots] == seen["tree"]["roots"]
    children = {n["id"]: n["children"] for n in seen["tree"]["nodes"]}
    assert set(children) == {n.id for n in s.nodes}
    for id, kids in children.items():
        assert [c.id for c in tree.children(id)] == kids, id
    pi_labels = {k: v for k, v in seen["labels"].items() if k in children}
    assert {k: v for k, v in tree.labels.items() if k in children} == pi_labels
    assert tree.name() == seen["name"]
    # the entries pi holds (migrated) are the entries stree loads, ids included
    assert [s.load(n) for n in s.nodes] == seen["entries"]


@each_version
@pytest.mark.parametrize("name", NAMES)
def test_context_agrees_at_leaf_and_along_the_tree(corpus, answers, name, stree, pi_version):
    path = corpus[0][name]
    s, tree = load(path)
    seen = answers.inspect(pi_version, name)
    for id in context_points(path):
        assert tree.build_context(id) == seen["contexts"][id], id
    assert tree.build_context(None) == seen["contexts"]["null"]
    cli = stree("-s", path, "context", "--json")
    assert json.loads(cli.out) == seen["context"]


@pytest.fixture(scope="module")
def stree_graphs():
    """stree's rows per (file, filter): drawn once, compared with every pi version."""
    return {}


@each_version
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("filter", FILTERS)
def test_graph_rows_match_tree_selector(corpus, answers, stree_graphs, home_env, name, filter, stree, pi_version):
    path = corpus[0][name]
    seen = answers.graph(pi_version, name, filter)
    # pi draws fold markers (⊟/⊞) in connectors for its interactive folding; stree draws plain ─
    expected = [row.replace("⊟", "─").replace("⊞", "─") for row in seen["rows"]]
    if (name, filter) not in stree_graphs:
        # a cold parse by three processes (which also builds the index), then the output kept by it
        runs = [stree("-s", path, "log", "--graph", "--filter", filter, "--format", "{id}\t{row}", env=env)
                for env in ({"STREE_JOBS": "3"}, {"STREE_DEBUG_STATS": "1"})]
        stree_graphs[name, filter] = [[line.split("\t", 1) for line in r.out.splitlines()] for r in runs]
        if name != "malformed" and runs[-1].out:  # (skipped lines, or nothing to show: said on stderr, not kept)
            assert "index graph-cache" in runs[-1].err
    for ours in stree_graphs[name, filter]:
        assert [id for id, _ in ours] == seen["ids"]
        assert [row.rstrip() for _, row in ours] == expected  # the harness strips trailing blanks


@each_version
@pytest.mark.parametrize("query", QUERIES)
def test_graph_search_matches_tree_selector(corpus, answers, home_env, query, stree, pi_version):
    # lower-case queries only: the harness types them into pi, where shift+letters are key bindings
    for name in SEARCHED:
        path = corpus[0][name]
        seen = answers.search(pi_version, name, query)
        r = stree("-s", path, "log", "--graph", "--search", query, "--format", "{id}")
        assert r.out.split() == seen["ids"], (name, query)


@each_version
def test_repeated_tool_call_ids_show_the_call_pi_walks_last(tmp_path, stree, pi_version):
    """Some providers number their tool calls per response (call_1, call_1, ...). pi maps
    each id to a call while it walks the tree, the leaf's branch first, and the call it
    walks last is the one every result with that id shows: stree shows the same, before
    and after the leaf moves to the other branch, with and without the index."""
    from builders import SessionBuilder

    b = SessionBuilder()
    start = b.user("start")
    ends = {}
    for branch, (name, args) in {"a": ("read", {"path": "A.py"}), "b": ("bash", {"command": "echo B"})}.items():
        b.at(start)
        b.assistant(None, tools=[(name, args)])
        b.entries[-1]["message"]["content"][-1]["id"] = "call_1"
        b.tool_result("call_1", name, branch)
        ends[branch] = b.user(f"{branch} continues")
    path = b.write(tmp_path / "s.jsonl")
    shown = []
    for step, leaf in enumerate(("b", "a", "b")):
        if step:
            assert stree("-s", path, "checkout", "--exact", ends[leaf]).code == 0
        rows = pi("graph", path, "--filter", "all", version=pi_version)["rows"]
        expected = [row.replace("⊟", "─").replace("⊞", "─") for row in rows]
        for extra in (["--no-cache"], [], []):  # a plain parse, then the index (and its kept previews)
            r = stree(*extra, "-s", path, "log", "--graph", "--filter", "all", "--format", "{row}")
            assert [row.rstrip() for row in r.out.splitlines()] == expected, (leaf, extra)
        shown.append({call for call in ("[read: A.py]", "[bash: echo B]") if any(call in row for row in expected)})
    assert shown == [{"[read: A.py]"}, {"[bash: echo B]"}, {"[read: A.py]"}]  # it did change with the leaf


def test_real_pi_cli_resumes_a_file_stree_wrote(stree, tmp_path):
    """The real `pi --mode rpc --session FILE` of the reference version (offline: no keys, no
    network), on a demo copy that stree forked, checked out and labelled: pi resumes where
    stree left the leaf, with stree's context, session id and name."""
    project = tmp_path / "proj"  # pi refuses a session whose header cwd does not exist
    project.mkdir()
    path = tmp_path / "demo.jsonl"
    assert stree("-s", "demo", "fork", "--full", "--cwd", project, "-o", path).code == 0
    assert stree("-s", path, "checkout", "9bd41591").code == 0
    assert stree("-s", path, "label", "rpc-check").code == 0
    before = path.read_bytes()
    header, *ours = [json.loads(line) for line in before.decode().splitlines()]
    leaf = stree("-s", path, "rev-parse", "@").out.strip()
    context = json.loads(stree("-s", path, "context", "--json").out)
    assert len(context["messages"]) < 25  # (the checkout did move the leaf: the whole demo has 25)

    seen = pi_rpc(path, ["get_state", "get_messages", "get_entries", "get_tree"], in_place=True)
    assert seen["exitCode"] == 0 and seen["signal"] is None, seen["stderr"]
    assert [(r["command"], r["success"]) for r in seen["responses"]] == \
        [("get_state", True), ("get_messages", True), ("get_entries", True), ("get_tree", True)]
    state, messages, entries, tree = [r["data"] for r in seen["responses"]]
    assert state["sessionFile"] == str(path) and state["sessionId"] == header["id"]
    assert state["sessionName"] == stree("-s", path, "name").out.strip() == "fix csv quoting bug"
    assert state["messageCount"] == len(context["messages"])
    assert state["thinkingLevel"] == context["thinkingLevel"]
    assert messages["messages"] == context["messages"]
    # pi holds exactly the entries stree wrote; what it appends on start hangs off stree's leaf
    # (1.5.2 records the thinking level it runs with when the leaf's branch has none: here the
    # checkout left the demo's thinking_level_change on the abandoned branch)
    appended = seen["appendedEntries"]
    assert entries["entries"] == ours + appended
    assert all(e["type"] == "thinking_level_change" for e in appended), appended
    assert ours[-1]["type"] == "label" and ours[-1]["targetId"] == leaf  # stree's @: the entry labelled
    tip = ours[-1]["id"]  # pi's leaf is the file's last line (the label entry)
    for entry in appended:
        assert entry["parentId"] == tip
        tip = entry["id"]
    assert entries["leafId"] == tip
    roots = [node["entry"]["id"] for node in tree["tree"]]
    assert roots == [n.id for n in load(path)[1].roots] and tree["leafId"] == tip


@each_version
@pytest.mark.parametrize("before", [False, True], ids=["clone", "fork-before"])
def test_fork_gives_the_context_of_pis_clone(stree, tmp_path, before, pi_version):
    """stree fork (pi /clone) and fork --before (pi /fork) of the demo, whose path to the leaf
    holds label entries that later entries hang off: the new file's context is that of pi's
    own clone, pi loads stree's file the same way, and nothing is left without its parent."""
    demo = ROOT / "stree" / "data" / "demo.jsonl"
    target = "f7e0df1c" if not before else "a6e6657a"  # the leaf; the last user message on its path
    out = tmp_path / "fork.jsonl"
    r = stree("-s", demo, "fork", *(["--before"] if before else []), target, "-o", out)
    assert r.code == 0, r
    clone = pi("clone", demo, target, *(["--position", "before"] if before else []), version=pi_version)
    if pi_version == "0.73.1":
        # 0.73.1 (fixed in 0.79.2) drops the label entries without re-chaining: the entry after a
        # dropped label keeps its parent id and becomes a root, and pi's context of the clone is
        # only the part after it. Documented here; stree follows 1.5.2.
        assert clone["orphans"] == ["b5a59166"]  # (its parent: the label a206e5c1)
        today = pi("clone", demo, target, *(["--position", "before"] if before else []), version=REFERENCE)
        assert len(clone["context"]["messages"]) < len(today["context"]["messages"])
        return
    assert clone["written"] and clone["orphans"] == []
    ours = [json.loads(line) for line in out.read_text().splitlines()][1:]
    ids = {e["id"] for e in ours}
    assert [e["id"] for e in ours if e["parentId"] is not None and e["parentId"] not in ids] == []
    assert [e for e in ours if e["type"] != "label"] == [e for e in clone["entries"] if e["type"] != "label"]
    assert json.loads(stree("-s", out, "context", "--json").out) == clone["context"]
    assert pi("inspect", out, version=pi_version)["context"] == clone["context"]
    assert r.out.splitlines() == [str(out)]  # the path alone on stdout; --before: the text on stderr
    assert r.err.splitlines() == ([clone["selectedText"]] if before else [])


USAGE = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def pi_written_ops(case):
    """A session made by pi's own SessionManager writers; {"$ref": i}: the id op i returned.
    "edits" adds 1.x's context edits, a usage entry and a system message; "compaction" a system
    message and then a compaction (1.x stores the system message in it as systemMessage)."""
    def user(text, ms):
        return ["appendMessage", {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms}]

    def assistant(text, ms):
        return ["appendMessage", {"role": "assistant", "content": [{"type": "text", "text": text}],
                                  "api": "anthropic-messages", "provider": "anthropic", "model": "claude-x",
                                  "usage": USAGE, "stopReason": "stop", "timestamp": ms}]

    ops = [["appendModelChange", "anthropic", "claude-x"],   # 0
           ["appendThinkingLevelChange", "high"],            # 1
           user("Fix the parser", 1_000),                     # 2
           assistant("Looking at parser.py", 2_000),          # 3
           ["appendLabelChange", {"$ref": 2}, "start"],       # 4
           ["appendSessionInfo", "pi\nwrote this"],           # 5
           user("Now the tests", 3_000),                      # 6
           assistant("Tests added", 4_000),                   # 7
           ["appendCustomEntry", "ext", {"k": 1}],            # 8
           ["branch", {"$ref": 3}],                           # 9
           ["branchWithSummary", {"$ref": 3}, "Tried the tests first."],  # 10
           user("Other way", 5_000),                          # 11
           assistant("Done the other way", 6_000)]            # 12
    if case == "edits":
        ops += [["appendMessage", {"role": "system", "content": "Be brief.", "timestamp": 7_000}],  # 13
                ["appendContextEdit", {"$ref": 12}, {"content": "Done (edited)"}],  # 14
                ["appendContextEdit", {"$ref": 11}, None],                          # 15
                ["appendUsage", "cache_warm", "anthropic", "claude-x", USAGE],      # 16
                user("And now?", 8_000)]                                            # 17
    if case == "compaction":
        ops += [["appendMessage", {"role": "system", "content": "Be brief.", "timestamp": 7_000}],  # 13
                user("And now?", 8_000),                                            # 14
                ["appendCompaction", "Summary so far.", {"$ref": 14}, 1234]]        # 15
    return ops


@each_version
@pytest.mark.parametrize("case", ["base", "edits", "compaction"])
def test_files_written_by_pis_own_writers_read_the_same(stree, tmp_path, case, pi_version):
    """A file written by pi's SessionManager (each version): stree sees pi's leaf, labels, name
    and context (1.5.2's context edits, system messages and compaction systemMessage included)."""
    project = tmp_path / "proj"
    project.mkdir()
    path = tmp_path / "pi.jsonl"
    args = ["write", path, "--cwd", project, "--ops", json.dumps(pi_written_ops(case))]
    if case == "edits" and pi_version == "0.73.1":
        # 0.73.1 has no context edits nor usage entries (its SessionManager cannot write them)
        assert "has no SessionManager.appendContextEdit" in pi_batch([args], version=pi_version,
                                                                     allow_errors=True)[0]["error"]
        return
    made = pi(*args, version=pi_version)
    assert made["written"] and made["created"] and made["header"]["cwd"] == str(project)
    seen = pi("inspect", path, version=pi_version)
    s, tree = load(path)
    assert tree.leaf == seen["leafId"] == made["leafId"]
    assert {k: v for k, v in tree.labels.items()} == seen["labels"]
    # pi 0.87.1 and later turn newlines in a name into spaces when they write it; 0.73.1 kept them
    assert tree.name() == seen["name"] == ("pi\nwrote this" if pi_version == "0.73.1" else "pi wrote this")
    assert [s.load(n) for n in s.nodes] == seen["entries"]
    assert json.loads(stree("-s", path, "context", "--json").out) == seen["context"]


def test_the_pinned_pis_are_installed(tmp_path):
    """make test installed every pinned pi (and Node 22) as pinned: the package versions, and the
    real `pi --version` of the bundled ones (offline, in an empty home)."""
    check = subprocess.run([sys.executable, str(PI_DIR / "install.py"), "--check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    for version in VERSIONS:
        assert json.loads((package_dir(version) / "package.json").read_text())["version"] == version
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1",
           "PI_TELEMETRY": "0"}
    for version in [v for v in VERSIONS if v != "0.73.1"]:
        cli = package_dir(version) / "dist" / "bundle" / "cli.js"
        r = subprocess.run([str(NODE22), str(cli), "--version"], capture_output=True, text=True, env=env, timeout=60)
        assert (r.returncode, r.stdout.strip()) == (0, version), r.stderr
