"""Hostile session content: every human view prints it as inert, visible text.

A session whose every text field (ids, labels, names, messages, tool calls, summaries,
models, cwd) carries terminal escapes (CSI, OSC title and hyperlinks, 8-bit C1),
bells, bidi overrides, rich markup and very long lines. The views run on a real
pseudo-terminal, where they draw for a person, and through a pipe.
"""

import os
import re
import subprocess
import sys

import pytest
from conftest import read_pty
from builders import SessionBuilder

ESCAPES = [
    "\x1b]0;pwned-title\x07",  # OSC 0: set the window title
    "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\",  # OSC 8 hyperlink
    "\x1b[2J\x1b[H",  # clear screen, cursor home
    "\x1b[31;1mRED\x1b[0m",
    "\x9b31m",  # 8-bit CSI
    "\x9d0;c1-title\x9c",  # 8-bit OSC ... ST
    "\x07\x07bell",
    "\u202eevil-bidi\u202c \u2066isolate\u2069",
    "[bold red]markup[/] [link=https://evil.example]x[/link]",
    "back\x08space\rcarriage",
    "\x00nul \x7f del",
]
PAYLOAD = " ".join(ESCAPES)
LONG = "long:" + "ü" * 30000 + ":end"

# stree's own colours are SGR sequences of its own codes (stree.output.modes.STYLES, and the reset);
# anything else reaching a terminal is an attack. An SGR a file carries that looks like one of
# stree's (an entry id holding "\x1b[33m") is caught by RAW: payloads that must never appear.
OWN_SGR = re.compile(r"\x1b\[(?:(?:0|1|2|31|32|33|35|36|90)m|K)")  # (and progress's erase-line)
SGR_ID = "sgr\x1b[33mID-SGR\x1b[7mREV\x1b[0m"  # an entry id with styling codes in it
RAW = ["\x1b[33mID-SGR", "\x1b[7m", "\x1b[31;1mRED", "\x1b]"]
ACTIVE = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def hostile_session(path, cwd="/home/dev/\x1b]0;cwd-title\x07proj"):
    b = SessionBuilder(cwd=cwd)
    u = b.user(f"user {PAYLOAD}")
    b.assistant(f"assistant {PAYLOAD}", thinking=f"thinking {PAYLOAD}",
                tools=[(f"tool\x1b]0;name\x07", {"path": f"/tmp/{PAYLOAD}", "command": PAYLOAD})],
                model=f"model\x1b]0;m\x07", provider="prov\u202e")
    call = b.entries[-1]["message"]["content"][-1]["id"]
    b.tool_result(call, "bash", f"result {PAYLOAD}\n{LONG}")
    b.append("message", message={"role": "bashExecution", "command": f"ls {PAYLOAD}", "output": PAYLOAD,
                                 "exitCode": 1, "cancelled": False, "truncated": False, "timestamp": 1})
    b.assistant(None, stop="error")
    b.entries[-1]["message"]["errorMessage"] = f"error {PAYLOAD}"
    b.custom_message(f"ext\x1b]0;ct\x07", f"custom {PAYLOAD}")
    b.model_change("openai\x07", f"gpt\x1b[2J")
    b.thinking(f"high\u202e")
    b.branch_summary(f"branch {PAYLOAD}")
    b.compaction(f"compaction {PAYLOAD}", first_kept=u)
    b.append("message", id="e\x1b]0;id\x07", message={"role": "user", "content": f"odd id {PAYLOAD}"})
    b.append("message", id=SGR_ID, message={"role": "user", "content": "an id with styling codes"})
    b.user(f"after {PAYLOAD}")
    b.label(u, "lbl\x1b]0;label-title\x07\u202e")
    b.label(b.entries[-2]["id"], "[bold]markup-label[/]")
    b.name(f"name {PAYLOAD}")
    b.write(path)
    return b


def on_pty(args, env=None, timeout=60):
    """Run stree with stdout on a pseudo-terminal (as a person runs it); returns (code, out, err)."""
    master, slave = os.openpty()
    full_env = dict(os.environ, COLUMNS="120", LINES="40", TERM="xterm-256color", **(env or {}))
    proc = subprocess.Popen([sys.executable, "-m", "stree", "--no-pager", *map(str, args)], stdout=slave,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=full_env)
    os.close(slave)
    out = read_pty(master, proc, timeout)
    os.close(master)
    err = proc.stderr.read().decode("utf-8", "replace")
    proc.wait(timeout)
    return proc.returncode, out.decode("utf-8"), err


def assert_inert(text, where):
    for raw in RAW:
        assert raw not in text, f"{where}: the file's {raw!r} reaches the terminal"
    bare = OWN_SGR.sub("", text).replace("\r\n", "\n")  # the pty turns \n into \r\n
    bad = ACTIVE.search(bare)
    assert bad is None, f"{where}: raw {bad.group(0)!r} reaches the terminal near " \
                        f"{bare[max(0, bad.start() - 60):bad.start() + 20]!r}"
    assert "\x1b" not in bare, where


VIEWS = [
    ["log"], ["log", "--graph"], ["log", "--graph", "--filter", "all"], ["log", "--graph", "--filter", "no-tools"],
    ["log", "--graph", "--search", "bold"], ["show", "@"], ["show", "root", "@~1", "@~2", "@~3", "@~4", "@~5"],
    ["show", "@~6", "@~7", "@~8", "@~9", "@~10"], ["context"], ["context", "@~4"], ["label"], ["reflog"],
    ["name"], ["fsck"], ["rev-parse", "@", "root"], ["merge-base", "@", "root"],
]


@pytest.mark.parametrize("color", ["always", "never"])
def test_every_human_view_on_a_terminal_is_inert(tmp_path, color):
    path = tmp_path / "hostile.jsonl"
    hostile_session(path)
    seen = ""
    for args in VIEWS:
        code, out, err = on_pty(["--color", color, "-s", path, *args])
        assert code in (0, 1), (args, code, err)
        assert_inert(out, f"stdout of {args}")
        assert_inert(err, f"stderr of {args}")
        seen += out
    # the payloads are shown, visibly escaped, not dropped
    for visible in ("\\x1b]0;pwned-title\\x07", "\\u202eevil-bidi", "[bold red]markup[/]", "\\x9b31m",
                    "lbl\\x1b]0;label-title\\x07", "name ", "odd id", "sgr\\x1b[33mID-SGR"):
        assert visible in seen, visible


def test_views_through_a_pipe_are_inert_too(tmp_path, stree):
    path = tmp_path / "hostile.jsonl"
    hostile_session(path)
    for args in VIEWS + [["log", "--format", "{id} {label} {preview}"], ["log", "--graph", "--format", "{row}"],
                         ["show", "--format", "{text}", "root"], ["context", "--format", "{role}: {text}"]]:
        r = stree("-s", path, "--no-pager", *args)
        assert r.code in (0, 1), (args, r)
        assert_inert(r.out, f"stdout of {args}")
        assert_inert(r.err, f"stderr of {args}")


def test_json_output_escapes_what_a_terminal_would_act_on(tmp_path, stree):
    """JSON keeps the data exact, yet `stree log --json` on a terminal cannot set its title:
    C0 controls are \\u escapes by JSON itself; C1 and bidi are escaped by stree."""
    import json

    path = tmp_path / "hostile.jsonl"
    hostile_session(path)
    for args in (["show", "--json", "root"], ["log", "--json"], ["context", "--json"], ["label", "--json"]):
        r = stree("-s", path, *args)
        assert r.code == 0, r
        assert not ACTIVE.search(r.out) and "\x1b" not in r.out, args
        for line in r.out.splitlines():
            json.loads(line)
    shown = json.loads(stree("-s", path, "show", "--json", "root").out)
    assert shown["message"]["content"][0]["text"] == f"user {PAYLOAD}"  # exact, once decoded


def test_ls_with_a_hostile_cwd_and_file_names(tmp_path, stree):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    project = tmp_path / "\x1b]0;cwd-title\x07proj"  # a session dir serves the sessions of this cwd (pi 1.5)
    project.mkdir()
    names = ["-weird name.jsonl", "new\nline.jsonl", "tab\tand \x1b]0;t\x07.jsonl", "plain.jsonl"]
    for n, name in enumerate(names):
        hostile_session(sessions / name, cwd=str(project))
        os.utime(sessions / name, (1_800_000_000 + n, 1_800_000_000 + n))
    r = stree("--session-dir", sessions, "ls", "-z", "--format", "{path}", cwd=project)
    assert r.code == 0, r
    paths = r.raw.split(b"\0")
    assert paths[-1] == b"" and sorted(os.path.basename(p.decode()) for p in paths[:-1]) == sorted(names)
    for p in paths[:-1]:
        shown = stree("-s", p.decode(), "rev-parse", "@")
        assert shown.code == 0 and shown.out.strip(), (p, shown)
    human = stree("--session-dir", sessions, "ls", cwd=project)
    assert human.code == 0 and len(human.out.splitlines()) == len(names)
    assert_inert(human.out, "ls")
    code, out, err = on_pty(["--session-dir", sessions, "ls", "--all"])
    assert code == 0, err
    assert_inert(out, "ls --all on a terminal")


@pytest.mark.parametrize("spelling", [["-s", "./-weird name.jsonl"], ["--session=-weird name.jsonl"],
                                      ["-s", "-weird name.jsonl"]])
def test_session_names_with_leading_dashes_and_spaces(tmp_path, stree, spelling):
    hostile_session(tmp_path / "-weird name.jsonl")
    r = stree(*spelling, "log", "-n", "1", "--format", "{id}", cwd=tmp_path)
    assert r.code == 0 and r.out.strip(), r
    w = stree(*spelling, "label", "ok-label", "root", cwd=tmp_path)
    assert w.code == 0, w
    assert "ok-label" in stree(*spelling, "label", cwd=tmp_path).out


def test_env_session_with_a_newline_in_its_name(tmp_path, stree):
    path = tmp_path / "two\nlines.jsonl"
    hostile_session(path)
    r = stree("log", "-n", "1", "--json", env={"STREE_SESSION": str(path)})
    assert r.code == 0, r
    f = stree("fork", "root", "-o", tmp_path / "fork\nout.jsonl", env={"STREE_SESSION": str(path)})
    assert f.code == 0, f
    assert (tmp_path / "fork\nout.jsonl").exists()


# -- issue 17: the spinner, styling codes in ids, file names in stderr messages -----------

EVIL_NAME = "evil\x1b]0;fn-title\x07\x1b]52;c;cHduZWQ=\x07\x9b7m"  # title, clipboard write, 8-bit CSI


def on_full_pty(args, env=None, timeout=60):
    """stree with stdout and stderr on one pseudo-terminal, as in a person's shell: every byte
    it writes (progress, warnings, errors) is what the terminal would act on."""
    master, slave = os.openpty()
    full_env = dict(os.environ, COLUMNS="120", LINES="40", TERM="xterm-256color", **(env or {}))
    proc = subprocess.Popen([sys.executable, "-m", "stree", "--no-pager", *map(str, args)], stdout=slave,
                            stderr=slave, stdin=subprocess.DEVNULL, env=full_env)
    os.close(slave)
    out = read_pty(master, proc, timeout)
    os.close(master)
    proc.wait(timeout)
    return proc.returncode, out.decode("utf-8", "replace")


def test_the_summary_spinner_shows_the_sessions_model_id_inert(tmp_path):
    """The session's own model (used when nothing else is set) is drawn by the spinner while
    the model answers: its OSC 0 title and OSC 52 clipboard writes must not reach the terminal."""
    from llm_server import LLMServer, Reply, openai_json

    b = SessionBuilder()
    u = b.user("Fix the bug")
    b.assistant("Looking.", provider="openai", model=f"gpt{EVIL_NAME}")
    b.user("Try plan A")
    b.assistant("Done.", provider="openai", model=f"gpt{EVIL_NAME}")
    path = b.write(tmp_path / "s.jsonl")
    server = LLMServer()
    server.script = [Reply(delay=1.0, body=openai_json("## Goal\nok"))]
    try:
        code, out = on_full_pty(["-s", path, "summarize", "--to", u, "--no-stream"],
                                env={"OPENAI_API_KEY": "sk-x", "OPENAI_BASE_URL": server.url + "/v1",
                                     "STREE_PROGRESS_DELAY": "0"})
    finally:
        server.close()
    assert code == 0, out
    assert "Summarizing" in out and "gptevil\\x1b]0;fn-title\\x07" in out, out[:500]
    assert_inert(out, "summarize on a terminal")


def _empty_session(path):
    path.write_text(SessionBuilder().lines()[0] + "\n")
    return path


def test_session_file_names_in_stderr_messages_are_inert(tmp_path):
    d = tmp_path / f"dir{EVIL_NAME}"
    d.mkdir()
    full = hostile_session(d / f"{EVIL_NAME}.jsonl")  # noqa: F841 - the file is what matters
    path = d / f"{EVIL_NAME}.jsonl"
    empty = _empty_session(d / f"empty{EVIL_NAME}.jsonl")
    broken = d / f"broken{EVIL_NAME}.jsonl"
    broken.write_text(path.read_text() + '{"type":"message","id":"zz","parentId":"nope","timestamp":"x"}\n')
    cache = tmp_path / f"cache{EVIL_NAME}"
    runs = [
        ["-s", path, "fsck"], ["-s", broken, "fsck"], ["-s", path, "migrate"], ["-s", empty, "name"],
        ["-s", empty, "log"], ["-s", empty, "log", "--graph"], ["-s", path, "summarize", "root..root",
                                                                  "--provider", "extractive"],
        ["--session-dir", d / "none", "ls"], ["-s", d / f"missing{EVIL_NAME}.jsonl", "log"],
        ["-s", path, "log", "-n", "1"], ["gc"], ["cache", "clear"], ["-s", path, "checkout", "nonesuch"],
    ]
    seen = ""
    for args in runs:
        code, out = on_full_pty(args, env={"STREE_CACHE_DIR": str(cache)})
        assert code in (0, 1, 2, 3, 4), (args, code, out)
        assert_inert(out, f"{args[-1]} on a terminal")
        seen += out
    os.chmod(cache, 0o777)  # refused, with a hint naming the path
    code, out = on_full_pty(["-s", path, "log"], env={"STREE_CACHE_DIR": str(cache)})
    assert code == 2 and "chmod go-w" in out, out
    assert_inert(out, "a refused cache dir's hint")
    assert "\\x1b]0;fn-title\\x07" in seen + out  # shown, visibly escaped


@pytest.mark.parametrize("color", ["always", "never"])
def test_styling_codes_in_entry_ids_stay_text(tmp_path, color):
    path = tmp_path / "ids.jsonl"
    b = SessionBuilder()
    b.append("message", id=SGR_ID, message={"role": "user", "content": "hello"})
    b.append("message", id="plain\x1b[31mRED-ID", message={"role": "user", "content": "again"})
    b.append("label", targetId=SGR_ID, label="\x1b[36mcyan-label")
    b.write(path)
    for args in (["log"], ["log", "--graph"], ["log", "--graph", "--filter", "all"], ["show", "root"],
                 ["label"], ["reflog"], ["rev-parse", "@"]):
        code, out = on_full_pty(["--color", color, "-s", path, *args])
        assert code == 0, (args, out)
        for raw in ("\x1b[33mID-SGR", "\x1b[7mREV", "\x1b[31mRED-ID", "\x1b[36mcyan-label"):
            assert raw not in out, (args, raw, out)
        assert_inert(out, f"{args} --color {color}")
