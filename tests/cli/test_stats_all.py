"""`stats --all` never loses cost and never counts it twice: every total equals the sum over
the distinct entries of the files listed (files joined by parentSession links share the ids
they copied), on the README's demo copy, forks whose parents live elsewhere, sibling forks,
a chain through a file not listed, and a cycle of links. One session's stats puts inherited
turns in its model and day rows. Checked against sums over the raw lines, computed here."""

import json
import shutil

import pytest

from builders import SessionBuilder
from conftest import ROOT
from test_stats import KEYS, brute_sum, only, raw_entries, records, same, total_of, usage

DEMO = ROOT / "stree" / "data" / "demo.jsonl"


def header(path):
    return json.loads(open(path, encoding="utf-8").readline())


def distinct_sum(files):
    """The usage of the distinct entries of `files`: files joined by parentSession links (also
    through files not listed) are one family, and an id held by several of a family is one entry."""
    links = {}
    todo = [str(f) for f in files]
    while todo:
        f = todo.pop()
        if f in links:
            continue
        try:
            parent = header(f).get("parentSession")
        except OSError:
            parent = None
        links[f] = parent
        if parent:
            todo.append(parent)
    family = {f: f for f in links}

    def root(f):
        while family[f] != f:
            f = family[f]
        return f
    for f, parent in links.items():
        if parent in links and root(f) != root(parent):
            family[root(f)] = root(parent)
    seen, entries = set(), []
    for f in files:
        for e in raw_entries(f):
            key = (root(str(f)), e["id"])
            if key not in seen:
                seen.add(key)
                entries.append(e)
    return brute_sum(entries)


def check_all(stree, files):
    """stats --all's total, its session rows, model rows and day rows each sum to the distinct
    entries of `files` (exactly the sessions listed)."""
    recs = records(stree, "stats", "--all")
    assert sorted(r["path"] for r in recs if r["group"] == "session") == sorted(str(f) for f in files)
    expected = distinct_sum(files)
    same(only(recs, "total"), expected)
    for group in ("session", "model", "day"):
        same(total_of(recs, group), expected)
    return recs


@pytest.fixture
def project(isolated_home):
    d = isolated_home / ".pi" / "agent" / "sessions" / "--home-dev-proj--"
    d.mkdir(parents=True)
    return d


def test_the_readmes_demo_copy_counts_whole(stree, project):
    copy = project / "demo.jsonl"
    r = stree("-s", "demo", "fork", "--full", "-o", copy)  # README: copy it first
    assert r.code == 0, r
    assert header(copy)["parentSession"] == str(DEMO)
    recs = check_all(stree, [copy])
    assert only(recs, "total")["cost"] == pytest.approx(brute_sum(raw_entries(DEMO))["cost"])
    assert only(recs, "total")["cost"] > 0.6  # (the $0.63 that vanished)
    # on its own: all of it inherited from the bundled demo, and in the model and day rows
    one = records(stree, "-s", copy, "stats")
    whole = brute_sum(raw_entries(copy))
    same(only(one, "inherited"), whole)
    same(total_of(one, "model"), whole)
    same(total_of(one, "day"), whole)


def test_forks_whose_parents_live_elsewhere_count_what_they_inherited(stree, project, tmp_path):
    fork = project / "fork.jsonl"
    assert stree("-s", "demo", "fork", "bug-found", "-o", fork).code == 0  # its parent: the bundled demo
    elsewhere = tmp_path / "custom-dir"
    elsewhere.mkdir()
    parent = elsewhere / "parent.jsonl"
    shutil.copyfile(DEMO, parent)
    other = project / "other.jsonl"
    assert stree("-s", parent, "fork", "@~2", "-o", other).code == 0
    recs = check_all(stree, [fork, other])
    sessions = {r["path"]: r for r in recs if r["group"] == "session"}
    for f in (fork, other):
        same(sessions[str(f)], brute_sum(raw_entries(f)))  # all of it: its parent is not counted
        assert sessions[str(f)]["cost"] > 0
    # one fork on its own: its own part, what it inherited, and both in the model and day rows
    one = records(stree, "-s", fork, "stats")
    inherited = only(one, "inherited")
    assert inherited["cost"] > 0
    whole = brute_sum(raw_entries(fork))
    same(total_of(one, "model"), whole)
    same(total_of(one, "day"), whole)
    both = total_of(one, "total")
    for k in KEYS + ("cost",):
        both[k] += inherited[k]
    same(both, whole)


def session(path, seed, parent=None, copy=()):
    b = SessionBuilder(id=f"0199a1b2-0000-7000-8000-{seed:012d}", start_ms=1_795_000_000_000 + seed * 9_000_000)
    if parent is not None:
        b.header["parentSession"] = str(parent)
    for e in copy:
        b.entries.append(dict(e))
        b.leaf = e["id"]
        b.n += 1000
    for i in range(3):
        b.user(f"question {seed}.{i}")
        b.assistant(f"answer {seed}.{i}")
        b.entries[-1]["message"]["usage"] = usage(10 * seed + i, 7, 100, 3, cost=0.1 * seed + 0.01 * i)
    b.write(path)
    return b


def test_a_parent_listed_its_forks_siblings_and_a_chain_through_a_file_not_listed(stree, project, tmp_path):
    a = session(project / "a.jsonl", 1)
    b = session(project / "b.jsonl", 2, parent=project / "a.jsonl", copy=a.entries[:4])
    session(project / "c.jsonl", 3, parent=project / "a.jsonl", copy=a.entries[:6])
    hidden = session(tmp_path / "hidden.jsonl", 4, parent=project / "b.jsonl", copy=b.entries[:8])
    session(project / "d.jsonl", 5, parent=tmp_path / "hidden.jsonl", copy=hidden.entries[:10])
    # two siblings whose parent is not listed: what both copied counts once
    lost = session(tmp_path / "lost.jsonl", 6)
    session(project / "e.jsonl", 7, parent=tmp_path / "lost.jsonl", copy=lost.entries[:4])
    session(project / "f.jsonl", 8, parent=tmp_path / "lost.jsonl", copy=lost.entries[:4])
    files = sorted(project.glob("*.jsonl"))
    recs = check_all(stree, files)
    sessions = {r["path"]: r for r in recs if r["group"] == "session"}
    same(sessions[str(project / "a.jsonl")], brute_sum(raw_entries(project / "a.jsonl")))  # the parent: all
    # the siblings: the first by path holds what they copied
    same(sessions[str(project / "e.jsonl")], brute_sum(raw_entries(project / "e.jsonl")))


def test_a_cycle_of_parent_links_counts_the_shared_entries_once(stree, project):
    x = session(project / "x.jsonl", 1)
    session(project / "y.jsonl", 2, parent=project / "x.jsonl", copy=x.entries[:6])
    text = (project / "x.jsonl").read_text().splitlines()
    head = json.loads(text[0])
    head["parentSession"] = str(project / "y.jsonl")  # x names y, y names x
    (project / "x.jsonl").write_text("\n".join([json.dumps(head)] + text[1:]) + "\n")
    recs = check_all(stree, [project / "x.jsonl", project / "y.jsonl"])
    shared = brute_sum(raw_entries(project / "x.jsonl")[:6])
    assert shared["cost"] > 0
    sessions = {r["path"]: r for r in recs if r["group"] == "session"}
    assert sessions[str(project / "x.jsonl")]["cost"] == pytest.approx(distinct_sum([project / "x.jsonl"])["cost"])


def test_titles_entries_and_costs_as_people_read_them(stree, project):
    b = SessionBuilder(id="0199a1b2-0000-7000-8000-000000000042")
    b.user("why is the csv parser slow on quoted fields")
    b.assistant("because")
    b.entries[-1]["message"]["usage"] = usage(1, 2, 0, 0, cost=0.1)
    first = b.user("and now")
    b.assistant("better")
    b.entries[-1]["message"]["usage"] = usage(1, 2, 0, 0, cost=0.2)
    b.at(first)
    b.assistant("a branch of one entry")
    b.write(project / "unnamed.jsonl")
    r = stree("stats", "--all", env={"COLUMNS": "200"})
    assert r.code == 0 and "why is the csv parser slow" in r.out and "unnamed.jsonl" not in r.out, r
    assert "1 session " in r.out and "1 sessions" not in r.out
    recs = records(stree, "stats", "--all")
    assert only(recs, "total")["cost"] == 0.3  # (0.1 + 0.2 summed is 0.30000000000000004)
    assert json.loads(stree("stats", "--all", "--json").out.splitlines()[0])["cost"] == 0.3
    one = stree("-s", project / "unnamed.jsonl", "stats")
    assert ", 1 entry " in one.out and "1 entries" not in one.out
