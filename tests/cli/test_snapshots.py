"""What people look at: the graph and `show`, pinned by snapshots (pytest --snapshot-update to refresh).

Snapshots of what several commands print: one concern, so one module."""

import pytest

from stree.output.graph import FILTERS


@pytest.mark.parametrize("filter", FILTERS)
def test_demo_graph(stree, snapshot, filter):
    r = stree("-s", "demo", "log", "--graph", "--filter", filter)
    assert r.code == 0 and r.err == ""
    snapshot.assert_match(r.out, f"demo-{filter}.txt")


def test_demo_graph_in_colour(stree, snapshot):
    r = stree("-s", "demo", "--color", "always", "log", "--graph")
    snapshot.assert_match(r.out, "demo-colour.txt")


def test_branchy_graph_and_log(stree, snapshot, branchy_file):
    snapshot.assert_match(stree("-s", branchy_file, "log", "--graph", "--filter", "all").out, "branchy-all.txt")
    snapshot.assert_match(stree("-s", branchy_file, "log").out, "branchy-log.txt")


@pytest.mark.parametrize("rev", ["@", "bug-found", "fix-verified~3", "b2af4122", "f768421d", ":/aborted", "5c0a2a6b",
                                 "46b131de"])
def test_demo_show(stree, snapshot, rev):
    r = stree("-s", "demo", "show", rev)
    assert r.code == 0, r
    snapshot.assert_match(r.out, "demo-" + rev.replace(":/", "search-").replace("~", "-") + ".txt")
