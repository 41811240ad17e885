"""Whole-file writes: a temporary file in the same directory, fsynced and renamed over the target."""

import os
import errno
import time
from pathlib import Path

from ..errors import CONFLICT, StreeError

NEW_FILE_MODE = 0o600  # sessions hold secrets
CRASH_ENV = "STREE_TEST_CRASH_BEFORE_RENAME"  # test hook: exit after writing the temp file, before rename


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


def refuse_read_only(path, st):
    # root may write anywhere; a file without write bits is still meant to stay as it is
    if not st.st_mode & 0o222:
        raise StreeError(f"{path}: the file is read-only; nothing written", code=CONFLICT,
                         hint=f"make it writable (chmod u+w {path}) if you mean to change it")


def open_error(path, e):
    reason = {errno.EACCES: "permission denied (read-only for you)", errno.EPERM: "operation not permitted",
              errno.EROFS: "read-only file system"}.get(e.errno, e.strerror)
    return StreeError(f"{path}: cannot write: {reason}; nothing written", code=CONFLICT)


def write_all(fd, payload):
    view = memoryview(payload)
    while view:
        n = os.write(fd, view)  # one write; the loop only resumes a short write
        view = view[n:]


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
    import tempfile  # (3 ms: shutil, random, bz2, lzma; only a rewrite needs it, not an append)

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
        raise open_error(directory, e) from None
    try:
        try:
            os.fchmod(fd, mode)
            if isinstance(data, (bytes, bytearray, memoryview)):
                write_all(fd, data)
            else:  # an iterable of bytes chunks (stree export writes a page as it renders it)
                for chunk in data:
                    write_all(fd, chunk)
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
            raise open_error(path, e) from None
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
    refuse_read_only(path, st)
    return write_atomic(os.path.realpath(path), data, mode=st.st_mode & 0o7777)  # through a link
