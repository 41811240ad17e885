"""grep's SESSION:ENTRY revisions resolve whatever the session id holds (issue 24, item 6): an id
with ':', '/', '%', a space or control characters, or a short one, is percent-encoded in the
session part (what grep prints and its `rev` field), and every command's revision arguments
decode it: `stree show REV` gives the entry grep found, in the CLI's human and --json output,
through click and the fast paths."""

import json

import pytest
from builders import SessionBuilder

IDS = ["proj:one", "a/b/c", "tab\there \x1b[31m", "ab", "50%off", "ünï:cödé", "0123abcd-plain"]


@pytest.fixture
def sessions(isolated_home):
    directory = isolated_home / ".pi" / "agent" / "sessions" / "--home-dev-proj--"
    directory.mkdir(parents=True)
    for n, sid in enumerate(IDS):
        b = SessionBuilder(id=sid)
        b.user(f"needle in session {n}")
        b.assistant("ok")
        b.write(directory / f"s{n}.jsonl")
    return directory


@pytest.mark.parametrize("fast", ["", "1"])
def test_every_rev_grep_prints_resolves_to_its_entry(stree, sessions, fast):
    env = {"STREE_NO_FAST": fast}
    r = stree("grep", "--json", "needle", env=env)
    assert r.code == 0, r
    records = [json.loads(x) for x in r.out.splitlines()]
    assert sorted(rec["session"] for rec in records) == sorted(IDS)
    for rec in records:
        shown = stree("show", "--json", rec["rev"], env=env)
        assert shown.code == 0 and json.loads(shown.out)["id"] == rec["entry"], (rec["session"], rec["rev"], shown)
        assert ":" not in rec["rev"].rpartition(":")[0] or rec["session"] == rec["rev"].rpartition(":")[0]
    # the human output's first field is a revision too (short session prefix, percent-encoded)
    human = stree("grep", "needle", env=env)
    assert human.code == 0 and len(human.out.splitlines()) == len(IDS)
    for line in human.out.splitlines():
        rev = line.split(" ", 1)[0]
        assert "\x1b" not in rev and "\t" not in rev
        parsed = stree("rev-parse", rev, env=env)
        assert parsed.code == 0, (rev, parsed)
        n = int(line.rsplit(" ", 1)[1])  # "needle in session N"
        assert parsed.out.strip() == stree("-s", sessions / f"s{n}.jsonl", "rev-parse", "@~1", env=env).out.strip()


def test_writes_take_an_encoded_rev_too(stree, sessions):
    rec = next(json.loads(x) for x in stree("grep", "--json", "needle in session 1").out.splitlines())
    assert rec["session"] == "a/b/c" and rec["rev"].startswith("a%2Fb%2Fc:")
    r = stree("label", "found", rec["rev"])
    assert r.code == 0, r
    labels = json.loads(stree("-s", sessions / "s1.jsonl", "label", "--json").out.splitlines()[0])
    assert (labels["label"], labels["id"]) == ("found", rec["entry"])


def test_a_percent_sequence_that_names_no_session_is_not_found(stree, sessions):
    r = stree("show", "zz%3Azz:abcd")
    assert r.code in (2, 3) and "Traceback" not in r.err, r
