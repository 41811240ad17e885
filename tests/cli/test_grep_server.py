"""The grep server (stree.grepserver), asked for with STREE_GREP_SERVER=1 or the config's
`grep_server`: the first plain grep starts it and answers itself, the next ones are answered
by it with exactly what a grep without it prints, it follows the sessions and the catalogue
as they change, and it ends when idle, when its socket goes, or when stree's code changes.
Every stree here is a real process (the server is one), in a temporary HOME; every server a
test started is ended after it."""

import json
import os
import shutil
import sys
import signal
import socket

import pytest

from builders import dumps
from catalog_corpus import generated
from conftest import ROOT, run_process
from waiting import until

PLANTED = "zanzibarquux"
ON = {"STREE_GREP_SERVER": "1"}


@pytest.fixture
def sessions(isolated_home):
    """6 generated sessions, PLANTED in one entry's text of two of them."""
    return generated(isolated_home, PLANTED, {2: [4], 5: [4]}, count=6, seed=70, entries=60)


@pytest.fixture
def cache(isolated_home):
    """stree's cache directory in the test's HOME; every grep server started there is
    ended (SIGKILL) after the test."""
    where = isolated_home / ".cache" / "stree" / "index"
    yield where
    for pid in servers(where):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def servers(where):
    """The pids of the grep servers whose socket is in `where` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                words = f.read().split(b"\0")
        except OSError:
            continue
        if b"__grep-server" in words and any(w.startswith(os.fsencode(where)) for w in words):
            found.append(int(entry))
    return found


def connected(path):
    """A socket connected to the server's `path`, from inside its directory (a path longer than
    a socket address holds: a deep temporary directory)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    here = os.open(".", os.O_RDONLY)
    try:
        os.chdir(path.parent)
        s.connect(path.name)
    finally:
        os.fchdir(here)
        os.close(here)
    return s


def sockets(where):
    return sorted(where.glob("grep-*.sock")) if where.exists() else []


def listening(where):
    """True once a server listens on a socket in `where` (not a killed server's left behind)."""
    return any(listening_at(path) for path in sockets(where))


def listening_at(path):
    try:
        connected(path).close()  # (an empty request: the server lets it go)
        return True
    except OSError:
        return False


def served(where, *args, env=ON):
    """`stree grep ARGS` (the server asked for by `env`), once a server is listening (started
    by an earlier grep); the result, and whether the server answered (this process then
    loaded neither the search nor SQLite: PYTHONPROFILEIMPORTTIME)."""
    until(lambda: listening(where), "a grep server listening")
    r = run_process("grep", *args, env={"PYTHONPROFILEIMPORTTIME": "1", **env})
    imported = {line.rsplit("|", 1)[-1].strip() for line in r.err.splitlines() if line.startswith("import time:")}
    r.err = "".join(line + "\n" for line in r.err.splitlines() if not line.startswith("import time:"))
    return r, "stree.grepserver" in imported and "stree.core.grep_sessions" not in imported


def test_the_first_grep_starts_the_server_and_the_next_are_answered_by_it(sessions, cache):
    first = run_process("grep", PLANTED, env=ON)
    assert first.code == 0 and first.out.count(PLANTED) == 2
    r, by_server = served(cache, PLANTED)
    assert by_server and (r.code, r.out, r.err) == (0, first.out, "")
    assert len(servers(cache)) == 1 and len(sockets(cache)) == 1
    assert (sockets(cache)[0].stat().st_mode & 0o777) == 0o600


@pytest.mark.parametrize("args", [
    [PLANTED], ["-i", "ZANZIBARQUUX"], ["-w", "timeout"], ["-E", r"zanzi\w+ \w+"], ["-l", "parse_line"],
    ["-c", "quote"], ["-i", "-w", "-c", "The"], ["nothing-like-this-anywhere"], ["-E", "("], ["-l", "-c", "x"],
    ["--agent-dir", "~/.pi/agent", PLANTED], ["--agent-dir=/nowhere", PLANTED],
])
def test_the_server_says_what_a_grep_without_it_says(sessions, cache, args):
    run_process("grep", "-l", PLANTED, env=ON)  # (starts it)
    alone = run_process("grep", *args)
    r, by_server = served(cache, *args)
    assert (r.code, r.out, r.err) == (alone.code, alone.out, alone.err)
    assert by_server == (alone.code in (0, 1))  # (an error is said by the calling process, as without it)


def test_the_server_follows_appends_new_sessions_and_a_catalogue_rebuilt(sessions, cache):
    run_process("grep", PLANTED, env=ON)
    served(cache, PLANTED)
    leaf = json.loads(sessions[0].read_text().splitlines()[-1])["id"]
    with open(sessions[0], "a") as f:  # a line appended to a session under its leaf
        f.write(dumps({"type": "message", "id": "app00001", "parentId": leaf, "timestamp": "2026-01-01T00:00:00.000Z",
                       "message": {"role": "user", "content": f"late {PLANTED} line", "timestamp": 1}}) + "\n")
    shutil.copyfile(sessions[5], sessions[0].parent / "s9.jsonl")  # a new session
    r, by_server = served(cache, PLANTED)
    assert by_server and r.code == 0
    assert r.out == run_process("grep", PLANTED).out
    assert "late zanzibarquux line" in r.out and r.out.count(PLANTED) == 4
    for name in ("catalog.sqlite", "catalog.sqlite-wal", "catalog.sqlite-shm"):  # the catalogue gone
        (cache / name).unlink(missing_ok=True)
    again, by_server = served(cache, PLANTED)
    assert by_server and (again.code, again.out) == (0, r.out)
    import sqlite3  # (the server wrote the new catalogue, not the one it had open)

    db = sqlite3.connect(cache / "catalog.sqlite")
    assert db.execute("SELECT count(*) FROM sessions WHERE ok").fetchone()[0] == 7
    db.close()


def test_an_idle_server_ends_and_removes_its_socket(sessions, cache):
    run_process("grep", PLANTED, env={**ON, "STREE_GREP_SERVER_IDLE": "0.5"})
    until(lambda: sockets(cache), "the grep server's socket")
    until(lambda: not sockets(cache) and not servers(cache), "the idle server's end")


def test_a_server_whose_socket_is_removed_ends(sessions, cache):
    run_process("grep", PLANTED, env=ON)
    until(lambda: sockets(cache), "the grep server's socket")
    sockets(cache)[0].unlink()
    until(lambda: not servers(cache), "the server's end")


def test_a_server_killed_leaves_a_socket_the_next_grep_gets_past(sessions, cache):
    first = run_process("grep", PLANTED, env=ON)
    until(lambda: servers(cache) and sockets(cache), "the grep server")
    for pid in servers(cache):
        os.kill(pid, signal.SIGKILL)
    until(lambda: not servers(cache), "the killed server gone")
    assert sockets(cache)  # (left behind)
    r = run_process("grep", PLANTED, env=ON)  # answered here, and a new server started
    assert (r.code, r.out, r.err) == (0, first.out, "")
    again, by_server = served(cache, PLANTED)
    assert by_server and again.out == first.out


def test_a_server_ends_when_stree_s_code_changes_and_the_grep_is_answered_anyway(sessions, cache, tmp_path):
    code = tmp_path / "code"
    shutil.copytree(ROOT / "stree", code / "stree", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**ON, "PYTHONPATH": str(code)}
    first = run_process("grep", PLANTED, env=env, cwd=tmp_path)  # (that copy of stree, client and server)
    until(lambda: servers(cache), "the grep server")
    assert any(str(code) in open(f"/proc/{pid}/cmdline").read() for pid in servers(cache))
    os.utime(code / "stree" / "fastgrep.py", ns=(1, 1))  # (an upgrade, an edit)
    r = run_process("grep", PLANTED, env=env, cwd=tmp_path)
    assert (r.code, r.out, r.err) == (0, first.out, "")
    until(lambda: not servers(cache), "the server's end")


def test_a_client_that_sends_garbage_is_let_go_and_the_server_answers_the_next(sessions, cache):
    run_process("grep", PLANTED, env=ON)
    until(lambda: sockets(cache), "the grep server's socket")
    for junk in (b"", b"\x00garbage", b"\xff" * 5000):
        s = connected(sockets(cache)[0])
        s.sendall(junk)
        s.shutdown(socket.SHUT_WR)
        assert s.recv(100) == b""
        s.close()
    r, by_server = served(cache, PLANTED)
    assert by_server and r.code == 0 and r.out.count(PLANTED) == 2


def test_asked_for_in_the_config_and_refused_by_the_environment(sessions, cache, isolated_home):
    config = isolated_home / ".config" / "stree" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("grep_server = true\n")
    run_process("grep", PLANTED, env={"STREE_GREP_SERVER": "0"})
    assert not sockets(cache)
    run_process("grep", PLANTED)
    until(lambda: sockets(cache), "the server the config asked for")
    r, by_server = served(cache, PLANTED, env={})
    assert r.code == 0 and by_server
    r, by_server = served(cache, PLANTED, env={"STREE_GREP_SERVER": ""})
    assert r.code == 0 and not by_server  # (an empty value is not 1/true/yes/on)


@pytest.mark.parametrize("encoding", ["utf-8", "ascii", "latin-1"])
def test_a_stdout_that_cannot_carry_a_character_gets_it_replaced_as_without_the_server(sessions, cache, encoding):
    text = sessions[1].read_text().splitlines()
    leaf = json.loads(text[-1])["id"]
    with open(sessions[1], "a") as f:
        f.write(dumps({"type": "message", "id": "uni00001", "parentId": leaf, "timestamp": "2026-01-01T00:00:00.000Z",
                       "message": {"role": "user", "content": f"{PLANTED} café ✓ 漢字", "timestamp": 1}}) + "\n")
    run_process("grep", PLANTED, env=ON)
    env = {"PYTHONIOENCODING": encoding}
    alone = run_process("grep", PLANTED, env=env)
    r, by_server = served(cache, PLANTED, env={**ON, **env})
    assert by_server and (r.code, r.raw, r.err) == (alone.code, alone.raw, alone.err)
    assert (b"caf\xe9 ?" if encoding == "latin-1" else b"caf? ? ??" if encoding == "ascii"
            else "café ✓ 漢字".encode()) in r.raw


def test_greps_at_once_are_each_answered_whole(sessions, cache):
    import subprocess

    first = run_process("grep", "-c", "the", env=ON)
    until(lambda: sockets(cache), "the grep server's socket")
    env = {**os.environ, **ON}
    procs = [subprocess.Popen([sys.executable, "-m", "stree", "grep", "-c", "the"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(8)]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert (proc.returncode, out.decode(), err.decode()) == (0, first.out, "")
    assert len(servers(cache)) == 1


def test_a_request_with_an_unknown_encoding_is_let_go_and_the_server_answers_the_next(sessions, cache):
    import marshal

    run_process("grep", PLANTED, env=ON)
    until(lambda: sockets(cache), "the grep server's socket")
    for encoding, errors in (("no-such-codec", "strict"), ("ascii", "no-such-handler"), (7, None)):
        s = connected(sockets(cache)[0])
        s.sendall(marshal.dumps((1, ["grep", "café"], "/", encoding, errors)))
        s.shutdown(socket.SHUT_WR)
        assert s.recv(100) == b""
        s.close()
    r, by_server = served(cache, PLANTED)
    assert by_server and r.code == 0 and r.out.count(PLANTED) == 2


def test_a_cache_directory_deeper_than_a_socket_address_holds(sessions, isolated_home):
    deep = isolated_home / ("d" * 60) / ("e" * 60)
    where = deep / "stree" / "index"
    env = {**ON, "XDG_CACHE_HOME": str(deep)}
    try:
        first = run_process("grep", PLANTED, env=env)
        until(lambda: sockets(where), "the grep server's socket")
        assert len(os.fsencode(sockets(where)[0])) > 108
        r, by_server = served(where, PLANTED, env=env)
        assert by_server and (r.code, r.out) == (0, first.out)
    finally:
        for pid in servers(where):
            os.kill(pid, signal.SIGKILL)


def test_debug_stats_are_said_by_the_process_whose_work_they_count(sessions, cache):
    import subprocess

    stats = {**os.environ, **ON, "STREE_DEBUG_STATS": "1"}
    where = subprocess.run([sys.executable, "-c", "from stree.grepserver import socket_path; print(socket_path())"],
                           env=stats, capture_output=True, text=True, check=True).stdout.strip()
    subprocess.Popen([sys.executable, "-m", "stree", "__grep-server", where], env=stats,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    until(lambda: listening(cache), "the server of that environment")  # (as a grep would have started it)
    run_process("grep", PLANTED)  # (the catalogue built)
    for _ in range(2):  # (a server's counters would add up from one grep to the next)
        r, by_server = served(cache, PLANTED, env={**ON, "STREE_DEBUG_STATS": "1"})
        assert r.code == 0 and not by_server
        line = [x for x in r.err.splitlines() if x.startswith("stree: stats:")]
        assert len(line) == 1 and "parsed 0 lines" in line[0] and "active paths read 2," in line[0], r.err
