"""`stree grep` answered by a resident process, when asked for (STREE_GREP_SERVER=1, or
`grep_server = true` in the config), as git's fsmonitor daemon answers `git status`.

A warm grep in a fresh process pays, before it finds a word, for the interpreter, stree's
modules and SQLite, the catalogue opened and read, and SQLite's page cache filled again:
most of its time on a rare word, and for a common one as much as the word index's answer.
The server pays them once (the calling process still starts its interpreter). It answers
only the plain grep into a pipe (stree.fastgrep: the same command lines, with the same code,
so the same lines, errors and exit codes), of this machine's catalogue.

    client (ask)    the command line, working directory and stdout's encoding, to
                    <cache>/grep-XXXXXXXX.sock; the answer (exit code, stdout's bytes,
                    stderr) written here
    server (serve)  the entry point's `__grep-server SOCKET` (`python -c "...main()"
                    __grep-server SOCKET` in `ps`), detached (its own session, no
                    terminal, /dev/null for its standard streams), started by the first
                    grep that finds none

XXXXXXXX names what the answer depends on besides the command line: the interpreter, this
stree's code and the environment variables stree reads (its own, the agents' homes, XDG,
locale, time zone): another environment has a server of its own. The socket lives in
stree's cache directory (this user's, mode 0700) with mode 0600, appears once the server
listens, and the server answers only this user (SO_PEERCRED where the system has it).

Anything unusual is answered in the calling process as without a server: none running yet
(the grep that starts one), a shared catalogue (--catalog, STREE_CATALOG or the config),
STREE_DEBUG_STATS (it counts this process's work), a grep the plain path leaves to click,
stree's code changed on disk since the server started (it then ends), an error of any kind.
The server ends after STREE_GREP_SERVER_IDLE seconds (default 600) without a request, when its
socket is removed, or when its code changes.
"""

import os
import sys

PROTOCOL = 1
IDLE = 600.0  # seconds without a request after which the server ends
TICK = 2.0  # how often an idle server looks at its socket and the clock
MAX_REQUEST = 1 << 20  # bytes: a longer request is not stree's client
NAMES = ("HOME", "USERPROFILE", "LANG", "LANGUAGE", "TZ", "NO_COLOR", "TERM", "COLUMNS")
PREFIXES = ("STREE_", "PI_", "XDG_", "LC_", "PG")  # (PG: libpq's own, should a catalogue be shared)
# (not PYTHON*: each request brings the encoding of its stdout, for which the answer is made)


def socket_path():
    """<cache>/grep-XXXXXXXX.sock of this interpreter, stree and environment (module doc)."""
    import marshal
    from binascii import crc32

    from .storage.cachedir import cache_dir

    names = tuple(sorted((k, v) for k, v in os.environ.items() if k in NAMES or k.startswith(PREFIXES)))
    key = marshal.dumps((PROTOCOL, sys.version, sys.executable, os.path.dirname(os.path.abspath(__file__)), names))
    return os.path.join(cache_dir(), f"grep-{crc32(key):08x}.sock")


# -- the client ----------------------------------------------------------------------------


def ask(argv):
    """The exit code of a plain grep the server answered (its output written here), or None:
    answer it in this process (a server is started when none is running)."""
    from .fastgrep import ENV_OFF, parse

    if any(os.environ.get(name) for name in ENV_OFF) or os.environ.get("STREE_DEBUG_STATS") \
            or sys.stdout.isatty() or parse(argv) is None or getattr(sys.stdout, "buffer", None) is None:
        return None  # (STREE_DEBUG_STATS: the work of the process it is said by, which the server's is not)
    from .errors import StreeError

    try:
        path = socket_path()
    except StreeError:  # (the cache directory refused: the grep says so)
        return None
    import _socket
    import marshal

    if not hasattr(_socket, "AF_UNIX") or not hasattr(os, "posix_spawn"):  # (Windows: no server)
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        try:
            _at(path, sock.connect)
        except OSError:  # none listening: this grep is answered here, the next one by a server
            start(path)
            return None
        sock.sendall(marshal.dumps((PROTOCOL, list(argv), os.getcwd(), sys.stdout.encoding or "utf-8",
                                    sys.stdout.errors or "strict")))
        sock.shutdown(_socket.SHUT_WR)
        chunks = []
        while True:
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        sock.close()
    try:
        code, out, err = marshal.loads(b"".join(chunks))
    except (EOFError, ValueError, TypeError):  # (a server that ended mid-answer)
        return None
    if code is None or code.__class__ is not int or out.__class__ is not bytes or err.__class__ is not str:
        return None
    from .fastgrep import printed

    sys.stderr.write(err)
    written = printed(out)
    return code if written is None else written


def start(path):
    """Start the server of `path`, detached; whether it comes up is not this grep's concern.
    It runs this very stree (not `-m stree`, which would take a `stree` of the working directory)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = f"import sys; sys.path[0] = {here!r}; from stree.entrypoint import main; main()"
    try:
        null = os.devnull
        os.posix_spawn(sys.executable, [sys.executable, "-c", code, "__grep-server", path], dict(os.environ),
                       file_actions=[(os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
                                     (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
                                     (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0)],
                       setsid=True)
    except (AttributeError, NotImplementedError, OSError):  # (no posix_spawn: no server)
        pass


def _at(path, call):
    """call(path) of a socket, by its name from inside its directory when the whole path is
    longer than a socket address holds (108 bytes on Linux)."""
    if len(os.fsencode(path)) < 100:
        return call(path)
    here = os.open(".", os.O_RDONLY)
    try:
        os.chdir(os.path.dirname(path))
        return call(os.path.basename(path))
    finally:
        os.fchdir(here)
        os.close(here)


# -- the server ----------------------------------------------------------------------------


def serve(argv):
    """`stree __grep-server SOCKET`: answer greps on SOCKET until idle (module doc); exit 0."""
    if len(argv) != 1:
        sys.stderr.write("usage: stree __grep-server SOCKET (started by `stree grep`)\n")
        return 2
    import fcntl
    import socket
    import time

    from .storage.cachedir import cache_dir

    path = argv[0]
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    if os.path.realpath(directory) != os.path.realpath(cache_dir()):
        return 2  # (only ever in stree's own cache directory: cache_dir refuses a shared one)
    lock = os.open(path[:-len(".sock")] + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another server of this environment is running or starting
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    temp = f"{path}.{os.getpid()}.tmp"
    old = os.umask(0o177)
    try:
        _at(temp, sock.bind)
    finally:
        os.umask(old)
    sock.listen(64)
    os.replace(temp, path)  # (listening before its name is there; over a server's that was killed)
    mine = os.stat(path).st_ino
    os.chdir(directory)  # (not a client's directory, which may go away)
    from . import fastgrep  # noqa: F401  (and what a grep loads: the first answer is as quick as the next)
    from .core import catalog_refresh, grep_match, grep_sessions  # noqa: F401
    from .output import grepline  # noqa: F401
    from .storage.catalog.resident import keep_open

    keep_open()  # (the catalogue's connection, its page cache and session rows, from one grep to the next)
    code = {}
    _code(code)
    idle = _idle()
    sock.settimeout(min(TICK, idle))
    last = time.monotonic()
    try:
        while True:
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                if time.monotonic() - last >= idle or not _ours(path, mine) or _code(code):
                    break
                continue
            try:
                if _peer_is_me(conn):
                    _answer(conn, code)
            except Exception:  # (a client gone, a request it could not make: the next one is answered)
                pass
            finally:
                conn.close()
            last = time.monotonic()
            if _code(code) or not _ours(path, mine):
                break
    finally:
        if _ours(path, mine):
            os.unlink(path)
        sock.close()
        os.close(lock)
    return 0


def _answer(conn, code):
    """Read one request, answer it (None: the client answers it itself)."""
    import codecs
    import io
    import marshal

    from .fastgrep import run

    conn.settimeout(10.0)  # (a client that never finishes its request is let go)
    chunks, size = [], 0
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_REQUEST:
            return
    try:
        protocol, argv, cwd, encoding, errors = marshal.loads(b"".join(chunks))
        codecs.lookup(encoding)  # (a codec and an error handler Python knows)
        codecs.lookup_error(errors)
    except (EOFError, ValueError, TypeError, LookupError):
        return
    reply = (None, b"", "")
    if protocol == PROTOCOL and argv.__class__ is list and all(a.__class__ is str for a in argv) \
            and cwd.__class__ is str and not _code(code):
        out, err = _Captured(), io.StringIO()
        environ, here, streams = dict(os.environ), os.getcwd(), (sys.stdout, sys.stderr)
        try:
            os.chdir(cwd)
            sys.stdout, sys.stderr = out, err
            status = None if _shared(argv) else run(argv)
        except BaseException:  # (anything at all: the client answers it itself)
            status = None
        finally:
            sys.stdout, sys.stderr = streams
            os.environ.clear()
            os.environ.update(environ)  # (--catalog sets STREE_CATALOG for the request's layers)
            os.chdir(here)
        if status is not None:
            reply = (status, _encoded("".join(out.parts), encoding, errors), err.getvalue())
    conn.sendall(marshal.dumps(reply))  # (within the same 10 s: a client that stopped reading is let go)


def _encoded(text, encoding, errors):
    """The bytes the client's stdout would write for `text` (stree.format.terminal.write: what
    its encoding cannot carry is replaced), made here: the client writes them as they are."""
    try:
        return text.encode(encoding, errors)
    except UnicodeEncodeError:
        return text.encode(encoding, "replace")


class _Captured:
    """A request's stdout: the text written, kept as it was given (a grep writes its lines in
    one piece: no copy into a buffer, which for tens of thousands of lines cost more than
    the search)."""

    encoding = "utf-8"

    def __init__(self):
        self.parts = []

    def write(self, text):
        self.parts.append(text)
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False


def _shared(argv):
    """True when the grep asks a shared catalogue (left to the client: its own connection,
    its Ctrl-C cancelling the server's statement)."""
    from .core.catalog_shared import configured
    from .fastgrep import parse

    parsed = parse(argv)
    return parsed is None or "catalog" in parsed[0] or configured() is not None


def _peer_is_me(conn):
    import socket
    import struct

    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:  # (not Linux: the socket's directory and mode keep others out)
        return True
    _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
    return uid == os.getuid()


def _ours(path, ino):
    try:
        return os.stat(path).st_ino == ino
    except OSError:
        return False


def _code(known):
    """True when a module of stree's that this process loaded changed on disk since (its
    source's size or mtime); `known` (path -> (size, mtime)) takes in the modules loaded since."""
    for name, module in list(sys.modules.items()):
        if name != "stree" and not name.startswith("stree."):
            continue
        path = getattr(module, "__file__", None)
        if not path:
            continue
        try:
            st = os.stat(path)
            now = (st.st_size, st.st_mtime_ns)
        except OSError:
            now = None
        if known.setdefault(path, now) != now:
            return True
    return False


def _idle():
    try:
        value = float(os.environ.get("STREE_GREP_SERVER_IDLE", IDLE))
    except ValueError:
        return IDLE
    return value if value > 0 else IDLE
