"""`log --graph` after entries appended under the leaf, as pi appends them: the kept output
with a few rows drawn, the layout left alone.

pi's leaf is the last entry; entries appended each under the one before extend the active
path, which the graph draws first. None of the rows drawn before moves: the new rows go
after the row that carried the leaf mark (in its place when that row was shown only as the
leaf: an assistant message of tool calls alone), each the only row under the one above it.
Besides them, only the row that carried the leaf mark changes (its mark, and for --json or
--format its child count and @). Everything needed to lay out the new rows is kept with the
output (keptgraph.chain_state): the marked row's layout and how many rows hang under it and
beside it. Anything else (an entry under an older one, a label on an older row, @ elsewhere,
an id column growing) is left to keptgraph, which lays the whole graph out again and still
draws only the rows that changed.
"""

from ..graph import Row, child_layout, passes, prefix
from .. import keptgraph
from . import pipe


def _layout(kept):
    indent, show_connector, is_last, flat, virtual = kept
    gutters = None
    for position, show in reversed(flat):
        gutters = (position, show, gutters)
    return (indent, show_connector, is_last, gutters, virtual)


def _flat(layout):
    indent, show_connector, is_last, gutters, virtual = layout
    flat = []
    while gutters is not None:
        position, show, gutters = gutters
        flat.append((position, show))
    return (indent, show_connector, is_last, flat, virtual)


def chain(tree, out, patch, filter_, search, no_ids, max_count, previewer):
    """(the output's pieces: bytes drawn, or (a, b) for bytes a..b of the kept output; the state
    blob to keep) after an append to the leaf, or None."""
    nodes = tree._nodes
    n = len(nodes)
    old = patch.entries
    if search or patch.chain is None or n <= old or max_count == 0:
        return None
    shape = tree.shape
    if shape.shadowed:
        return None
    prow = shape.prow
    if any(prow[r] != r - 1 for r in range(old, n)):
        return None  # not each under the one before: keptgraph lays it out again
    types = nodes.tail("type", old)
    if filter_ == "labeled-only" and "label" in types:
        return None
    force = keptgraph.dirty_rows(tree, old)  # tool results whose call was appended: drawn again
    if force is None:
        return None  # (a call id repeated)
    marked, kept_layout, below, beside, marked_is_leaf, roots, at_row = patch.chain
    rows, digests, flags, labels, kids, lengths = patch.cols
    mi = keptgraph.find_row(rows, marked)
    if mi is None:
        return None  # (past -n)
    leaf = tree.leaf
    tags = tree.labels
    machine = out.machine

    def visible(r):
        node = nodes[r]
        return passes(node.type, node.role, node.hidden, node.id, filter_, tags.get(node.id), leaf)

    shown = [r for r in range(old, n) if visible(r)]
    replaced = marked_is_leaf and marked == old - 1 and not visible(marked)  # shown only as the leaf
    layout = _layout(kept_layout)
    if replaced:
        if not shown and (beside != 1 or mi == 0):
            return None  # the rows beside it would move up
        first = mi  # the new rows take its place
        new_marked = shown[-1] if shown else rows[mi - 1]  # (else the row above: its parent)
    else:
        if shown and below:
            return None  # a branch beside others: they would move
        first = mi + 1
        layout = child_layout(layout, roots)
        new_marked = shown[-1] if shown else marked
    at = None
    if machine:
        from ...core.leaf import position

        at = position(tree)
    nkids = shape.nkids

    def state(r, pre, active):
        node = nodes[r]
        return (pre, active | (r == new_marked) << 1 | (machine and node.id == at) << 2, tags.get(node.id),
                nkids[r] if machine else 0)

    width = patch.width
    drawn = {}  # kept rows drawn again: index -> (state, text)
    again = {marked, at_row, new_marked} | force
    for r in range(old, n):
        if types[r - old] == "label":
            node = nodes[r]
            if node.aux:
                again.add(tree._row(node.aux[0]) if isinstance(node.aux[0], str) else None)
    if machine:
        again.add(tree._row(at) if at is not None else None)
    marked_prefix = prefix(_layout(kept_layout), roots)
    if digests[mi] != keptgraph.digest(marked_prefix):
        return None
    for r in again:
        if r is None or r < 0 or r >= old:
            continue
        i = keptgraph.find_row(rows, r)
        if i is None:
            continue
        if replaced and i == mi:
            continue
        new = state(r, marked_prefix, flags[i] & 1)  # (the connectors of a kept row stay as they were)
        if r in force or new[1:] != (flags[i], labels[i], kids[i]):
            if r != marked:
                return None  # only the marked row's connectors are known: the others' are kept as digests
            drawn[i] = new
    added = []  # (row, state) of the new rows, in order
    for k, r in enumerate(shown):
        if k:
            layout = child_layout(layout, roots)
        added.append((r, state(r, prefix(layout, roots), True)))
    # the width of the id column: every row shown must fit it as before
    if any(len(nodes[r].id) > width for r, _ in added):
        return None
    if replaced and len(nodes[marked].id) == width:
        return None  # (it may have been the widest)
    total = len(rows) - (1 if replaced else 0) + len(added)
    if max_count is not None and (total > max_count or len(rows) == max_count and total < max_count):
        return None  # rows pushed past -n, or rows past it coming into view
    offsets = patch.offset_at()
    as_bytes = pipe.plain(out)
    pieces = []
    cols = keptgraph.columns()

    def keep(i, j):
        if j > i:
            pieces.append((offsets(i), offsets(j)))
            keptgraph.STATS["kept"] += j - i
            for col, values in zip(cols, patch.cols):
                col.extend(values[i:j])

    def draw(r, st):
        pre, flag, label, children = st
        node = nodes[r]
        if as_bytes:  # (human rows into a pipe, as a whole drawing writes them: stree.output.keptgraph.pipe)
            keptgraph.STATS["drawn"] += 1
            text = pipe.line(node.id, width, no_ids, pre, flag & 1, label, flag & 2, previewer.segments(node),
                             out.end)
        else:
            text = keptgraph.text_of(out, tree, Row(node, pre, bool(flag & 1), label, previewer.segments(node),
                                                   bool(flag & 2)), previewer, width, no_ids).encode("utf-8")
        pieces.append(text)
        for col, value in zip(cols, (r, keptgraph.digest(pre), flag, label, children, len(text))):
            col.append(value)

    pos = 0
    for i in sorted(set(drawn) | {first}):
        keep(pos, i)
        pos = i
        if i == first:
            for r, st in added:
                draw(r, st)
            if replaced:
                pos = i + 1  # (the row it replaces)
                continue
        if i in drawn:
            draw(rows[i], drawn[i])
            pos = i + 1
    keep(pos, len(rows))
    if shown:
        chain_state = (new_marked, _flat(layout), 0, beside if replaced and len(shown) == 1 else 1,
                       new_marked == n - 1, roots, -1)
    elif replaced:
        chain_state = None  # (the row above's layout is not kept: the next append lays it all out)
    else:
        chain_state = (marked, kept_layout, below, beside, False, roots, -1)
    if chain_state is not None and machine:
        found = tree._row(at) if at is not None else None
        chain_state = chain_state[:6] + (-1 if found is None else found,)
    keptgraph.STATS["how"] = "appended"
    return pieces, keptgraph.blob(width, cols, chain_state)
