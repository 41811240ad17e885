"""A human `log --graph` drawn whole into a pipe, written as UTF-8 bytes row by row.

What stree.output.keptgraph writes through text_of() and Output.put(), made cheaper for the
common case (no colour, not a terminal, a stdout that takes UTF-8 as it is): a row is its
id column, its connectors and the rest (marks, label, preview), each as bytes. The
connectors of a deep tree are most of the output (a comb-shaped tree's rows are as long as
it is deep), and rows under one parent share them: they are encoded once per drawing
(stree.output.graph memoizes their text) and joined, never made safe, styled or encoded
again row by row. Each piece is made safe as graph_line() makes it (inert()); the row as a
whole then needs nothing more (human_safe() of pieces already inert is the same text).

Nothing is kept per row but what a kept output needs (keptgraph's rows' state); previews
are read once each (Previewer.segments(keep=False)).
"""

import sys
from zlib import adler32, crc32

BATCH = 1 << 20  # bytes written at once
PREFIXES = 2 << 20  # encoded connectors kept, in bytes (then forgotten, encoded again)


def applies(out):
    """Whether rows may go out as bytes: human rows without colour into a pipe or file that
    takes UTF-8 as it is."""
    if out.machine or out.color or out.tty:
        return False
    from ...storage.keptgraph import takes_utf8_bytes

    return takes_utf8_bytes(sys.stdout)


class Plain:
    """What a patch after an append (stree.output.keptgraph.patch) needs of an Output when its rows
    go out as bytes (applies() holds: human rows, no colour, a pipe or file that takes UTF-8),
    without loading stree.output.modes: stree.entrypoint's path before click."""

    machine = False
    color = False
    tty = False
    capture = None

    def __init__(self, nul=False):
        self.end = "\0" if nul else "\n"


def plain(out):
    """Whether `out` is a Plain (rows drawn as bytes by line())."""
    return isinstance(out, Plain)


def line(node_id, width, no_ids, prefix, active, label, marked, segments, end):
    """One human row as write() writes it, as UTF-8 bytes (what Output.text_of(None,
    keptgraph.graph_line(...)) gives without colour, encoded)."""
    from ...format.terminal import inert

    head = "" if no_ids else inert(node_id.ljust(width)) + "  "
    rest = _rest(inert, segments, label, active, marked)
    return head.encode("utf-8") + prefix.encode("utf-8", "surrogatepass") + rest.encode("utf-8") + end.encode("utf-8")


def _rest(inert, segments, label, active, marked):
    """A row's text after its connectors: the active mark, the label, the preview's segments, the
    leaf's mark (`inert`: stree.format.terminal's, given by the caller that imported it)."""
    rest = "".join([inert(text, oneline=True) for _, text in segments])
    if label:
        rest = "[" + inert(label, oneline=True) + "] " + rest
    if active:
        rest = "• " + rest
    if marked:
        rest += "  ← active"
    return rest


def write(out, tree, drawing, previewer, no_ids, width, cols, stats):
    """Write every row of `drawing`, counted in stats["drawn"]; returns the rows' state columns
    (as keptgraph.write keeps them: `cols`, empty, given to fill, or None when they are not kept)
    when the capture kept the whole output, else None."""
    from ...format.terminal import inert
    from ...storage.keptgraph.file import widen_pipe

    state = drawing.state
    nodes = tree._nodes
    node_at = getattr(nodes, "peek", nodes.__getitem__)
    ids = drawing._ids
    segments = previewer.segments
    end = out.end.encode("utf-8")
    stdout = sys.stdout
    stdout.flush()  # (what was written as text goes first)
    buffer = stdout.buffer
    try:
        fd = buffer.fileno()
        widen_pipe(fd)  # (megabytes of rows: a 64 KiB pipe would make the reader and this
        #   process take turns every 64 KiB; a third of the drawing's time at 100k entries)
    except (OSError, ValueError, AttributeError):  # (a stream without a descriptor: rows written to it)
        fd = None
    encoded = {}  # connectors (text) -> (their UTF-8, their digest or None)
    encoded_size = 0
    keep = cols is not None
    if keep:  # (row, digest of the connectors, flags, label, children, length in bytes)
        put_row, put_digest, put_flags, put_label, put_kids, put_size = (col.append for col in cols)
    batch = []
    size = 0
    drawn = 0
    for r in drawing.order:
        prefix, active, label, marked = state(r)
        hit = encoded.get(prefix)
        if hit is None:
            if encoded_size > PREFIXES:
                encoded.clear()
                encoded_size = 0
            hit = encoded[prefix] = [prefix.encode("utf-8", "surrogatepass"), None]
            encoded_size += len(hit[0])
        head = b"" if no_ids else (inert(ids[r].ljust(width)) + "  ").encode("utf-8")
        tail = _rest(inert, segments(node_at(r), keep=False), label, active, marked).encode("utf-8") + end
        batch += (head, hit[0], tail)
        n = len(head) + len(hit[0]) + len(tail)
        size += n
        drawn += 1
        if keep:
            digest = hit[1]
            if digest is None:
                data = hit[0]
                digest = hit[1] = crc32(data) << 32 | adler32(data)
            put_row(r)
            put_digest(digest)
            put_flags(active | marked << 1)
            put_label(label)
            put_kids(0)
            put_size(n)
        if size >= BATCH:
            stats["drawn"] += drawn
            drawn = 0
            _put(out, buffer, b"".join(batch), fd)
            batch = []
            size = 0
            if keep and not _keeping(out.capture):
                keep = False  # the output is too long to keep: so are its rows' states
                cols = None
    stats["drawn"] += drawn
    if batch:
        _put(out, buffer, b"".join(batch), fd)
    buffer.flush()
    return cols if keep and _keeping(out.capture) else None


def _put(out, buffer, data, fd=None):
    """Print `data`, and keep it (out.capture, the kept file). With `fd` (stdout's descriptor),
    kept bytes are printed from the kept file (the kernel hands its pages to the pipe: the
    output is copied once, not twice); others are written."""
    if out.capture is None or not out.capture.add(data, fd):
        buffer.write(data)
        if fd is not None:
            buffer.flush()  # (none of it held back: the next bytes may be printed past the buffer)


def _keeping(capture):
    """Whether `capture` still keeps what is written."""
    return capture is not None and not capture.dropped
