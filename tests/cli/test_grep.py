"""`stree grep` over every agent's sessions: what a brute-force scan of the files finds, with
its -i, -w, -E, --role and --type; results that are revisions other commands take; --since,
--until and --cwd. (The work it does is test_grep_work.py, its revisions test_grep_revs.py.)"""

import json
import random

import pytest

from catalog_corpus import PROJECT, brute_text, build_corpus, session


@pytest.fixture(autouse=True)
def each_command_past_the_tick(monkeypatch, tmp_path):
    """As in test_catalog.py, where these tests were: each command starts once every file under
    tmp_path (the HOME, the sessions, the caches) is past its tick of the clock (storage.index.racy),
    as a process's start would have let it be."""
    import clock

    clock.each_command_past_the_tick(monkeypatch, tmp_path)


CASES = [
    (["foo"], r"foo"), (["-i", "foo"], r"(?i)foo"), (["-w", "foo"], r"(?<!\w)foo(?!\w)"),
    (["-i", "-w", "FOO"], r"(?i)(?<!\w)FOO(?!\w)"), (["oba"], r"oba"), (["-i", "istanbul"], r"(?i)istanbul"),
    (["-i", "stop"], r"(?i)stop"), (["-i", "kelvin"], r"(?i)kelvin"), (["-i", "idea"], r"(?i)idea"),
    (["foo.bar"], r"foo\.bar"), (["-E", r"foo[-.]bar"], r"foo[-.]bar"), (["-E", r"^line\d"], r"^line\d"),
    (["-E", "-i", r"b(a|u)z"], r"(?i)b(a|u)z"), (["-E", "quux|party"], r"quux|party"), (["-E", "^$"], r"^$"),
    (["au lait"], r"au lait"), (["\x1b[31m"], r"\x1b\[31m"), (["'x')"], r"'x'\)"), (["a\u0301ccent"], "a\u0301ccent"),
    (["-w", "accent"], r"(?<!\w)accent(?!\w)"), (["-i", "ﬁle"], r"(?i)ﬁle"), (["-i", "DŽUNGLA"], r"(?i)DŽUNGLA"),
    (["--role", "user", "foo"], r"foo", ("user",)), (["--type", "compaction", "-i", "foo"], r"(?i)foo", (), ("compaction",)),
    (["--type", "branch_summary", "--type", "custom_message", "bar"], r"bar", (), ("branch_summary", "custom_message")),
    (["--role", "toolResult", "-E", "ba[rz]"], r"ba[rz]", ("toolResult",)), (["nothing-like-this"], r"nothing-like-this"),
]


def brute(files, regex, roles=(), types=()):
    import re

    out = set()
    for f in files:
        lines = f.read_text().splitlines()
        sid = json.loads(lines[0])["id"]
        for raw in lines[1:]:
            e = json.loads(raw)
            role = e["message"]["role"] if e["type"] == "message" else None
            if roles and role not in roles:
                continue
            if types and e["type"] not in types:
                continue
            for n, line in enumerate(brute_text(e).split("\n"), 1):
                if re.search(regex, line):
                    out.add((sid, e["id"], n, line))
    return out


@pytest.mark.parametrize("case", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_grep_finds_what_a_brute_force_scan_finds(stree, isolated_home, case):
    files = build_corpus(isolated_home, random.Random(7))
    args, regex, *filters = case
    want = brute(files, regex, *filters)
    for mode in ([], ["--no-cache"]):
        r = stree(*mode, "grep", "--json", *args)
        assert r.code == (0 if want else 1), (mode, r)
        got = {(m["session"], m["entry"], m["lineNumber"], m["line"]) for m in map(json.loads, r.out.splitlines())}
        assert got == want, (mode, sorted(got ^ want)[:5])


def test_grep_results_are_revisions(stree, isolated_home):
    files = build_corpus(isolated_home, random.Random(3))
    r = stree("grep", "--json", "-m", "5", "foo")
    assert r.code == 0
    for m in map(json.loads, r.out.splitlines()):
        shown = stree("show", "--json", m["rev"])
        assert shown.code == 0 and json.loads(shown.out)["id"] == m["entry"], shown
        assert stree("-s", m["session"], "rev-parse", m["entry"]).out.strip() == m["entry"]
        on_path = stree("-s", m["session"], "log", "--format", "{id}").out.split()
        assert (m["entry"] in on_path) == m["onPath"]
    other = json.loads(files[0].read_text().splitlines()[0])["id"]
    clash = stree("-s", other, "show", json.loads(r.out.splitlines()[-1])["rev"])
    if json.loads(r.out.splitlines()[-1])["session"] != other:
        assert clash.code == 2 and "-s selects" in clash.err
    human = stree("grep", "-m", "1", "foo").out
    assert human.count(":") >= 2 and (" @ " in human or " . " in human)
    assert stree("grep", "-l", "foo").out.split() and stree("grep", "-c", "foo").code == 0


def test_grep_filters_by_date_and_cwd(stree, isolated_home):
    d = isolated_home / ".pi/agent/sessions" / PROJECT
    d.mkdir(parents=True)
    early = session("0199ffff-0000-7000-8000-000000000001", "kiwi", cwd="/home/dev/proj", start=1_700_000_000_000)
    late = session("0199ffff-0000-7000-8000-000000000002", "kiwi", cwd="/srv/other", start=1_800_000_000_000)
    early.write(d / "early.jsonl")
    late.write(d / "late.jsonl")

    def sessions(*args):
        r = stree("grep", "--json", *args, "kiwi")
        return {json.loads(x)["session"][-1] for x in r.out.splitlines()}, r.code

    assert sessions() == ({"1", "2"}, 0)
    assert sessions("--since", "2025-01-01") == ({"2"}, 0)  # 1_700_000_000_000 ms is 2023-11-14
    assert sessions("--until", "2025-01-01T00:00:00Z") == ({"1"}, 0)
    assert sessions("--since", "2030-01-01") == (set(), 1)
    assert sessions("--cwd", "/srv/other") == ({"2"}, 0)
    assert sessions("--cwd", "/srv/other/", "--until", "2025-01-01") == (set(), 1)
    bad = stree("grep", "--since", "yesterdayish", "kiwi")
    assert bad.code == 2 and "not a date" in bad.err
    counts = stree("grep", "-c", "kiwi answer").out.split()
    assert sorted(c.split(":")[1] for c in counts) == ["3", "3"]
    assert sorted(stree("grep", "-l", "--format", "{path}", "kiwi").out.split()) == \
        sorted(str(d / n) for n in ("early.jsonl", "late.jsonl"))
    bad = stree("grep", "-E", "(")
    assert bad.code == 2 and "not a valid regular expression" in bad.err


def test_a_role_the_file_wrote_as_a_list_or_a_number_is_grepped_as_any_other(stree, isolated_home):
    """A message's role is whatever its line holds: a list or a number is printed as text (ROLE)
    and given as it is (--json), by every front end, as a string role is."""
    from builders import SessionBuilder

    d = isolated_home / ".pi/agent/sessions" / PROJECT
    d.mkdir(parents=True)
    b = SessionBuilder()
    b.user("a kiwi first")
    b.append("message", message={"role": ["user"], "content": "a kiwi in a list role", "timestamp": 1})
    b.append("message", message={"role": 7, "content": "a kiwi in a number role", "timestamp": 1})
    b.write(d / "odd.jsonl")
    for fast in ({}, {"STREE_NO_FAST": "1"}):
        r = stree("grep", "kiwi", env=fast)
        assert r.code == 0, r
        assert [line.split(": ", 1)[1] for line in r.out.splitlines()] == \
            ["a kiwi first", "a kiwi in a list role", "a kiwi in a number role"]
        roles = [line.split(" ", 2)[2].split(": ", 1)[0] for line in r.out.splitlines()]
        assert roles[0] == "user" and roles[1] != roles[2] and "user" in roles[1] and roles[2] == "7"
    records = [json.loads(x) for x in stree("grep", "--json", "kiwi").out.splitlines()]
    assert [rec["role"] for rec in records] == ["user", ["user"], 7]
