"""The read commands, driven as a user drives them: a subprocess, a real file."""

import json

import pytest
from builders import SessionBuilder, dumps


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


def test_graph_marks_active_path_leaf_and_labels(stree, branchy_file):
    r = stree("-s", branchy_file, "log", "--graph", "--no-ids")
    rows = r.out.splitlines()
    assert rows[0] == "• [start] user: Fix the CSV quoting bug in parser.py"
    assert rows[-1] == "      [csv-attempt] assistant: Switched to the csv module."
    assert [row for row in rows if row.endswith("← active")] == \
        ["│     • assistant: Added tests/test_newlines.py  ← active"]


def test_graph_filters_and_search(stree, branchy_file):
    def rows(*args):
        return stree("-s", branchy_file, "log", "--graph", "--format", "{row}", *args).out.splitlines()

    assert rows("--filter", "user-only") == [
        "• [start] user: Fix the CSV quoting bug in parser.py",
        "├─ • user: Write a regex-based parser instead",
        "│     • user: Now add a test for embedded newlines",
        "└─ user: Try the csv module",
    ]
    assert rows("--filter", "labeled-only") == ["• [start] user: Fix the CSV quoting bug in parser.py",
                                                "[csv-attempt] assistant: Switched to the csv module."]
    assert not any("[read:" in x for x in rows("--filter", "no-tools"))
    assert any("[label: start]" in x for x in rows("--filter", "all"))
    searched = rows("--search", "csv MODULE")
    assert searched[1:] == ["user: Try the csv module", "   [csv-attempt] assistant: Switched to the csv module."]
    assert searched[0].startswith("• [branch summary]: ")


def test_show_and_show_json(stree, branchy_file):
    r = stree("-s", branchy_file, "show", "start")
    assert r.code == 0
    assert "entry 00000001 (start)" in r.out and "Fix the CSV quoting bug in parser.py" in r.out
    raw = json.loads(stree("-s", branchy_file, "show", "--json", "00000014").out)  # a label entry, by id
    assert raw["type"] == "label" and raw["targetId"] == "00000009"


def test_rev_parse_and_merge_base(stree, branchy_file):
    r = stree("-s", branchy_file, "rev-parse", "@", "root", "csv-attempt~2", "start..@")
    assert r.out.split() == ["00000013", "00000001", "00000007", "00000013", "^00000001"]
    assert stree("-s", branchy_file, "merge-base", "csv-attempt", "@").out.strip() == "00000003"
    assert stree("-s", branchy_file, "merge-base", "--is-ancestor", "start", "@").code == 0
    no = stree("-s", branchy_file, "merge-base", "--is-ancestor", "csv-attempt", "@")
    assert no.code == 1 and no.out == "" and no.err == ""
    q = stree("-s", branchy_file, "rev-parse", "--verify", "-q", "nothing-here")
    assert q.code == 3 and q.out == "" and q.err == ""


def test_unknown_and_ambiguous_revisions_exit_3_naming_them(stree, branchy_file):
    r = stree("-s", branchy_file, "show", "nothing-here")
    assert r.code == 3 and "nothing-here" in r.err and "Traceback" not in r.err
    r = stree("-s", branchy_file, "show", "0000")
    assert r.code == 3 and "ambiguous" in r.err and "00000001" in r.err


def test_context_json_and_replay_shapes(stree, branchy_file):
    ctx = json.loads(stree("-s", branchy_file, "context", "--json").out)
    assert ctx["thinkingLevel"] == "high" and ctx["messages"][0]["role"] == "compactionSummary"
    oa = json.loads(stree("-s", branchy_file, "context", "--as", "openai").out)
    assert oa["model"] == "gpt-5"
    assert [m["role"] for m in oa["messages"]] == ["user", "user", "assistant", "tool", "assistant", "user",
                                                   "assistant"]
    an = json.loads(stree("-s", branchy_file, "context", "--as", "anthropic").out)
    roles = [m["role"] for m in an["messages"]]
    assert set(roles) == {"user", "assistant"}  # (consecutive user turns: pi-ai sends them, the API joins them)
    assert [b["type"] for m in an["messages"] for b in m["content"] if m["role"] == "assistant"][0] == "tool_use"


def test_default_session_is_newest_of_this_directory(stree, tmp_path, isolated_home):
    project = tmp_path / "proj"
    project.mkdir()
    sessions = isolated_home / ".pi" / "agent" / "sessions" / ("--" + str(project)[1:].replace("/", "-") + "--")
    sessions.mkdir(parents=True)
    import os
    import time

    old = SessionBuilder(cwd=str(project), id="0199aaaa-0000-7000-8000-000000000001")
    old.user("old session")
    old.write(sessions / "2026-01-01T00-00-00-000Z_0199aaaa-0000-7000-8000-000000000001.jsonl")
    new = SessionBuilder(cwd=str(project), id="0199bbbb-0000-7000-8000-000000000002")
    new.user("new session")
    newp = new.write(sessions / "2026-01-02T00-00-00-000Z_0199bbbb-0000-7000-8000-000000000002.jsonl")
    later = time.time() + 10
    os.utime(newp, (later, later))
    assert "new session" in stree("log", cwd=project).out
    assert "old session" in stree("-s", "0199aaaa", "log", cwd=project).out
    assert "old session" in stree("-s", "0199a", "log", cwd=tmp_path).out  # found in all projects
    amb = stree("-s", "0199", "log", cwd=project)
    assert amb.code == 3 and "ambiguous" in amb.err and "0199bbbb" in amb.err
    assert "new session" in stree("-C", project, "log").out
    ls = stree("ls", "--format", "{id}", cwd=project).out.split()
    assert ls == ["0199bbbb-0000-7000-8000-000000000002", "0199aaaa-0000-7000-8000-000000000001"]
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "x.jsonl").write_text((sessions / newp.name).read_text())
    assert "new session" in stree("log", cwd=project, env={"PI_CODING_AGENT_SESSION_DIR": str(flat)}).out
    assert "new session" in stree("--session-dir", flat, "log", cwd=project).out
    # pi 1.5: a custom session dir serves the sessions of their own header cwd only
    elsewhere = stree("--session-dir", flat, "log", cwd=tmp_path)
    assert elsewhere.code == 3 and "no pi session" in elsewhere.err
    assert "new session" in stree("log", cwd=tmp_path, env={"STREE_SESSION": str(flat / "x.jsonl")}).out
    none = stree("log", cwd=tmp_path)
    assert none.code == 3 and "no pi session" in none.err


def test_bad_files_get_clear_messages_and_codes(stree, tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    r = stree("-s", tmp_path / "empty.jsonl", "log")
    assert r.code == 4 and "empty file" in r.err
    (tmp_path / "nohead.jsonl").write_text(dumps({"type": "message", "id": "a", "parentId": None}) + "\n")
    r = stree("-s", tmp_path / "nohead.jsonl", "log")
    assert r.code == 4 and "not a session header" in r.err
    r = stree("-s", str(tmp_path) + "/", "log")
    assert r.code == 4 and "is a directory" in r.err
    r = stree("-s", tmp_path / "missing.jsonl", "log")
    assert r.code == 3 and "no such session file" in r.err
    head = SessionBuilder().write(tmp_path / "head.jsonl")
    r = stree("-s", head, "log")
    assert r.code == 0 and r.out == "" and "no entries" in r.err
    r = stree("-s", head, "show")
    assert r.code == 3 and "@ is empty" in r.err
    for res in (r,):
        assert "Traceback" not in res.err


def test_malformed_lines_warn_once_on_stderr(stree, tmp_path):
    b = SessionBuilder()
    b.user("fine")
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(b.lines()[:1] + ["garbage", "{]"] + b.lines()[1:]) + "\n")
    r = stree("-s", p, "log")
    assert r.code == 0 and "user: fine" in r.out
    assert r.err.count("warning") == 1 and "2, 3" in r.err


def test_hostile_text_prints_inert(stree, tmp_path):
    b = SessionBuilder()
    b.user("evil \x1b]0;pwned\x07 \x1b[2J [bold red]markup[/] \u202eoverride \x9b31m end")
    b.label(b.leaf, "\x1b[31mlbl")
    p = b.write(tmp_path / "evil.jsonl")
    for args in (["log"], ["log", "--graph"], ["show", "@"], ["context"], ["log", "--format", "{preview}"],
                 ["label-free-check"]):
        if args == ["label-free-check"]:
            continue
        r = stree("-s", p, "--color", "always", *args)
        assert r.code == 0, r
        text = r.out.replace("\x1b[0m", "")
        for code in ("31", "32", "33", "36", "90", "2", "35", "1"):
            text = text.replace(f"\x1b[{code}m", "")  # stree's own colours
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text and "\x9b" not in text, args
        assert "[bold red]markup[/]" in r.out
        assert "\\x1b]0;pwned\\x07" in r.out or args == ["show", "@"] and "pwned" in r.out
    j = stree("-s", p, "log", "--json").out
    assert "\x1b" not in j and "\u202e" not in j and "\\u001b" in j


def test_colour_only_on_request_or_terminal(stree, branchy_file):
    assert "\x1b[" not in stree("-s", branchy_file, "log", "--graph").out
    assert "\x1b[" in stree("-s", branchy_file, "--color", "always", "log", "--graph").out
    assert "\x1b[" not in stree("-s", branchy_file, "--color", "always", "log", "--json").out


def test_help_lists_commands_exit_codes_and_examples(stree):
    r = stree("--help")
    assert r.code == 0
    for word in ("log", "show", "rev-parse", "merge-base", "context", "ls", "Exit codes", "Revisions"):
        assert word in r.out
    for cmd in ("log", "show", "rev-parse", "merge-base", "context", "ls"):
        h = stree(cmd, "--help")
        assert h.code == 0 and "Examples:" in h.out and h.out.count("stree ") >= 3, cmd


def test_demo_is_bundled(stree):
    r = stree("-s", "demo", "log", "--graph")
    assert r.code == 0 and "← active" in r.out
    assert len(r.out.splitlines()) > 20


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
