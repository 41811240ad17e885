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
