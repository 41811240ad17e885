"""The usage a push sends to a shared catalogue (a real PostgreSQL server, tests/lib/pgkit.py)
is what the local catalogue read with the entries (stree.storage.catalog.usage), not the
files parsed again: `stats --all` answers the same from both backends for a fork whose
copied prefix is counted once, after the parent and the fork grew and were pushed again
(only their appended lines sent)."""

import json

import pytest

from clock import past_the_tick
from pgkit import pg_server, pg_url  # noqa: F401  (fixtures)
from test_catalog import corpus, dumps
from test_catalog_pg import same_stats

pytestmark = pytest.mark.pg


def push(stree, url):
    r = stree("--catalog", url, "catalog", "push", "--json")
    assert r.code == 0 and "Traceback" not in r.err, r
    return json.loads(r.out)


def stats_all(stree, *catalog):
    r = stree(*catalog, "stats", "--all", "--json")
    assert r.code == 0, r
    return r.out.splitlines()


def grow(path, n):
    """`n` assistant replies with usage appended to the session at `path`."""
    lines = path.read_text().splitlines()
    parent = json.loads(lines[-1])["id"]
    with open(path, "a") as f:
        for i in range(n):
            eid = f"{path.stem[:4]}{i:04x}"
            f.write(dumps({"type": "message", "id": eid, "parentId": parent, "timestamp": "2026-12-01T00:00:00.000Z",
                           "message": {"role": "assistant", "content": [{"type": "text", "text": f"more {i}"}],
                                       "provider": "anthropic", "model": "claude-x", "stopReason": "stop",
                                       "usage": {"input": 100 + i, "output": 7, "cacheRead": 0, "cacheWrite": 0,
                                                 "totalTokens": 107 + i,
                                                 "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0,
                                                          "cacheWrite": 0, "total": 0.003}}}}) + "\n")
            parent = eid
    past_the_tick(path)


def test_a_forks_usage_is_counted_once_after_it_and_its_parent_grew(stree, isolated_home, pg_url):
    paths = corpus(isolated_home, n=4, entries=60)
    lines = paths[0].read_text().splitlines()
    header = json.loads(lines[0])
    header.update(id="0199f0f0-0000-7000-8000-0000000000f4", parentSession=str(paths[0]))
    fork = paths[0].with_name("fork.jsonl")
    fork.write_text("\n".join([dumps(header)] + lines[1:]) + "\n")
    first = push(stree, pg_url)
    assert first["pushed"] == 5
    same_stats(stats_all(stree), stats_all(stree, "--catalog", pg_url))
    grow(paths[0], 2)
    grow(fork, 3)
    again = push(stree, pg_url)
    assert (again["pushed"], again["sent"], again["unchanged"]) == (2, 5, 3), again
    local = stats_all(stree)
    same_stats(local, stats_all(stree, "--catalog", pg_url))
    rows = [json.loads(x) for x in local]
    fork_row = [r for r in rows if r.get("group") == "session" and r.get("key", "").endswith("f4")]
    assert fork_row and fork_row[0]["count"] == 3, fork_row  # (its own replies only: the prefix is its parent's)
