"""The file a kept `log --graph` output lives in (stree.storage.keptgraph): written as the
output is drawn, read and patched without ever holding the output in memory.

    MAGIC | data (the output, UTF-8) | rows (stree.output.keptgraph's state) | meta | trailer

The trailer ends the file: the meta's length and its CRC-32, then END. The meta (marshal)
gives the data's length, a CRC-32 for each block of it (BLOCK bytes as drawn; any length
once patched), the rows' length and CRC-32. Every byte is covered: the lengths must add up
to the file's size exactly and every CRC must match before a byte of the data is printed.

A patch may instead be added to the end of the file it patches (stree.storage.keptgraph.append):
its drawn bytes, rows, meta and trailer after the older ones, the meta's extents saying which
ranges of the file the output is, in order (`start`, `own`: where its own bytes begin, how many).
The blocks' CRCs follow the output, wherever its bytes lie; the older output's bytes never change.

A Writer fills a temp file beside the target (stree.storage.cachedir.create_temp) and
renames it over the target when the drawing is complete; a range of an older kept file is
copied file to file by the kernel (copy_file_range), its blocks' CRCs carried over (only a
block cut by the range is read again), and sent to stdout the same way (sendfile).
"""

import os
from zlib import crc32  # (binascii's is the same CRC: one module more on a patched log --graph)

MAGIC = b"stree-graph\n"
END = b"\ngr\n"
TRAILER = 12  # meta length (4), meta CRC-32 (4), END
MAX_META = 64 << 20
FLOOR = 64 << 20  # a kept output may always be this long,
FACTOR = 4  # or this many times the session file,
CEILING = 512 << 20  # never longer than this (a drawing past it wrote this much for nothing)
SPLIT = 16 << 20  # an output this long is verified by two threads
# (STREE_GRAPH_MAX overrides all three: the tests' knob)


def block_size():
    """Bytes of output under one CRC while drawing ($STREE_GRAPH_BLOCK: the tests' knob)."""
    try:
        return max(1, int(os.environ.get("STREE_GRAPH_BLOCK") or (1 << 20)))
    except ValueError:
        return 1 << 20


def limit(session_size):
    """The longest output kept for a session file of `session_size` bytes."""
    try:
        override = os.environ.get("STREE_GRAPH_MAX")
        if override:
            return int(override)
    except ValueError:
        pass
    return min(CEILING, max(FLOOR, FACTOR * session_size))


class TooLong(Exception):
    """The output grew past its limit: it is not kept."""


_BUFFER = []


def crc_range(fd, offset, length, crc=0, buffer=None, fn=crc32):
    """CRC-32 of `length` bytes at `offset` of `fd`, read 1 MiB at a time into one buffer (the
    process's RSS stays small; cheaper than mapping the file: no page faults). zlib's crc32 lets
    other threads run meanwhile (Kept.verify)."""
    if not hasattr(os, "preadv"):  # (not every system has it)
        while length > 0:
            data = os.pread(fd, min(1 << 20, length), offset)
            if not data:
                raise OSError("short read")
            crc = fn(data, crc)
            offset += len(data)
            length -= len(data)
        return crc
    if buffer is None:
        if not _BUFFER:
            _BUFFER.append(memoryview(bytearray(1 << 20)))
        buffer = _BUFFER[0]
    while length > 0:
        got = os.preadv(fd, [buffer[:min(len(buffer), length)]], offset)
        if not got:
            raise OSError("short read")
        crc = fn(buffer[:got], crc)
        offset += got
        length -= got
    return crc


class Kept:
    """An opened kept file, its layout checked (not yet its data: verify())."""

    def __init__(self, fd, meta, size=0, path=None):
        self.fd = fd
        self.meta = meta
        self.size = size  # of the file, when opened (an Appender adds to it: stree.storage.keptgraph.file)
        self.path = path
        self.length = meta["length"]
        self.blocks = meta["blocks"]  # [(length, crc)] in order, covering the data
        self.extents = meta.get("extents") or [(len(MAGIC), self.length)]  # the data: (offset in the file, length)
        self._starts = None

    def close(self):
        fd, self.fd = self.fd, None  # (forgotten first: never closed twice; stree.storage.session.Session.close)
        if fd is not None:
            os.close(fd)

    def ranges(self, a, b):
        """[(offset in the file, length)] holding bytes a..b of the data, in order."""
        if len(self.extents) == 1:
            return [(self.extents[0][0] + a, b - a)] if b > a else []
        if self._starts is None:
            from itertools import accumulate

            self._starts = list(accumulate((n for _, n in self.extents), initial=0))
        from bisect import bisect_right

        out = []
        k = bisect_right(self._starts, a) - 1
        while a < b and k < len(self.extents):
            offset, n = self.extents[k]
            start = self._starts[k]
            take = min(b, start + n) - a
            if take > 0:
                out.append((offset + a - start, take))
                a += take
            k += 1
        return out

    def crc(self, a, b, crc=0, buffer=None, fn=crc32):
        """CRC-32 of bytes a..b of the data."""
        for offset, n in self.ranges(a, b):
            crc = crc_range(self.fd, offset, n, crc, buffer, fn)
        return crc

    def verify(self):
        """True when every block of the data has its CRC: a long output's second half checked
        by a second thread meanwhile (reading and zlib's CRC let the other run)."""
        if self.length < SPLIT or len(self.blocks) < 2:
            return self._verify(0, self.blocks)
        import threading

        half, pos, k = self.length // 2, 0, 0
        while pos < half:
            pos += self.blocks[k][0]
            k += 1
        got = []
        other = threading.Thread(target=lambda: got.append(self._verify(pos, self.blocks[k:],
                                                                        memoryview(bytearray(1 << 20)))))
        other.start()
        try:
            first = self._verify(0, self.blocks[:k])
        finally:
            other.join()
        return first and got == [True]

    def _verify(self, pos, blocks, buffer=None, fn=crc32):
        try:
            for length, crc in blocks:
                if self.crc(pos, pos + length, 0, buffer, fn) != crc:
                    return False
                pos += length
        except OSError:
            return False
        return True

    def rows(self):
        """The rows' state as kept, or None when damaged."""
        n = self.meta["rows"]
        data = os.pread(self.fd, n, self.meta.get("rows_at", len(MAGIC) + self.length))
        return data if len(data) == n and crc32(data) == self.meta["rows_crc"] else None

    def read(self, a, b):
        """Bytes a..b of the data (a terminal's copy: it is held for the pager anyway)."""
        parts = []
        for offset, n in self.ranges(a, b):
            data = os.pread(self.fd, n, offset)
            if len(data) != n:
                raise OSError("short read")
            parts.append(data)
        return b"".join(parts)

    def pieces(self, a, b):
        """(length, crc) of blocks covering bytes a..b of the data: the kept blocks inside it as
        they are, the parts of those it cuts read again."""
        out = []
        pos = 0
        for length, crc in self.blocks:
            end = pos + length
            if end > a and pos < b:
                lo, hi = max(a, pos), min(b, end)
                out.append((length, crc) if (lo, hi) == (pos, end) else (hi - lo, self.crc(lo, hi)))
            if end >= b:
                break
            pos = end
        return out


def open_kept(path):
    """A Kept for the file at `path`, or None when it is missing or its layout is damaged."""
    import marshal

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        if size < len(MAGIC) + TRAILER or os.pread(fd, len(MAGIC), 0) != MAGIC:
            raise ValueError
        tail = os.pread(fd, TRAILER, size - TRAILER)
        n = int.from_bytes(tail[:4], "little")
        if tail[8:] != END or n > MAX_META or n > size - TRAILER - len(MAGIC):
            raise ValueError
        raw = os.pread(fd, n, size - TRAILER - n)
        if len(raw) != n or crc32(raw) != int.from_bytes(tail[4:8], "little"):
            raise ValueError  # damaged: checked before it is decoded
        meta = marshal.loads(raw)
        if not isinstance(meta, dict) or sum(length for length, _ in meta["blocks"]) != meta["length"]:
            raise ValueError
        if "extents" in meta:  # appended to an older output (Appender): its own bytes, then the rows
            start, own, extents = meta["start"], meta["own"], meta["extents"]
            if meta["rows_at"] != start + own or start + own + meta["rows"] + n + TRAILER != size \
                    or sum(length for _, length in extents) != meta["length"] \
                    or any(offset < len(MAGIC) or length < 0 or offset + length > start + own
                           for offset, length in extents):
                raise ValueError
        elif len(MAGIC) + meta["length"] + meta["rows"] + n + TRAILER != size:
            raise ValueError
        found, fd = Kept(fd, meta, size, path), None
        return found
    except Exception:
        return None
    finally:
        if fd is not None:
            os.close(fd)


def read_meta(path):
    kept = open_kept(path)
    if kept is None:
        return None
    kept.close()
    return kept.meta


class Writer:
    """A kept file being written: a temp file beside `target`, renamed over it by commit()."""

    def __init__(self, target, most):
        self.target = target
        self.most = most
        self.fd = None
        self.tmp = None
        self.size = 0
        self.blocks = []
        self.crc = 0
        self.open = 0  # bytes under self.crc, not yet a block
        self.block = block_size()

    def _start(self):
        from ..cachedir import create_temp

        self.fd, self.tmp = create_temp(self.target, readable=True)
        _write_all(self.fd, MAGIC)

    def _grow(self, n):
        if self.size + n > self.most:
            raise TooLong
        if self.fd is None:
            self._start()
        self.size += n

    def _close_block(self):
        if self.open:
            self.blocks.append((self.open, self.crc))
            self.crc = self.open = 0

    def add(self, data):
        """Append bytes drawn now: where they are, (descriptor, offset) in the temp file
        (copy_range() prints them from there)."""
        if not data:
            return None
        self._grow(len(data))
        at = len(MAGIC) + self.size - len(data)
        _write_all(self.fd, data)
        view = memoryview(data)
        while view:  # blocks of self.block bytes (the last one open)
            part = view[:self.block - self.open]
            self.crc = crc32(part, self.crc)
            self.open += len(part)
            view = view[len(part):]
            if self.open >= self.block:
                self._close_block()
        return self.fd, at

    def copy(self, kept, a, b):
        """Append bytes a..b of a kept file's data, copied by the kernel where it can."""
        if b <= a:
            return
        self._grow(b - a)
        self._close_block()
        self.blocks.extend(kept.pieces(a, b))
        for offset, n in kept.ranges(a, b):
            copy_range(kept.fd, offset, n, self.fd)

    def commit(self, rows, meta):
        """Write the rows and the meta, and rename the file into place."""
        import marshal

        if self.fd is None:
            self._start()
        self._close_block()
        if len(self.blocks) > 2 * (self.size // self.block) + 256:  # cut small by many patches:
            self.blocks = []  # CRCs of whole blocks again, read back from the new file
            for pos in range(0, self.size, self.block):
                length = min(self.block, self.size - pos)
                self.blocks.append((length, crc_range(self.fd, len(MAGIC) + pos, length)))
        meta = dict(meta, length=self.size, blocks=self.blocks, rows=len(rows), rows_crc=crc32(rows))
        raw = marshal.dumps(meta)
        _write_all(self.fd, rows)
        _write_all(self.fd, raw + len(raw).to_bytes(4, "little") + crc32(raw).to_bytes(4, "little") + END)
        fd, self.fd = self.fd, None
        os.close(fd)
        # the older file goes first, then the new one is renamed in: a reader finds a whole file or
        # none (and draws again). Renamed over an older file, ext4 (auto_da_alloc) would write the
        # new one out to disk before the rename returns: for a kept output of 200 MB, 150 ms.
        try:
            os.unlink(self.target)  # (a link at `target` is removed, never followed)
        except FileNotFoundError:
            pass
        os.replace(self.tmp, self.target)
        self.tmp = None

    def discard(self):
        """Remove the temp file (nothing is kept)."""
        fd, self.fd = self.fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            self.tmp = None


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def widen_pipe(fd):
    """Make the pipe on `fd` hold 1 MiB (Linux; the most an unprivileged process may ask), not
    64 KiB: megabytes of output go through in a few writes, not one turn of the two processes
    every 64 KiB. A pipe that holds more already, or anything but a pipe, is left as it is."""
    import stat

    try:
        import fcntl

        if stat.S_ISFIFO(os.fstat(fd).st_mode) and hasattr(fcntl, "F_SETPIPE_SZ") \
                and fcntl.fcntl(fd, getattr(fcntl, "F_GETPIPE_SZ", 1032)) < 1 << 20:
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 1 << 20)
    except (ImportError, OSError):  # (no fcntl, over the user's pipe quota: it stays as it was)
        pass


def copy_range(src, offset, length, dst, socket_like=False):
    """Copy `length` bytes at `offset` of file `src` to the current position of `dst` (a file,
    or with `socket_like`, by sendfile, stdout: a pipe, a socket or a file): in the kernel where
    it can, else through 1 MiB reads."""
    import errno

    end = offset + length
    call = getattr(os, "sendfile" if socket_like else "copy_file_range", None)
    if call is not None:
        try:
            while offset < end:
                if socket_like:
                    sent = call(dst, src, offset, end - offset)
                else:
                    sent = call(src, dst, end - offset, offset)
                if not sent:
                    break
                offset += sent
        except OSError as e:
            if e.errno not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSOCK, errno.EOPNOTSUPP, errno.EXDEV,
                               errno.EBADF):
                raise
    while offset < end:
        data = os.pread(src, min(1 << 20, end - offset), offset)
        if not data:
            raise OSError(errno.EIO, "a kept graph ended early")
        _write_all(dst, data)
        offset += len(data)
