"""git muscle memory (issue 27 item 5): `log -N`, `log --since/--until`, `--role` and
`--model` as grep has them, `show A..B` and `export A..B` over a range's entries, and the
usage hint on every usage error. Each checked against the raw file or another command's
answer, on both of log's paths (the fast read path and click's)."""

import json
from datetime import datetime, timezone

import pytest

from conftest import ROOT

DEMO = ROOT / "stree" / "data" / "demo.jsonl"


def raw():
    return {e["id"]: e for e in map(json.loads, DEMO.read_text().splitlines()) if e.get("type") != "session"}


def ids(r):
    assert r.code == 0, r
    return r.out.split()


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


def test_show_a_range_shows_its_entries(stree):
    listed = ids(stree("-s", "demo", "log", "--format", "{id}", "bug-found..@"))
    assert ids(stree("-s", "demo", "show", "--format", "{id}", "bug-found..@")) == listed
    shown = [json.loads(x)["id"] for x in stree("-s", "demo", "show", "--json", "bug-found...@~3").out.splitlines()]
    assert shown == ids(stree("-s", "demo", "log", "--format", "{id}", "bug-found...@~3"))
    human = stree("-s", "demo", "show", "bug-found..@")
    assert human.code == 0 and human.out.count("\nentry ") + human.out.startswith("entry ") == len(listed)


def test_export_a_range_exports_its_entries(stree, tmp_path):
    listed = ids(stree("-s", "demo", "log", "--format", "{id}", "bug-found..@"))
    everything = ids(stree("-s", "demo", "log", "--format", "{id}", "--filter", "all"))
    out = tmp_path / "since.md"
    r = stree("-s", "demo", "export", "bug-found..@", "-o", out)
    assert r.code == 0 and f"({len(listed)} entries, md)" in r.err, r
    text = out.read_text()
    for i in everything:
        assert (f"`{i}`" in text) == (i in listed or f"(after `{i}`)" in text), i


@pytest.mark.parametrize("args", [["log", "-n"], ["log", "--since"], ["show", "--format"], ["stats", "--until"],
                                  ["log", "--date"]])
def test_every_usage_error_carries_the_usage_hint(stree, args):
    r = stree("-s", "demo", *args)
    assert r.code == 2 and r.err.startswith("stree: error: ") and "requires an argument" in r.err
    assert f"hint: usage: stree {args[0]} [OPTIONS]" in r.err and f"hint: see 'stree {args[0]} --help'" in r.err


def test_the_graphs_hint_names_only_what_finds_something(stree):
    r = stree("-s", "demo", "log", "--graph", "--search", "zzzz")
    assert r.code == 1 and "--filter all" not in r.err and "zzzz" in r.err, r
    assert stree("-s", "demo", "log", "--graph", "--filter", "all", "--search", "zzzz").code == 1
    # a word in assistant text only: the user-only graph has none, --filter all finds it
    r = stree("-s", "demo", "log", "--graph", "--filter", "user-only", "--search", "Reverting")
    assert r.code == 1 and "try --filter all" in r.err, r
    assert stree("-s", "demo", "log", "--graph", "--filter", "all", "--search", "Reverting").out
