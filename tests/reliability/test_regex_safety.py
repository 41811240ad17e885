"""Regular expressions from users and clients (issue 24, items 3 and 7).

7: a pattern that backtracks without end (`(a+)+$` against 30 `a` and a `b`) stops at its time
budget (STREE_REGEX_TIMEOUT) with a clear error, in the CLI, in `serve` and in `serve --mcp`,
and the server answers the next request at once.

3: the full-text narrowing of `grep -E` never derives a word from an escape that spells a
letter (\\x41, \\u0041, \\101, \\N{...}): fuzzed patterns give the catalogue's answer and
--no-cache's alike."""

import json
import time

import pytest
from builders import SessionBuilder
from mcp_kit import McpServer
from serve_kit import Server

EVIL = "(a+)+$"
BUDGET = {"STREE_REGEX_TIMEOUT": "1"}


def _session(path):
    b = SessionBuilder()
    b.user("please look at this line:\n" + "a" * 30 + "b")
    b.assistant("the Answer is 42, said AWS")
    return b.write(path)


def test_cli_grep_with_a_catastrophic_regex_stops_at_its_budget(tmp_path, stree):
    session = _session(tmp_path / "s.jsonl")
    for extra in ([], ["--no-cache"]):
        started = time.monotonic()
        r = stree(*extra, "-s", session, "grep", "-E", EVIL, env=BUDGET, timeout=120)
        took = time.monotonic() - started
        assert r.code == 2, r
        assert r.err.startswith("stree: error: grep -E '(a+)+$': the pattern ran for more than 1 s") and "hint:" in r.err
        assert took < 60  # (the budget is 1 s; unbounded, this pattern runs for minutes)
    # a sane pattern on the same line is untouched by the budget
    r = stree("-s", session, "grep", "-E", "a+b$", env=BUDGET)
    assert r.code == 0 and "a" * 30 + "b" in r.out, r


def test_a_bad_budget_is_a_usage_error(tmp_path, stree):
    session = _session(tmp_path / "s.jsonl")
    r = stree("-s", session, "grep", "-E", "x", env={"STREE_REGEX_TIMEOUT": "0"})
    assert r.code == 2 and "STREE_REGEX_TIMEOUT" in r.err, r


def test_serve_grep_with_a_catastrophic_regex_fails_alone(tmp_path):
    session = _session(tmp_path / "s.jsonl")
    s = Server(session, env=BUDGET)
    try:
        s.send({"id": "evil", "type": "grep", "pattern": EVIL, "regex": True, "session": str(session)})
        s.send({"id": "next", "type": "get_state"})
        r = s.wait("evil", timeout=60)
        assert r["success"] is False and r["errorCode"] == "bad_params" and "ran for more than 1 s" in r["error"], r
        assert s.wait("next", timeout=60)["success"] is True
        ok = s.data("grep", pattern="a+b$", regex=True, session=str(session))
        assert [rec["lineNumber"] for rec in ok["records"]] == [2]
    finally:
        assert s.close() == 0


def test_mcp_grep_with_a_catastrophic_regex_fails_alone_and_ping_is_answered(tmp_path):
    session = _session(tmp_path / "s.jsonl")
    m = McpServer("-s", session, env=BUDGET)
    try:
        call = m.start("grep", pattern=EVIL, regex=True, session=str(session))
        m.n += 1
        m.send({"jsonrpc": "2.0", "id": m.n, "method": "ping"})
        result = m.wait(call, timeout=60)["result"]
        assert result["isError"] is True and "ran for more than 1 s" in result["structuredContent"]["error"], result
        assert m.wait(m.n, timeout=60) == {"jsonrpc": "2.0", "id": m.n, "result": {}}
        ok = m.call("grep", pattern="a+b$", regex=True, session=str(session))
        assert not ok.get("isError") and len(ok["structuredContent"]["results"]) == 1
        assert m.close() == 0
    finally:
        m.kill()


# -- 3. the word index never narrows a pattern to words the text does not hold ---------------

TEXTS = ["the Answer is 42, said AWS", "answer: yes", "AAA batteries; aardvark", "Ångström and Kelvin",
         "naïve café", "ABBA abba", "x = a1b2; y = \\x41", "fooBar_baz qux-quux", "İstanbul ſtraße",
         "tab\there", "aaaa" * 5 + "b", "The END", "line one\nline two\nANSWER three"]
# pieces of patterns: words of the texts, escapes that spell letters, and regex syntax
PIECES = ["answer", "Answer", "nswer", "AWS", "WS", "42", "said", "the", "aa", "bb", "ab", "rdvark", "café",
          "Kelvin", "elvin", "straße", "END", "one", "two", "quux", "Bar", "baz",
          r"\x41", r"\x61", r"\x4e", r"\u0041", r"\u0061", r"\U00000041", r"\101", r"\141", r"\116", r"\0",
          r"\N{LATIN CAPITAL LETTER A}", r"\N{LATIN SMALL LETTER A}", r"\N{KELVIN SIGN}", r"\x20", r"\t",
          r"\b", r"\w", r"\W", r"\d", r"\s", r"\S", r"\B", ".", "*", "+", "?", "{2}", "{0,2}", "^", "$",
          "(", ")", "(?:", "|", "[a-c]", "[^x]", r"\.", r"\:", " ", ",", ";", "(?i)", r"\1"]


def _corpus(home):
    agent = home / "agent"
    sessions = agent / "sessions" / "--proj--"
    sessions.mkdir(parents=True)
    for n in range(0, len(TEXTS), 3):
        b = SessionBuilder(id=f"0000000{n}-0000-4000-8000-000000000000")
        for text in TEXTS[n:n + 3]:
            b.user(text)
            b.assistant("ok " + text.upper())
        b.write(sessions / f"s{n}.jsonl")
    return agent


def _answer(pattern, agent, no_cache):
    from stree.core.grep_sessions import Grep

    q = Grep(pattern, regex=True, agent="pi", agent_dir=str(agent), no_cache=no_cache)
    return sorted((r["session"], r["entry"], r["lineNumber"]) for r in q.records())


def test_fuzzed_patterns_get_the_same_answer_from_the_catalogue_and_without_it(isolated_home):
    import re

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    agent = _corpus(isolated_home)
    tried = []

    @settings(max_examples=400, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=5))
    def check(pieces):
        pattern = "".join(pieces)
        try:
            re.compile(pattern)
        except (re.error, OverflowError):
            return
        tried.append(pattern)
        assert _answer(pattern, agent, False) == _answer(pattern, agent, True), pattern

    check()
    # the attacks of the issue, each compared too
    for pattern in [r"\x41nswer", r"the \u0041nswer", r"\101nswer", r"\N{LATIN CAPITAL LETTER A}nswer",
                    r"\x41WS", r"(?i)\x61nswer", r"\U00000041nswer"]:
        tried.append(pattern)
        got = _answer(pattern, agent, False)
        assert got and got == _answer(pattern, agent, True), pattern
    print(f"\n{len(tried)} valid patterns compared (catalogue vs --no-cache)")
    assert len(tried) > 200
