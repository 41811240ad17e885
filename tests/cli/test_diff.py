"""`stree diff A B`: two paths compared turn by turn, in one session (from the merge base)
and across two files (from the root), driven as a user does: a subprocess on real files."""

import json
import os
import pty
import subprocess
import sys

import pytest

from builders import SessionBuilder
from conftest import read_pty


def recorded(change=None):
    """A recorded session; `change` edits its turns to make a 'replay' of it."""
    b = SessionBuilder()
    b.user("fix the parser")
    b.assistant("Looking at it.", tools=[("read", {"path": "parser.py"}), ("bash", {"command": "pytest -q"})])
    b.tool_result("call_3_0", "read", "def parse(): ...")
    b.tool_result("call_3_1", "bash", "1 failed")
    b.assistant("The quote handling is wrong.", tools=[("edit", {"path": "parser.py", "old": "a", "new": "b"})])
    b.tool_result("call_6_0", "edit", "ok")
    b.assistant("Fixed: quotes are handled now.")
    if change:
        change(b)
    return b


def replayed(b):
    """Another model: a different edit, an extra grep, other words at the end."""
    second = b.entries[4]["message"]["content"]
    second[1]["arguments"] = {"path": "parser.py", "old": "a", "new": "c"}
    second.append({"type": "toolCall", "id": "call_x", "name": "grep", "arguments": {"pattern": "quote"}})
    b.entries[6]["message"]["content"][0]["text"] = "Fixed: quoted fields are handled now."


@pytest.fixture
def pair(tmp_path):
    a = recorded().write(tmp_path / "recorded.jsonl")
    b = recorded(replayed).write(tmp_path / "replay.jsonl")
    return a, b


def test_a_recorded_session_against_its_replay(stree, pair):
    a, b = pair
    r = stree("diff", f"{a}:@", f"{b}:@", "--json")
    assert r.code == 0, r  # differences alone do not fail without --exit-code, as in git
    records = [json.loads(line) for line in r.out.splitlines()]
    assert [(x["index"], x["status"]) for x in records] == [(4, "changed"), (6, "changed")]
    calls = records[0]["calls"]
    assert [(c["status"], c["name"]) for c in calls] == [("changed", "edit"), ("added", "grep")]
    assert calls[0]["a"]["new"] == "b" and calls[0]["b"]["new"] == "c"
    assert records[1]["textChanged"] and records[1]["a"]["role"] == "assistant"

    r = stree("diff", f"{a}:@", f"{b}:@")
    lines = r.out.splitlines()
    assert lines[0] == f"diff --stree a/{a}:@ b/{b}:@"
    assert '~edit {"path":"parser.py","old":"a","new":"b"} → {"path":"parser.py","old":"a","new":"c"}' in lines
    assert '+grep {"pattern":"quote"}' in lines
    assert "-Fixed: quotes are handled now." in lines and "+Fixed: quoted fields are handled now." in lines
    assert "\x1b" not in r.out  # no colour into a pipe

    assert stree("diff", f"{a}:@", f"{b}:@", "--name-only").out.splitlines() == ["edit", "grep"]
    stat = stree("diff", f"{a}:@", f"{b}:@", "--stat").out.splitlines()
    assert stat[-1] == (" 2 of 7 positions differ: 2 changed, 0 only in a, 0 only in b; "
                        "tool calls 1 added, 0 removed, 1 changed")
    word = stree("diff", f"{a}:@", f"{b}:@", "--word-diff").out
    assert "Fixed: [-quotes-]{+quoted fields+} are handled now." in word


def test_exit_codes_as_git_diff(stree, pair):
    a, b = pair
    for args, code in [((f"{a}:@", f"{b}:@"), 0), ((f"{a}:@", f"{b}:@", "--exit-code"), 1),
                       ((f"{a}:@", f"{a}:@", "--exit-code"), 0), ((f"{a}:@", f"{b}:@", "--quiet"), 1),
                       ((f"{a}:@~3", f"{b}:@~3", "-q"), 0)]:  # the turns before the replay's first change
        assert stree("diff", *args).code == code, args
    quiet = stree("diff", f"{a}:@", f"{b}:@", "--quiet")
    assert quiet.code == 1 and quiet.out == ""
    same = stree("-s", a, "diff", "@", "@", "--exit-code")
    assert same.code == 0 and same.out == ""


def test_two_branches_of_one_session_from_their_merge_base(stree, demo):
    base = stree("-s", demo, "merge-base", "handrolled-splitter", "fix-verified").out.strip()
    r = stree("-s", demo, "diff", "handrolled-splitter", "fix-verified", "--json")
    records = [json.loads(line) for line in r.out.splitlines()]
    after = {}
    for side in ("handrolled-splitter", "fix-verified"):
        ids = stree("-s", demo, "log", "--reverse", "--format", "{id} {type}", f"{base}..{side}").out.split("\n")
        after[side] = [line.split()[0] for line in ids if line.endswith(" message")]
    assert records[0]["index"] == 0
    assert records[0]["a"]["id"] == after["handrolled-splitter"][0]
    assert records[0]["b"]["id"] == after["fix-verified"][0]
    assert [x["b"]["id"] for x in records if x["b"]] == after["fix-verified"]
    statuses = [x["status"] for x in records]
    assert statuses.count("added") == len(after["fix-verified"]) - len(after["handrolled-splitter"])
    assert "removed" not in statuses
    human = stree("-s", demo, "diff", "handrolled-splitter", "fix-verified").out
    assert human.splitlines()[1] == f"base {base}"


def test_session_revisions_and_errors(stree, demo, pair, tmp_path):
    a, _ = pair
    assert stree("diff", "demo:@", f"{demo}:@", "--exit-code").code == 0  # `demo` and a copy of it
    r = stree("diff", f"{a}:@~2", f"{a}:@", "--json")  # one file named twice: from the merge base (@~2)
    assert [(x["index"], x["status"]) for x in map(json.loads, r.out.splitlines())] == [(0, "added"), (1, "added")]
    r = stree("diff", "demo:@", f"{tmp_path}/missing.jsonl:@")
    assert r.code == 3 and r.err.startswith("stree: error: ") and "missing.jsonl" in r.err
    r = stree("-s", demo, "diff", "no-such-label", "@")
    assert r.code == 3 and "unknown revision 'no-such-label'" in r.err and "\nhint: " in r.err
    r = stree("-s", demo, "diff", "@", "@", "--stat", "--name-only")
    assert r.code == 2 and "cannot be combined" in r.err


def test_colour_on_a_terminal_only(pair):
    a, b = pair
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    proc = subprocess.Popen([sys.executable, "-m", "stree", "diff", f"{a}:@", f"{b}:@"], stdout=slave,
                            stderr=subprocess.PIPE, env=dict(env, TERM="xterm", PAGER="cat"))
    os.close(slave)
    out = read_pty(master, proc)
    proc.wait()
    assert proc.returncode == 0
    assert b"\x1b[32m+grep" in out and b"\x1b[33m~edit" in out
