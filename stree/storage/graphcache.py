"""Rendered `log --graph` output, kept for the next identical command.

Drawing a graph means every row's preview, its connectors and its record: for
10,000 entries that is most of a command's time even with the index warm. The
output of a `log --graph` into a pipe depends only on the session file, the
options and $HOME (previews shorten paths under it), so it is kept next to the
index, one file per session and set of options:

    <cache>/<dev>-<inode>-<crc of the options>.graph

and printed again as it is while the session file is the same file, with the
same size, mtime, ctime and first and last bytes (the index's own test of
"unchanged"). Any other change renders again. An output drawn from a file changed
in the same tick of the file system's clock is not kept (a change in that tick
could leave every timestamp as it was: git's "racily clean"), and the kept bytes
and their description carry CRCs checked before anything is printed. Only complete runs that printed nothing on
stderr are kept; a terminal (colours cut to its width, a pager) always renders.

This module is read on the fast path: it imports nothing heavier than os.
"""

import marshal
import os
from binascii import crc32

from .. import __version__
from .cachedir import cache_dir, write_file

FORMAT = 3  # 2: ctime in the identity, CRCs of the description and of the output; 3: the rows' state
MAGIC = b"stree-graph\n"
SUFFIX = ".graph"
WINDOW = 4096  # bytes compared at the start and the end of the session file
KEEP = 8  # option sets kept per session file (the oldest go first)
MAX_TEXT = 64 << 20  # larger outputs are not kept


def identity(fd, st=None):
    """What the output depends on in the session file: which file, how long, when
    written, and its first and last bytes."""
    if st is None:
        st = os.fstat(fd)
    size = st.st_size
    head = crc32(os.pread(fd, min(WINDOW, size), 0))
    tail = crc32(os.pread(fd, min(WINDOW, size), max(0, size - WINDOW)))
    return (st.st_dev, st.st_ino, size, st.st_mtime_ns, st.st_ctime_ns, head, tail)


class Capture:
    """What a `log --graph` writes to stdout, as UTF-8, kept for store() up to MAX_TEXT bytes;
    past that (or for text UTF-8 cannot carry) nothing is kept: text() is None."""

    def __init__(self):
        self.parts = []
        self.size = 0

    def append(self, text):
        if self.parts is None:
            return
        try:
            data = text.encode("utf-8")  # (a lone surrogate, printed replaced, is not kept)
        except UnicodeError:
            self.parts = None
            return
        self.size += len(data)
        if self.size > MAX_TEXT:
            self.parts = None  # too long to keep: the drawing streams on, unkept
            return
        self.parts.append(data)

    def text(self):
        return None if self.parts is None else b"".join(self.parts)


def _open_regular(path):
    """A descriptor of `path` if it is a regular file, else None (opened without blocking:
    a FIFO is left to the full command, which refuses it)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):
        return None  # (EAGAIN: another stree's write lease; the full command waits for it)
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def applies(no_cache=False, terminal=False):
    """Whether output may be kept and reused: into a pipe or file, on a terminal too with
    `terminal` (its rows are cut to its width: the caller adds it to the options), and the
    cache not switched off."""
    import sys

    return not no_cache and not os.environ.get("STREE_NO_CACHE") and (terminal or not sys.stdout.isatty())


def options(revision, filter_, search, max_count, reverse, no_ids, json_mode, fmt, nul, color):
    """What a `log --graph` output into a pipe depends on besides the file and $HOME: the
    command's options as click gives them (stree.fast reads the same from argv)."""
    return ("log --graph", revision, filter_, search, max_count, reverse, no_ids, json_mode, fmt, nul,
            color == "always")


def _key(options):
    home = os.environ.get("HOME") or os.environ.get("USERPROFILE") or ""
    return (FORMAT, __version__, _code_stamp(), home) + tuple(options)


PACKAGES = ("format", "storage", "core", "writing", "output", "commands")  # stree's own code: what draws


def _code_stamp():
    """When stree's own code last changed (an edited checkout draws differently)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    stamp = 0
    for directory in (here, *(os.path.join(here, sub) for sub in PACKAGES)):
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if entry.name.endswith(".py"):
                        stamp = max(stamp, entry.stat().st_mtime_ns)
        except OSError:
            pass
    return stamp


def _target(st, key):
    return os.path.join(cache_dir(), f"{st.st_dev:x}-{st.st_ino:x}-{crc32(marshal.dumps(key)):08x}{SUFFIX}")


def lookup(path, options):
    """A previous run's output for these options, if the file is as it was then:
    (open graph file, offset, length) for write(), or None."""
    fd = _open_regular(path)
    if fd is None:
        return None
    f = None
    try:
        st = os.fstat(fd)
        key = _key(options)
        f = open(_target(st, key), "rb")
        meta, start = _read_meta(f)
        if meta is None or meta.get("key") != key or meta.get("identity") != list(identity(fd, st)):
            return None
        length = meta["length"]
        if os.fstat(f.fileno()).st_size != start + length + meta.get("rows", 0):
            return None  # (written by a temp file and a rename: only damage makes it shorter)
        crc = 0
        left = length
        while left > 0:  # the whole output is checked before a byte of it is printed
            chunk = f.read(min(1 << 20, left))
            if not chunk:
                return None
            crc = crc32(chunk, crc)
            left -= len(chunk)
        if crc != meta.get("crc"):
            return None
        found, f = (f, start, length), None
        return found
    except Exception:  # missing, unreadable, damaged: render instead
        return None
    finally:
        os.close(fd)
        if f is not None:
            f.close()


def lookup_grown(path, options):
    """A previous run's output for these options when the file has only grown since (the same
    file, its old bytes as they were, complete lines then): (text, rows, entries then), or None."""
    fd = _open_regular(path)
    if fd is None:
        return None
    try:
        st = os.fstat(fd)
        key = _key(options)
        with open(_target(st, key), "rb") as f:
            meta, start = _read_meta(f)
            if meta is None or meta.get("key") != key or not meta.get("rows") or not meta.get("ended"):
                return None
            dev, ino, size, _, _, head, tail = meta["identity"]
            if (dev, ino) != (st.st_dev, st.st_ino) or not 0 < size < st.st_size:
                return None
            if crc32(os.pread(fd, min(WINDOW, size), 0)) != head \
                    or crc32(os.pread(fd, min(WINDOW, size), max(0, size - WINDOW))) != tail:
                return None  # not the kept file plus appended bytes
            data = f.read(meta["length"])
            rows = f.read(meta["rows"])
            if crc32(data) != meta["crc"] or crc32(rows) != meta["rows_crc"] or f.read(1):
                return None
            return data, rows, meta["entries"]
    except Exception:  # missing, unreadable, damaged: render instead
        return None
    finally:
        os.close(fd)


def takes_utf8_bytes(out):
    """Whether UTF-8 bytes may go straight to `out`'s buffer and print what stree.output would
    print for their text (a UTF-8 stream, "\n" line ends); else they are written as text."""
    import codecs

    try:
        return codecs.lookup(out.encoding or "").name == "utf-8" and os.linesep == "\n" \
            and getattr(out, "buffer", None) is not None
    except LookupError:
        return False


def write(found):
    """Print what lookup() found: the UTF-8 bytes stree.output.write printed for its text."""
    import sys

    f, start, length = found
    out = sys.stdout
    utf8 = takes_utf8_bytes(out)
    with f:
        if not utf8:
            from ..format.terminal import write as write_text

            f.seek(start)
            write_text(f.read(length).decode("utf-8"))
            return
        out.flush()
        out.buffer.flush()
        try:
            fd = out.buffer.fileno()
        except Exception:  # not a real file (a test harness's stdout)
            fd = None
        pos = start
        end = start + length
        if fd is not None and hasattr(os, "sendfile"):
            try:
                while pos < end:  # the kernel copies: nothing passes through this process
                    sent = os.sendfile(fd, f.fileno(), pos, end - pos)
                    if not sent:
                        break
                    pos += sent
            except OSError as e:
                import errno

                if e.errno not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSOCK, errno.EOPNOTSUPP):
                    raise
        f.seek(pos)
        while pos < end:
            chunk = f.read(min(1 << 20, end - pos))
            if not chunk:
                break
            out.buffer.write(chunk)
            pos += len(chunk)
        out.buffer.flush()


def _read_meta(f):
    head = f.read(len(MAGIC) + 8)
    if len(head) != len(MAGIC) + 8 or not head.startswith(MAGIC):
        return None, 0
    size = int.from_bytes(head[len(MAGIC):len(MAGIC) + 4], "little")
    if size > 1 << 20:
        return None, 0
    raw = f.read(size)
    if len(raw) != size or crc32(raw) != int.from_bytes(head[len(MAGIC) + 4:], "little"):
        return None, 0  # damaged: checked before it is decoded
    meta = marshal.loads(raw)
    return (meta, len(head) + size) if isinstance(meta, dict) else (None, 0)


def read_meta(full):
    """The stored description of a graph file (for `stree cache`), or None."""
    try:
        with open(full, "rb") as f:
            return _read_meta(f)[0]
    except Exception:
        return None


def is_stale(meta):
    """True when a graph file no longer matches its session file."""
    if meta is None or meta.get("format") != FORMAT:
        return True
    try:
        fd = _open_regular(meta["path"])
    except (KeyError, TypeError):
        return True
    if fd is None:
        return True
    try:
        return list(identity(fd)) != meta.get("identity")
    except OSError:
        return True
    finally:
        os.close(fd)


def store(session, options, text, rows=None):
    """Keep `text`, printed for `options` from `session` as it was read, and `rows` (bytes: what
    stree.output.graphout needs to patch it after an append); failures are silent (the next
    run renders again)."""
    fd = session.fd
    if fd is None or session.seen is None or len(text) > MAX_TEXT:
        return
    try:
        st = os.fstat(fd)
        if (st.st_size, st.st_mtime_ns) != session.seen or st.st_size != session.size \
                or (session.file_stat is not None and st.st_ctime_ns != session.file_stat.st_ctime_ns):
            return  # the file changed while we drew it: what we printed matches no file state
        if _racy(st):
            return  # changed in this tick of the clock: a change in the same tick could go unseen
        key = _key(options)
        target = _target(st, key)
        data = text if isinstance(text, bytes) else text.encode("utf-8")  # (a lone surrogate: UnicodeError)
        rows = rows or b""
        ended = st.st_size > 0 and os.pread(fd, 1, st.st_size - 1) == b"\n"
        meta = marshal.dumps({"format": FORMAT, "key": key, "identity": list(identity(fd, st)),
                              "path": os.path.abspath(session.path), "length": len(data), "crc": crc32(data),
                              "rows": len(rows), "rows_crc": crc32(rows), "entries": len(session.nodes),
                              "ended": ended})
        write_file(target, (MAGIC, len(meta).to_bytes(4, "little"), crc32(meta).to_bytes(4, "little"), meta, data,
                            rows))
        _prune(os.path.dirname(target), f"{st.st_dev:x}-{st.st_ino:x}-")
    except Exception:
        pass


def _racy(st):
    from .index import racy

    return racy(st)


def _prune(directory, prefix):
    """Keep the KEEP newest graph files of one session file."""
    from .cachedir import own_files

    found = []
    for name, temp in own_files(directory):  # stree's own names only, regular files only
        if not temp and name.startswith(prefix) and name.endswith(SUFFIX):
            full = os.path.join(directory, name)
            try:
                found.append((os.lstat(full).st_mtime_ns, full))
            except OSError:
                pass
    found.sort(reverse=True)
    for _, full in found[KEEP:]:
        try:
            os.unlink(full)
        except OSError:
            pass
