"""Reading session files: parse lines, migrate v1/v2 in memory, keep offsets.

The parse keeps only the *structure* of each entry (a Node); the content of an
entry is loaded again from its byte range when a command needs it.
"""
import os
from _weakref import ref  # (not the weakref module: its WeakSet costs a patched log --graph 0.5 ms)

from ..errors import BadFile
from ..format.agents import headerless_allowed
from ..format.decode import decode_line
from ..format.header import CURRENT_VERSION, migrate_entry, migrate_v1_structure
from . import scan as scanner
from .nodes import Nodes


def changed_while_reading(path):
    return BadFile(f"{path}: the session changed while reading (cut short or rewritten)",
                   hint="run the command again")


def close_files(path):
    """Close every descriptor this process holds on `path` through a Session (each reopens it
    when it next reads): a write lease (stree.writing) needs the file open nowhere else."""
    path = str(path)
    for alive in list(_LIVE.values()):
        s = alive()
        if s is not None and str(s.path) == path:
            s.close()

_LIVE = {}  # id -> a weak reference of every Session not yet collected (close_files)


def _forget(key):
    return lambda _: _LIVE.pop(key, None)  # (called as the Session is collected, before its id is reused)


class Session:
    """A parsed session file: header, entry nodes in file order, problems seen."""

    def __init__(self, path):
        _LIVE[id(self)] = ref(self, _forget(id(self)))
        self.path = path
        self.header = None
        self.header_line = None
        self.title = None  # oh-my-pi title slot (line 1), never rewritten
        self.version = CURRENT_VERSION
        self.nodes = Nodes()
        self.malformed = []  # (line number, reason)
        self.size = 0
        self.ends_with_newline = True
        self.line = 0  # lines read so far (the parse continues from here)
        self.index = 0  # JSON values read so far, as pi counts them
        self.covered = 0  # bytes of complete lines parsed (what an index holds)
        self.previews = None  # cached previews (stree.storage.previews.PreviewCache), or None
        self.index_meta = None  # the metadata of the index this session was read from or written to
        self.index_blobs = None  # the data area of the index this session was read from
        self.seen = None  # (size, mtime) of the file when it was read
        self.file_stat = None  # its whole stat then (stree.storage.index)
        self.pending = None  # an index write deferred to the end of the command (stree.storage.index.save)
        self.ready = None  # (blobs, segments, rows): the first rows, encoded for an index by workers
        self.data = None  # the whole file, when parse() was given its bytes
        self.fd = None  # the open file (raw() reads entries from it)
        self.keep = None  # a list the scan appends each entry's decoded object to (rows parsed here, in
        #                   order; not a parse worker's): a caller that reads every entry decodes it once
        self.allow_headerless = headerless_allowed(path)

    @property
    def headerless(self):
        """True for a file without a header, read read-only (stree.format.header.headerless)."""
        return self.header is not None and self.header_line is None

    # -- content -------------------------------------------------------

    def raw(self, node):
        """The bytes of an entry's line."""
        return self.raw_at(node.offset, node.length)

    def raw_at(self, offset, length):
        """The bytes of the line at `offset`, `length` bytes long."""
        if self.data is not None:
            return self.data[offset:offset + length]
        if self.fd is None:
            self.fd = open_file(self.path)
        try:
            data = os.pread(self.fd, length, offset)
        except OSError as e:
            raise BadFile(f"{self.path}: cannot read: {e.strerror}") from None
        if len(data) != length:
            raise changed_while_reading(self.path)  # cut short since it was parsed
        return data

    def load(self, node):
        """The entry as pi holds it in memory (migrated to v3)."""
        obj = self.load_at(node.offset, node.length)
        if self.version < CURRENT_VERSION:
            migrate_entry(obj, node, self.version)
        return obj

    def load_at(self, offset, length):
        """The entry whose line is at `offset`, `length` bytes long, as the file holds it (load
        without its node: a file of the current version needs no migration, which needs it)."""
        scanner.STATS["decoded"] += 1
        try:
            obj = decode_line(self.raw_at(offset, length))
        except ValueError:  # it parsed when the file was read: the bytes have changed since
            raise changed_while_reading(self.path) from None
        if obj.__class__ is not dict:
            raise changed_while_reading(self.path)
        return obj

    def close(self):
        fd, self.fd = self.fd, None  # (forgotten first: a stop raised here leaks it, never closes it twice,
        if fd is not None:  #         which would close whatever file the number was given to since)
            os.close(fd)

    def __del__(self):  # a session dropped without close() (a library caller) does not keep its file open
        try:
            self.close()
        except Exception:  # (at interpreter exit, os may be gone already)
            pass

    @property
    def needs_migration(self):
        return self.version < CURRENT_VERSION


def open_file(path):
    """A read-only descriptor of a session file. Opened without blocking and checked
    before anything is read: a FIFO, a device or a socket is refused (exit 4) rather
    than hanging the command."""
    fd = None
    try:  # (a stop at any line, the `return` included, closes it: the line of a `try` is outside it)
        try:
            fd = open_nonblocking(path, os.O_RDONLY)
        except IsADirectoryError:
            raise BadFile(f"{path}: is a directory, not a session file",
                          hint="pass the .jsonl file inside it with -s") from None
        except FileNotFoundError:
            raise BadFile(f"{path}: no such file") from None
        except PermissionError:
            raise BadFile(f"{path}: permission denied") from None
        except OSError as e:
            raise BadFile(f"{path}: cannot read: {e.strerror}") from None
        require_regular(path, os.fstat(fd))
        if getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        return fd
    except BaseException:
        if fd is not None:
            os.close(fd)
        raise


LEASE_WAIT = 10.0  # seconds an open waits for another stree's write lease (held for a write)


def open_nonblocking(path, flags):
    """os.open without blocking on a FIFO. A regular file under another stree's write lease
    (stree.writing, held while it appends: milliseconds) answers EAGAIN: tried again."""
    import errno
    import time

    deadline = None
    delay = 0.001
    while True:
        try:
            return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EWOULDBLOCK):
                raise
            now = time.monotonic()
            deadline = deadline or now + LEASE_WAIT
            if now > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


def require_regular(path, st):
    """Refuse anything but a regular file (a directory, a FIFO, a device, a socket)."""
    import stat

    mode = st.st_mode
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise BadFile(f"{path}: is a directory, not a session file",
                      hint="pass the .jsonl file inside it with -s")
    kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
    raise BadFile(f"{path}: is {kind}, not a session file; only regular files are read",
                  hint="copy the session to a file first")


def parse(path, data=None, keep=None):
    """Parse a session file into a Session. Raises BadFile when it is not one.

    Lines are read in blocks: memory stays near the size of the structure, not
    of the file. `keep`: a list the entries' decoded objects are appended to (Session.keep).
    """
    s = Session(path)
    s.keep = keep
    if data is not None:
        s.data = data
        s.size = len(data)
        scanner.scan(s, data, 0, len(data))
    else:
        fd = open_file(path)
        s.fd = fd
        try:
            size = os.fstat(fd).st_size
        except OSError as e:
            raise BadFile(f"{path}: cannot read: {e.strerror}") from None
        if os.path.isdir(path):
            raise BadFile(f"{path}: is a directory, not a session file",
                          hint="pass the .jsonl file inside it with -s")
        s.size = size
        scan_file(s, fd, 0, size)
    finish(s)
    return s


def finish(s):
    """Checks and migrations once every line is read."""
    if s.header is None:
        path = s.path
        if s.malformed:
            raise BadFile(f"{path}: no valid session header (line {s.malformed[0][0]}: {s.malformed[0][1]})")
        raise BadFile(f"{path}: empty file, no session header")
    if s.version < 2:
        migrate_v1_structure(s)


def scan_file(s, fd, start, end):
    """Parse the lines of bytes [start, end) of an open file into `s`, continuing its state.

    A fresh parse of a long file is shared among several processes (one per core,
    see stree.storage.parallel): decoding JSON is the whole cost of a cold read. Each
    process encodes its rows a piece at a time, as an index holds them (in one process
    too, for a long file): their Python objects are never held for the whole file."""
    if not len(s.nodes) and s.header is None:
        from . import parallel

        n = parallel.jobs(end - start)
        if n > 1 or parallel.pieces(end - start, 1) > 1:
            start = parallel.scan_head(s, fd, start, end)
            if s.header is not None and not len(s.nodes) and parallel.scan(s, fd, start, end, n):
                return
    scanner.scan_range(s, fd, start, end, end)
