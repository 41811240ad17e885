"""stree as a git user expects it (issue 14): `@` through stree's own markers, labels,
reflog revisions, options anywhere, pipes, one error style, listings. Driven as a user
drives stree (subprocess on real files), with the real pi confirming what it sees."""

import json
import os

from conftest import run_stree
from clock import past_the_tick
from pi_harness import pi


def lines_of(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- @ and stree's checkout markers ------------------------------------------------


def test_label_right_after_checkout_labels_the_entry_checked_out(stree, branchy_file):
    path = branchy_file
    assert stree("-s", path, "checkout", "00000011").code == 0
    marker = lines_of(path)[-1]
    assert marker["customType"] == "stree/checkout" and marker["parentId"] == "00000011"
    for cmd in (["rev-parse"], ["rev-parse", "@"], ["rev-parse", "HEAD"]):
        assert stree("-s", path, *cmd).out == "00000011\n", cmd
    assert json.loads(stree("-s", path, "show", "--json").out)["id"] == "00000011"
    assert stree("-s", path, "log", "-n", "1", "--format", "{id} {leaf}").out == "00000011 true\n"
    assert stree("-s", path, "show").out.startswith("entry 00000011 (@)")
    # the marker is still in the file, and its id still reaches it
    assert json.loads(stree("-s", path, "show", "--json", marker["id"]).out)["customType"] == "stree/checkout"

    r = stree("-s", path, "label", "regex-done")
    assert r.code == 0, r
    label = lines_of(path)[-1]
    assert label["targetId"] == "00000011" and label["parentId"] == marker["id"]  # appended at pi's leaf
    seen = pi("inspect", path)
    assert seen["labels"]["00000011"] == "regex-done" and seen["leafId"] == label["id"]
    graph = pi("graph", path)  # pi's /tree shows the label on the entry checked out
    row = graph["rows"][graph["ids"].index("00000011")]
    assert "[regex-done]" in row, row
    assert marker["id"] not in graph["ids"]
    assert stree("-s", path, "rev-parse", "regex-done").out == "00000011\n"


def test_checking_out_where_you_are_writes_nothing_whatever_the_last_line(stree, branchy_file):
    path = branchy_file
    # the file ends with a label and a name entry after 00000013
    for rev in ("@", "00000013", "HEAD"):
        before = path.read_bytes()
        r = stree("-s", path, "checkout", rev)
        assert r.code == 0 and path.read_bytes() == before, r
    assert stree("-s", path, "checkout", "00000011").code == 0
    assert stree("-s", path, "label", "here").code == 0
    assert stree("-s", path, "name", "renamed").code == 0  # now: marker, label, name after 00000011
    before = path.read_bytes()
    r = stree("-s", path, "checkout", "00000011")
    assert r.code == 0 and path.read_bytes() == before and "nothing written" in r.err, r


def test_default_revisions_of_fork_and_summarize_look_through_the_marker(stree, branchy_file, tmp_path):
    path = branchy_file
    assert stree("-s", path, "checkout", "00000011").code == 0
    out = tmp_path / "forked.jsonl"
    assert stree("-s", path, "fork", "-o", out).code == 0
    assert "stree/checkout" not in out.read_text()  # the path to 00000011 (labels carried after it)
    assert stree("-s", out, "rev-parse").out == "00000011\n"
    r = stree("-s", path, "summarize", "00000003..", "--prompt", "--json")  # A.. is A..@
    assert r.code == 0, r
    assert json.loads(r.out)["entryIds"][-1] == "00000011"  # not the marker after it


# -- labels ----------------------------------------------------------------------


def test_one_label_per_entry_replacing_says_so(stree, branchy_file):
    path = branchy_file
    assert stree("-s", path, "label", "first", "00000006").code == 0
    r = stree("-s", path, "label", "second", "00000006")
    assert r.code == 0 and "label 'first' on 00000006 replaced by 'second'" in r.err, r
    assert pi("inspect", path)["labels"]["00000006"] == "second"
    assert stree("-s", path, "rev-parse", "first").code == 3


def test_label_writes_nothing_when_nothing_changes(stree, branchy_file):
    path = branchy_file
    before = path.read_bytes()
    r = stree("-s", path, "label", "start", "00000001")  # the label it already has
    assert r.code == 0 and path.read_bytes() == before and "nothing written" in r.err, r
    r = stree("-s", path, "label", "", "00000006")  # clearing where there is none
    assert r.code == 0 and path.read_bytes() == before and "nothing written" in r.err, r
    r = stree("-s", path, "label", "-d", "no-such-label")
    assert r.code == 3 and path.read_bytes() == before
    r = stree("-s", path, "label", "start", "00000006")  # a name on another entry still needs -f
    assert r.code == 6 and "label -f start" in r.err and path.read_bytes() == before


def test_label_names_that_cannot_be_revisions_are_refused(stree, branchy_file):
    path = branchy_file
    before = path.read_bytes()
    for name in ("@", "HEAD", "root", "a~1", "a^", "x:y", "a..b", "two words", "tab\there", "-x", "a@{1}"):
        args = ["-s", path, "label", "--", name] if name.startswith("-") else ["-s", path, "label", name]
        r = stree(*args)
        assert r.code == 2 and r.err.startswith("stree: error: invalid label name") and "hint:" in r.err, (name, r)
    assert path.read_bytes() == before
    assert stree("-s", path, "label", "v1.2/ok_name-3").code == 0


# -- history of the leaf ----------------------------------------------------------


def test_reflog_revisions_and_checkout_dash(stree, branchy_file):
    path = branchy_file
    assert stree("-s", path, "checkout", "00000011").code == 0
    assert stree("-s", path, "checkout", "csv-attempt").code == 0
    reflog = [json.loads(x) for x in stree("-s", path, "reflog", "--json").out.splitlines()]
    for n, move in enumerate(reflog):
        for rev in (f"@{{{n}}}", f"HEAD@{{{n}}}"):
            assert stree("-s", path, "rev-parse", rev).out == f"{move['id']}\n", rev
    assert stree("-s", path, "rev-parse", "@{1}~1").out == "00000010\n"  # suffixes apply
    assert stree("-s", path, "rev-parse", "@{1}..@").out == "00000009\n^00000011\n"
    r = stree("-s", path, "rev-parse", f"@{{{len(reflog)}}}")
    assert r.code == 3 and "stree reflog" in r.err

    r = stree("-s", path, "checkout", "-")
    assert r.code == 0, r
    assert stree("-s", path, "rev-parse").out == "00000011\n"
    assert stree("-s", path, "checkout", "-").code == 0
    assert stree("-s", path, "rev-parse").out == "00000009\n"
    assert pi("inspect", path)["leafId"] == lines_of(path)[-1]["id"]


def test_checkout_dash_without_moves(stree, tmp_path):
    from builders import SessionBuilder

    b = SessionBuilder()
    b.user("hello")
    b.assistant("hi")
    path = b.write(tmp_path / "flat.jsonl")
    before = path.read_bytes()
    r = stree("-s", path, "checkout", "-")
    assert r.code == 3 and r.err.startswith("stree: error: checkout -:") and path.read_bytes() == before


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

    from test_completion import bash_complete, zsh_complete

    line = f"stree show -s {branchy_file} csv"
    assert bash_complete(line.split(), line=line) == ["csv-attempt"]
    line = f"stree log -s {branchy_file} @"
    got = bash_complete(line.split(), line=line)
    moves = [json.loads(x) for x in run_stree("-s", branchy_file, "reflog", "--json", "-n", "10").out.splitlines()]
    assert len(moves) == 10  # pi's navigation with a summary, and the entries appended (commits)
    assert got == ["@"] + [f"@\\{{{m['index']}\\}}" for m in moves if m["id"] is not None]
    if shutil.which("zsh"):
        assert [v for v, _ in zsh_complete(f"stree show -s {branchy_file} csv")] == ["csv-attempt"]


def test_bad_revision_syntax_exits_2_unknown_names_3(stree, branchy_file):
    for rev in ("@~x", "~3", "@{x}", "a:b", "@@"):
        r = stree("-s", branchy_file, "rev-parse", rev)
        assert r.code == 2 and r.err.startswith("stree: error: bad revision syntax") and "hint:" in r.err, (rev, r)
    r = stree("-s", branchy_file, "rev-parse", "nosuchlabel")
    assert r.code == 3 and r.err.startswith("stree: error: unknown revision")


# -- options and pipes -------------------------------------------------------------

PIPED = (["log"], ["log", "--graph"], ["log", "--graph", "--no-cache"], ["log", "--json"], ["show"],
         ["show", "--json"], ["rev-parse", "@"], ["label"], ["reflog"], ["context"], ["context", "--json"],
         ["help", "log"], ["--help"], ["log", "--help"], ["completion", "bash"], ["name"], ["ls", "--all"],
         ["merge-base", "@", "root"], ["summarize", "root..@", "--prompt"], ["--version"], ["cache", "list"],
         ["checkout", "00000005"], ["fork", "--json"])


def test_a_reader_that_goes_away_is_not_an_error(branchy_file, tmp_path):
    """`stree CMD | head -1` on every command: exit 0 and nothing on stderr, also when stdout
    is closed before stree starts (`stree log >&-`)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, STREE_PAGER="cat", PI_CODING_AGENT_DIR=str(tmp_path / "agent"))
    for args in PIPED:
        for closed_fd in (False, True):
            cmd = [sys.executable, "-m", "stree", "-s", str(branchy_file), *args]
            if closed_fd:
                p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                                   close_fds=True, preexec_fn=lambda: os.close(1))
            else:
                r, w = os.pipe()
                os.close(r)  # the reader is gone before the first write
                p = subprocess.run(cmd, stdout=w, stderr=subprocess.PIPE, env=env)
                os.close(w)
            err = p.stderr.decode()
            # informational lines of writing commands are fine; errors and tracebacks are not
            assert p.returncode == 0 and "error" not in err and "Traceback" not in err, (args, closed_fd, err)
            if args[0] not in ("checkout", "fork", "ls"):
                assert err == "", (args, err)
    with open("/dev/full", "wb") as full:  # a full disk still is an error
        p = subprocess.run([sys.executable, "-m", "stree", "-s", str(branchy_file), "log"], stdout=full,
                           stderr=subprocess.PIPE, env=env)
    assert p.returncode == 4 and p.stderr.startswith(b"stree: error:")


def test_global_options_before_or_after_the_command(stree, branchy_file, tmp_path):
    want = stree("-s", branchy_file, "--color", "never", "log", "-n", "3").out
    assert want.count("\n") == 3
    for args in (["log", "-n", "3", "-s", str(branchy_file), "--color", "never"],
                 ["log", "--session", str(branchy_file), "-n", "3", "--no-pager", "--color=never"],
                 ["--no-cache", "log", "-n", "3", "-s", str(branchy_file)]):
        r = stree(*args)
        assert r.code == 0 and r.out == want, (args, r)
    r = stree("log", "-n", "1", "-C", str(branchy_file.parent), "-s", branchy_file.name, "--no-cache", "--debug")
    assert r.code == 0 and r.out == want.splitlines(True)[0], r
    r = stree("rev-parse", "-s", str(branchy_file), "--color", "always", "@")
    assert r.out == "00000013\n"
    # the kept-graph fast path reads them after `log` too, and prints the same bytes
    past_the_tick(branchy_file)  # an output drawn in the file's tick of the clock is not kept
    first = stree("-s", str(branchy_file), "log", "--graph").out
    r = stree("log", "--graph", "-s", str(branchy_file), env={"STREE_DEBUG_STATS": "1"})
    assert r.out == first and "graph-cache" in r.err, r
    r = stree("log", "--graph", "-s", str(branchy_file), "--no-cache", env={"STREE_DEBUG_STATS": "1"})
    assert r.out == first and "graph-cache" not in r.err, r


# -- one error style ---------------------------------------------------------------


def test_click_errors_in_stree_style_with_did_you_mean(stree, branchy_file):
    cases = [(["lgo"], "unknown command 'lgo'", "did you mean 'log'?"),
             (["-s", str(branchy_file), "log", "--grap"], "unknown option '--grap'", "did you mean --graph?"),
             (["--colour", "never", "log"], "unknown option '--colour'", "did you mean --color?"),
             (["-s", str(branchy_file), "log", "-n", "x"], "invalid value for '-n'", "see 'stree log --help'"),
             (["checkout"], "missing argument 'REV'", "usage: stree checkout [OPTIONS] REV")]
    for args, error, hint in cases:
        r = stree(*args)
        lines = r.err.splitlines()
        assert r.code == 2 and r.out == "", (args, r)
        assert lines[0].startswith("stree: error: ") and error in lines[0], (args, r.err)
        assert all(line.startswith("hint: ") for line in lines[1:]) and f"hint: {hint}" in lines, (args, r.err)
        assert "Usage:" not in r.err and "Error:" not in r.err


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


# -- installing ----------------------------------------------------------------------


def test_make_install_into_a_fresh_home(tmp_path):
    """`make install` with nothing but a new HOME: a new login shell finds `stree`, `man stree`
    and the bash completion (no root: everything under ~/.local and ~/.zfunc)."""
    import os
    import shutil
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    home = tmp_path / "fresh-home"
    home.mkdir()
    base = {"HOME": str(home), "PATH": os.environ["PATH"], "LANG": "C.UTF-8"}
    proc = subprocess.run(["make", "-s", "install", f"HOME={home}"], cwd=root, env=base, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert f"{home}/.local/bin is not on your PATH" in proc.stdout  # and says how to put it there
    (home / ".profile").write_text('export PATH="$HOME/.local/bin:$PATH"\n')  # as that hint says
    script = r'''
        stree --version || exit 1
        man -w stree || exit 1
        source ~/.local/share/bash-completion/completions/stree
        COMP_LINE="stree lo"; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(stree lo); COMP_CWORD=1
        _stree || true
        echo "completion: ${COMPREPLY[*]}"
        COMP_LINE="stree -s demo show fix-"; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(stree -s demo show fix-)
        COMP_CWORD=4
        _stree || true
        echo "completion: ${COMPREPLY[*]}"
    '''
    r = subprocess.run(["env", "-i", f"HOME={home}", "TERM=dumb", "bash", "-lc", script], capture_output=True,
                       text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "stree, version " + __import__("stree").__version__
    if shutil.which("man"):
        assert lines[1] == f"{home}/.local/share/man/man1/stree.1"
    assert "completion: log" in lines and "completion: fix-verified" in lines, r.stdout
    assert (home / ".zfunc" / "_stree").is_file()


# -- listing and time --------------------------------------------------------------


def _sessions(tmp_path):
    """Three sessions in a flat session dir with UUIDv7-like ids that share long prefixes."""
    import os

    from builders import SessionBuilder

    directory = tmp_path / "sessions"
    directory.mkdir()
    made = {}
    # (id, entry times start, message timestamps shift): pi sorts by message.timestamp
    for n, (sid, start, shift) in enumerate((("019a0000-1111-7aaa-8aaa-aaaaaaaaaaaa", 1_795_000_000_000, 0),
                                             ("019a0000-1112-7bbb-8bbb-bbbbbbbbbbbb", 1_795_500_000_000, -900_000_000),
                                             ("019a0000-2222-7ccc-8ccc-cccccccccccc", 1_795_100_000_000, 0))):
        b = SessionBuilder(id=sid, start_ms=start, cwd=str(directory))  # sessions of that directory
        b.user(f"task {n}")
        b.assistant(f"done {n}")
        for entry in b.entries:
            entry["message"]["timestamp"] += shift
        path = b.write(directory / f"s{n}_{sid}.jsonl")
        os.utime(path, (1_000_000 + n, 1_000_000 + n))
        made[sid] = path
    return directory, made


def test_ls_sorts_like_pi_abbreviates_and_marks_the_default(stree, tmp_path):
    directory, made = _sessions(tmp_path)

    def here(*args):  # run in the sessions' project directory
        return stree("-C", directory, "--session-dir", directory, *args)

    recs = [json.loads(x) for x in here("ls", "--json").out.splitlines()]
    # entry times say 1112 is newest; its messages' own timestamps say it is the oldest
    assert [r["id"][:13] for r in recs] == ["019a0000-2222", "019a0000-1111", "019a0000-1112"]
    newest_file = made["019a0000-2222-7ccc-8ccc-cccccccccccc"]  # the highest mtime: what pi -c opens
    assert [r["current"] for r in recs] == [r["path"] == str(newest_file) for r in recs]
    assert sum(r["current"] for r in recs) == 1

    r = here("ls")
    lines = r.out.splitlines()
    shown = [line[2:].split()[0] for line in lines]
    assert shown == ["019a0000-2", "019a0000-1111", "019a0000-1112"]
    assert lines[0].startswith("* ") and all(line.startswith("  ") for line in lines[1:])
    for abbrev, rec in zip(shown, recs):  # each abbreviation names its session
        assert here("-s", abbrev, "log", "-n", "1", "--format", "{preview}").out \
            == f"assistant: done {['019a0000-1111', '019a0000-1112', '019a0000-2222'].index(rec['id'][:13])}\n"
    assert here("-s", "019a0000", "log").code == 3  # 8 chars: ambiguous


def test_dates_local_with_zone_and_git_styles(stree, tmp_path, branchy_file):
    kolkata = {"TZ": "Asia/Kolkata"}
    line = stree("-s", branchy_file, "log", "-n", "1", env=kolkata).out
    assert "2026-11-18 16:36:59 +0530" in line  # 11:06:59Z in local time, with the zone
    assert "2026-11-18 16:36:59 +0530" in stree("-s", branchy_file, "log", "-n", "1", "--date=iso", env=kolkata).out
    assert "2026-11-18 11:06:59 +0000" in stree("-s", branchy_file, "log", "-n", "1", "--date=utc", env=kolkata).out
    assert " 1795000019 " in stree("-s", branchy_file, "log", "-n", "1", "--date", "unix").out
    assert " ago " in stree("-s", branchy_file, "log", "-n", "1", "--date", "relative").out
    assert "Date:    2026-11-18 16:36:59 +0530" in stree("-s", branchy_file, "show", env=kolkata).out
    directory, _ = _sessions(tmp_path)
    out = stree("-C", directory, "--session-dir", directory, "ls", "--date=unix").out
    assert out.splitlines()[0].split()[2] == "1795100002"  # the last message's own timestamp
    r = stree("-s", branchy_file, "log", "--date=rfc")
    assert r.code == 2 and r.err.startswith("stree: error: invalid value for '--date'")
    # machine output keeps pi's timestamps
    assert json.loads(stree("-s", branchy_file, "log", "-n", "1", "--json", env=kolkata).out.splitlines()[0])[
        "timestamp"] == "2026-11-18T11:06:59.000Z"


def test_human_listings_fit_the_terminal(tmp_path, branchy_file):
    import os
    import pty
    import subprocess
    import sys

    from builders import SessionBuilder
    from conftest import run_stree, read_pty

    b = SessionBuilder(cwd=str(tmp_path))
    b.user("a very long first message " * 20)
    b.assistant("an even longer answer " * 30)
    b.label(b.leaf, "a-label")
    path = b.write(tmp_path / "long.jsonl")
    env = dict(os.environ, COLUMNS="60", LINES="50", TERM="xterm", STREE_PAGER="cat")
    for args in (["-s", path, "log"], ["-s", path, "label"], ["-C", tmp_path, "--session-dir", tmp_path, "ls"],
                 ["-s", branchy_file, "label"]):
        master, slave = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "stree", "--color", "never", *map(str, args)],
                                stdout=slave, stderr=subprocess.PIPE, env=env)
        os.close(slave)
        out = read_pty(master, proc).decode()
        proc.wait()
        lines = [line for line in out.replace("\r", "").split("\n") if line]
        assert lines and proc.returncode == 0, (args, out)
        assert all(len(line) <= 60 for line in lines), (args, lines)
    # aligned columns: the ids of `label` start in one column
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "stree", "--color", "never", "-s", str(branchy_file), "label"],
                            stdout=slave, stderr=subprocess.PIPE, env=env)
    os.close(slave)
    lines = [line for line in read_pty(master, proc).decode().replace("\r", "").split("\n") if line]
    proc.wait()
    assert len({line.index("0000000") for line in lines}) == 1, lines
