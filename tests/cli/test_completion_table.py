"""`stree __complete` answers from stree/data/complete_table.json without click: the table
is what the click definitions say today, and its answers are byte for byte those read
from click (STREE_NO_FAST=1, stree.complete_click) on a broad set of command lines."""

import json
import os
import subprocess
import sys

import click
import pytest

from conftest import ROOT, run_stree
from test_completion import project  # noqa: F401  (the fixture: two sessions of a project, one elsewhere)

TABLE = ROOT / "stree" / "data" / "complete_table.json"
ARGV_TABLE = ROOT / "stree" / "argv_table.py"


def test_checked_in_table_is_a_fresh_generation():
    from stree.complete_click import table_text

    assert TABLE.read_text(encoding="utf-8") == table_text(), "run `make complete-table`"


def test_the_generator_writes_the_table(tmp_path):
    out = tmp_path / "t.json"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_complete_table.py"), str(out)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text()) == json.loads(TABLE.read_text())
    assert (tmp_path / "argv_table.py").read_text() == ARGV_TABLE.read_text()


def test_checked_in_argv_table_is_a_fresh_generation():
    """The grammar the fast paths read a command line with (stree.argv) is click's of today."""
    from stree.complete_click import argv_table_text

    assert ARGV_TABLE.read_text(encoding="utf-8") == argv_table_text(), "run `make complete-table`"


def test_the_argv_table_reads_what_click_reads():
    """A plain command line gives the fast paths the options click gives the command, by the
    same dests; what click would refuse or read otherwise is left to click (None)."""
    from stree.argv import parse

    assert parse(["-s", "f", "log", "-n", "3", "--date=iso", "x", "--no-pager"],
                 {"log": {"max_count", "date_style"}}) == (
        "log", {"session": "f", "max_count": 3, "date_style": "iso", "no_pager": True}, ["x"])
    assert parse(["label", "-f", "name", "@~1"], {"label": {"force"}}) == ("label", {"force": True}, ["name", "@~1"])
    assert parse(["rev-parse", "a", "b", "c", "--short"], {"rev-parse": {"short"}}) == (
        "rev-parse", {"short": True}, ["a", "b", "c"])
    for declined in (["log", "--date", "never"], ["log", "-n", "-1"], ["log", "a", "b"], ["log", "--reverse"],
                     ["--color", "sometimes", "log"], ["log", "-n", "1", "-n", "2"], ["checkout", "--no-stream", "x"],
                     ["--agent", "pi", "log"], ["label", "a", "b", "c"], ["log", "--json=1"], ["fsck"]):
        commands = {"log": {"max_count", "date_style"}, "label": {"force"}, "checkout": {"stream"}}
        assert parse(declined, commands) is None, declined


def command_lines(session, other, directory):
    """Word lists (the last one completed) covering every command, its options and their
    values, its arguments, revisions, sessions, SESSION:ENTRY and files."""
    from stree.cli import main, with_global_options
    from stree.commands import SUBCOMMANDS, load

    lines = [[""], ["l"], ["-"], ["--"], ["--c"], ["--color", ""], ["--color", "a"], ["--color="],
             ["--agent", ""], ["--agent="], ["-s", ""], ["-s", "11"], ["-s", "d"], ["-s", "./"], ["-s", "~/"],
             ["-s", str(session.parent) + "/"], ["--session", ""], ["--session=2"], ["--agent-dir", ""],
             ["--session-dir", ""], ["-C", ""], ["-C", str(directory), "log", ""], ["nosuchcommand", ""],
             ["--", ""], ["--no-pager", "--"], ["-sx", "log", "--f"], ["--version", ""],
             ["log", "2222bbbb:"], ["log", "2222bbbb:st"], [f"{session}:"], ["show", "1111aaaa-0000:"],
             ["-s", str(session), "show", "st"], ["-s", str(session), "log", "start..0000001"],
             ["-s", str(session), "log", "start...@"], ["-s", str(session), "log", "@{"],
             ["-s", str(session), "log", "HEAD@{"], ["-s", str(session), "log", "H"],
             ["-s", str(session), "log", "start..@{"], ["-s", str(session), "show", ":"],
             ["-s", str(session), "show", ":/x"], ["-s", str(session), "show", "@~"],
             ["-s", str(session), "log", "r"], ["--session", str(other), "show", ""],
             ["-s", str(session), "log", "--", ""], ["-s", str(session), "log", "--", "-"],
             ["-s", str(session), "label", "-d", ""], ["-s", str(session), "label", "x", "0000000"],
             ["-s", str(session), "checkout", "--summarize", ""], ["-s", "1111", "log", ""],
             ["-s", str(directory / "missing.jsonl"), "log", ""], ["log", "-s", str(other), ""],
             ["help", ""], ["help", "rev"], ["completion", ""], ["completion", "z"]]
    for name in SUBCOMMANDS:
        command = with_global_options(load(name))
        ctx = click.Context(command, info_name=name, help_option_names=["-h", "--help"])
        lines += [[name, ""], [name, "-"], [name, "--"], [name, "x", ""], [name, "x", "y", ""],
                  ["-s", str(session), name, ""], ["-s", str(session), name, "0000001"],
                  ["-s", str(session), name, "x", "s"]]
        for param in command.get_params(ctx):
            if not isinstance(param, click.Option):
                continue
            for opt in param.opts + param.secondary_opts:
                lines += [[name, opt[:3]], [name, opt, ""], [name, opt, "a"], [name, opt, "v", ""],
                          ["-s", str(session), name, opt, ""], ["-s", str(session), name, opt, "s"]]
                if opt.startswith("--"):
                    lines += [[name, f"{opt}="], ["-s", str(session), name, f"{opt}=st"]]
    assert main.name  # (the root group was read)
    return lines


def answers(lines, capsys, monkeypatch, no_fast):
    """What `stree __complete` prints for each line, in bash (whole words and cut at `:`,
    `=`) and zsh, read from the table or from click."""
    from stree.complete import main

    if no_fast:
        monkeypatch.setenv("STREE_NO_FAST", "1")
    else:
        monkeypatch.delenv("STREE_NO_FAST", raising=False)
    cwd = os.getcwd()
    out = []
    for words in lines:
        word = words[-1]
        cuts = {word, word.rpartition(":")[2], word.rpartition("=")[2]}
        for shell, cur in [("zsh", word)] + [("bash", c) for c in sorted(cuts)]:
            code = main([shell, cur, "--", *words])
            os.chdir(cwd)  # (-C DIR moves there, as stree does)
            got = capsys.readouterr()
            out.append((shell, cur, words, code, got.out, got.err))
    return out


@pytest.mark.slow  # (big inputs: left out of `make check`)
def test_the_table_answers_what_click_answers(project, capsys, monkeypatch):  # noqa: F811
    monkeypatch.chdir(project["dir"])
    session = project["newer"]
    for target in ("root", "-"):  # moves: @{N} has something to offer
        r = run_stree("-s", session, "checkout", target)
        assert r.code == 0, r.err
    lines = command_lines(session, project["other"], project["dir"])
    assert len(lines) > 1500
    for catalogue in (False, True):
        if catalogue:
            r = run_stree("catalog", "--rebuild", cwd=project["dir"])
            assert r.code == 0, r.err
        click_path = answers(lines, capsys, monkeypatch, no_fast=True)
        table_path = answers(lines, capsys, monkeypatch, no_fast=False)
        differ = [(c[:3], c[3:], t[3:]) for c, t in zip(click_path, table_path) if c != t]
        assert differ == [], differ[:5]
        # the lines reach what they mean to: revisions, reflog moves, sessions, choices, files
        kinds = {row.split("\t")[0] for a in table_path for row in a[4].splitlines()[1:]}
        assert kinds >= {"command", "option", "choice", "label", "entry", "special", "session", "reflog"}
        assert {a[4].split("\n")[0] for a in table_path} >= {"plain", "files", "dirs", "jsonl"}


def test_a_completion_loads_neither_click_nor_the_command_modules(project):  # noqa: F811
    """Every command, its options and arguments, through the entry point `stree` uses."""
    from stree.commands import SUBCOMMANDS

    probe = """
import json, sys
from stree.entrypoint import main
lines = json.loads(sys.argv[1])
for words in lines:
    sys.argv = ["stree", "__complete", "zsh", words[-1], "--", *words]
    try:
        main()
    except SystemExit as e:
        assert e.code == 0, (words, e.code)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("click", "rich", "httpx")
                or m.startswith(("stree.commands", "stree.cli", "stree.complete_click")))
print("LOADED", loaded, file=sys.stderr)
"""
    session = str(project["newer"])
    lines = [[""], ["--color", ""], ["-s", ""], ["-s", session, "log", ""], ["-s", session, "log", "@{"],
             ["help", ""], ["completion", ""]]
    for name in SUBCOMMANDS:
        lines += [[name, "--"], [name, ""], [name, "x", ""], ["-s", session, name, "x", "y", ""]]
    proc = subprocess.run([sys.executable, "-c", probe, json.dumps(lines)], capture_output=True, text=True,
                          cwd=project["dir"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.rstrip().endswith("LOADED []"), proc.stderr[-500:]
    assert proc.stdout.count("\noption\t--help\t") >= len(SUBCOMMANDS)  # (it did answer)


@pytest.mark.parametrize("no_fast", ["", "1"])
def test_the_stree_command_answers_the_same_both_ways(project, no_fast):  # noqa: F811
    r = run_stree("__complete", "bash", "", "--", "-s", project["newer"], "log", "", cwd=project["dir"],
                  env={"STREE_NO_FAST": no_fast} if no_fast else None)
    assert r.code == 0 and r.err == ""
    assert r.out.splitlines()[:2] == ["plain", "label\tbeta\tuser: Write the docs"]


@pytest.mark.parametrize("text", [None, "{not json", '{"version": 1}', "[]"])
def test_without_a_readable_table_click_answers(tmp_path, monkeypatch, capsys, branchy_file, text):
    import stree.complete

    table = tmp_path / "complete_table.json"
    if text is not None:
        table.write_text(text)
    monkeypatch.setattr(stree.complete, "TABLE", str(table))
    monkeypatch.delenv("STREE_NO_FAST", raising=False)
    assert stree.complete.main(["zsh", "st", "--", "-s", str(branchy_file), "show", "st"]) == 0
    assert capsys.readouterr().out == "plain\nlabel\tstart\tuser: Fix the CSV quoting bug in parser.py\n"
