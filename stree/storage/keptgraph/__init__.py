"""Kept `log --graph` output at the storage depth: rendered output kept for the next identical
command, and its file (.file). The same concept at the output depth, and the calling sequence
of both, is stree.output.keptgraph (which draws and patches; this package only keeps).

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

The output goes to its file as it is drawn (Capture, stree.storage.keptgraph.file), never held
in memory, up to file.limit() (4 times the session file: 64 MiB to 512 MiB); rows drawn as bytes
are printed from there (file.copy_range: the kernel hands the file's pages to stdout); a patch
after an append (stree.output.keptgraph.patch) gives its pieces to emit(): drawn bytes,
and ranges of the kept file that the kernel copies to stdout; the patched output is added
to the end of the same kept file (.append: its drawn bytes and which ranges it keeps), so
that its cost follows the change, not the session.

This module is read on the fast path: it imports nothing heavier than os.
"""

import marshal
import os
from zlib import crc32

from ... import __version__
from ..cachedir import cache_dir
from . import file

FORMAT = 5  # 2: ctime in the identity, CRCs; 3: the rows' state; 4: written as drawn, a CRC per block
#            (keptgraph.file); 5: a patch added to the end of the file it patches (keptgraph.append)
SUFFIX = ".graph"
WINDOW = 4096  # bytes compared at the start and the end of the session file
KEEP = 8  # option sets kept per session file (the oldest go first)


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
    """What a `log --graph` writes to stdout, written as UTF-8 to a temp file of the cache as it
    is drawn (file.Writer), up to file.limit() of the session file's size; past that
    (or for text UTF-8 cannot carry, or a write that fails) nothing is kept: `dropped`. With `base`
    (the file.Kept a patch starts from, kept for the same options) the output is added to that
    file instead (.append.Appender): the ranges copied from it are not written again."""

    def __init__(self, session, options, base=None):
        self.writer = None
        self.dropped = True
        try:
            st = os.fstat(session.fd)
            target = _target(st, _key(options))
            if base is not None and base.path == target and base.fd is not None:  # a patch of it: added to it
                from .append import Appender

                self.writer = Appender(base, target, file.limit(st.st_size))
            else:
                self.writer = file.Writer(target, file.limit(st.st_size))
            self.dropped = False
        except Exception:
            pass

    def append(self, text):
        if self.dropped:
            return
        try:
            data = text.encode("utf-8")  # (a lone surrogate, printed replaced, is not kept)
        except UnicodeError:
            self.drop()
            return
        self.add(data)

    def add(self, data, printing=None):
        """Bytes printed as they are. With `printing` (stdout's descriptor), they are printed
        here, from the kept file once written (file.copy_range: the kernel hands its pages to
        stdout, one copy of the output fewer): whether they were (False: not kept, or kept
        where they cannot be printed from; the caller writes them)."""
        if not self.dropped:
            try:
                where = self.writer.add(data)
            except Exception:  # too long to keep, the disk full: the drawing goes on, unkept
                self.drop()
                return False
            if printing is not None and where is not None:
                file.copy_range(*where, len(data), printing, socket_like=True)
                return True
        return False

    def copy(self, kept, a, b):
        """Bytes a..b of a kept file's output, printed as they were."""
        if not self.dropped:
            try:
                self.writer.copy(kept, a, b)
            except Exception:
                self.drop()

    def drop(self):
        self.dropped = True
        if self.writer is not None:
            self.writer.discard()

    def close(self):
        """Remove what was written unless it was stored (an interrupted drawing)."""
        if self.writer is not None:
            self.writer.discard()


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
    command's options as click gives them (stree.entrypoint reads the same from argv)."""
    return ("log --graph", revision, filter_, search, max_count, reverse, no_ids, json_mode, fmt, nul,
            color == "always")


def _key(options):
    home = os.environ.get("HOME") or os.environ.get("USERPROFILE") or ""
    return (FORMAT, __version__, _code_stamp(), home) + tuple(options)


PACKAGES = ("format", "storage", "storage/keptgraph", "core", "writing", "output", "output/keptgraph",
            "commands")  # stree's own code: what draws


_STAMP = []


def _code_stamp():
    """When stree's own code last changed (an edited checkout draws differently); read once."""
    if not _STAMP:
        _STAMP.append(_scan_code())
    return _STAMP[0]


def _scan_code():
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # stree/
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


def find(path, options):
    """A previous run's output for these options, its every block checked before a byte of it is
    printed: ("same", file.Kept) when the session file is as it was then; ("grown", (Kept,
    its rows' state, entries then)) when the file only grew since (the same file, its old bytes
    as they were, complete lines then); else None."""
    fd = _open_regular(path)
    if fd is None:
        return None
    kept = None
    try:
        st = os.fstat(fd)
        key = _key(options)
        kept = file.open_kept(_target(st, key))
        if kept is None or kept.meta.get("key") != key:
            return None
        meta = kept.meta
        if meta.get("identity") == list(identity(fd, st)):
            if not kept.verify():  # the whole output is checked before a byte of it is printed
                return None
            found, kept = ("same", kept), None
            return found
        if not meta.get("rows") or not meta.get("ended"):
            return None
        dev, ino, size, _, _, head, tail = meta["identity"]
        if (dev, ino) != (st.st_dev, st.st_ino) or not 0 < size < st.st_size:
            return None
        if crc32(os.pread(fd, min(WINDOW, size), 0)) != head \
                or crc32(os.pread(fd, min(WINDOW, size), max(0, size - WINDOW))) != tail:
            return None  # not the kept file plus appended bytes
        rows = kept.rows()
        if rows is None or not kept.verify():
            return None
        found, kept = ("grown", (kept, rows, meta["entries"])), None
        return found
    except Exception:  # missing, unreadable, damaged: render instead
        return None
    finally:
        os.close(fd)
        if kept is not None:
            kept.close()


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
    """Print the output find() found ("same"): the UTF-8 bytes stree.output.write printed for its text."""
    try:
        emit([(0, found.length)], found, None)
    finally:
        found.close()


def emit(pieces, kept, capture):
    """Print `pieces` (bytes drawn now, or (a, b): bytes a..b of `kept`'s output) as
    stree.output.write prints their text, and hand them to `capture` (a Capture, or None).
    The kept bytes go from file to stdout in the kernel where it can (nothing in memory)."""
    import sys

    out = sys.stdout
    utf8 = takes_utf8_bytes(out)
    fd = None
    widened = False
    if utf8:
        out.flush()
        try:
            fd = out.buffer.fileno()
        except Exception:  # not a real file (a test harness's stdout)
            fd = None
    for piece in pieces:
        if isinstance(piece, tuple):
            a, b = piece
            if fd is not None:
                out.buffer.flush()
                if b - a > 1 << 20 and not widened:
                    file.widen_pipe(fd)
                    widened = True
                for offset, n in kept.ranges(a, b):
                    file.copy_range(kept.fd, offset, n, fd, socket_like=True)
            else:
                _write_range(out, kept, a, b, utf8)
            if capture is not None:
                capture.copy(kept, a, b)
        else:
            if utf8:
                out.buffer.write(piece)
            else:
                from ...format.terminal import write as write_text

                write_text(piece.decode("utf-8"))
            if capture is not None:
                capture.add(piece)
    if utf8:
        out.buffer.flush()


def _write_range(out, kept, a, b, utf8):
    """Bytes a..b of `kept`'s output through stdout's buffer, or as text, 1 MiB at a time."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    while a < b:
        data = kept.read(a, min(b, a + (1 << 20)))
        a += len(data)
        if utf8:
            out.buffer.write(data)
        else:
            from ...format.terminal import write as write_text

            write_text(decoder.decode(data, a >= b))


def read_meta(full):
    """The stored description of a graph file (for `stree cache`), or None."""
    return file.read_meta(full)


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


def store(session, options, capture, rows=None):
    """Keep what `capture` took of the output printed for `options` from `session` as it was
    read, and `rows` (bytes: what stree.output.keptgraph needs to patch it after an append);
    failures are silent (the next run renders again)."""
    fd = session.fd
    if fd is None or session.seen is None or capture is None or capture.dropped:
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
        if target != capture.writer.target:
            return
        ended = st.st_size > 0 and os.pread(fd, 1, st.st_size - 1) == b"\n"
        capture.writer.commit(rows or b"", {"format": FORMAT, "key": key, "identity": list(identity(fd, st)),
                                           "path": os.path.abspath(session.path), "entries": len(session.nodes),
                                           "ended": ended})
        if not getattr(capture.writer, "in_place", False):  # (a patch added to its file: no file more)
            _prune(os.path.dirname(target), f"{st.st_dev:x}-{st.st_ino:x}-", capture.writer.most)
    except Exception:
        pass
    finally:
        capture.close()


def _racy(st):
    from ..index import racy

    return racy(st)


def _prune(directory, prefix, most):
    """Keep the KEEP newest graph files of one session file, and of those only as many as
    hold twice the longest output it may keep (`most`): the newest always."""
    from ..cachedir import own_files

    found = []
    for name, temp in own_files(directory):  # stree's own names only, regular files only
        if not temp and name.startswith(prefix) and name.endswith(SUFFIX):
            full = os.path.join(directory, name)
            try:
                st = os.lstat(full)
                found.append((st.st_mtime_ns, st.st_size, full))
            except OSError:
                pass
    found.sort(reverse=True)
    total = 0
    for k, (_, size, full) in enumerate(found):
        total += size
        if k >= KEEP or (k and total > 2 * most):
            try:
                os.unlink(full)
            except OSError:
                pass
