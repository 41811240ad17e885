"""Appending to a session file: the one append routine, under a lock.

Appends are one write of whole lines on a file opened for append, under
fcntl.flock held for read-check-append. Whole-file writes go to a temporary file
in the same directory, are fsynced and renamed over the target.
"""

import errno
import fcntl
import os
import sys
import time

from ..errors import CONFLICT, StreeError
from ..format.agents import headerless_titles
from .atomic import open_error, refuse_bundled, refuse_read_only, rewrite, write_all
from .entries import NewEntries, Taken, line_of

LOCK_TIMEOUT = 30.0  # seconds; override with STREE_LOCK_TIMEOUT


# -- the lock --------------------------------------------------------------------


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
    """(session, tree) as the file is under our lock: through the index (only appended lines
    are parsed) unless STREE_NO_CACHE, else a full read of the locked file. With `own`,
    read through `fd` (a lease is held: opening the file again would break it)."""
    from ..core.loading import open_session, use_index

    if use_index():
        session, tree, _ = open_session(path, fd=fd if own else None, previews=False)
        if not session.needs_migration:  # a migration rewrites every byte: it reads them all
            return session, tree
        session.close()
    session, tree, _ = open_session(path, data=_read_all(fd), previews=False)  # (through the locked descriptor)
    return session, tree


def _warm(path):
    """Before the lock: parse a cold file and write its index now, so that the re-read under
    the lock parses only what was appended since (pi appends without the lock: the shorter
    the locked window, the less it can move the leaf under us)."""
    from ..core.loading import COMMAND, finish, open_session, use_index

    if not use_index():
        return
    try:  # (the command's first read, if it read nothing before: STREE_DEBUG_STATS)
        finish(open_session(path, report=COMMAND).session)  # (a read deferred its index to the end of the command: write it now)
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


# -- the append routine ----------------------------------------------------------


def refuse_headerless(session):
    """A file without a session header (OpenClaw keeps some) is read, never written."""
    if session.headerless:
        raise StreeError(f"{session.path}: the file has no session header ({headerless_titles()} keeps some); "
                         "it is read-only for stree; nothing written", code=CONFLICT,
                         hint="'stree fork --full -o FILE' writes a copy with a header")


def append_entries(path, make_entries, dry_run=False, say=None):
    """Append the entries `make_entries(session, tree, new)` returns, atomically.

    Under the lock the file is re-read, so `make_entries` sees the current leaf and
    ids (`new` is a NewEntries checked against every id in the file). A v1/v2 file is
    migrated first. A torn last line is left alone and the new lines start on a fresh
    line. Returns the entries written (or that would be, with dry_run).
    """
    from ..format.header import as_v3

    path = str(path)
    refuse_bundled(path)
    while True:
        try:
            if not dry_run:
                refuse_read_only(path, os.stat(path))
            from ..storage.session import open_nonblocking

            fd = open_nonblocking(path, os.O_RDONLY if dry_run else os.O_RDWR | os.O_APPEND)
        except FileNotFoundError:
            raise StreeError(f"{path}: no such file", code=3) from None
        except OSError as e:
            raise open_error(path, e) from None
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
            session, tree = _read_locked(path, fd)
            refuse_headerless(session)
            if session.needs_migration and not dry_run:
                old = session.version
                rewrite(path, as_v3(session), keep_mode_of=st)
                _say(say, f"migrated {path} from version {old} to 3 "
                          f"(entry ids as stree showed them)")
                continue
            for _ in range(REBUILDS):
                tail = _tail(fd, session.size)
                entries = make_entries(session, tree, NewEntries(Taken(tree)))
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
                session, tree = _read_locked(path, fd, own=lease is not None)
                if session.needs_migration:
                    raise StreeError(f"{path}: the file was rewritten while stree was writing; nothing written",
                                     code=CONFLICT, hint="run the command again")
            else:
                raise StreeError(f"{path}: the session keeps growing (is pi appending to it?); nothing written",
                                 code=CONFLICT, hint="run the command again when pi is idle")
            size = session.size
            try:
                try:
                    write_all(fd, payload)
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
