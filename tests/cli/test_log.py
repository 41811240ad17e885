"""`stree log`: the path to a revision, newest first, as a git user reads it: `-N`,
`--since/--until`, `--role` and `--model` as grep has them, each checked against the raw file,
on both of log's paths (the fast read path and click's). (`log --graph` is test_log_graph*.py,
`log --follow` test_log_follow.py.)"""

import json
from datetime import datetime

import pytest

from builders import SessionBuilder, sessions_sharing_a_prefix
from conftest import ROOT
from readback import ids


DEMO = ROOT / "stree" / "data" / "demo.jsonl"


def raw():
    return {e["id"]: e for e in map(json.loads, DEMO.read_text().splitlines()) if e.get("type") != "session"}


def ms(ts):
    return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)


@pytest.mark.parametrize("fast", ["", "1"], ids=["fast path", "click"])
@pytest.mark.parametrize("args", [[], ["--json"], ["--format", "{id} {role}"], ["bug-found"], ["-z"]])
def test_log_minus_n(stree, fast, args):
    env = {"STREE_NO_FAST": fast}
    three = stree("-s", "demo", "log", "-3", *args, env=env)
    assert three.code == 0 and three.out == stree("-s", "demo", "log", "-n", "3", *args, env=env).out
    assert three.out == stree("-s", "demo", "log", *args, "-3", env=env).out  # anywhere, as an option
    assert len([x for x in three.raw.split(b"\0" if "-z" in args else b"\n") if x]) == 3


def test_a_minus_n_that_is_an_options_value_is_left_alone(stree):
    r = stree("-s", "demo", "log", "--search", "-3")  # the text "-3" is searched for, not -n 3
    assert r.code == 1 and "no entry matches" in r.err
    assert stree("-s", "demo", "log", "-0").out == ""


def test_since_and_until_keep_the_entries_written_then(stree):
    entries = raw()
    path = ids(stree("-s", "demo", "log", "--format", "{id}"))
    times = sorted({entries[i]["timestamp"] for i in path})
    since, until = times[len(times) // 3], times[2 * len(times) // 3]
    got = ids(stree("-s", "demo", "log", "--format", "{id}", "--since", since, "--until", until))
    assert got == [i for i in path if ms(since) <= ms(entries[i]["timestamp"]) <= ms(until)]
    assert 0 < len(got) < len(path)
    assert ids(stree("-s", "demo", "log", "-2", "--format", "{id}", "--since", since)) == \
        [i for i in path if ms(entries[i]["timestamp"]) >= ms(since)][:2]  # -n counts what is shown
    assert stree("-s", "demo", "log", "--until", "2000-01-01").out == ""
    bad = stree("-s", "demo", "log", "--since", "someday")
    assert bad.code == 2 and "--since" in bad.err


def test_role_and_model_as_grep_has_them(stree):
    entries = raw()
    users = ids(stree("-s", "demo", "log", "--format", "{id}", "--role", "user"))
    path = ids(stree("-s", "demo", "log", "--format", "{id}"))
    assert users == [i for i in path if entries[i]["type"] == "message" and entries[i]["message"]["role"] == "user"]
    assert users
    gpt = ids(stree("-s", "demo", "log", "--format", "{id}", "--model", "GPT-*"))
    assert gpt and gpt == [i for i in path if entries[i]["type"] == "message"
                           and entries[i]["message"].get("model", "").startswith("gpt-")]
    both = ids(stree("-s", "demo", "log", "--format", "{id}", "--model", "anthropic/*", "--model", "openai/*"))
    assert both == [i for i in path if entries[i]["type"] == "message"
                    and entries[i]["message"]["role"] == "assistant"]
    bad = stree("-s", "demo", "log", "--role", "robot")
    assert bad.code == 2 and "hint: usage: stree log" in bad.err
    # the graph too: every row shown is a user message, and none is left out
    rows = [json.loads(x) for x in stree("-s", "demo", "log", "--graph", "--json", "--role", "user").out.splitlines()]
    everything = [json.loads(x) for x in stree("-s", "demo", "log", "--graph", "--json").out.splitlines()]
    assert [r["id"] for r in rows] == [r["id"] for r in everything if r["role"] == "user"]


def test_log_newest_first_with_decorations(stree, branchy_file):
    r = stree("-s", branchy_file, "log")
    assert r.code == 0, r
    lines = r.out.splitlines()
    # @ is the last entry before the label and name entries appended at it (pi hides those too)
    assert lines[0].startswith("00000013 (@)") and "Added tests/test_newlines.py" in lines[0]
    assert lines[-1].startswith("00000001 (start)") and "user: Fix the CSV quoting bug" in lines[-1]
    assert r.err == ""


def test_log_json_fields_and_limits(stree, branchy_file):
    r = stree("-s", branchy_file, "log", "--json", "-n", "3", "--reverse")
    recs = [json.loads(line) for line in r.out.splitlines()]
    assert [x["id"] for x in recs] == ["00000011", "00000012", "00000013"]
    assert set(recs[0]) >= {"id", "parentId", "type", "role", "timestamp", "label", "preview", "line",
                            "leaf", "active", "children"}
    assert recs[-1]["leaf"] is True and recs[-1]["preview"] == "assistant: Added tests/test_newlines.py"


def test_log_range_and_format_and_nul(stree, branchy_file):
    r = stree("-s", branchy_file, "log", "csv-attempt..@", "--format", "{id}\\t{type}", "-z")
    records = r.raw.split(b"\0")
    assert records[-1] == b""
    assert records[0] == b"00000013\tmessage"
    assert b"00000009" not in r.raw and b"00000001" not in r.raw
    bad = stree("-s", branchy_file, "log", "--format", "{nope}")
    assert bad.code == 2 and "unknown field {nope}" in bad.err


@pytest.mark.slow  # (big inputs: left out of `make check`)
def test_fifty_thousand_deep_session_through_the_cli(stree, tmp_path):
    b = SessionBuilder()
    for i in range(25_000):
        b.user(f"question {i}")
        b.assistant(f"answer {i}")
    p = b.write(tmp_path / "deep.jsonl")
    r = stree("-s", p, "log", "-n", "1", "--format", "{id}")
    assert r.code == 0 and r.out.strip() == b.leaf
    r = stree("-s", p, "rev-parse", "@~49999", "root")
    assert r.out.split() == [b.entries[0]["id"]] * 2
    r = stree("-s", p, "log", "--graph", "--format", "{id}")
    assert r.code == 0 and len(r.out.split()) == 50_000 and "RecursionError" not in r.err
    assert stree("-s", p, "merge-base", "--is-ancestor", "root", "@").code == 0


def test_format_placeholders_and_braces(stree, branchy_file):
    r = stree("-s", branchy_file, "log", "-n", "1", "--format", "{{id}} {id} }}{{")
    assert r.code == 0 and r.out == "{id} 00000013 }{\n", r
    for bad in ("{id", "id}", "{ id }", "{}", "{1}"):
        r = stree("-s", branchy_file, "log", "--format", bad)
        assert r.code == 2 and r.out == "" and r.err.startswith("stree: error: --format: malformed placeholder"), (bad, r)
        assert "hint: " in r.err
    r = stree("-s", branchy_file, "label", "--format", "{nope}")
    assert r.code == 2 and "unknown field {nope}" in r.err


def test_log_search_and_filter_on_the_path(stree, branchy_file):
    def ids(*args):
        r = stree("-s", branchy_file, "log", "--format", "{id}", *args)
        return r.code, r.out.split()

    assert ids("--search", "regex") == (0, ["00000010", "0000000b"])
    assert ids("--search", "REGEX-based parser") == (0, ["0000000b"])  # every word, any case, as /tree
    assert ids("--filter", "user-only") == (0, ["00000012", "0000000b", "00000001"])
    assert ids("--filter", "user-only", "-n", "2") == (0, ["00000012", "0000000b"])  # -n counts shown rows
    assert ids("--filter", "user-only", "--reverse") == (0, ["00000001", "0000000b", "00000012"])
    assert ids("--filter", "user-only", "-n", "1", "start..@") == (0, ["00000012"])  # ranges too
    code, out = ids("--search", "no such words anywhere")
    assert code == 1 and out == []
    r = stree("-s", branchy_file, "log", "--graph", "--search", "no such words anywhere")
    assert r.code == 1 and r.out == ""
    r = stree("-s", branchy_file, "log", "--graph", "--reverse")
    assert r.code == 2 and r.err.startswith("stree: error: --graph and --reverse cannot be combined")


def test_dates_local_with_zone_and_git_styles(stree, tmp_path, branchy_file):
    kolkata = {"TZ": "Asia/Kolkata"}
    line = stree("-s", branchy_file, "log", "-n", "1", env=kolkata).out
    assert "2026-11-18 16:36:59 +0530" in line  # 11:06:59Z in local time, with the zone
    assert "2026-11-18 16:36:59 +0530" in stree("-s", branchy_file, "log", "-n", "1", "--date=iso", env=kolkata).out
    assert "2026-11-18 11:06:59 +0000" in stree("-s", branchy_file, "log", "-n", "1", "--date=utc", env=kolkata).out
    assert " 1795000019 " in stree("-s", branchy_file, "log", "-n", "1", "--date", "unix").out
    assert " ago " in stree("-s", branchy_file, "log", "-n", "1", "--date", "relative").out
    assert "Date:    2026-11-18 16:36:59 +0530" in stree("-s", branchy_file, "show", env=kolkata).out
    directory, _ = sessions_sharing_a_prefix(tmp_path)
    out = stree("-C", directory, "--session-dir", directory, "ls", "--date=unix").out
    assert out.splitlines()[0].split()[2] == "1795100002"  # the last message's own timestamp
    r = stree("-s", branchy_file, "log", "--date=rfc")
    assert r.code == 2 and r.err.startswith("stree: error: invalid value for '--date'")
    # machine output keeps pi's timestamps
    assert json.loads(stree("-s", branchy_file, "log", "-n", "1", "--json", env=kolkata).out.splitlines()[0])[
        "timestamp"] == "2026-11-18T11:06:59.000Z"


def test_a_warm_log_walks_only_the_entries_it_shows(tmp_path, stree):
    """`log -n 3` of a 5,000-entry path reads 3 rows of it with the index warm: an index knows
    that every parent's row comes before its child's, so no loop can hide further up the path.
    It prints what a plain parse prints; a file whose path loops above the leaf is still an
    error (exit 4), with or without an index."""
    import re

    from clock import past_the_tick

    b = SessionBuilder()
    for i in range(5000):
        b.user(f"step {i}")
    path = b.write(tmp_path / "long.jsonl")
    past_the_tick(path)  # (a file changed in the index's tick of the clock is checked whole)
    assert stree("-s", path, "rev-parse", "@").code == 0  # the index
    for fast in ("", "1"):
        r = stree("-s", path, "log", "-n", "3", env={"STREE_DEBUG_STATS": "1", "STREE_NO_FAST": fast})
        assert "index fresh" in r.err and re.search(r"path rows walked 3\b", r.err), r.err
        assert r.out == stree("--no-cache", "-s", path, "log", "-n", "3").out and len(r.out.splitlines()) == 3

    b = SessionBuilder()
    b.user("a")
    b.append("message", id="cyc00001", parent="cyc00002", message={"role": "user", "content": "x", "timestamp": 1})
    b.append("message", id="cyc00002", parent="cyc00001", message={"role": "user", "content": "y", "timestamp": 1})
    b.user("the leaf", parent="cyc00002")
    looped = b.write(tmp_path / "looped.jsonl")
    for cache in ((), ("--no-cache",)):
        r = stree(*cache, "-s", looped, "log", "-n", "1")
        assert r.code == 4 and "parent chain loops: cyc00002 -> cyc00001 -> cyc00002" in r.err, r
