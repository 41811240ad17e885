"""The plain `[--catalog URL] catalog push` answered without click (stree.fastpush), against
a real PostgreSQL server (tests/lib/pgkit.py): it sends what click's command sends, prints
what it prints, does not load click, and says errors as it says them."""

import json

import pytest

from clock import past_the_tick
from pgkit import pg_server, pg_url  # noqa: F401  (fixtures)
from test_catalog import corpus, dumps

pytestmark = pytest.mark.pg


@pytest.fixture(autouse=True)
def each_command_a_process(monkeypatch):
    """stree in a process of its own: whether click was imported is the process's to say."""
    import inprocess

    monkeypatch.setattr(inprocess, "SUBPROCESS_ONLY", True)


def imported(r):
    return {line.rsplit("|", 1)[-1].strip() for line in r.err.splitlines() if line.startswith("import time:")}


def answer(r):
    return r.code, r.out, "\n".join(x for x in r.err.splitlines() if not x.startswith("import time:"))


def fast(stree, *args, env=None):
    r = stree(*args, env={**(env or {}), "PYTHONPROFILEIMPORTTIME": "1"})
    assert "stree.fastpush" in imported(r) and "click" not in imported(r), r
    return r


def grow(path):
    last = json.loads(path.read_text().splitlines()[-1])
    with open(path, "a") as f:
        f.write(dumps({"type": "message", "id": "feedf00d", "parentId": last["id"],
                       "timestamp": "2026-12-01T00:00:00.000Z",
                       "message": {"role": "user", "content": "one more line"}}) + "\n")
    past_the_tick(path)


def test_the_plain_push_sends_and_says_what_click_says(stree, isolated_home, pg_url):
    paths = corpus(isolated_home, n=6, entries=40)
    first = fast(stree, "--catalog", pg_url, "catalog", "push")
    assert first.code == 0 and first.out.startswith("pushed     6 session file(s), "), first
    again = [fast(stree, "--catalog", pg_url, "catalog", "push"),
             fast(stree, f"--catalog={pg_url}", "catalog", "push"),
             fast(stree, "catalog", "push", env={"STREE_CATALOG": pg_url}),
             stree("--catalog", pg_url, "catalog", "push", env={"STREE_NO_FAST": "1"})]
    assert all(answer(r) == answer(again[-1]) for r in again)
    assert again[-1].code == 0 and "pushed     0 session file(s), 0 entries" in again[-1].out
    assert "unchanged  6" in again[-1].out
    grow(paths[2])
    grown = fast(stree, "--catalog", pg_url, "catalog", "push")
    assert grown.code == 0 and grown.out.startswith("pushed     1 session file(s), 1 entries, "), grown
    for args in (["ls", "--all", "--json"], ["grep", "-c", "one more line"], ["stats", "--all", "--json"]):
        local = stree(*args)
        assert local.code == 0 and local.out
        assert stree("--catalog", pg_url, *args).out == local.out, args


def test_the_plain_push_says_errors_as_click_says_them(stree, isolated_home, tmp_path):
    corpus(isolated_home, n=2, entries=20)
    url = f"postgresql://postgres@/stree?host={tmp_path}&port=1"  # (no server listens there)
    slow = stree("--catalog", url, "catalog", "push", env={"STREE_NO_FAST": "1"})
    quick = fast(stree, "--catalog", url, "catalog", "push")
    assert answer(quick) == answer(slow)
    assert quick.code == 5 and quick.out == ""
    said = answer(quick)[2].splitlines()
    assert said[0].startswith("stree: error: catalogue postgresql://") and "connection failed" in said[0]
    assert said[1:] and all(line.startswith("hint: ") for line in said[1:])
    for args in (["catalog", "push"], ["--catalog", "mysql://x", "catalog", "push"]):  # (click's to say)
        r = stree(*args)
        assert r.code == 2 and r.err.startswith("stree: error: ") and "hint: " in r.err, r
        assert answer(r) == answer(stree(*args, env={"STREE_NO_FAST": "1"}))
