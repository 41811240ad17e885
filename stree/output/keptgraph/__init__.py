"""Kept `log --graph` output at the output depth: the graph written, drawn whole or patched
from the output kept before the file grew, with the rows' state kept beside it.

The same concept at the storage depth is stree.storage.keptgraph (imported as `kept_store`):
where an output is kept, whether it still holds for the file, and its file (.file). The drawing
itself, which knows nothing of keeping, is stree.output.graph. This package: the rows' state
and the writing (here), a patch after entries appended under the leaf (.patch), a whole drawing
into a pipe as bytes (.pipe). The calling sequence, as stree.commands.log (`_graph`, `_draw`)
and, before click loads, stree.entrypoint (`_kept_graph`) follow it:

    kept_store.applies(no_cache)                    may a kept output be used at all
    opts = kept_store.options(rev, filter, ...)     what the output depends on besides the file
    found = kept_store.find(path, opts)             None | ("same", Kept) | ("grown", (Kept, rows, n))
    "same":  kept_store.write(Kept)                 printed again as kept; nothing is drawn
    "grown": patch = keptgraph.base(found[1])       what the kept output offers a patch
    out.capture = kept_store.Capture(session, opts) the output goes to its file as it is written
    keptgraph.patch.chain(tree, out, patch, ...)    appended under the leaf: (pieces, state), or None
      -> keptgraph.put(out, pieces, patch.kept)     kept ranges copied around the rows drawn
    else: rows = graph.graph(tree, filter, ...)     the drawing (stree.output.graph)
      -> state = keptgraph.write(out, tree, rows, previewer, no_ids, keep, patch)
                                                    only the rows whose state changed are drawn
    kept_store.store(session, opts, capture, state) kept for the next identical command


A graph row's text depends on its entry (which an append never changes) and on what the
drawing around it gives it: the connectors before it, the active-path mark, its label,
the leaf mark, and for --json/--format the child count and whether it is @. That is the
row's *state*. A kept output (stree.storage.keptgraph) carries, for every row in order, its
entry's row in the file, its state (the connectors as a 64-bit digest: they grow with the
tree's depth) and the length of its text. After an append, the
layout is computed again (no preview, no entry read) and each row whose entry and state
are as they were is copied from the kept text; only the others are drawn: the new rows,
the rows whose marks moved, a row newly labelled. A change that moves every row (the
id column grows wider) or that the state cannot capture (an entry id given twice, a tool
call id repeated) draws it all again.

STATS["drawn"] counts the rows drawn (STREE_DEBUG_STATS prints it).
"""

import marshal
import sys

from ...storage import register_counters

STATS = register_counters("graph", {"drawn": 0, "kept": 0, "how": "drawn"})  # how: drawn, laid out (patched), appended (keptgraph.patch)
VERSION = 4  # of the rows' state below (4: columns as arrays)
BATCH = 512  # rows written at once (or 1 MB): never the whole drawing at once
_LITTLE = sys.byteorder == "little"
DIGESTS = {}  # connectors -> digest, for the rows of this drawing (rows under one parent share theirs)


class Patch:
    """What a kept output offers a patch: its file (stree.storage.keptgraph.file.Kept: its bytes are
    copied from there, never read whole), the id column's width, its rows' state in
    columns (entry row, digest of the connectors, flags, label, children, length in bytes), what an append to the
    leaf needs (stree.output.keptgraph.patch), and how many entries the file had then."""

    def __init__(self, kept, width, cols, chain, entries):
        self.kept = kept
        self.width = width
        self.cols = cols
        self.chain = chain
        self.entries = entries

    def offsets(self):
        from itertools import accumulate

        return list(accumulate(self.cols[5], initial=0))

    def offset_at(self):
        """k -> where row k's text begins in the kept output, for a few k in increasing order
        (each summed from the one before: no list of every row's offset)."""
        lengths = self.cols[5]
        last = [0, 0]

        def at(k):
            if k < last[0]:
                last[:] = [0, 0]
            last[:] = [k, last[1] + sum(lengths[last[0]:k])]
            return last[1]
        return at


def find_row(rows, r):
    """The index of entry row `r` among a kept output's rows (an array of 64-bit ints), or None:
    found in the array's bytes (rows are unique), not compared one by one."""
    data = rows.tobytes() if hasattr(rows, "tobytes") else None
    if data is None or rows.itemsize != 8:
        try:
            return rows.index(r)
        except ValueError:
            return None
    needle = r.to_bytes(8, "little" if _LITTLE else "big", signed=True)
    pos = data.find(needle)
    while pos >= 0 and pos % 8:
        pos = data.find(needle, pos + 1)
    return None if pos < 0 else pos // 8


def base(found):
    """A Patch from kept_store.find()'s "grown" (kept file, rows blob, entries), or None."""
    if found is None:
        return None
    kept, blob, entries = found
    try:
        version, width, packed, chain = marshal.loads(blob)
        cols = unpack(packed)
        if version == VERSION and sum(cols[5]) == kept.length:
            return Patch(kept, width, cols, chain, entries)
    except Exception:
        pass
    kept.close()
    return None


def consult(path, options):
    """The one lookup of a kept `log --graph` output (the command and stree.entrypoint): ("same",
    storage.keptgraph.file.Kept) when the session file is as it was, to print as it is;
    ("grown", Patch) when entries were appended since, to patch (stree.output.keptgraph.patch);
    else None: draw it."""
    from ...storage import keptgraph as kept_store

    found = kept_store.find(path, options)
    if found is None or found[0] == "same":
        return found
    patch = base(found[1])
    return None if patch is None else ("grown", patch)


def put(out, pieces, kept):
    """Write `pieces` (bytes drawn, or (a, b): bytes a..b of `kept`'s output) as out.put()
    would: kept bytes into a pipe go file to pipe (stree.storage.keptgraph.emit)."""
    from ...storage import keptgraph as kept_store

    if out.tty:  # (held for the pager, or cut to the terminal: as text)
        out.put([p.decode("utf-8") if isinstance(p, bytes) else kept.read(*p).decode("utf-8") for p in pieces])
    else:
        kept_store.emit(pieces, kept, out.capture)


TYPES = ("q", "Q", "q", None, "q", "q")  # the columns' array types (the labels: a list)


def columns():
    """Empty columns of rows' state, as blob() keeps them (arrays: loaded and kept as bytes)."""
    from ...format.stdlib import array

    return tuple([] if t is None else array(t) for t in TYPES)


def blob(width, cols, chain):
    from ...format.stdlib import array

    packed = [col if t is None else (col if isinstance(col, array) else array(t, col)).tobytes()
              for t, col in zip(TYPES, cols)]
    return marshal.dumps((VERSION, width, packed, chain))


def unpack(packed):
    from ...format.stdlib import array

    cols = []
    for t, col in zip(TYPES, packed):
        if t is not None:
            found = array(t)
            found.frombytes(col)
            col = found
        cols.append(col)
    if len(cols) != len(TYPES) or len({len(col) for col in cols}) != 1:
        raise ValueError
    return tuple(cols)


def digest(prefix):
    """64 bits of the connectors before a row (kept instead of them: a comb-shaped tree's grow
    with the square of its size): CRC-32 and Adler-32 of their UTF-8."""
    found = DIGESTS.get(prefix)
    if found is None:
        from zlib import adler32, crc32

        data = prefix.encode("utf-8", "surrogatepass")
        found = crc32(data) << 32 | adler32(data)
        if len(DIGESTS) > 4096:
            DIGESTS.clear()
        DIGESTS[prefix] = found
    return found


def stater(tree, drawing, machine):
    """row -> its state: (digest of the connectors, flags, label, children) with flags
    active | leaf mark << 1 | @ << 2."""
    state = drawing.state
    if not machine:
        def of(r):
            prefix, active, label, marked = state(r)
            return digest(prefix), active | marked << 1, label, 0
        return of
    from ...core.leaf import position

    at = position(tree)
    ids = tree._nodes.col("id")
    nkids = tree.shape.nkids

    def of_machine(r):
        prefix, active, label, marked = state(r)
        return digest(prefix), active | marked << 1 | (ids[r] == at) << 2, label, nkids[r]
    return of_machine


def text_of(out, tree, row, previewer, width, no_ids):
    """A Row as record() writes it."""
    STATS["drawn"] += 1
    if out.machine:
        from ..fields import entry_record

        return out.text_of(entry_record(tree, row.node, previewer, graph=row.prefix, active=row.active,
                                        row=row.text(marker=False)))
    return out.text_of(None, graph_line(out, row, width, no_ids))


def _size(text):
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def write(out, tree, drawing, previewer, no_ids, keep=False, patch=None):
    """Write the rows of `drawing`: from `patch` (a Patch) where it can be used, else all drawn.
    Returns the rows' state blob to keep with the output (when `keep`), or None."""
    width = drawing.id_width()
    keep = keep and not tree.shape.shadowed
    if out.machine and hasattr(tree._nodes, "materialize"):
        tree._nodes.materialize()  # a record reads every field of every row (graph() decodes a few)
    of = stater(tree, drawing, out.machine) if keep else None
    pieces = _patched(out, tree, drawing, previewer, no_ids, width, patch, of) if keep and patch else None
    if pieces is not None:
        STATS["how"] = "laid out"
    else:
        from . import pipe

        if pipe.applies(out):  # (the common case: human rows into a pipe, as bytes)
            cols = pipe.write(out, tree, drawing, previewer, no_ids, width, columns() if keep else None, STATS)
            return None if cols is None else blob(width, cols, chain_state(tree, drawing, out.machine))
        draw = drawing._draw
        pieces = ((r, text_of(out, tree, draw(r), previewer, width, no_ids), None) for r in drawing.order)
    cols = columns() if keep else None
    # kept into a pipe that takes UTF-8: each row encoded once, for stdout and the kept file alike
    direct = keep and out.capture is not None and not out.tty and _takes_bytes()
    batch = []
    size = 0
    for r, text, kept in pieces:
        if kept is not None:  # a range of the kept output: what is drawn before it written first
            if batch:
                _flush(out, batch)
                batch, size = [], 0
            put(out, [text], patch.kept)
        else:
            length = 0
            if direct:
                try:
                    text = text.encode("utf-8")
                    length = len(text)
                except UnicodeError:  # (a lone surrogate: printed replaced, never kept)
                    _flush(out, batch)
                    batch, size = [], 0
                    direct = False
                    out.capture.drop()
            if not length and keep:
                length = _size(text)
            batch.append(text)
            size += len(text)
        if keep:
            if kept is None:  # a drawn row
                for col, value in zip(cols, (r, *of(r), length)):
                    col.append(value)
            else:  # a run of kept rows: their states as they were
                for col, values in zip(cols, kept):
                    col.extend(values)
        if len(batch) >= BATCH or size > 1 << 20:
            _flush(out, batch)
            batch = []
            size = 0
            if keep and (out.capture is None or out.capture.dropped):
                keep = False  # the output is too long to keep: so are its rows' states
                cols = None
    if batch:
        _flush(out, batch)
    if not keep or out.capture is None or out.capture.dropped:
        return None
    return blob(width, cols, chain_state(tree, drawing, out.machine))


def _takes_bytes():
    import sys

    from ...storage.keptgraph import takes_utf8_bytes

    return takes_utf8_bytes(sys.stdout)


def _flush(out, batch):
    """Write a batch of rows: texts through out.put(), or UTF-8 bytes to stdout and the kept file."""
    if batch and isinstance(batch[0], bytes):
        from ...storage import keptgraph as kept_store

        kept_store.emit([b"".join(batch)], None, out.capture)
    elif batch:
        out.put(batch)


def chain_state(tree, drawing, machine):
    """What stree.output.keptgraph.patch needs of a drawing to patch an append to the leaf: the
    drawing's chain() with the gutters as a list, and the row of @ (--json, --format)."""
    chain = drawing.chain() if drawing.chain is not None else None
    if chain is None:
        return None
    marked, (indent, show_connector, is_last, gutters, virtual), below, beside, is_leaf, roots = chain
    flat = []
    while gutters is not None:
        position, show, gutters = gutters
        flat.append((position, show))
    at = -1
    if machine:
        from ...core.leaf import position

        found = tree._row(position(tree)) if position(tree) is not None else None
        at = -1 if found is None else found
    return (marked, (indent, show_connector, is_last, flat, virtual), below, beside, is_leaf, roots, at)


def _patched(out, tree, drawing, previewer, no_ids, width, patch, of):
    """(row, text, kept columns or None) for every row, from the kept output where a row's entry
    and state are as they were; None when the change cannot be patched."""
    if len(tree._nodes) < patch.entries or width != patch.width:
        return None  # (the id column changed width: every row moves)
    dirty = dirty_rows(tree, patch.entries)
    if dirty is None:
        return None
    return _pieces(out, tree, drawing, previewer, no_ids, width, patch, dirty, of)


def _pieces(out, tree, drawing, previewer, no_ids, width, patch, dirty, of):
    rows, prefixes, flags, labels, kids, _ = cols = patch.cols
    at = dict(zip(rows, range(len(rows))))
    offsets = patch.offsets()
    draw = drawing._draw
    order = drawing.order
    k = 0
    count = len(order)
    while k < count:
        r = order[k]
        i = at.get(r)
        if i is not None and r not in dirty and (prefixes[i], flags[i], labels[i], kids[i]) == of(r):
            j = i + 1  # a run of kept rows, in the same order as before
            k += 1
            while k < count and j < len(rows):
                r = order[k]
                if rows[j] != r or r in dirty or (prefixes[j], flags[j], labels[j], kids[j]) != of(r):
                    break
                j += 1
                k += 1
            STATS["kept"] += j - i
            yield None, (offsets[i], offsets[j]), [col[i:j] for col in cols]
        else:
            yield r, text_of(out, tree, draw(r), previewer, width, no_ids), None
            k += 1


def dirty_rows(tree, old):
    """Rows before `old` whose preview the appended entries may change: tool results naming a
    call an appended assistant message makes (pi shows the call's name and arguments). None
    when a call id is repeated (which call pi shows then depends on the walk)."""
    nodes = tree._nodes
    roles, auxes = nodes.tail("role", old), nodes.tail("aux", old)
    calls = set()
    for role, aux in zip(roles, auxes):
        if role == "assistant" and aux:
            try:
                calls.update(aux)
            except TypeError:
                return None
    if not calls or not nodes.may_hold("aux", calls, old):
        return set()  # (no row before holds one: found without reading every row's)
    roles, auxes = nodes.col("role"), nodes.col("aux")
    dirty = set()
    for r in range(old):
        aux = auxes[r]
        if not aux:
            continue
        role = roles[r]
        try:
            if role == "assistant" and not calls.isdisjoint(aux):
                return None  # a call id given again
            if role == "toolResult" and aux in calls:
                dirty.add(r)
        except TypeError:
            return None
    return dirty


def replay(out, data):
    """Write a kept output (bytes) on a terminal, through the pager."""
    out.put([data.decode("utf-8")])


def graph_line(out, row, width, no_ids):
    """A human graph row: the id column, the drawing, marks, label and preview."""
    from ...format.terminal import inert

    text = "" if no_ids else out.style("id", row.node.id.ljust(width)) + "  "
    prefix = row.prefix
    label = inert(row.label, oneline=True) if row.label else None
    segments = row.segments
    if out.tty:  # like pi: one terminal line per row, and some of the entry on each
        prefix, label, segments = _fitted(prefix, label, segments, row, 0 if no_ids else width + 2)
    text += out.style("dim", prefix)
    if row.active:
        text += out.style("accent", "• ")
    if label is not None:
        text += out.style("warning", "[" + label + "] ")
    text += out.segments(segments)
    if row.leaf:
        text += out.style("accent", "  ← active")
    return text


def _fitted(prefix, label, segments, row, head):
    """(prefix, label, segments) of a row cut to one line of the terminal: the connectors take
    at most half of what the id column leaves (their outer levels folded into a `⋯N⋯` marker,
    stree.output.graph.fold), the label at most half of what is left, the preview the rest."""
    from ...format.terminal import inert
    from ..modes import display_width, fit, terminal_width
    from ..graph import fold

    segments = [(style, inert(text, oneline=True)) for style, text in segments]  # (as shown: \x1b is 4 columns)
    columns = terminal_width()
    prefix = fold(prefix, (columns - head) // 2 - 2)
    room = columns - head - display_width(prefix) - (2 if row.active else 0) - (10 if row.leaf else 0)
    if label is not None:
        if display_width(label) + 3 > room // 2:
            label = "".join(text for _, text in fit([(None, label)], max(1, room // 2 - 3)))
        room -= display_width(label) + 3
    return prefix, label, fit(segments, max(1, room))
