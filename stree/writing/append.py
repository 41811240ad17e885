"""Writing session files: the one append routine, atomic rewrites, ids, timestamps.

Appends are one write of whole lines on a file opened for append, under
fcntl.flock held for read-check-append. Whole-file writes go to a temporary file
in the same directory, are fsynced and renamed over the target.
"""

import errno
import fcntl
import os
import re
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

from ..errors import CONFLICT, StreeError

LOCK_TIMEOUT = 30.0  # seconds; override with STREE_LOCK_TIMEOUT
NEW_FILE_MODE = 0o600  # sessions hold secrets
CRASH_ENV = "STREE_TEST_CRASH_BEFORE_RENAME"  # test hook: exit after writing the temp file, before rename


# -- ids, timestamps, JSON like pi's JSON.stringify ----------------------------


def now_iso():
    """`new Date().toISOString()`: 2026-11-22T10:15:03.123Z."""
    dt = datetime.now(timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def new_id(taken):
    """8 hex chars from a random UUID, unique against `taken` (which it extends)."""
    while True:
        candidate = uuid.uuid4().hex[:8]
        if candidate not in taken:
            taken.add(candidate)
            return candidate


def uuid7():
    """A UUIDv7 (time-ordered), as pi uses for session ids."""
    ms = int(time.time() * 1000)
    rand = bytearray(os.urandom(10))
    raw = ms.to_bytes(6, "big") + bytes([0x70 | (rand[0] & 0x0F), rand[1], 0x80 | (rand[2] & 0x3F)]) + rand[3:]
    return str(uuid.UUID(bytes=bytes(raw)))


def js_dumps(obj):
    """Compact JSON exactly as JSON.stringify writes it (None values kept as null)."""
    from ..format.jsjson import stringify

    return stringify(obj)


def line_of(entry):
    return js_dumps(entry).encode("utf-8") + b"\n"


# -- entries in pi's key order ---------------------------------------------------


class _Taken:
    """The ids of a tree, as a set new_id() can check and extend, without a set of
    every id (a new id is checked against the tree's id column)."""

    def __init__(self, tree):
        self.tree = tree
        self.added = set()

    def __contains__(self, id):
        return id in self.added or self.tree.get(id) is not None

    def add(self, id):
        self.added.add(id)


class NewEntries:
    """Builds entries to append: fresh unique ids, pi's timestamp, pi's key order."""

    def __init__(self, taken):
        self.taken = taken if isinstance(taken, _Taken) else set(taken)

    def entry(self, type, parent, **fields):
        """type, id, parentId, timestamp, then the fields (undefined -> omitted, as pi)."""
        e = {"type": type, "id": new_id(self.taken), "parentId": parent, "timestamp": now_iso()}
        e.update((k, v) for k, v in fields.items() if v is not _UNDEFINED)
        return e

    def custom(self, custom_type, data, parent):
        """pi's appendCustomEntry: customType and data come before the id."""
        e = {"type": "custom", "customType": custom_type}
        if data is not _UNDEFINED:
            e["data"] = data
        e.update(id=new_id(self.taken), parentId=parent, timestamp=now_iso())
        return e

    def label(self, target, label, parent):
        """pi's appendLabelChange: a blank label clears (the key is left out)."""
        label = (label or "").strip()
        return self.entry("label", parent, targetId=target, label=label or _UNDEFINED)

    def branch_summary(self, parent, summary, details, from_hook, old_leaf, usage=None):
        """pi's branchWithSummary (1.5.2): fromId is the leaf navigated away from ("root" for
        the empty leaf); usage, when the summary came from a model, before fromHook."""
        return self.entry("branch_summary", parent, fromId=old_leaf if old_leaf is not None else "root",
                          summary=summary, details=_UNDEFINED if details is None else details,
                          usage=_UNDEFINED if usage is None else usage, fromHook=bool(from_hook))

    def session_info(self, name, parent):
        from ..format.decode import JS_WHITESPACE

        # pi 1.5: name.replace(/[\r\n]+/g, " ").trim()
        return self.entry("session_info", parent, name=re.sub(r"[\r\n]+", " ", name).strip(JS_WHITESPACE))


class _Undefined:
    def __repr__(self):
        return "undefined"


_UNDEFINED = _Undefined()


# -- guards --------------------------------------------------------------------


def refuse_bundled(path):
    """The bundled demo lives inside the installed package: never write to it."""
    from ..core.store import demo_path

    try:
        bundled = Path(path).resolve() == demo_path()
    except OSError:
        bundled = False
    if bundled:
        raise StreeError("the bundled demo session is read-only",
                         code=CONFLICT,
                         hint="copy it first: stree -s demo fork --full -o demo.jsonl, "
                              "then work on it with -s demo.jsonl")


def _refuse_read_only(path, st):
    # root may write anywhere; a file without write bits is still meant to stay as it is
    if not st.st_mode & 0o222:
        raise StreeError(f"{path}: the file is read-only; nothing written", code=CONFLICT,
                         hint=f"make it writable (chmod u+w {path}) if you mean to change it")


def _open_error(path, e):
    reason = {errno.EACCES: "permission denied (read-only for you)", errno.EPERM: "operation not permitted",
              errno.EROFS: "read-only file system"}.get(e.errno, e.strerror)
    return StreeError(f"{path}: cannot write: {reason}; nothing written", code=CONFLICT)


def _lock(fd, path):
    from ..errors import env_seconds

    deadline = time.monotonic() + env_seconds("STREE_LOCK_TIMEOUT", LOCK_TIMEOUT)
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise StreeError(f"{path}: locked by another stree process; nothing written", code=CONFLICT,
                                 hint="try again when it has finished")
            time.sleep(delay)
            delay = min(delay * 2, 0.02)
        except OSError as e:
            raise StreeError(f"{path}: cannot lock the file ({e.strerror}); nothing written", code=CONFLICT)


def _read_locked(path, fd, own=False):
    """The session as it is under our lock: through the index (only appended lines
    are parsed) unless STREE_NO_CACHE, else a full read of the locked file. With `own`,
    read through `fd` (a lease is held: opening the file again would break it)."""
    from ..storage import index
    from ..storage.session import parse

    if index.enabled():
        session = index.load(path, fd=fd if own else None)[0]
        if not session.needs_migration:  # a migration rewrites every byte: it reads them all
            return session
        session.close()
    return parse(path, _read_all(fd))


def _warm(path):
    """Before the lock: parse a cold file and write its index now, so that the re-read under
    the lock parses only what was appended since (pi appends without the lock: the shorter
    the locked window, the less it can move the leaf under us)."""
    from ..storage import index

    if not index.enabled():
        return
    try:
        session = index.load(path)[0]
        index.save(session)  # (a read deferred its index to the end of the command: write it now)
    except StreeError:
        pass  # the locked read reports it


REBUILDS = 50  # times the entries are rebuilt because the file grew before they could be written


class _Lease:
    """A write lease on the session file while the entries are checked and written (Linux).

    pi takes no lock, but it opens the file for every append (appendFileSync): while the
    lease is held, that open() waits, so nothing can land between the last check of the
    file and our write. Only granted when no process (this one included) has the file
    open and we own the file; else the check right before the write is all there is."""

    def __init__(self, fd, path):
        self.fd = fd
        self.held = False
        self.old = None
        setlease = getattr(fcntl, "F_SETLEASE", None)
        if setlease is None or not sys.platform.startswith("linux"):
            return
        from ..storage.session import close_files

        close_files(path)  # our own reads of the file would refuse the lease
        import signal

        try:
            self.old = signal.signal(signal.SIGIO, _ignore)  # the lease-break notice (default: exit)
        except (ValueError, OSError):  # not the main thread
            return
        for _ in range(20):
            try:
                fcntl.fcntl(fd, setlease, fcntl.F_WRLCK)
                self.held = True
                return
            except OSError as e:
                if e.errno != errno.EAGAIN:
                    break
                time.sleep(0.0005)  # open elsewhere (pi in the middle of an append, a reader)
        self.release()

    def release(self):
        if self.held:
            self.held = False
            try:
                fcntl.fcntl(self.fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
            except OSError:
                pass
        if self.old is not None:
            import signal

            signal.signal(signal.SIGIO, self.old)
            self.old = None


def _ignore(signum, frame):
    pass


def _grown(fd, session, tail):
    """True when the file is no longer what `session` was read from: pi appended (it takes
    no lock) or it changed in place. The size is the last thing looked at: the write follows."""
    return _tail(fd, session.size) != tail or os.fstat(fd).st_size != session.size


def _tail(fd, size):
    return os.pread(fd, min(size, 4096), max(0, size - 4096))


def _read_all(fd):
    size = os.fstat(fd).st_size
    chunks = []
    pos = 0
    while True:
        chunk = os.pread(fd, max(size - pos, 1 << 16), pos)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        pos += len(chunk)


def _write_all(fd, payload):
    view = memoryview(payload)
    while view:
        n = os.write(fd, view)  # one write; the loop only resumes a short write
        view = view[n:]


# -- the append routine ----------------------------------------------------------


def append_entries(path, make_entries, dry_run=False, say=None):
    """Append the entries `make_entries(session, tree, new)` returns, atomically.

    Under the lock the file is re-read, so `make_entries` sees the current leaf and
    ids (`new` is a NewEntries checked against every id in the file). A v1/v2 file is
    migrated first. A torn last line is left alone and the new lines start on a fresh
    line. Returns the entries written (or that would be, with dry_run).
    """
    from ..format.header import as_v3
    from ..core.tree import Tree

    path = str(path)
    refuse_bundled(path)
    while True:
        try:
            if not dry_run:
                _refuse_read_only(path, os.stat(path))
            from ..storage.session import open_nonblocking

            fd = open_nonblocking(path, os.O_RDONLY if dry_run else os.O_RDWR | os.O_APPEND)
        except FileNotFoundError:
            raise StreeError(f"{path}: no such file", code=3) from None
        except OSError as e:
            raise _open_error(path, e) from None
        lease = None
        try:
            st = os.fstat(fd)
            from ..storage.session import require_regular

            require_regular(path, st)  # a FIFO or a device: refused, not read or written
            if not dry_run:
                _warm(path)
                _lock(fd, path)
                try:
                    current = os.stat(path)
                except OSError:
                    current = None
                if current is None or (current.st_ino, current.st_dev) != (st.st_ino, st.st_dev):
                    continue  # renamed over (migrated) while we waited: lock the new file
            session = _read_locked(path, fd)
            if session.needs_migration and not dry_run:
                old = session.version
                rewrite(path, as_v3(session), keep_mode_of=st)
                _say(say, f"migrated {path} from version {old} to 3 "
                          f"(entry ids as stree showed them)")
                continue
            for _ in range(REBUILDS):
                tail = _tail(fd, session.size)
                tree = Tree(session.nodes, session.load)
                entries = make_entries(session, tree, NewEntries(_Taken(tree)))
                if not entries or dry_run:
                    return entries or []
                payload = b"".join(line_of(e) for e in entries)
                if session.size and not session.ends_with_newline:
                    payload = b"\n" + payload  # never glue onto a torn last line
                # pi appends without our lock, its leaf kept in memory: when it appended since the
                # read, the entries would hang off a leaf it has moved past. Checked last thing
                # before the write; the entries are built again from the file as it is now (a
                # checkout whose starting point moved refuses instead, exit 6: see navigate)
                if lease is None:
                    lease = _Lease(fd, path)
                if not _grown(fd, session, tail):
                    break
                if not lease.held:
                    lease.release()  # (puts the SIGIO handler back)
                    lease = None
                # read again (only the appended lines are parsed); with the lease kept, pi waits
                # until the rebuilt entries are written, so the next check holds
                session = _read_locked(path, fd, own=lease is not None)
                if session.needs_migration:
                    raise StreeError(f"{path}: the file was rewritten while stree was writing; nothing written",
                                     code=CONFLICT, hint="run the command again")
            else:
                raise StreeError(f"{path}: the session keeps growing (is pi appending to it?); nothing written",
                                 code=CONFLICT, hint="run the command again when pi is idle")
            size = session.size
            try:
                try:
                    _write_all(fd, payload)
                finally:
                    lease.release()
                    lease = None
                os.fsync(fd)
            except OSError as e:
                _take_back(fd, size, payload)
                raise StreeError(f"{path}: write failed: {e.strerror}; nothing written", code=CONFLICT) from None
            return entries
        finally:
            if lease is not None:
                lease.release()  # (on an error between the lease and the write)
            os.close(fd)  # also releases the lock and any lease


def _take_back(fd, size, payload):
    """After a failed append (disk full, I/O error), cut off what reached the file of
    `payload`, so no partial line is left; bytes that are not ours are never touched."""
    try:
        now = os.fstat(fd).st_size
        if size < now <= size + len(payload) and os.pread(fd, now - size, size) == payload[:now - size]:
            os.ftruncate(fd, size)
    except OSError:
        pass


def migrate(path, say=None):
    """Rewrite a v1/v2 file as v3 under the append lock (no-op for v3 files)."""
    append_entries(path, lambda session, tree, new: [], say=say)


def _say(say, message):
    if say is not None:
        say(message)
    else:
        from ..format.terminal import inert

        print(f"stree: {inert(message, oneline=True)}", file=sys.stderr)


# -- whole-file writes ---------------------------------------------------------


def _fsync_dir(directory):
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path, data, mode=NEW_FILE_MODE, replace=True):
    """Write `data` to `path` via a temp file in the same directory + fsync + rename.

    Replacing a symlink rewrites the file it points to (as pi, writing through the link,
    does) and leaves the link a link; a new file (`replace=False`) is never written over
    a link, even a dangling one."""
    path = Path(path)
    if replace and os.path.islink(path):
        path = Path(os.path.realpath(path))
    directory = path.parent if str(path.parent) else Path(".")
    if not replace and os.path.lexists(path):
        raise StreeError(f"{path}: already exists; nothing written", code=CONFLICT,
                         hint="choose another path with -o, or remove it first")
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise _open_error(directory, e) from None
    try:
        try:
            os.fchmod(fd, mode)
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if os.environ.get(CRASH_ENV):
            os._exit(99)  # simulates a crash between writing and renaming
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise _open_error(path, e) from None
        raise
    _fsync_dir(directory)
    _remove_stale_temps(directory, path.name)
    return path


STALE_TEMP_AGE = 15 * 60  # seconds: a temp file this old belongs to a write that was killed


def _remove_stale_temps(directory, name):
    """Leftovers of earlier writes of the same file that were killed before their rename."""
    now = time.time()
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for other in names:
        if other.startswith(f".{name}.") and other.endswith(".tmp"):
            full = os.path.join(directory, other)
            try:
                if now - os.stat(full).st_mtime > STALE_TEMP_AGE:
                    os.unlink(full)
            except OSError:
                pass


def rewrite(path, data, keep_mode_of=None):
    """Replace an existing session file atomically, keeping its permissions."""
    refuse_bundled(path)
    st = keep_mode_of or os.stat(path)
    _refuse_read_only(path, st)
    return write_atomic(os.path.realpath(path), data, mode=st.st_mode & 0o7777)  # through a link


# -- new sessions ----------------------------------------------------------------


def session_header(cwd, parent_session):
    """A v3 header with a fresh UUIDv7, in pi's key order."""
    header = {"type": "session", "version": 3, "id": uuid7(), "timestamp": now_iso(), "cwd": cwd}
    if parent_session is not None:
        header["parentSession"] = parent_session
    return header


def session_file_name(header):
    """pi's file name: <timestamp with : and . as -> _ <session id>.jsonl."""
    return re.sub(r"[:.]", "-", header["timestamp"]) + "_" + header["id"] + ".jsonl"


def forked(session, tree, leaf, header, full=False):
    """The bytes of a new session holding the path root -> leaf (pi's createBranchedSession),
    or every entry with `full` (pi's forkFrom). Returns (data, the new file's leaf id).

    As pi 0.79.2 and later: label entries on the path are dropped and the entries after one
    re-chained to the entry before it; a compaction's firstKeptEntryId that named a dropped
    label names the next kept entry. The labels of kept entries are appended at the end."""
    if full:
        kept, rewired = list(session.nodes), {}
    else:
        kept, rewired = _without_labels(tree.path(leaf) if leaf is not None else [], session.load)
    lines = [js_dumps(header).encode("utf-8")]
    for node in kept:
        if node.id in rewired or session.needs_migration:
            entry = session.load(node)
            if node.id in rewired:
                entry = dict(entry, **rewired[node.id])  # in place: pi's {...entry, parentId}
            lines.append(js_dumps(entry).encode("utf-8"))
        else:
            lines.append(session.raw(node).strip())  # the entry's bytes as they are
    last = kept[-1].id if kept else None
    if not full:
        # labels of kept entries, re-appended with their original timestamps
        ids = {n.id for n in kept}
        new = NewEntries(ids)
        stamps = tree.label_timestamps
        for target, label in tree.labels.items():
            if target in ids:
                entry = {"type": "label", "id": new_id(new.taken), "parentId": last,
                         "timestamp": stamps.get(target), "targetId": target, "label": label}
                lines.append(js_dumps(entry).encode("utf-8"))
                last = entry["id"]
    return b"\n".join(lines) + b"\n", last


def _without_labels(path, load):
    """(the path's Nodes without label entries, {id: changed fields}) for pi's re-chaining."""
    kept, rewired, pending, replacement = [], {}, [], {}
    parent = None
    for node in path:
        if node.type == "label":
            pending.append(node.id)
            continue
        for label in pending:
            replacement[label] = node.id
        pending.clear()
        changes = {}
        if node.parent != parent:
            changes["parentId"] = parent
        if node.type == "compaction" and replacement:
            first = load(node).get("firstKeptEntryId")
            if isinstance(first, str) and first in replacement and first != node.id:
                changes["firstKeptEntryId"] = replacement[first]
        if changes:
            rewired[node.id] = changes
        kept.append(node)
        parent = node.id
    return kept, rewired
