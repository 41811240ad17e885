"""One error style for every command (not one command's behaviour, so a module of its own):
a usage error, a session file that cannot be read, and what goes wrong in click say one line
`stree: error: ...` with `hint:` lines, and exit with the documented code."""

import pytest


@pytest.mark.parametrize("args", [["log", "-n"], ["log", "--since"], ["show", "--format"], ["stats", "--until"],
                                  ["log", "--date"]])
def test_every_usage_error_carries_the_usage_hint(stree, args):
    r = stree("-s", "demo", *args)
    assert r.code == 2 and r.err.startswith("stree: error: ") and "requires an argument" in r.err
    assert f"hint: usage: stree {args[0]} [OPTIONS]" in r.err and f"hint: see 'stree {args[0]} --help'" in r.err
