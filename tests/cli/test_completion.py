"""Tab completion, driven through real bash and zsh on real session files."""

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from builders import SessionBuilder
from conftest import ROOT, run_stree

BIN = Path(sys.executable).parent
SCRIPTS = ROOT / "completions"
CAPTURE = ROOT / "tests" / "shell" / "zsh-capture.zsh"


def shell_env(extra=None):
    if not (BIN / "stree").exists():
        pytest.fail(f"no stree executable next to {sys.executable}: install the package (make test)")
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra or {})
    return env


def bash_complete(words, cwd=None, line=None, env=None):
    """COMPREPLY of `_stree` for COMP_WORDS=words (the last one under the cursor).
    With `line`, COMP_LINE/COMP_POINT are set too, as bash does on a real TAB."""
    if shutil.which("bash") is None:
        pytest.fail("bash is not installed")
    setup = f"source {shlex.quote(str(SCRIPTS / 'stree.bash'))}\n"
    setup += f"COMP_WORDS=({' '.join(shlex.quote(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
    if line is not None:
        setup += f"COMP_LINE={shlex.quote(line)}; COMP_POINT=${{#COMP_LINE}}\n"
    setup += '_stree; printf "%s\\n" "${COMPREPLY[@]}"'
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", setup], capture_output=True, text=True,
                          cwd=cwd, env=shell_env(env), timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [x for x in proc.stdout.split("\n") if x]


def zsh_complete(line, cwd=None, env=None, source=SCRIPTS):
    """What zsh's completion system lists after typing `line` and TAB, in order:
    [(value, description or None)]. `source`: a directory for $fpath, or a script to source."""
    if shutil.which("zsh") is None:
        # `make test` installs it when run as root (CI) and otherwise says what is skipped
        pytest.skip("zsh is not installed (apt-get install zsh)")
    proc = subprocess.run(["zsh", "-f", str(CAPTURE), str(source), line], capture_output=True, text=True,
                          cwd=cwd, env=shell_env(env), timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = []
    for row in proc.stdout.splitlines():
        value, sep, desc = row.partition(" -- ")
        out.append((value, desc if sep else None))
    return out


@pytest.fixture
def project(tmp_path, isolated_home):
    """A project directory with two pi sessions in its session dir, and an older one elsewhere."""
    from stree.core.store import encode_cwd

    proj = tmp_path / "proj"
    proj.mkdir()
    sessions = isolated_home / ".pi" / "agent" / "sessions"

    def make(cwd, uuid, first, label, name=None, ms=1_795_000_000_000):
        b = SessionBuilder(cwd=str(cwd), id=uuid, start_ms=ms)
        u = b.user(first)
        b.assistant("Sure.")
        b.label(u, label)
        if name:
            b.name(name)
        directory = sessions / encode_cwd(cwd)
        directory.mkdir(parents=True, exist_ok=True)
        return b.write(directory / f"2026-01-0{ms % 10}T00-00-00-000Z_{uuid}.jsonl")

    older = make(proj, "1111aaaa-0000-7000-8000-000000000001", "Port the parser to Rust", "alpha", ms=1_795_000_000_001)
    newer = make(proj, "2222bbbb-0000-7000-8000-000000000002", "Write the docs", "beta",
                 name="docs day", ms=1_795_000_000_002)
    os.utime(older, (1_700_000_000, 1_700_000_000))
    os.utime(newer, (1_700_000_100, 1_700_000_100))
    other = make(tmp_path / "elsewhere", "3333cccc-0000-7000-8000-000000000003", "Unrelated work", "gamma",
                 ms=1_795_000_000_003)
    return {"dir": proj, "older": older, "newer": newer, "other": other}


# -- bash ------------------------------------------------------------------------

def test_bash_subcommands_and_options_come_from_click(tmp_path):
    from stree.commands import SUBCOMMANDS

    assert bash_complete(["stree", ""]) == list(SUBCOMMANDS)
    assert bash_complete(["stree", "l"]) == [n for n in SUBCOMMANDS if n.startswith("l")]
    assert bash_complete(["stree", "log", "--gr"]) == ["--graph"]
    assert set(bash_complete(["stree", "--"])) >= {"--session", "--agent-dir", "--session-dir", "--color",
                                                   "--no-pager", "--help"}
    assert bash_complete(["stree", "--color", "a"]) == ["auto", "always"]
    assert bash_complete(["stree", "-s", "x", "log", "--filter", "u"]) == ["user-only"]
    assert bash_complete(["stree", "completion", ""]) == ["bash", "zsh"]
    assert bash_complete(["stree", "help", "rev"]) == ["rev-parse"]


def test_bash_revisions_labels_then_ids_then_specials(branchy_file):
    got = bash_complete(["stree", "-s", str(branchy_file), "log", ""])
    assert got[:2] == ["csv-attempt", "start"]  # the newest label first
    assert got[-3:] == ["@", "root", ":/"]
    ids = got[2:-3]
    assert ids[0] == "00000015"  # the leaf first: the active path, newest first
    labels = {e["id"] for e in map(json.loads, branchy_file.read_text().splitlines()) if e.get("type") == "label"}
    assert labels and set(ids) == {f"{n:08x}" for n in range(1, 22)} - labels  # a label entry is not a place
    assert bash_complete(["stree", "-s", str(branchy_file), "show", "0000000"]) == \
        ["0000000f", "0000000e", "0000000d", "0000000c", "0000000b", "0000000a", "00000003", "00000002",
         "00000001", "00000009", "00000008", "00000007", "00000006", "00000004"]  # (not the label 00000005)
    assert bash_complete(["stree", "-s", str(branchy_file), "merge-base", "@", "csv"]) == ["csv-attempt"]
    assert bash_complete(["stree", "-s", str(branchy_file), "log", "start..0000001"]) == \
        ["start..00000015", "start..00000013", "start..00000012", "start..00000011", "start..00000010"]


def test_bash_write_commands_complete_labels_and_revisions(branchy_file):
    f = str(branchy_file)
    assert bash_complete(["stree", "-s", f, "label", "-d", ""]) == ["csv-attempt", "start"]
    assert bash_complete(["stree", "-s", f, "label", "s"]) == ["start"]
    assert bash_complete(["stree", "-s", f, "label", "x", "0000000a"]) == ["0000000a"]
    assert bash_complete(["stree", "-s", f, "checkout", "--summarize", "cs"]) == ["csv-attempt"]


def test_bash_whole_words_across_colon_and_equals(branchy_file):
    f = str(branchy_file)
    # bash splits :/ and --opt=value at COMP_WORDBREAKS; the script reads COMP_LINE instead
    assert bash_complete(["stree", "-s", f, "show", ":"], line=f"stree -s {f} show :") == [":/"]
    assert bash_complete(["stree", "-s", f, "log", "--filter", "=", "us"],
                         line=f"stree -s {f} log --filter=us") == ["user-only"]
    assert bash_complete(["stree", f"--session={f}", "show", "st"], line=f"stree --session={f} show st") == \
        ["start"]


def test_bash_sessions_for_s_and_jsonl_paths(project):
    got = bash_complete(["stree", "-s", ""], cwd=project["dir"])
    # this project's sessions (newest first), then other projects', then the demo
    assert got == ["2222bbbb-0000-7000-8000-000000000002", "1111aaaa-0000-7000-8000-000000000001",
                   "3333cccc-0000-7000-8000-000000000003", "demo"]
    assert bash_complete(["stree", "-s", "11"], cwd=project["dir"]) == ["1111aaaa-0000-7000-8000-000000000001"]
    directory = str(project["newer"].parent) + "/"
    paths = bash_complete(["stree", "-s", directory], cwd=project["dir"])
    assert sorted(paths) == sorted([str(project["older"]), str(project["newer"])])


def test_bash_revisions_follow_the_session_chosen_earlier(project, tmp_path):
    d = project["dir"]
    assert bash_complete(["stree", "log", ""], cwd=d)[0] == "beta"  # default: the newest session
    assert bash_complete(["stree", "-s", "1111", "log", ""], cwd=d)[0] == "alpha"
    assert bash_complete(["stree", "--session", str(project["other"]), "show", ""], cwd=d)[0] == "gamma"
    assert bash_complete(["stree", "-C", str(d), "log", ""], cwd=tmp_path)[0] == "beta"
    elsewhere = tmp_path / "elsewhere"  # a session dir serves the sessions of their own cwd (pi 1.5)
    elsewhere.mkdir(exist_ok=True)
    assert bash_complete(["stree", "--session-dir", str(project["other"].parent), "log", ""],
                         cwd=elsewhere)[0] == "gamma"
    assert "gamma" not in bash_complete(["stree", "--session-dir", str(project["other"].parent), "log", ""],
                                        cwd=tmp_path)
    rel = os.path.relpath(project["older"], d)
    assert bash_complete(["stree", "-C", str(d), "-s", rel, "log", ""], cwd=tmp_path)[0] == "alpha"
    assert bash_complete(["stree", "log", ""], cwd=tmp_path, env={"STREE_SESSION": str(project["other"])})[0] \
        == "gamma"
    # a session that cannot be read: no revisions, no error on the terminal
    assert bash_complete(["stree", "-s", str(tmp_path / "missing.jsonl"), "log", ""], cwd=d) == \
        ["@", "root", ":/"]


# -- zsh -------------------------------------------------------------------------

def test_zsh_revisions_with_previews(branchy_file):
    got = zsh_complete(f"stree -s {branchy_file} log ")
    assert got[:2] == [("csv-attempt", "assistant: Switched to the csv module."),
                       ("start", "user: Fix the CSV quoting bug in parser.py")]
    assert got[2] == ("00000015", "[title: fix quoting]")
    assert ("00000003", "[read: src/parser.py]") in got  # a tool result shows its call
    assert [v for v, _ in got[-3:]] == ["@", "root", ":/"]
    assert {v for v, _ in zsh_complete(f"stree -s {branchy_file} show 0000001")} == \
        {"00000010", "00000011", "00000012", "00000013", "00000015"}  # (00000014: a label entry)
    assert zsh_complete(f"stree -s {branchy_file} show :") == [(":/", ":/TEXT, the newest entry containing TEXT")]


def test_zsh_script_sourced_instead_of_autoloaded(branchy_file, tmp_path, stree):
    script = tmp_path / "stree.zsh"
    script.write_text(stree("completion", "zsh").out)
    got = zsh_complete(f"stree -s {branchy_file} show s", source=script)
    assert got == [("start", "user: Fix the CSV quoting bug in parser.py")]


def test_zsh_commands_options_and_choices(branchy_file):
    got = dict(zsh_complete("stree "))
    assert got["log"] == "Show the entries on a path, or the whole tree with --graph"
    assert got["completion"] == "Print the bash or zsh completion script"
    assert [v for v, _ in zsh_complete("stree --col")] == ["--color"]
    assert [v for v, _ in zsh_complete(f"stree -s {branchy_file} log --filter=u")] == ["--filter=user-only"]
    assert [v for v, _ in zsh_complete("stree completion ")] == ["bash", "zsh"]


def test_zsh_sessions_with_titles_and_files(project):
    got = zsh_complete("stree -s ", cwd=project["dir"])
    assert ("2222bbbb-0000-7000-8000-000000000002", "docs day") in got
    assert ("1111aaaa-0000-7000-8000-000000000001", "Port the parser to Rust") in got
    assert ("demo", "the bundled demo session") in got
    files = zsh_complete(f"stree -s {project['newer'].parent}/", cwd=project["dir"])
    assert {v for v, _ in files} == {project["older"].name, project["newer"].name}


def test_zsh_revisions_follow_the_session_chosen_earlier(project):
    d = project["dir"]
    assert zsh_complete("stree log ", cwd=d)[0] == ("beta", "user: Write the docs")
    assert zsh_complete("stree -s 1111 log ", cwd=d)[0] == ("alpha", "user: Port the parser to Rust")
    assert zsh_complete(f"stree -s {project['other']} rev-parse ", cwd=d)[0][0] == "gamma"


# -- the scripts and the entry point ------------------------------------------------

def test_shipped_scripts_are_what_stree_prints(stree):
    for shell, name in (("bash", "stree.bash"), ("zsh", "_stree")):
        r = stree("completion", shell)
        assert r.code == 0 and r.err == ""
        assert r.out == (SCRIPTS / name).read_text(encoding="utf-8"), f"run `make completions` ({name})"
    assert stree("completion", "fish").code == 2


def test_install_completions_into_user_dirs(tmp_path, isolated_home):
    proc = subprocess.run(["make", "-s", "install-completions"], cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, XDG_DATA_HOME=str(isolated_home / ".local" / "share")))
    assert proc.returncode == 0, proc.stderr
    bash = isolated_home / ".local/share/bash-completion/completions/stree"
    zsh = isolated_home / ".zfunc/_stree"
    assert bash.read_text() == (SCRIPTS / "stree.bash").read_text()
    assert zsh.read_text() == (SCRIPTS / "_stree").read_text()


def test_completion_never_imports_rich_or_httpx(branchy_file):
    """Every command's options and arguments are completed without rich or httpx."""
    from stree.commands import SUBCOMMANDS

    probe = """
import sys
from stree.complete import main
words = sys.argv[1:]
main(["zsh", words[-1], "--", *words])
print("LOADED", sorted({m.split('.')[0] for m in sys.modules} & {"rich", "httpx"}))
"""
    for name in SUBCOMMANDS:
        for words in ([name, "--"], [name, ""], [name, "x", ""], [name, "x", "y", ""]):
            proc = subprocess.run([sys.executable, "-c", probe, "-s", str(branchy_file), *words],
                                  capture_output=True, text=True, timeout=60)
            assert proc.returncode == 0, proc.stderr
            assert proc.stdout.rstrip().endswith("LOADED []"), (name, words, proc.stdout[-200:])


def test_complete_protocol_and_bad_input(stree, branchy_file):
    r = stree("__complete", "zsh", "", "--", "-s", branchy_file, "show", "st")
    assert r.code == 0 and r.err == ""
    assert r.out.splitlines() == ["plain", "label\tstart\tuser: Fix the CSV quoting bug in parser.py"]
    r = stree("__complete", "zsh", "", "--", "-s", "")
    assert r.out.splitlines()[0] == "jsonl"
    assert stree("__complete", "zsh", "", "--", "--agent-dir", "").out == "dirs\n"
    assert stree("__complete", "zsh", "", "--", "nosuchcommand", "").out == "plain\n"
    bad = stree("__complete", "tcsh")
    assert bad.code == 2 and "usage" in bad.err
    # a file that is not a session: nothing to offer, and nothing on stderr
    junk = branchy_file.parent / "junk.jsonl"
    junk.write_text("not json\n")
    r = stree("__complete", "bash", "", "--", "-s", junk, "log", "")
    assert r.code == 0 and r.err == "" and r.out.splitlines()[1:] == \
        ["special\t@\tthe leaf: the current position", "special\troot\tthe first entry on the path to @",
         "special\t:/\t:/TEXT, the newest entry containing TEXT"]


def test_hostile_labels_are_one_line_candidates(tmp_path):
    b = SessionBuilder()
    u = b.user("hi\nthere\x1b[31m")
    b.label(u, "odd\tlabel")
    f = b.write(tmp_path / "odd.jsonl")
    from conftest import run_stree

    r = run_stree("__complete", "zsh", "", "--", "-s", f, "show", "odd")
    rows = r.out.splitlines()
    assert rows == ["plain", "label\todd label\tuser: hi there [31m"]
    assert json.dumps(r.out).count("\\u001b") == 0


def test_completion_offers_reflog_revisions(stree, branchy_file):
    assert stree("-s", branchy_file, "checkout", "00000011").code == 0
    r = stree("__complete", "bash", "@", "--", "-s", str(branchy_file), "show", "@")
    values = [line.split("\t")[1] for line in r.out.splitlines()[1:]]
    assert "@" in values and "@{0}" in values and "@{1}" in values
    r = stree("__complete", "bash", "HEAD@{", "--", "-s", str(branchy_file), "log", "HEAD@{")
    values = [line.split("\t")[1] for line in r.out.splitlines()[1:]]
    assert values[:2] == ["HEAD@{0}", "HEAD@{1}"]


def test_completion_reads_the_session_named_after_the_command(branchy_file):
    """Global options after the subcommand also pick the session completion reads (bash, and
    zsh where it is installed)."""
    import shutil

    line = f"stree show -s {branchy_file} csv"
    assert bash_complete(line.split(), line=line) == ["csv-attempt"]
    line = f"stree log -s {branchy_file} @"
    got = bash_complete(line.split(), line=line)
    moves = [json.loads(x) for x in run_stree("-s", branchy_file, "reflog", "--json", "-n", "10").out.splitlines()]
    assert len(moves) == 10  # pi's navigation with a summary, and the entries appended (commits)
    assert got == ["@"] + [f"@\\{{{m['index']}\\}}" for m in moves if m["id"] is not None]
    if shutil.which("zsh"):
        assert [v for v, _ in zsh_complete(f"stree show -s {branchy_file} csv")] == ["csv-attempt"]


def test_completion_offers_no_marker_or_label_entry_ids(stree, demo):
    assert stree("-s", demo, "checkout", "dd3d7fdd", "--label", "tried").code == 0  # a marker and a label entry
    bookkeeping = {e["id"] for e in map(json.loads, demo.read_text().splitlines()[1:])
                   if e["type"] == "label" or (e["type"] == "custom" and e.get("customType") == "stree/checkout")}
    assert len(bookkeeping) >= 4
    every = {e["id"] for e in map(json.loads, demo.read_text().splitlines()[1:])}
    for fast in ("", "1"):  # the table stree answers from, and click's definitions (the reference)
        r = stree("__complete", "bash", "", "--", "-s", str(demo), "show", "", env={"STREE_NO_FAST": fast})
        assert r.code == 0, r
        offered = {line.split("\t")[1] for line in r.out.splitlines()[1:]}
        assert {"tried", "bug-found", "@"} <= offered  # labels and the specials are offered
        assert offered & every  # entries too
        assert not offered & bookkeeping, offered & bookkeeping
        # a prefix of a marker's id offers nothing of it either
        marker = sorted(bookkeeping)[0]
        r = stree("__complete", "bash", marker[:5], "--", "-s", str(demo), "show", marker[:5],
                  env={"STREE_NO_FAST": fast})
        assert marker not in r.out
