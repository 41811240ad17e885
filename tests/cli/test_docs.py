"""Man pages, `stree help`, and --help: generated from the code, fresh, rendered cleanly.

The documentation of every command at once: so one module."""

import importlib.util
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT

MAN = ROOT / "man"


def gen_man():
    spec = importlib.util.spec_from_file_location("gen_man", ROOT / "tools" / "gen_man.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def command_names():
    from stree.commands import SUBCOMMANDS

    return list(SUBCOMMANDS)


def test_checked_in_man_pages_are_a_fresh_generation(tmp_path):
    pages = gen_man().write(tmp_path)
    assert sorted(pages) == sorted(["stree.1"] + [f"stree-{n}.1" for n in command_names()])
    checked_in = sorted(p.name for p in MAN.glob("*.1"))
    assert checked_in == sorted(pages), "run `make man`"
    stale = [name for name, text in pages.items() if (MAN / name).read_text(encoding="utf-8") != text]
    assert stale == [], f"run `make man`: {stale} differ from a fresh generation"


def tool(name):
    path = shutil.which(name)
    if path is None:
        # `make test` installs it when run as root (CI) and otherwise says what is skipped
        pytest.skip(f"{name} is not installed (apt-get install groff-base man-db)")
    return path


@pytest.mark.parametrize("page", sorted(p.name for p in MAN.glob("*.1")))
def test_man_page_renders_without_warnings(page):
    path = MAN / page
    groff = subprocess.run([tool("groff"), "-ww", "-man", "-Tutf8", str(path)], capture_output=True)
    assert groff.returncode == 0 and groff.stderr == b"", groff.stderr.decode()
    man = subprocess.run([tool("man"), "--warnings=w", "-l", str(path)], capture_output=True,
                         env=dict(os.environ, MANWIDTH="100", MANPAGER="cat", LC_ALL="C.UTF-8"))
    assert man.returncode == 0 and man.stderr == b"", man.stderr.decode()
    text = man.stdout.decode()
    for heading in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS" if page != "stree.1" else "GLOBAL OPTIONS",
                    "EXAMPLES", "EXIT STATUS", "ENVIRONMENT", "FILES", "SEE ALSO"):
        assert re.search(rf"^{heading}$", text, re.M), f"{page}: no {heading} section"
    assert "\u2010" not in text  # options print as ASCII minus signs, copy-pasteable


def test_man_pages_say_what_the_code_says():
    from stree.commands import SUBCOMMANDS
    from stree.errors import EXIT_CODES
    from stree.output.fields import ENTRY_FIELDS

    main = (MAN / "stree.1").read_text()
    log = (MAN / "stree-log.1").read_text()
    for code, _ in EXIT_CODES:
        assert f".TP\n\\fB{code}\\fR\n" in main and f".TP\n\\fB{code}\\fR\n" in log
    for field in ENTRY_FIELDS:
        assert f"\\fB{field}\\fR" in log
    for name in SUBCOMMANDS:
        escaped = name.replace("-", "\\-")
        assert f"\\fBstree\\-{escaped}\\fR(1)" in main
    assert ".SH REVISIONS" in main and "\\fB:/TEXT\\fR" in main
    assert "stree log \\-\\-format \\(aq{id}\\et{preview}\\(aq | fzf" in log
    assert "\\fB\\-n\\fR, \\fB\\-\\-max\\-count\\fR \\fIN\\fR" in log


def test_man_install_puts_pages_under_prefix(tmp_path):
    proc = subprocess.run(["make", "-s", "install-man", f"PREFIX={tmp_path}"], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    installed = sorted(p.name for p in (tmp_path / "share" / "man" / "man1").iterdir())
    assert installed == sorted(p.name for p in MAN.glob("*.1"))
    r = subprocess.run([tool("man"), "-M", str(tmp_path / "share" / "man"), "stree-log"], capture_output=True,
                       text=True, env=dict(os.environ, MANPAGER="cat", MANWIDTH="100"))
    assert r.returncode == 0 and "stree-log - Show the entries on a path" in r.stdout


def test_help_opens_the_man_page(stree):
    tool("man")
    r = stree("help", "log", env={"MANPAGER": "cat", "MANWIDTH": "100"})
    assert r.code == 0, r
    assert re.search(r"^STREE-LOG\(1\)", r.out, re.M) and re.search(r"^EXAMPLES$", r.out, re.M)
    r = stree("help", env={"MANPAGER": "cat"})
    assert r.code == 0 and re.search(r"^REVISIONS$", r.out, re.M)


def test_help_falls_back_to_dash_dash_help_without_man(stree, tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    r = stree("help", "log", env={"PATH": str(empty)})
    assert r.code == 0, r
    assert r.out.startswith("Usage: stree log [OPTIONS] [REV|RANGE]") and "Examples:" in r.out
    r = stree("help", env={"PATH": str(empty)})
    assert r.out.startswith("Usage: stree [OPTIONS] COMMAND") and "Commands:" in r.out
    r = stree("help", "nope")
    assert r.code == 3 and "no command 'nope'" in r.err


@pytest.mark.parametrize("name", command_names())
def test_every_command_has_summary_description_and_examples(stree, name):
    from stree.commands import SUBCOMMANDS

    summary = SUBCOMMANDS[name][1]
    assert summary and "\n" not in summary and len(summary) <= 72
    r = stree(name, "--help")
    assert r.code == 0, r
    text = r.out
    assert text.startswith(f"Usage: stree {name} ")
    body = text.split("\n\n", 2)
    description = body[1].strip()
    assert len(description.split()) >= 5, f"{name}: no description in --help"
    examples = re.search(r"^ *Examples:\n((?: {4}.*\n)+)", text, re.M)
    assert examples, f"{name}: no Examples: block in --help"
    lines = [line for line in examples.group(1).splitlines() if line.strip()]
    assert len(lines) >= 2 and all("stree" in line for line in lines), lines


def test_main_help_lists_every_command(stree):
    r = stree("--help")
    for name in command_names():
        assert re.search(rf"^  {re.escape(name)}\s", r.out, re.M)


def test_help_lists_commands_exit_codes_and_examples(stree):
    r = stree("--help")
    assert r.code == 0
    for word in ("log", "show", "rev-parse", "merge-base", "context", "ls", "Exit codes", "Revisions"):
        assert word in r.out
    for cmd in ("log", "show", "rev-parse", "merge-base", "context", "ls"):
        h = stree(cmd, "--help")
        assert h.code == 0 and "Examples:" in h.out and h.out.count("stree ") >= 3, cmd


def test_subcommand_man_pages_say_global_options_go_before_or_after(stree, tmp_path):
    pages = sorted((ROOT / "man").glob("stree-*.1"))
    assert pages
    for page in pages:
        text = page.read_text()
        assert "go before the" not in text, page
        assert "may come before or" in text, page
    # as the code does: before and after give the same answer
    assert stree("-s", "demo", "log", "-2").out == stree("log", "-s", "demo", "-2").out
