"""The global options and the session every command works on (not one command's behaviour, so
a module of its own): the newest session of this directory by default, `-s` by path, id or
prefix, `-C`, `--session-dir` and the environment, the bundled demo, and the global options
taken before or after the command."""

from builders import SessionBuilder


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
