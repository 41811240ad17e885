"""Issue 17, first half: what a hostile user, a hostile server or a hostile file name did.

Each test reproduces a fault as the red-team pass found it: files of others deleted by
`stree gc`, a huge model answer appended, a symlinked session replaced by a copy, a
planted link followed, keys sent or printed where they should not be, escapes reaching
a terminal, bad environment values. CI runs as root: "another user" is uid 65534
(nobody), made with chown, and where that user must act, with setpriv or runuser.
"""

import os
import stat
import subprocess
import sys

import pytest

from builders import SessionBuilder, branchy


def small_session(path):
    b = SessionBuilder()
    u = b.user("hello")
    b.assistant("hi")
    b.user("again")
    b.at(u).assistant("other branch")
    return b.write(path)


# -- 1. gc and cache clear remove only stree's own files ---------------------------------


def _foreign_cache(tmp_path):
    """A cache dir (as STREE_CACHE_DIR may name) that also holds files that are not stree's."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (cache / "notes.txt").write_text("mine\n")
    (cache / "photo.idx").write_text("not an index\n")  # stree's suffix, not its name
    (cache / "draft.graph").write_text("not a graph\n")
    (cache / "report.tmp").write_text("x\n")
    (cache / "sub").mkdir()
    (cache / "sub" / "deep.txt").write_text("deep\n")
    (cache / "1-2.idx").mkdir()  # a directory with an index's name
    os.symlink(victim, cache / "3-4.idx")  # a link with an index's name
    os.symlink(victim, cache / "5-6-0000abcd.graph")
    os.symlink(cache / "sub", cache / "link-to-sub")
    return cache, victim


def _listing(cache):
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*"))


@pytest.mark.parametrize("how", [["gc", "--all"], ["cache", "clear"], ["gc"], ["cache", "gc"]])
def test_gc_and_cache_clear_leave_other_files_alone(tmp_path, stree, how):
    cache, victim = _foreign_cache(tmp_path)
    before = _listing(cache)
    session = small_session(tmp_path / "s.jsonl")
    gone = small_session(tmp_path / "gone.jsonl")
    env = {"STREE_CACHE_DIR": str(cache)}
    for path in (session, gone):
        assert stree("-s", path, "log", env=env).code == 0
        assert stree("-s", path, "log", "--graph", env=env).code == 0  # a pipe: the graph is kept
    os.unlink(gone)
    ours = [n for n in _listing(cache) if n not in before]
    assert any(n.endswith(".idx") for n in ours) and any(n.endswith(".graph") for n in ours), ours
    # a killed write's leftover temp file (stree's own name), old enough to be stale
    leftover = cache / (next(n for n in ours if n.endswith(".idx")) + ".4242.tmp")
    leftover.write_bytes(b"half")
    os.utime(leftover, (1_000_000_000, 1_000_000_000))
    listed = stree("cache", "--json", env=env)
    assert listed.code == 0 and "notes.txt" not in listed.out and "victim" not in listed.out, listed
    r = stree(*how, env=env)
    assert r.code == 0, r
    after = _listing(cache)
    for name in before:
        assert name in after, f"{how} removed {name}, which is not stree's"
    assert victim.read_text() == "precious\n"
    assert os.path.islink(cache / "3-4.idx") and (cache / "1-2.idx").is_dir()
    assert not leftover.exists()
    left = [n for n in after if n not in before]
    if how in (["gc", "--all"], ["cache", "clear"]):
        assert left == [], left
    else:  # only what belonged to the deleted session went
        assert left and len(left) < len(ours), (ours, left)


# -- 3. an atomic rewrite through a symlink rewrites the real file ----------------------


@pytest.mark.parametrize("how", ["migrate", "label", "chain"])
def test_migration_through_a_symlink_rewrites_the_real_file(tmp_path, stree, how):
    from test_write_commands import v1_file

    real_dir = tmp_path / "real"
    real_dir.mkdir()
    real = v1_file(real_dir / "old.jsonl")
    links = tmp_path / "links"
    links.mkdir()
    link = links / "session.jsonl"
    os.symlink(os.path.relpath(real, links), link)  # relative, as `ln -s ../real/old.jsonl` makes
    if how == "chain":
        first = link
        link = links / "again.jsonl"
        os.symlink(first, link)
    ids = stree("-s", real, "log", "--format", "{id}").out.split()
    if how == "label":
        r = stree("-s", link, "label", "greeting", ids[-1])
    else:
        r = stree("-s", link, "migrate")
    assert r.code == 0 and "migrated" in r.err, r
    assert os.path.islink(link) and os.path.realpath(link) == str(real)
    assert '"version":3' in real.read_text().splitlines()[0]
    assert not list(links.glob(".*.tmp")) and not list(real_dir.glob(".*.tmp"))
    assert stree("-s", real, "migrate", "--check").code == 0
    after = stree("-s", real, "log", "--format", "{id}", "--filter", "all").out.split()
    assert set(ids) <= set(after)
    if how == "label":
        assert "greeting" in stree("-s", real, "label").out
    assert os.lstat(link).st_mode & stat.S_IFLNK


def test_migration_keeps_the_real_files_mode_through_a_link(tmp_path, stree):
    from test_write_commands import v1_file

    real = v1_file(tmp_path / "old.jsonl")
    os.chmod(real, 0o640)
    link = tmp_path / "link.jsonl"
    os.symlink(real, link)
    assert stree("-s", link, "migrate").code == 0
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o640 and os.path.islink(link)


def test_fork_never_writes_over_a_link(tmp_path, stree):
    session = small_session(tmp_path / "s.jsonl")
    victim = tmp_path / "victim.txt"
    dangling = tmp_path / "dangling.jsonl"
    os.symlink(victim, dangling)  # points at a file that does not exist yet
    r = stree("-s", session, "fork", "@", "-o", dangling)
    assert r.code == 6 and "already exists" in r.err, r
    assert os.path.islink(dangling) and not victim.exists()


# -- 2. hostile model servers: a size cap, a deadline, nothing written -------------------

import json  # noqa: E402
import shutil  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer  # noqa: E402

from conftest import ROOT  # noqa: E402
from llm_server import openai_events, openai_json  # noqa: E402

LEAF, TARGET = "f7e0df1c", "459e8d8a"  # the demo: leave the validate branch for the csv attempt's start
SERVER_LIFE = 90  # seconds: every hostile server gives up by then, so a test on main fails, never hangs


class HostileServer:
    """A real HTTP server on 127.0.0.1 whose handler(h, n) misbehaves on request n; it counts
    the requests and the body bytes it managed to send."""

    def __init__(self, handler):
        self.requests = 0
        self.sent = 0
        self.started = time.monotonic()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                self.request_json = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                owner.requests += 1
                try:
                    handler(self, owner.requests)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass

            def write(self, data):
                if time.monotonic() - owner.started > SERVER_LIFE:
                    raise BrokenPipeError("the server's life is over")
                self.wfile.write(data)
                self.wfile.flush()
                owner.sent += len(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda *args: None  # a client hanging up is the point
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def _headers(h, status, ctype, length=None):
    h.send_response(status)
    h.send_header("content-type", ctype)
    if length is not None:
        h.send_header("content-length", str(length))
    else:
        h.send_header("transfer-encoding", "chunked")
    h.send_header("retry-after", "0")
    h.end_headers()


def _chunked(h, data):
    h.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")


def huge_json_answer(h, n):
    """An answer twice the cap of a summary in an ordinary JSON reply (fits in memory)."""
    from stree.providers import BYTES_PER_TOKEN
    from stree.core.summary import MAX_TOKENS

    text = "## Goal\n" + "x" * (2 * BYTES_PER_TOKEN * MAX_TOKENS)
    if h.request_json.get("stream"):
        body = b"".join(b"data: " + (e if isinstance(e, str) else json.dumps(e)).encode() + b"\n\n"
                        for _, e in openai_events(text))
        _headers(h, 200, "text/event-stream", len(body))
    else:
        body = json.dumps(openai_json(text)).encode()
        _headers(h, 200, "application/json", len(body))
    h.write(body)


def endless_json_answer(h, n):
    """A reply announcing 1 GB of JSON and sending it until the client hangs up."""
    _headers(h, 200, "application/json", 1 << 30)
    h.write(b'{"choices":[{"index":0,"message":{"role":"assistant","content":"')
    while True:
        h.write(b"y" * 65536)


def endless_stream_answer(h, n):
    """An SSE answer whose deltas never end."""
    _headers(h, 200, "text/event-stream")
    event = {"choices": [{"index": 0, "delta": {"content": "z" * 1000}, "finish_reason": None}]}
    data = f"data: {json.dumps(event)}\n\n".encode() * 64
    while True:
        _chunked(h, data)


def huge_error_body(h, n):
    """A 500 whose body announces 1 GB (and sends it until the client hangs up); retried."""
    _headers(h, 500, "text/plain", 1 << 30)
    while True:
        h.write(b"e" * 65536)


def keepalives_forever(h, n):
    """An SSE stream that only ever sends keep-alive comments, every 0.2 s."""
    _headers(h, 200, "text/event-stream")
    while True:
        _chunked(h, b": keep-alive\n\n")
        time.sleep(0.2)


def trickled_error(h, n):
    """A 503 whose body arrives one byte every 0.2 s."""
    _headers(h, 503, "text/plain", 100_000)
    while True:
        h.write(b"e")
        time.sleep(0.2)


def trickled_headers(h, n):
    """A status line, then header bytes one every 0.5 s, forever: each read returns in time."""
    h.wfile.write(b"HTTP/1.1 200 OK\r\nx-slow: ")
    h.wfile.flush()
    while True:
        h.write(b"a")
        time.sleep(0.5)


HOSTILE = {
    "huge-json-answer": (huge_json_answer, ("more than a summary of 4096 tokens can be", "larger than")),
    "endless-json-answer": (endless_json_answer, "larger than"),
    "endless-stream-answer": (endless_stream_answer, "larger than"),
    "huge-error-body": (huge_error_body, "HTTP 500"),
    "keepalives-forever": (keepalives_forever, "max_time"),
    "trickled-error": (trickled_error, "max_time"),
    "trickled-headers": (trickled_headers, "max_time"),
}


def _limits(expected):
    """The client's limits for a hostile server: a 3 s max_time where it is what must stop
    stree (the server trickles forever); where a size cap must stop it, limits far above what
    reading 64 KiB takes on a loaded machine, so that max_time never trips first."""
    if expected == "max_time":
        return {"STREE_MAX_TIME": "3", "STREE_TIMEOUT": "30"}
    return {"STREE_MAX_TIME": "60", "STREE_TIMEOUT": "30"}


@pytest.mark.parametrize("name", list(HOSTILE))
@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_a_hostile_model_server_gets_nothing_written(tmp_path, stree, demo, name, stream):
    handler, expected = HOSTILE[name]
    server = HostileServer(handler)
    before = demo.read_bytes()
    started = time.monotonic()
    try:
        r = stree("-s", demo, "checkout", TARGET, "--summarize", "--provider", "openai", "--model", "m",
                  "--base-url", server.url, stream, env=_limits(expected),
                  timeout=SERVER_LIFE + 30)
    finally:
        server.close()
    took = time.monotonic() - started
    assert r.code == 5, r
    assert any(e in r.err for e in ((expected,) if isinstance(expected, str) else expected)), r
    assert demo.read_bytes() == before, "nothing may be written"
    assert "Traceback" not in r.err
    assert took < SERVER_LIFE, f"stree gave up only when the server did ({took:.0f}s)"
    # what the client read is bounded: a 1 GB body is neither read whole nor 4 times
    assert server.sent < 64 << 20, f"{server.sent} bytes sent over {server.requests} requests"
    if name == "huge-error-body":
        assert server.requests == 4  # retried, as a 500 is, yet each read stopped at 64 KiB


# -- 7. bad values in the environment are usage errors naming the variable --------------

BAD_SECONDS = ["inf", "nan", "abc", "-1", "0", "-inf", "1e999"]


@pytest.mark.parametrize("value", BAD_SECONDS)
def test_bad_lock_timeout_is_a_usage_error(tmp_path, stree, value):
    session = small_session(tmp_path / "s.jsonl")
    before = session.read_bytes()
    r = stree("-s", session, "label", "x", "@", env={"STREE_LOCK_TIMEOUT": value})
    assert r.code == 2 and "STREE_LOCK_TIMEOUT" in r.err and "internal" not in r.err, r
    assert session.read_bytes() == before


@pytest.mark.parametrize("value", BAD_SECONDS)
def test_bad_hook_timeout_is_a_usage_error(tmp_path, stree, value):
    session = small_session(tmp_path / "s.jsonl")
    hooks = tmp_path / "hooks"
    hooks.mkdir(mode=0o700)
    hook = hooks / "before-tree"
    hook.write_text("#!/bin/sh\ncat >/dev/null\n")
    hook.chmod(0o700)
    r = stree("-s", session, "checkout", "@~1", env={"STREE_HOOK_TIMEOUT": value, "STREE_HOOKS_DIR": str(hooks)})
    assert r.code == 2 and "STREE_HOOK_TIMEOUT" in r.err and "internal" not in r.err, r


@pytest.mark.parametrize("variable", ["STREE_TIMEOUT", "STREE_MAX_TIME"])
@pytest.mark.parametrize("value", BAD_SECONDS)
def test_bad_model_timeouts_are_usage_errors(tmp_path, stree, variable, value):
    session = small_session(tmp_path / "s.jsonl")
    r = stree("-s", session, "summarize", "--to", "@~1", "--provider", "openai", "--model", "m",
              "--base-url", "http://127.0.0.1:9/v1", env={variable: value})
    assert r.code == 2 and variable in r.err and "internal" not in r.err, r


@pytest.mark.parametrize("url", ["http://127.0.0.1:99999/v1", "http://127.0.0.1:port/v1", "http://127.0.0.1:9/v1\nX: y",
                                 "http://127.0.0.1:9/v1 x", "ftp://127.0.0.1/v1", "127.0.0.1:9", "http:///v1"])
@pytest.mark.parametrize("source", ["--base-url", "STREE_BASE_URL", "OPENAI_BASE_URL"])
def test_a_bad_base_url_is_a_usage_error(tmp_path, stree, url, source):
    session = small_session(tmp_path / "s.jsonl")
    args = ["--base-url", url] if source == "--base-url" else []
    env = {} if source == "--base-url" else {source: url}
    r = stree("-s", session, "summarize", "--to", "@~1", "--provider", "openai", "--model", "m", *args, env=env)
    assert r.code == 2 and source in r.err and "internal" not in r.err, r


# -- 4. a shared or foreign cache dir, hooks dir or hook ---------------------------------

NOBODY = 65534  # "another user": CI runs as root, so files are chown'ed to nobody


def as_nobody(*command):
    """Run `command` as the real other user (uid/gid 65534), with setpriv or runuser."""
    if shutil.which("setpriv"):
        return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]
    if shutil.which("runuser"):
        return ["runuser", "-u", "nobody", "--", *command]
    pytest.skip("neither setpriv nor runuser is installed: no way to act as another user")


def index_name(session):
    st = os.stat(session)
    return f"{st.st_dev:x}-{st.st_ino:x}.idx"


def test_a_link_planted_at_the_temp_name_is_not_followed(tmp_path):
    """The fault as found: the index's temp file had a predictable name (<index>.<pid>.tmp)
    and was opened with O_TRUNC, following a link planted there."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    session = small_session(tmp_path / "s.jsonl")
    planted = cache / index_name(session)
    # `exec` keeps the shell's pid: the link sits exactly where stree (pid $$) writes
    script = f'ln -s "{victim}" "{planted}.$$.tmp" && exec "{sys.executable}" -m stree -s "{session}" log'
    r = subprocess.run(["sh", "-c", script], capture_output=True, env=dict(os.environ, STREE_CACHE_DIR=str(cache)),
                       timeout=60)
    assert r.returncode == 0, r
    assert victim.read_text() == "precious\n" and not victim.is_symlink()
    assert planted.is_file() and not planted.is_symlink()  # the index was still written, beside the link


def test_a_link_planted_by_another_user_in_a_shared_cache_dir(tmp_path):
    """A world-writable cache dir (as /tmp is): the other user (nobody, a real process via
    setpriv/runuser) plants links at the names stree writes; stree refuses the dir."""
    import tempfile

    shared = tempfile.mkdtemp(prefix="stree-shared-", dir="/tmp")
    try:
        os.chmod(shared, 0o1777)
        victim = tmp_path / "victim.txt"
        victim.write_text("precious\n")
        session = small_session(tmp_path / "s.jsonl")
        name = index_name(session)
        plant = "; ".join(f'ln -s "{victim}" "{shared}/{name}.{pid}.tmp"' for pid in range(300, 300 + 50))
        planted = subprocess.run(as_nobody("sh", "-c", plant + f'; ln -s "{victim}" "{shared}/{name}"'),
                                 capture_output=True, timeout=60)
        assert planted.returncode == 0, planted
        assert os.lstat(f"{shared}/{name}").st_uid == NOBODY
        script = f'exec "{sys.executable}" -m stree -s "{session}" log'
        r = subprocess.run(["sh", "-c", script], capture_output=True, timeout=60,
                           env=dict(os.environ, STREE_CACHE_DIR=shared))
        err = r.stderr.decode()
        assert r.returncode == 2 and shared in err and "writable by" in err and "chmod go-w" in err, err
        assert victim.read_text() == "precious\n"
    finally:
        shutil.rmtree(shared)


@pytest.mark.parametrize("problem", ["owned-by-nobody", "mode-777", "group-writable"])
@pytest.mark.parametrize("command", [["log"], ["log", "--graph"], ["label", "x", "@"], ["gc", "--all"]])
def test_a_foreign_or_shared_cache_dir_is_refused(tmp_path, stree, problem, command):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    session = small_session(tmp_path / "s.jsonl")
    if problem == "owned-by-nobody":
        os.chown(cache, NOBODY, NOBODY)
    else:
        os.chmod(cache, 0o777 if problem == "mode-777" else 0o770)
    r = stree("-s", session, *command, env={"STREE_CACHE_DIR": str(cache)})
    assert r.code == 2 and str(cache) in r.err, r
    assert ("chown it to you" if problem == "owned-by-nobody" else "chmod go-w") in r.err, r
    assert "--no-cache" in r.err
    assert os.listdir(cache) == []
    if command[0] != "gc":  # (gc works on the cache itself: still refused)
        assert stree("--no-cache", "-s", session, *command, env={"STREE_CACHE_DIR": str(cache)}).code == 0


def test_own_cache_dir_files_are_private(tmp_path, stree):
    cache = tmp_path / "new" / "cache"
    session = small_session(tmp_path / "s.jsonl")
    assert stree("-s", session, "log", "--graph", env={"STREE_CACHE_DIR": str(cache)}).code == 0
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    names = os.listdir(cache)
    assert names and all(stat.S_IMODE(os.stat(cache / n).st_mode) == 0o600 for n in names)


def _hooked(tmp_path, problem):
    hooks = tmp_path / "hooks"
    hooks.mkdir(mode=0o755)
    hook = hooks / "before-tree"
    hook.write_text(f"#!/bin/sh\ncat >/dev/null\necho ran > {tmp_path / 'ran'}\n")
    hook.chmod(0o755)
    target = {"dir": hooks, "hook": hook}[problem[0]]
    if problem[1] == "nobody":
        os.chown(target, NOBODY, NOBODY)
    else:
        os.chmod(target, os.stat(target).st_mode | (0o002 if problem[1] == "o+w" else 0o020))
    return hooks, target


@pytest.mark.parametrize("problem", [("dir", "nobody"), ("dir", "o+w"), ("dir", "g+w"),
                                     ("hook", "nobody"), ("hook", "o+w"), ("hook", "g+w")])
def test_a_foreign_or_shared_hook_is_refused(tmp_path, stree, problem):
    hooks, target = _hooked(tmp_path, problem)
    session = small_session(tmp_path / "s.jsonl")
    before = session.read_bytes()
    r = stree("-s", session, "checkout", "@~1", env={"STREE_HOOKS_DIR": str(hooks)})
    assert r.code == 6 and str(target) in r.err and "refused" in r.err, r
    assert ("chown it to you" if problem[1] == "nobody" else "chmod go-w") in r.err, r
    assert session.read_bytes() == before and not (tmp_path / "ran").exists()
    assert stree("-s", session, "checkout", "@~1", "--no-hooks", env={"STREE_HOOKS_DIR": str(hooks)}).code == 0


def test_a_hook_replaced_by_another_user_is_not_run(tmp_path, stree):
    """The other user (nobody, a real process) writes into a hooks dir left world-writable."""
    import tempfile

    hooks = tempfile.mkdtemp(prefix="stree-hooks-", dir="/tmp")
    try:
        os.chmod(hooks, 0o1777)
        evil = f"#!/bin/sh\ncat >/dev/null\ntouch {hooks}/pwned\n"
        made = subprocess.run(as_nobody("sh", "-c", f"printf '%s' '{evil}' > {hooks}/before-tree && "
                                        f"chmod 755 {hooks}/before-tree"), capture_output=True, timeout=60)
        assert made.returncode == 0, made
        session = small_session(tmp_path / "s.jsonl")
        r = stree("-s", session, "checkout", "@~1", env={"STREE_HOOKS_DIR": hooks})
        assert r.code == 6 and hooks in r.err and "refused" in r.err, r
        assert not os.path.exists(f"{hooks}/pwned")
    finally:
        shutil.rmtree(hooks)


# -- 5. keys: redacted before any cut, sent only to their own host, kept from hooks -------

import base64  # noqa: E402
from urllib.parse import quote  # noqa: E402

from llm_server import LLMServer, Reply  # noqa: E402

KEY = "sk-proj-Q2hhbmdlTWVQbGVhc2UxMjM0NTY3ODkwYWJjZGVm/+x"


def write_config(text):
    config = os.path.join(os.environ["XDG_CONFIG_HOME"], "stree", "config.toml")
    os.makedirs(os.path.dirname(config), exist_ok=True)
    with open(config, "w") as f:
        f.write(text)


def pieces(key, n=8):
    return {key[i:i + n] for i in range(len(key) - n + 1)}


ECHOES = {
    "straddles-the-cut": lambda k: "Incorrect API key provided: " + "." * 270 + k,
    "long-json-message": lambda k: f"invalid key {k} " + "x" * 5000,
    "cut-by-the-server": lambda k: f"Incorrect API key provided: {k[:20]}",
    "url-encoded": lambda k: f"bad key {quote(k, safe='')}",
    "base64": lambda k: "bad auth " + base64.b64encode(k.encode()).decode(),
    "base64-bearer": lambda k: "bad auth " + base64.b64encode(f"Bearer {k}".encode()).decode(),
    "json-escaped": lambda k: "bad key " + k.replace("/", "\\/"),
}


@pytest.mark.parametrize("echo", list(ECHOES))
@pytest.mark.parametrize("shape", ["json", "text"])
def test_an_echoed_key_never_reaches_the_output(tmp_path, stree, echo, shape):
    server = LLMServer()
    message = ECHOES[echo](KEY)
    body = {"error": {"message": message}} if shape == "json" else None
    raw = None if shape == "json" else message.encode()
    server.script = [Reply(401, body=body, raw=raw)]
    write_config('[openai]\napi_key_env = "MY_SERVER_KEY"\n')
    session = small_session(tmp_path / "s.jsonl")
    try:
        r = stree("--debug", "-s", session, "summarize", "--to", "@~1", "--provider", "openai", "--model", "m",
                  "--base-url", server.url + "/v1", env={"MY_SERVER_KEY": KEY})
    finally:
        server.close()
    assert r.code == 5 and "HTTP 401" in r.err, r
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    shown = r.out + r.err
    leaked = [p for p in pieces(KEY) if p in shown]
    assert not leaked, f"pieces of the key printed: {leaked[:3]} in {shown[-400:]!r}"
    for form in (base64.b64encode(KEY.encode()).decode()[:12], quote(KEY, safe="")[:12]):
        assert form not in shown


def test_the_openai_key_is_not_sent_to_an_ollama_style_server(tmp_path, stree):
    """The README's Ollama config: OPENAI_API_KEY set for other tools must not go, in
    cleartext, to a plain-http local server."""
    server = LLMServer()
    session = small_session(tmp_path / "s.jsonl")
    write_config(f'provider = "openai"\nmodel = "llama3.1"\nbase_url = "{server.url}/v1"\n')
    try:
        r = stree("-s", session, "summarize", "--to", "@~1", env={"OPENAI_API_KEY": KEY})
        assert r.code == 0, r
        assert "authorization" not in server.requests[-1].headers
        assert not any(KEY in v for v in server.requests[-1].headers.values())
        # the same from the environment and flags, and for anthropic's key
        r = stree("-s", session, "summarize", "--to", "@~1", "--provider", "anthropic", "--model", "m",
                  "--base-url", server.url, env={"ANTHROPIC_API_KEY": KEY})
        assert r.code == 0, r
        assert "x-api-key" not in server.requests[-1].headers
        r = stree("-s", session, "summarize", "--to", "@~1", env={"OPENAI_API_KEY": KEY,
                                                                   "OPENAI_BASE_URL": server.url + "/v1"})
        assert r.code == 0 and "authorization" not in server.requests[-1].headers, r
        # a server that wants a key says so: the hint tells how to name one for it
        server.script = [Reply(401, body={"error": {"message": "key required"}})]
        r = stree("-s", session, "summarize", "--to", "@~1", env={"OPENAI_API_KEY": KEY})
        assert r.code == 5 and "OPENAI_API_KEY is sent only to api.openai.com" in r.err and "api_key_env" in r.err
        # named for this server: sent
        write_config(f'provider = "openai"\nmodel = "llama3.1"\nbase_url = "{server.url}/v1"\n'
                     'api_key_env = "OLLAMA_KEY"\n')
        r = stree("-s", session, "summarize", "--to", "@~1", env={"OPENAI_API_KEY": "other", "OLLAMA_KEY": KEY})
        assert r.code == 0 and server.requests[-1].headers["authorization"] == f"Bearer {KEY}", r
    finally:
        server.close()


@pytest.mark.parametrize("opt_in", [False, True])
def test_hooks_get_no_api_keys_unless_asked(tmp_path, stree, opt_in):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    seen = tmp_path / "env.json"
    hook = hooks / "before-tree"
    hook.write_text(f"#!{sys.executable}\nimport json, os, sys\nsys.stdin.read()\n"
                    f"json.dump(dict(os.environ), open({str(seen)!r}, 'w'))\n")
    hook.chmod(0o755)
    write_config('hook_env = ["KEEP_ME"]\n[openai]\napi_key_env = "MY_SERVER_TOKEN"\n')
    session = small_session(tmp_path / "s.jsonl")
    env = {"STREE_HOOKS_DIR": str(hooks), "OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY,
           "OPENROUTER_API_KEY": KEY, "MY_SERVER_TOKEN": KEY, "KEEP_ME": "1"}
    if opt_in:
        env["STREE_HOOK_KEYS"] = "1"
    r = stree("-s", session, "checkout", "@~1", env=env)
    assert r.code == 0, r
    got = json.loads(seen.read_text())
    assert got["KEEP_ME"] == "1" and got["STREE_HOOK"] == "before-tree"
    keys = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "MY_SERVER_TOKEN"}
    assert (keys <= set(got)) if opt_in else not (keys & set(got)), sorted(got)
