"""The frame of an index file (stree.storage.index): MAGIC, the metadata's length and CRC, the
metadata (marshal), then the data area (stree.storage.area) whose last part is the previews
section; and the one rewrite that keeps the data area as it is: new previews (with_previews)."""

import marshal
import os
from itertools import chain
from zlib import crc32

from ..format.stdlib import array
from .area import block_crcs
from .cachedir import write_file

MAGIC = b"stree-index\n"
HEAD = len(MAGIC) + 8  # the magic, the metadata's length and its CRC
META_MAX = 1 << 30
COPY_BLOCK = 1 << 20  # bytes of the data area read at a time when it is copied


def read_meta(f):
    """(meta, start of the data area) of an open index file, or (None, 0) when it is not
    one or its metadata is damaged (checked before it is decoded)."""
    head = f.read(HEAD)
    if len(head) < HEAD or not head.startswith(MAGIC):
        return None, 0
    meta_len = int.from_bytes(head[len(MAGIC):len(MAGIC) + 4], "little")
    if meta_len > META_MAX:
        return None, 0
    raw = f.read(meta_len)
    if len(raw) != meta_len or crc32(raw) != int.from_bytes(head[len(MAGIC) + 4:], "little"):
        return None, 0
    meta = marshal.loads(raw)
    return (meta, HEAD + meta_len) if isinstance(meta, dict) else (None, 0)


def meta_of(target):
    """(the metadata of an index file or None, None)."""
    with open(target, "rb") as f:
        meta, _ = read_meta(f)
    return meta, None


def frame(meta):
    """The bytes before the data area of an index whose metadata is `meta`."""
    head = marshal.dumps(meta, 4)
    return [MAGIC, len(head).to_bytes(4, "little"), crc32(head).to_bytes(4, "little"), head]


def with_previews(target, f, start, meta, previews):
    """Write the index `f` (open on `target`; `meta` its metadata, its data area from `start`)
    again with `previews` as its previews section; its new metadata. The rest of the data area
    is copied a block at a time, never all in memory (a million-entry session's is ~110 MB, the
    whole of a `label` or `log --json` that made a few previews), and keeps the CRCs of its
    blocks; the block it shares with the previews is checked before it is used again. ValueError
    when it is not as written (the next command's reader finds the damage and indexes again)."""
    shift, crcs = meta["blocks"]
    crcs = array("I", crcs)
    data_len = meta["data_len"]
    old_len = data_len + (meta["previews"][1] if meta["previews"] else 0)
    fd = f.fileno()
    keep = data_len >> shift  # the blocks of the data area alone: copied with their CRCs
    shared = b""
    if keep < len(crcs):  # the block the data area's end shares with the old previews
        block = os.pread(fd, min(1 << shift, old_len - (keep << shift)), start + (keep << shift))
        if crc32(block) != crcs[keep]:
            raise ValueError(f"block {keep} of the index's data area")
        shared = block[:data_len - (keep << shift)]
    out = array("I", crcs[:keep])
    out.extend(block_crcs([shared, previews], shift))
    new = dict(meta, blocks=(shift, out.tobytes()), previews=(data_len, len(previews)) if previews else None)
    write_file(target, chain(frame(new), _copied(fd, start, keep << shift), (shared, previews)))
    return new


def _copied(fd, start, length):
    """Bytes [start, start + length) of a file, a block at a time."""
    pos, end = start, start + length
    while pos < end:
        block = os.pread(fd, min(COPY_BLOCK, end - pos), pos)
        if not block:
            raise ValueError("the index file ended early")
        yield block
        pos += len(block)
