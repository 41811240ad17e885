"""The global options and the session every command works on (not one command's behaviour, so
a module of its own): the newest session of this directory by default, `-s` by path, id or
prefix, `-C`, `--session-dir` and the environment, the bundled demo, and the global options
taken before or after the command."""

from builders import SessionBuilder
from clock import past_the_tick


def test_default_session_is_newest_of_this_directory(stree, tmp_path, isolated_home):
    project = tmp_path / "proj"
    project.mkdir()
    sessions = isolated_home / ".pi" / "agent" / "sessions" / ("--" + str(project)[1:].replace("/", "-") + "--")
    sessions.mkdir(parents=True)
    import os
    import time

    old = SessionBuilder(cwd=str(project), id="0199aaaa-0000-7000-8000-000000000001")
    old.user("old session")
    old.write(sessions / "2026-01-01T00-00-00-000Z_0199aaaa-0000-7000-8000-000000000001.jsonl")
    new = SessionBuilder(cwd=str(project), id="0199bbbb-0000-7000-8000-000000000002")
    new.user("new session")
    newp = new.write(sessions / "2026-01-02T00-00-00-000Z_0199bbbb-0000-7000-8000-000000000002.jsonl")
    later = time.time() + 10
    os.utime(newp, (later, later))
    assert "new session" in stree("log", cwd=project).out
    assert "old session" in stree("-s", "0199aaaa", "log", cwd=project).out
    assert "old session" in stree("-s", "0199a", "log", cwd=tmp_path).out  # found in all projects
    amb = stree("-s", "0199", "log", cwd=project)
    assert amb.code == 3 and "ambiguous" in amb.err and "0199bbbb" in amb.err
    assert "new session" in stree("-C", project, "log").out
    ls = stree("ls", "--format", "{id}", cwd=project).out.split()
    assert ls == ["0199bbbb-0000-7000-8000-000000000002", "0199aaaa-0000-7000-8000-000000000001"]
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "x.jsonl").write_text((sessions / newp.name).read_text())
    assert "new session" in stree("log", cwd=project, env={"PI_CODING_AGENT_SESSION_DIR": str(flat)}).out
    assert "new session" in stree("--session-dir", flat, "log", cwd=project).out
    # pi 1.5: a custom session dir serves the sessions of their own header cwd only
    elsewhere = stree("--session-dir", flat, "log", cwd=tmp_path)
    assert elsewhere.code == 3 and "no pi session" in elsewhere.err
    assert "new session" in stree("log", cwd=tmp_path, env={"STREE_SESSION": str(flat / "x.jsonl")}).out
    none = stree("log", cwd=tmp_path)
    assert none.code == 3 and "no pi session" in none.err


def test_demo_is_bundled(stree):
    r = stree("-s", "demo", "log", "--graph")
    assert r.code == 0 and "← active" in r.out
    assert len(r.out.splitlines()) > 20


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
