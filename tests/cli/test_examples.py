"""Every example in every --help and in the README, run as written in a shell (issue 14).

Each runs in a fresh scratch project: HOME, pi's agent dir with two sessions of the working
directory (a copy of the demo, the newest, and a small one whose id starts 0199a1b2), the
files the examples name (demo.jsonl, notes.md, old.jsonl, broken.jsonl), and the labels they
name (main, X, try-2, start). Models are a loopback HTTP server (STREE_PROVIDER=openai).
Programs this machine lacks or that need a person (fzf, pi's TUI, a model client) end the
pipeline there: what comes before them still runs and must succeed.

The examples of every command at once: so one module."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from builders import branchy
from conftest import interruptible
from llm_server import LLMServer

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "stree" / "data" / "demo.jsonl"
STREE_BIN = Path(sys.executable).parent / "stree"
NOT_HERE = ("fzf", "some-llm", "pi")  # interactive, or a stand-in for "your model client"
# examples whose documented answer is not exit 0
EXPECTED = {
    "stree -s old.jsonl migrate --check": 1,  # "exit 1 if old.jsonl needs upgrading"
    "stree -s old-v1.jsonl migrate --check": 1,
    "stree -s broken.jsonl fsck --json | jq -r 'select(.kind==\"cycle\") | .id'": 1,  # fsck found problems
    # followed until Ctrl-C: runnable() sends SIGINT after 2 s; stree's documented exit is 130
    "stree log -n 3 --follow": 130,
    "stree log -n 3 --follow --json": 130,
    "stree log --graph --follow": 130,
    # a shared catalogue on a PostgreSQL server this machine does not run: exit 5, one line and a hint
    "stree --catalog postgresql:///stree catalog push": 5,
    "stree --agent pi --catalog postgresql:///stree catalog push --since 7d": 5,
    "STREE_CATALOG=postgresql:///stree stree grep -c x": 5,
    "stree --catalog postgresql:///stree catalog migrate": 5,
}


def _split_comment(line):
    """The command of an example line: up to `  #` (README) or two spaces outside quotes (--help)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif line.startswith("  ", i):
            return line[:i]
        elif c == "#" and i and line[i - 1] == " ":
            return line[:i].rstrip()
    return line.rstrip()


def help_examples():
    from click.testing import CliRunner

    from stree.commands import SUBCOMMANDS
    from stree.cli import main

    found = []
    for name in [None, *SUBCOMMANDS]:
        args = [name, "--help"] if name else ["--help"]
        text = CliRunner().invoke(main, args, prog_name="stree", terminal_width=100).output
        block = re.search(r"^ *Examples:\n((?: {4}.*\n)+)", text, re.M)
        assert block, name
        found += [(f"{name or 'stree'} --help", line.strip()) for line in block.group(1).splitlines()
                  if line.strip()]
    return found


def readme_examples():
    text = (ROOT / "README.md").read_text()
    found = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.M | re.S):
        for line in block.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                found.append(("README", line))
    return found


def runnable(command):
    """The command as it runs here (None: not runnable here, with the reason in the id)."""
    if "<TAB>" in command or command.startswith("make "):
        return None  # completion and make have their own tests (test_completion, test_make_install_...)
    first = command.split()[0]
    if first in NOT_HERE:  # e.g. pi --session "$(stree fork @~4)": the stree inside it
        inner = re.search(r"\$\((stree [^)]*)\)", command)
        return inner.group(1) if inner else None
    cut = re.search(r"\|\s*(?:%s)\b" % "|".join(NOT_HERE), command)
    command = command[:cut.start()].rstrip() if cut else command
    if re.search(r"\bserve\b", command) and "|" not in command:
        command += " < /dev/null"  # a server reads requests until EOF: here there are none
    if " --follow" in command:  # waits for pi to append: stopped as a user does, with Ctrl-C
        command = "timeout --preserve-status -s INT 2 " + command
    return command


EXAMPLES = sorted(set(help_examples() + readme_examples()), key=lambda e: (e[0], e[1]))
# completion (<TAB>) and make lines have their own tests (test_completion, test_install)
EXAMPLES = [(where, example) for where, example in EXAMPLES if runnable(_split_comment(example)) is not None]


@pytest.fixture(scope="module")
def model():
    s = LLMServer()
    yield s
    s.close()


@pytest.fixture(scope="module")
def project(tmp_path_factory, model):
    """The scratch project, built once; each example gets it afresh at the same path."""
    base = tmp_path_factory.mktemp("examples")
    work, env = _project(base / "live", model)
    shutil.copytree(base / "live", base / "pristine", symlinks=True)

    def fresh():
        shutil.rmtree(base / "live")
        shutil.copytree(base / "pristine", base / "live", symlinks=True)
        return work, env
    return fresh


def _project(tmp_path, model):
    home = tmp_path / "home"
    work = tmp_path / "work"
    work.mkdir(parents=True)
    (home / ".local" / "share" / "bash-completion" / "completions").mkdir(parents=True)
    (home / "src" / "other").mkdir(parents=True)
    env = {"HOME": str(home), "PATH": f"{STREE_BIN.parent}:{os.environ['PATH']}", "TZ": "UTC", "LANG": "C.UTF-8",
           "XDG_CACHE_HOME": str(home / ".cache"), "XDG_CONFIG_HOME": str(home / ".config"),
           "STREE_PAGER": "cat", "MANPAGER": "cat", "STREE_PROVIDER": "openai", "STREE_MODEL": "test-model",
           "OPENAI_BASE_URL": f"{model.url}/v1", "OPENAI_API_KEY": "test-key",
           "URL": f"{model.url}/v1/chat/completions"}
    if os.environ.get("PYTHONPATH"):  # (./run-tests in a worktree: its code, not the venv's checkout)
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]

    def run(*args):
        r = subprocess.run([str(STREE_BIN), *map(str, args)], cwd=work, env=env, capture_output=True, text=True)
        assert r.returncode == 0, (args, r.stderr)
        return r.stdout.strip()

    small = branchy(cwd=str(work)).write(tmp_path / "small.jsonl")
    run("-s", small, "fork", "--full", "--cwd", work)  # into the project's session dir (a new id)
    project = Path(run("-s", "demo", "fork", "--full", "--cwd", work))
    # the small one again, keeping its id 0199a1b2-...: a session `-s 0199a1b2` names
    shutil.copy(small, project.parent / "2026-11-18T11-06-40-000Z_0199a1b2-small.jsonl")
    os.utime(project, (2_000_000_000, 2_000_000_000))  # the demo copy is the newest: what stree opens
    for name, rev in (("main", "@~6"), ("X", "@~3"), ("try-2", "handrolled-splitter"), ("start", "@~12")):
        run("-s", project, "label", name, rev)
    shutil.copy(DEMO, work / "demo.jsonl")
    (work / "man").symlink_to(ROOT / "man")  # README: man -l man/stree-rev-parse.1, from the checkout
    (work / "notes.md").write_text("Tried the csv module; went back.\n")
    v1 = ('{"type":"session","id":"0199a1b2-0000-7000-8000-00000000000a","timestamp":"2025-01-01T00:00:00.000Z",'
          '"cwd":"/tmp"}\n{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user",'
          '"content":"hi","timestamp":1735689601000}}\n')
    (work / "old.jsonl").write_text(v1)
    (work / "old-v1.jsonl").write_text(v1)
    b = branchy()
    b.entries[0]["parentId"] = b.entries[2]["id"]  # a parent cycle
    b.write(work / "broken.jsonl")
    return work, env


@pytest.mark.parametrize("where,example", EXAMPLES, ids=[f"{w}: {e}" for w, e in EXAMPLES])
def test_documented_example_runs(project, where, example):
    command = runnable(_split_comment(example))
    if "help" in command and "man" in command and shutil.which("man") is None:
        pytest.skip("man is not installed")
    if "zsh" in command and command.startswith("source"):
        if shutil.which("zsh") is None:
            pytest.skip("zsh is not installed")
        shell = ["zsh", "-c", "autoload -Uz compinit && compinit -u && " + command]
    else:
        shell = ["bash", "-o", "pipefail", "-c", command]
    work, env = project()
    r = subprocess.run(shell, cwd=work, env=env, capture_output=True, text=True, timeout=120,
                       preexec_fn=interruptible)  # (the --follow examples end with a SIGINT)
    expected = EXPECTED.get(_split_comment(example), 0)
    assert r.returncode == expected, f"{where}: {command}\nstdout: {r.stdout[-1500:]}\nstderr: {r.stderr[-1500:]}"
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    if expected == 0:
        assert "stree: error" not in r.stderr, r.stderr
