"""A hook's environment is an allow-list (issue 24, item 16): PATH, HOME, the locale, TERM,
TMPDIR, TZ, STREE_HOOK and STREE_SESSION_FILE, and what the config names in hook_env. Secrets
under any name (ANTHROPIC_AUTH_TOKEN, AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, OPENROUTER_KEY) stay
out, whether the hook runs for `stree checkout`, serve's navigate_tree or MCP's checkout.

The hooks run for several commands and front ends: one concern, so one module."""

import json
import os
import sys

from builders import SessionBuilder
from mcp_kit import McpServer
from serve_kit import Server

SECRETS = {"ANTHROPIC_AUTH_TOKEN": "sk-ant-secret", "AWS_SECRET_ACCESS_KEY": "aws-secret",
           "GITHUB_TOKEN": "ghp_secret", "OPENROUTER_KEY": "or-secret", "OPENAI_API_KEY": "sk-secret"}


def _setup(tmp_path, config=None):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    seen = tmp_path / "env.json"
    hook = hooks / "tree"
    hook.write_text(f"#!{sys.executable}\nimport json, os, sys\nsys.stdin.read()\n"
                    f"json.dump(dict(os.environ), open({str(seen)!r}, 'w'))\n")
    hook.chmod(0o755)
    if config is not None:
        path = os.path.join(os.environ["XDG_CONFIG_HOME"], "stree", "config.toml")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(config)
    b = SessionBuilder()
    u = b.user("hello")
    hi = b.assistant("hi")
    b.user("again")
    b.at(u).assistant("other branch")
    session = b.write(tmp_path / "s.jsonl")
    env = dict(SECRETS, STREE_HOOKS_DIR=str(hooks), LANG="C.UTF-8", LC_TIME="C", TERM="xterm", MY_SETTING="1")
    return session, seen, env, (hi, u)


def _check(got, session, named=()):
    assert not set(SECRETS) & set(got), sorted(got)
    assert got["STREE_HOOK"] == "tree" and got["STREE_SESSION_FILE"] == str(session)
    assert got["LANG"] == "C.UTF-8" and got["LC_TIME"] == "C" and got["TERM"] == "xterm"
    assert got["PATH"] == os.environ["PATH"] and got["HOME"] == os.environ["HOME"]
    assert ("MY_SETTING" in got) == ("MY_SETTING" in named)
    allowed = {"PATH", "HOME", "LANG", "LANGUAGE", "TERM", "TMPDIR", "TZ", "STREE_HOOK", "STREE_SESSION_FILE"}
    extra = {k for k in got if k not in allowed and not k.startswith("LC_") and k not in named}
    assert not extra - {"PWD", "SHLVL", "_"}, sorted(extra)  # (what a shell adds for itself)


def test_checkout_hook_gets_only_the_allowed_variables(tmp_path, stree):
    session, seen, env, (hi, _) = _setup(tmp_path)
    r = stree("-s", session, "checkout", hi, env=env)
    assert r.code == 0, r
    _check(json.loads(seen.read_text()), session)


def test_the_config_names_more_and_the_escape_hatch_passes_everything(tmp_path, stree):
    session, seen, env, (hi, u) = _setup(tmp_path, config='hook_env = ["MY_SETTING"]\n')
    assert stree("-s", session, "checkout", hi, env=env).code == 0
    _check(json.loads(seen.read_text()), session, named=("MY_SETTING",))
    assert stree("-s", session, "checkout", "--exact", u, env=dict(env, STREE_HOOK_KEYS="1")).code == 0
    got = json.loads(seen.read_text())
    assert set(SECRETS) <= set(got) and got["MY_SETTING"] == "1"


def test_a_bad_hook_env_setting_is_reported_and_the_hook_not_run(tmp_path, stree):
    session, seen, env, (hi, _) = _setup(tmp_path, config='hook_env = "MY_SETTING"\n')
    r = stree("-s", session, "checkout", hi, env=env)
    assert "hook_env has the wrong type" in r.err and "config.toml" in r.err, r
    assert not seen.exists()  # the hook did not run with a guess at what it may see


def test_serve_navigate_tree_and_mcp_checkout_hooks_get_no_secrets(tmp_path):
    session, seen, env, (target, user) = _setup(tmp_path)
    s = Server(session, env=env)
    try:
        assert s.data("navigate_tree", targetId=target)["cancelled"] is False
    finally:
        assert s.close() == 0
    _check(json.loads(seen.read_text()), session)
    seen.unlink()
    m = McpServer("-s", session, serve_args=["--allow-writes"], env=env)
    try:
        result = m.call("checkout", revision=user, exact=True)
        assert not result.get("isError"), result
    finally:
        m.kill()
    _check(json.loads(seen.read_text()), session)
