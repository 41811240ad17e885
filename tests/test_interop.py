"""stree and the real pi agree on every file of the corpus: leaf, tree, labels, context, graph rows.

Every comparison runs against each pinned pi (0.73.1, 0.87.1, 1.5.2; the version is in the
test id). pi's answers for a module come from one node process per version (pi_batch)."""

import json
import os
import shutil

import pytest
from corpus import build
from pi_harness import REFERENCE, each_version, pi, pi_batch

from stree.session import parse
from stree.tree import Tree

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
