"""The previews kept in an index: one-line previews of entries, by byte offset, computed
once and read back by later commands (the section is written with the index)."""

import marshal
import os
from zlib import crc32
from bisect import bisect_left

from ..format.stdlib import array
from .cachedir import debug


def encode(segments):
    """A preview as the section keeps it (ValueError: not plain values)."""
    return marshal.dumps(tuple(segments), 4)


class PreviewCache:
    """Preview segments by line offset: read lazily from the index, new ones kept for writing."""

    def __init__(self, meta=None, section=b"", checked=False, release=None):
        self.new = {}  # offset -> the new preview, marshalled as the section keeps it (a first graph
        #               makes one for every entry: as objects they would take several times the room)
        self._release = release  # (offset, length) of the section: pages copied, not needed mapped
        self._section = section  # bytes, or a view of a mapped index
        self._checked = checked  # True: its CRC verified already; a function check(off, n): checks bytes of it
        #                          where they are read (stree.storage.area.Damaged: those previews are made again)
        self._check_blob = None  # check(off, n) of the previews' blob, once loaded (a function), or None
        self._loaded = None
        self.home = os.environ.get("HOME") or os.environ.get("USERPROFILE") or ""

    def _load(self):
        if self._loaded is None:
            self._loaded = ((), (), b"")
            sec = self._section
            if len(sec) >= 12:
                try:
                    check = self._checked if callable(self._checked) else None
                    if check is not None:  # (damaged: no previews kept)
                        check(0, 12)
                    count = int.from_bytes(sec[:4], "little")
                    home_len = int.from_bytes(sec[4:8], "little")
                    if check is not None:
                        check(12, home_len + 16 * count + 8)
                    home = bytes(sec[12:12 + home_len]).decode("utf-8", "surrogateescape")
                    if home == self.home:  # previews shorten paths under $HOME
                        pos = 12 + home_len
                        offsets = array("q")
                        offsets.frombytes(sec[pos:pos + 8 * count])
                        pos += 8 * count
                        starts = array("q")
                        starts.frombytes(sec[pos:pos + 8 * (count + 1)])
                        pos += 8 * (count + 1)
                        if self._release is not None:
                            self._release(12 + home_len, pos - 12 - home_len)
                        if self._checked or crc32(sec[pos:]) == int.from_bytes(sec[8:12], "little"):
                            self._loaded = (offsets, starts, sec[pos:])
                            if check is not None:  # (each preview checked when it is read)
                                self._check_blob = lambda off, n, at=pos: check(at + off, n)
                except Exception as e:
                    debug(f"ignoring cached previews: {type(e).__name__}: {e}")
        return self._loaded

    def get(self, node):
        offset = node.offset  # (read once: a Node of an index's row reads it from a column)
        seg = self.new.get(offset)
        if seg is not None:
            return marshal.loads(seg)
        offsets, starts, blob = self._load()
        i = bisect_left(offsets, offset)
        if i < len(offsets) and offsets[i] == offset:
            try:
                if self._check_blob is not None:
                    self._check_blob(starts[i], starts[i + 1] - starts[i])
                return marshal.loads(blob[starts[i]:starts[i + 1]])
            except Exception:  # (damaged in the index: made again)
                return None
        return None

    def _kept(self):
        """_load()'s, its blob checked whole (copied into a new index); nothing when it is damaged."""
        offsets, starts, blob = self._load()
        if self._check_blob is not None and len(blob):
            try:
                self._check_blob(0, len(blob))
            except ValueError:  # (stree.storage.area.Damaged)
                self._loaded = ((), (), b"")
                return self._loaded
            self._check_blob = None
        return offsets, starts, blob

    def put(self, node, segments):
        try:
            self.new[node.offset] = encode(segments)
        except ValueError:  # (not plain values: not kept)
            pass

    def adopt(self, offsets, starts, blob):
        """New previews made elsewhere, as a section holds them: those of the entries at `offsets`
        (increasing), encode()d one after the other in `blob`, the i-th at starts[i]:starts[i + 1]."""
        if self._load()[0]:  # (previews kept already: the new ones one by one)
            for i, offset in enumerate(offsets):
                self.new[offset] = bytes(blob[starts[i]:starts[i + 1]])
        else:  # read and written as if the index had held them (one blob, not an object each)
            self._loaded = (offsets, starts, blob)
            self._check_blob = None

    def section(self, s):
        """The preview section for an index of `s`: old previews of lines still indexed, plus new ones."""
        offsets, starts, blob = self._kept()
        limit = s.covered
        fresh = sorted(off for off in self.new if off < limit)
        keep = bisect_left(offsets, limit)
        if not fresh and keep:  # (nothing new: the kept previews of lines still indexed, as they are)
            kept = memoryview(blob)[:starts[keep]]
            return self._encoded(keep, crc32(kept), array("q", offsets[:keep]), array("q", starts[:keep + 1]), kept)
        if not fresh or (keep and fresh[0] <= offsets[keep - 1]):
            return self._merged(offsets, starts, blob, limit)
        # (the common case: previews of entries after every kept one, e.g. lines appended since:
        # the kept part is copied as it is, not entry by entry)
        parts = [self.new[off] for off in fresh]
        out_offsets = array("q", offsets[:keep])
        out_offsets.extend(fresh)
        out_starts = array("q", starts[:keep + 1] if keep else [0])
        base = out_starts[-1]
        pos = base
        for part in parts:
            pos += len(part)
            out_starts.append(pos)
        kept = memoryview(blob)[:base]
        crc = crc32(kept)
        for part in parts:
            crc = crc32(part, crc)
        return self._encoded(len(out_offsets), crc, out_offsets, out_starts, kept, *parts)  # (joined once)

    def _merged(self, offsets, starts, blob, limit):
        chunks = {}
        for i, off in enumerate(offsets):
            if off < limit:
                chunks[off] = bytes(blob[starts[i]:starts[i + 1]])
        for off, seg in self.new.items():
            if off < limit:
                chunks[off] = seg
        if not chunks:
            return b""
        keys = sorted(chunks)
        out_offsets = array("q", keys)
        out_starts = array("q", [0])
        parts = []
        pos = 0
        for k in keys:
            parts.append(chunks[k])
            pos += len(chunks[k])
            out_starts.append(pos)
        blob = b"".join(parts)
        return self._encoded(len(keys), crc32(blob), out_offsets, out_starts, blob)

    def _encoded(self, count, crc, offsets, starts, *blobs):
        home = self.home.encode("utf-8", "surrogateescape")
        return b"".join([count.to_bytes(4, "little"), len(home).to_bytes(4, "little"), crc.to_bytes(4, "little"),
                         home, offsets.tobytes(), starts.tobytes(), *blobs])

    def forget(self):
        """Drop every cached preview (a tool call id was redefined: old previews may be wrong)."""
        self._loaded = ((), (), b"")
        self._check_blob = None


# -- maintenance -------------------------------------------------------------------
