"""What every command prints (not one command's behaviour, so a module of its own): colour only
on request or to a terminal, a session's control characters and markup made inert, and a reader
that goes away (`stree CMD | head -1`) is not an error."""

from builders import SessionBuilder


def test_colour_only_on_request_or_terminal(stree, branchy_file):
    assert "\x1b[" not in stree("-s", branchy_file, "log", "--graph").out
    assert "\x1b[" in stree("-s", branchy_file, "--color", "always", "log", "--graph").out
    assert "\x1b[" not in stree("-s", branchy_file, "--color", "always", "log", "--json").out


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
