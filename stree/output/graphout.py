"""`log --graph` written: drawn whole, or patched from the output kept before the file grew.

A graph row's text depends on its entry (which an append never changes) and on what the
drawing around it gives it: the connectors before it, the active-path mark, its label,
the leaf mark, and for --json/--format the child count and whether it is @. That is the
row's *state*. A kept output (stree.storage.graphcache) carries, for every row in order, its
entry's row in the file, its state and the length of its text. After an append, the
layout is computed again (no preview, no entry read) and each row whose entry and state
are as they were is copied from the kept text; only the others are drawn: the new rows,
the rows whose marks moved, a row newly labelled. A change that moves every row (the
id column grows wider) or that the state cannot capture (an entry id given twice, a tool
call id repeated) draws it all again.

STATS["drawn"] counts the rows drawn (STREE_DEBUG_STATS prints it).
"""

import marshal

STATS = {"drawn": 0, "kept": 0}
VERSION = 1  # of the rows' state below
BATCH = 512  # rows written at once (or 1 MB): never the whole drawing at once


class Patch:
    """What a kept output offers a patch: its text, per row (entry row, state, length), and how
    many entries the file had then."""

    def __init__(self, text, width, rows, entries):
        self.text = text
        self.width = width  # of the id column
        self.rows = rows
        self.entries = entries


def base(found):
    """A Patch from graphcache.lookup_grown()'s (bytes, rows blob, entries), or None."""
    if found is None:
        return None
    data, blob, entries = found
    try:
        version, width, rows = marshal.loads(blob)
        if version != VERSION:
            return None
        return Patch(data.decode("utf-8"), width, rows, entries)
    except Exception:
        return None


def _stater(tree, drawing, machine):
    """row -> its state: (prefix, flags, label, children) with flags active | leaf mark << 1 | @ << 2."""
    state = drawing.state
    if not machine:
        def of(r):
            prefix, active, label, marked = state(r)
            return prefix, active | marked << 1, label, 0
        return of
    from ..core.navigate import position

    at = position(tree)
    ids = tree._nodes.col("id")
    nkids = tree.shape.nkids

    def of_machine(r):
        prefix, active, label, marked = state(r)
        return prefix, active | marked << 1 | (ids[r] == at) << 2, label, nkids[r]
    return of_machine


def _texts(out, tree, drawing, previewer, no_ids, width, order):
    """(row, text) of each row in `order`, drawn, as record() would write it."""
    from .fields import entry_record

    draw = drawing._draw
    machine = out.machine
    for r in order:
        row = draw(r)
        STATS["drawn"] += 1
        if machine:
            yield r, out.text_of(entry_record(tree, row.node, previewer, graph=row.prefix, active=row.active,
                                              row=row.text(marker=False)))
        else:
            yield r, out.text_of(None, graph_line(out, row, width, no_ids))


def write(out, tree, drawing, previewer, no_ids, keep=False, patch=None):
    """Write the rows of `drawing`: from `patch` (a Patch) where it can be used, else all drawn.
    Returns the rows' state blob to keep with the output (when `keep`), or None."""
    width = drawing.id_width()
    shape = tree.shape
    keep = keep and not shape.shadowed
    stater = _stater(tree, drawing, out.machine) if keep else None
    pieces = _patched(out, tree, drawing, previewer, no_ids, width, patch, stater) if keep and patch else None
    if pieces is None:
        pieces = ((r, text, None) for r, text in _texts(out, tree, drawing, previewer, no_ids, width, drawing.order))
    states = [] if keep else None
    batch = []
    size = 0
    for r, text, state in pieces:
        batch.append(text)
        size += len(text)
        if keep:
            if state is None:  # a drawn row
                state = stater(r)
                states.append((r, *state, len(text)))
            else:  # a run of kept rows: their states as they were
                states.extend(state)
        if len(batch) >= BATCH or size > 1 << 20:
            out.put(batch)
            batch = []
            size = 0
    if batch:
        out.put(batch)
    return marshal.dumps((VERSION, width, states)) if keep else None


def _patched(out, tree, drawing, previewer, no_ids, width, patch, stater):
    """(row, text, kept states or None) for every row, from the kept output where a row's entry
    and state are as they were; None when the change cannot be patched."""
    rows = patch.rows
    nodes = tree._nodes
    n = len(nodes)
    old = patch.entries
    if n < old or not rows:
        return None
    if width != patch.width:
        return None  # the id column changed width: every row moves
    dirty = _dirty(tree, old)
    if dirty is None:
        return None
    at = {}
    for i, row in enumerate(rows):
        at[row[0]] = i
    offsets = [0]
    total = 0
    for row in rows:
        total += row[5]
        offsets.append(total)
    text = patch.text
    if total != len(text):
        return None
    return _pieces(out, tree, drawing, previewer, no_ids, width, rows, at, offsets, text, dirty, stater)


def _pieces(out, tree, drawing, previewer, no_ids, width, rows, at, offsets, text, dirty, stater):
    order = drawing.order
    k = 0
    count = len(order)
    while k < count:
        r = order[k]
        i = at.get(r)
        if i is not None and r not in dirty and rows[i][1:5] == stater(r):
            j = i + 1  # a run of kept rows, in the same order as before
            k += 1
            while k < count and j < len(rows):
                r = order[k]
                if rows[j][0] != r or r in dirty or rows[j][1:5] != stater(r):
                    break
                j += 1
                k += 1
            STATS["kept"] += j - i
            yield None, text[offsets[i]:offsets[j]], rows[i:j]
        else:
            for _, t in _texts(out, tree, drawing, previewer, no_ids, width, (r,)):
                yield r, t, None
            k += 1


def _dirty(tree, old):
    """Rows before `old` whose preview the appended entries may change: tool results naming a
    call an appended assistant message makes (pi shows the call's name and arguments). None
    when a call id is repeated (which call pi shows then depends on the walk)."""
    nodes = tree._nodes
    roles, auxes = nodes.col("role"), nodes.col("aux")
    calls = set()
    for r in range(old, len(roles)):
        if roles[r] == "assistant" and auxes[r]:
            try:
                calls.update(auxes[r])
            except TypeError:
                return None
    if not calls:
        return set()
    dirty = set()
    for r in range(old):
        role = roles[r]
        aux = auxes[r]
        if not aux:
            continue
        try:
            if role == "assistant" and not calls.isdisjoint(aux):
                return None  # a call id given again
            if role == "toolResult" and aux in calls:
                dirty.add(r)
        except TypeError:
            return None
    return dirty


def replay(out, text, blob):
    """Write a kept output on a terminal (through the pager), row by row as it was written."""
    try:
        version, _, rows = marshal.loads(blob)
    except Exception:
        return False
    if version != VERSION:
        return False
    texts = []
    pos = 0
    for row in rows:
        texts.append(text[pos:pos + row[5]])
        pos += row[5]
    out.put(texts)
    return True


def graph_line(out, row, width, no_ids):
    """A human graph row: the id column, the drawing, marks, label and preview."""
    from ..format.terminal import inert

    text = "" if no_ids else out.style("id", row.node.id.ljust(width)) + "  "
    text += out.style("dim", row.prefix)
    if row.active:
        text += out.style("accent", "• ")
    if row.label:
        text += out.style("warning", "[" + inert(row.label, oneline=True) + "] ")
    segments = row.segments
    if out.tty:  # like pi: one terminal line per row
        from .modes import fit, terminal_width

        used = (0 if no_ids else width + 2) + len(row.prefix) + (2 if row.active else 0) + \
            (len(row.label) + 3 if row.label else 0) + (10 if row.leaf else 0)
        segments = fit(segments, max(10, terminal_width() - used))
    text += out.segments(segments)
    if row.leaf:
        text += out.style("accent", "  ← active")
    return text
