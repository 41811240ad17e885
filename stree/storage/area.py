"""The data area of an index: blobs written one after the other (Area), read back from the
mapped file (Blobs) or from the parts just written (Parts), each checked where it is read.

A CRC of every 64 KiB (block_shift()) of the area is kept in the index's metadata (which has a CRC of its
own). A blob is checked, block by block, before its bytes are first used: get() checks the whole
blob (what is decoded whole), check() a range of it (a value read in place: one id of a
million). A command reads only the pages it uses and checks only those; checking all 100 MB of
a million-entry index cost a first screen as much as the rest of it. A block whose bytes are not
those written raises Damaged: its reader answers from the session file instead
(stree.storage.columns.IndexColumns, stree.storage.index), so a damaged index is never a
wrong answer, only a slower one.
"""

import os
from bisect import bisect_right
from itertools import accumulate
from zlib import crc32

from ..format.stdlib import array


def block_shift():
    """log2 of the bytes of a block a writer gives one CRC: 64 KiB, or $STREE_INDEX_BLOCK (4 KiB to
    16 MiB, a power of two: the tests make small indexes of many blocks). A reader uses the index's."""
    try:
        size = int(os.environ.get("STREE_INDEX_BLOCK") or 0)
    except ValueError:
        size = 0
    return min(24, max(12, size.bit_length() - 1)) if size > 0 else 16


class Damaged(ValueError):
    """Bytes of an index's data area that are not those its writer wrote."""


def block_crcs(chunks, shift):
    """The CRC of each 2**shift bytes of the concatenation of `chunks` (bytes-like), the last block short."""
    BLOCK = 1 << shift
    out = array("I")
    crc = 0
    filled = 0
    for chunk in chunks:
        view = memoryview(chunk).cast("B")
        pos, n = 0, len(view)
        while pos < n:
            take = min(BLOCK - filled, n - pos)
            crc = crc32(view[pos:pos + take], crc)
            filled += take
            pos += take
            if filled == BLOCK:
                out.append(crc)
                crc = filled = 0
    if filled:
        out.append(crc)
    return out


class Blobs:
    """The data area of one index file, `crcs` the CRCs of its blocks of 2**shift bytes (None:
    trusted). `base`: where it starts in the mapped file."""

    def __init__(self, data, base=0, crcs=None, shift=16):
        self.data = memoryview(data)
        self.base = base  # where the data area starts in the mapped file (index._data_area)
        self._crcs = crcs
        self._shift = shift
        self._ok = bytearray(len(crcs)) if crcs is not None else None  # the blocks checked so far

    def check(self, off, length):
        """Raise Damaged unless bytes [off, off + length) are as written (each block checked once)."""
        ok = self._ok
        if ok is None or length <= 0:
            return
        shift = self._shift
        first, last = off >> shift, (off + length - 1) >> shift
        if first == last and ok[first]:
            return
        data, crcs = self.data, self._crcs
        for b in range(first, last + 1):
            if not ok[b]:
                start = b << shift
                if crc32(data[start:start + (1 << shift)]) != crcs[b]:
                    raise Damaged(f"block {b} of the index's data area")
                ok[b] = 1

    def get(self, where):
        """The bytes of a blob, checked whole."""
        off, length = where
        self.check(off, length)
        return self.data[off:off + length]

    def view(self, where):
        """The bytes of a blob, not checked: its reader check()s what it reads."""
        off, length = where
        return self.data[off:off + length]

    def release(self, where):
        """Give back the pages of a blob that was copied (decoded into an array, a list): mapped, they
        would stay in the command's memory (RSS) though never read again (MADV_DONTNEED: refaulted)."""
        area = self.data.obj
        advise = getattr(area, "madvise", None)
        if advise is None or where[1] < 1 << 16:
            return
        import mmap

        start = self.base + where[0]
        lo = start - start % mmap.PAGESIZE
        try:
            advise(mmap.MADV_DONTNEED, lo, start + where[1] - lo)
        except (OSError, ValueError, AttributeError):
            pass

    def raw(self, off, length):
        return bytes(self.get((off, length)))


class Area:
    """A data area being built: put(blob) -> where it is, (offset, length)."""

    def __init__(self):
        self.chunks = []
        self.size = 0

    def put(self, data):
        where = (self.size, len(data))
        self.chunks.append(data)
        self.size += len(data)
        return where


class Parts(Blobs):
    """A data area kept as the parts it was written from (no joined copy); a blob spans one."""

    def __init__(self, parts):
        self.parts = [memoryview(p) for p in parts]
        self.starts = list(accumulate((len(p) for p in self.parts[:-1]), initial=0))
        self._ok = None

    def get(self, where):
        off, length = where
        k = bisect_right(self.starts, off) - 1
        rel = off - self.starts[k]
        return self.parts[k][rel:rel + length]

    view = get

    def raw(self, off, length):
        return bytes(self.get((off, length)))

    def release(self, where):
        pass  # (not mapped)
