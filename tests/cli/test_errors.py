"""One error style for every command (not one command's behaviour, so a module of its own):
a usage error, a session file that cannot be read, and what goes wrong in click say one line
`stree: error: ...` with `hint:` lines, and exit with the documented code."""

import pytest

from builders import SessionBuilder, dumps


@pytest.mark.parametrize("args", [["log", "-n"], ["log", "--since"], ["show", "--format"], ["stats", "--until"],
                                  ["log", "--date"]])
def test_every_usage_error_carries_the_usage_hint(stree, args):
    r = stree("-s", "demo", *args)
    assert r.code == 2 and r.err.startswith("stree: error: ") and "requires an argument" in r.err
    assert f"hint: usage: stree {args[0]} [OPTIONS]" in r.err and f"hint: see 'stree {args[0]} --help'" in r.err


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
