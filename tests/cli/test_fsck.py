"""stree fsck against a corpus of broken files, one planted problem each, and linear on long
paths (the firstKeptEntryId check of many compactions)."""

import json

import pytest
from builders import SessionBuilder, dumps


def base():
    b = SessionBuilder()
    b.user("one")  # 00000001, line 2
    b.assistant("two")  # 00000002, line 3
    b.user("three")  # 00000003, line 4
    return b


def entry(id, parent, type="custom", ts="2026-11-22T10:15:03.123Z", **fields):
    return {"type": type, "id": id, "parentId": parent, "timestamp": ts, **fields}


# kind -> (extra lines appended after line 4, line expected, words in the message)
CORPUS = {
    "malformed": (["{not json"], 5, "invalid JSON"),
    "duplicate-id": ([dumps(entry("00000002", "00000003"))], 5, "duplicate id 00000002 (first on line 3)"),
    "missing-parent": ([dumps(entry("aaaa0001", "ffffffff"))], 5, "parent ffffffff not found"),
    "self-parent": ([dumps(entry("aaaa0001", "aaaa0001"))], 5, "aaaa0001 is its own parent"),
    "cycle": ([dumps(entry("cccc0001", "cccc0002")), dumps(entry("cccc0002", "cccc0001"))], 5,
              "parent cycle: cccc0001 -> cccc0002 -> cccc0001"),
    "unreachable": ([dumps(entry("cccc0001", "cccc0002")), dumps(entry("cccc0002", "cccc0001")),
                     dumps(entry("dddd0001", "cccc0002"))], 7, "dddd0001 is unreachable"),
    "dangling-label": ([dumps(entry("aaaa0001", "00000003", "label", targetId="0badf00d", label="x"))], 5,
                       "target 0badf00d not found"),
    "dangling-first-kept": ([dumps(entry("aaaa0001", "00000003", "compaction", summary="s",
                                         firstKeptEntryId="90000000", tokensBefore=5))], 5,
                            "firstKeptEntryId 90000000 not found"),
    "bad-timestamp": ([dumps(entry("aaaa0001", "00000003", ts="yesterday"))], 5, "timestamp 'yesterday'"),
}


@pytest.mark.parametrize("kind", list(CORPUS))
def test_fsck_finds_each_planted_problem_with_its_line(stree, tmp_path, kind):
    extra, line, words = CORPUS[kind]
    path = tmp_path / f"{kind}.jsonl"
    path.write_text("\n".join(base().lines() + extra) + "\n")
    r = stree("-s", path, "fsck")
    assert r.code == 1, r
    assert any(x.startswith(f"line {line}: ") and words in x for x in r.out.splitlines()), r.out
    recs = [json.loads(x) for x in stree("-s", path, "fsck", "--json").out.splitlines()]
    assert {"line": line, "kind": kind} in [{"line": x["line"], "kind": x["kind"]} for x in recs]


def test_fsck_header_problems(stree, tmp_path):
    no_header = tmp_path / "no-header.jsonl"
    no_header.write_text("\n".join(base().lines()[1:]) + "\n")
    r = stree("-s", no_header, "fsck", "--json")
    assert r.code == 1 and json.loads(r.out)["kind"] == "header" and json.loads(r.out)["line"] == 1
    bad = base()
    bad.header["timestamp"] = "soon"
    del bad.header["cwd"]
    r = stree("-s", bad.write(tmp_path / "bad-header.jsonl"), "fsck")
    assert r.code == 1 and r.out.splitlines() == ["line 1: header: timestamp 'soon' does not parse",
                                                  "line 1: header: no cwd"]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert stree("-s", empty, "fsck").code == 1


def test_fsck_reports_a_torn_last_line(stree, tmp_path):
    path = tmp_path / "torn.jsonl"
    path.write_text("\n".join(base().lines()) + '\n{"type":"message","id":"ab')
    r = stree("-s", path, "fsck")
    assert r.code == 1 and r.out == "line 5: torn last line\n"


def test_fsck_is_clean_on_good_files(stree, tmp_path, branchy_file):
    for path in (branchy_file, base().write(tmp_path / "b.jsonl")):
        r = stree("-s", path, "fsck")
        assert r.code == 0 and r.out == "" and "ok" in r.err
    assert stree("-s", "demo", "fsck").code == 0
    assert stree("-s", branchy_file, "checkout", "00000006").code == 0
    assert stree("-s", branchy_file, "fsck").code == 0


def on_path(entries, compaction):
    by_id = {}
    for e in entries:
        by_id[e["id"]] = e  # the last wins, as pi's byId
    at, path = compaction["id"], set()
    while at is not None and at in by_id and at not in path:
        path.add(at)
        at = by_id[at]["parentId"]
    return compaction["firstKeptEntryId"] in path


def test_fsck_first_kept_on_long_paths(stree, tmp_path, isolated_home):
    """Many compactions keeping from far up their path (past the walk's budget: fsck then numbers
    the tree in pre-order), some keeping from another branch: each reported as a walk finds."""
    b = SessionBuilder()
    first = b.user("root prompt")
    side_root = b.assistant("answer")
    chain = [b.user(f"step {i}") for i in range(400)]
    b.at(side_root)
    side = [b.user(f"side {i}") for i in range(5)]
    b.at(chain[-1])
    for i in range(150):
        kept = side[i % 5] if i % 7 == 0 else (first if i % 2 else chain[i])
        b.compaction(f"summary {i}", kept)
        b.user(f"after {i}")
    path = b.write(tmp_path / "long.jsonl")
    expected = [(k + 2, e["id"]) for k, e in enumerate(b.entries)
                if e["type"] == "compaction" and not on_path(b.entries, e)]
    assert len(expected) == len(range(0, 150, 7))
    for extra in ([], ["--no-cache"]):
        r = stree(*extra, "-s", path, "fsck", "--json")
        assert r.code == 1
        got = [json.loads(line) for line in r.out.splitlines()]
        assert {p["kind"] for p in got} == {"dangling-first-kept"}
        assert [(p["line"], p["id"]) for p in got] == expected
        assert all("is not on its path" in p["message"] for p in got)
