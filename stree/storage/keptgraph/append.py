"""A patched `log --graph` output added to the end of the kept file it patches
(stree.storage.keptgraph.file: the layout), so that a patch
writes what it drew, never the ranges it keeps. (The same act on another file as
stree.writing.append, which appends entries to a session file.)"""

import os
from zlib import crc32

from .file import END, MAGIC, TRAILER, TooLong, Writer, block_size

HELD = 8 << 20  # drawn bytes an Appender holds before it writes a new file


class Appender:
    """A patched output added to the end of the kept file it patches (`kept`, the same target),
    in place of a new file: its drawn bytes, its rows and a meta whose extents say which ranges
    of the file the output is; the ranges copied from `kept` are never copied. Written at
    commit(), under a lock, only if the file is still as `kept` read it; readers of the older
    output read ranges before its end, which never change. When the file would carry too many
    bytes no output uses (older rows, rows drawn over) or too many blocks, or cannot be locked,
    the output goes to a new file as a Writer writes it."""

    def __init__(self, kept, target, most):
        self.kept = kept
        self.target = target
        self.most = most
        self.parts = []  # bytes drawn, or (a, b): bytes a..b of kept's data
        self.own = 0
        self.size = 0
        self.writer = None  # a Writer once the drawn bytes are too many to hold
        self.in_place = False  # added to the kept file (commit)

    def _grow(self, n):
        if self.size + n > self.most:
            raise TooLong
        self.size += n

    def add(self, data):
        """Bytes drawn now: where they are once a Writer writes them (Writer.add), else None
        (held: added to the kept file at commit)."""
        if self.writer is not None:
            return self.writer.add(data)
        if data:
            self._grow(len(data))
            self.parts.append(bytes(data))
            self.own += len(data)
            if self.own > HELD:
                self._to_writer()
        return None

    def copy(self, kept, a, b):
        if self.writer is not None:
            return self.writer.copy(kept, a, b)
        if b > a:
            if kept is not self.kept:
                self._to_writer()
                return self.writer.copy(kept, a, b)
            self._grow(b - a)
            self.parts.append((a, b))

    def _to_writer(self):
        writer = Writer(self.target, self.most)
        for part in self.parts:
            if isinstance(part, tuple):
                writer.copy(self.kept, *part)
            else:
                writer.add(part)
        self.writer, self.parts = writer, []

    def commit(self, rows, meta):
        if self.writer is None and self._append(rows, meta):
            self.in_place = True  # (no new file: nothing for the store to prune)
            return
        if self.writer is None:
            self._to_writer()
        self.writer.commit(rows, meta)

    def _append(self, rows, meta):
        """Add the output to the kept file; False when it is to go to a new file instead."""
        import marshal

        kept = self.kept
        blocks, extents = [], []
        start = kept.size
        own = pending = crc = 0
        for part in self.parts:
            if isinstance(part, tuple):
                if pending:
                    blocks.append((pending, crc))
                    pending = crc = 0
                blocks.extend(kept.pieces(*part))
                found = kept.ranges(*part)
            else:
                crc = crc32(part, crc)
                pending += len(part)
                found = [(start + own, len(part))]
                own += len(part)
            for offset, n in found:
                if extents and extents[-1][0] + extents[-1][1] == offset:
                    extents[-1] = (extents[-1][0], extents[-1][1] + n)
                else:
                    extents.append((offset, n))
        if pending:
            blocks.append((pending, crc))
        meta = dict(meta, length=self.size, blocks=blocks, rows=len(rows), rows_crc=crc32(rows), start=start,
                    own=own, rows_at=start + own, extents=extents)
        raw = marshal.dumps(meta)
        end = start + own + len(rows) + len(raw) + TRAILER
        if end - len(MAGIC) - self.size > self.size // 4 + (1 << 20) or len(blocks) > 2 * (self.size // block_size()) + 256 \
                or not hasattr(os, "pwrite"):
            return False  # mostly bytes no output uses, or cut small: written whole again
        try:
            import fcntl

            fd = os.open(self.target, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0))
        except (ImportError, OSError):
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # (another stree adding to it: a new file)
            st, was = os.fstat(fd), os.fstat(kept.fd)
            if (st.st_dev, st.st_ino, st.st_size) != (was.st_dev, was.st_ino, start):
                return False
            try:
                pos = start
                for data in [*(p for p in self.parts if not isinstance(p, tuple)), rows,
                             raw + len(raw).to_bytes(4, "little") + crc32(raw).to_bytes(4, "little") + END]:
                    view = memoryview(data)
                    while view:
                        written = os.pwrite(fd, view, pos)
                        view, pos = view[written:], pos + written
            except BaseException:
                os.ftruncate(fd, start)  # (the older output, whole again)
                raise
            return True
        except OSError:
            return False
        finally:
            os.close(fd)  # (the lock goes with it)

    def discard(self):
        if self.writer is not None:
            self.writer.discard()
