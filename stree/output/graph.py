"""The session graph as pi's /tree draws it: order, filters, indentation, connectors.

A port of TreeList (flattenTree, applyFilter, recalculateVisualStructure,
render) without the interactive parts. Iterative throughout. How the drawing is written, and
kept for the next identical command: stree.output.keptgraph (its docstring has the calling
sequence); `log --graph --follow`: stree.output.graph_follow.
"""

from .graph_prefix import below as rows_below, placed, prefix_of
from .graph_prefix import child_layout, prefix  # noqa: F401 (keptgraph.patch's)

FILTERS = ("default", "no-tools", "user-only", "labeled-only", "all")
_SETTINGS = _NEVER = None  # the types of the filter classes setting and never (stree.core.entrytypes)


def _filter_classes():
    """Read from the table when first needed (a kept graph printed again needs none of it)."""
    global _SETTINGS, _NEVER
    from ..core import entrytypes

    _SETTINGS, _NEVER = entrytypes.with_filter("setting"), entrytypes.with_filter("never")


class Row:
    __slots__ = ("node", "prefix", "active", "label", "segments", "leaf")

    def __init__(self, node, prefix, active, label, segments, leaf):
        self.node = node
        self.prefix = prefix  # connector/gutter drawing, e.g. "│  ├─ "
        self.active = active  # on the path root -> leaf
        self.label = label
        self.segments = segments  # preview segments
        self.leaf = leaf  # the leaf, or the nearest visible entry above a hidden leaf

    def text(self, marker=True):
        """The row as plain text; pi's row plus stree's `← active` marker."""
        out = self.prefix + ("• " if self.active else "") + (f"[{self.label}] " if self.label else "")
        out += "".join(t for _, t in self.segments)
        if marker and self.leaf:
            out += "  ← active"
        return out


class Drawing:
    """The rows of a graph in output order, each drawn when it is read: a comb-shaped tree
    (a side branch at every step) draws rows as long as the tree is deep, so the whole
    drawing is quadratic in the tree's size and is never held at once. Iterate, index,
    slice, reverse(); what is kept per entry is its place in the layout."""

    __slots__ = ("order", "_draw", "_ids", "state", "chain", "width")

    def __init__(self, order, draw, ids, state=None, chain=None, width=None):
        self.order = order  # rows of the tree, in the order they are shown (an array, or graph_walk.Rows)
        self._draw = draw
        self._ids = ids
        self.state = state  # row -> (prefix, active, label, leaf mark): what a row shows besides its entry
        self.chain = chain  # () -> what a patch after an append to the leaf needs (stree.output.keptgraph.patch)
        self.width = width  # the width of every id, when all have one (known without reading them)

    def __len__(self):
        return len(self.order)

    def __bool__(self):
        return bool(self.order)

    def __iter__(self):
        draw = self._draw
        for r in self.order:
            yield draw(r)

    def __getitem__(self, i):
        if isinstance(i, slice):
            order, chain = self.order[i], self.chain
            if chain is not None and hasattr(order, "holds"):  # (laid out as read: graph_walk.Rows)
                whole = chain

                def chain():  # (None when the marked row is past the slice, as a patch would find it)
                    found = whole(reach=False)
                    return found if found is not None and order.holds(found[0]) else None
            return Drawing(order, self._draw, self._ids, self.state, chain, self.width)
        return self._draw(self.order[i])

    def reverse(self):
        self.order.reverse()

    def id_width(self, default=8):
        """The width of the longest id shown."""
        if self.width is not None and self.order:
            return self.width
        ids = self._ids
        return max((len(ids[r]) for r in self.order), default=default)


def passes(etype, role, hidden, id, filter, label, leaf):
    if _NEVER is None:
        _filter_classes()
    if etype in _NEVER:
        return False  # pi 1.5: usage entries are never shown, not even as the leaf
    if etype == "message" and role == "assistant" and hidden and id != leaf:
        return False  # tool-call-only assistant messages are hidden in every mode
    settings = etype in _SETTINGS
    if filter == "user-only":
        return etype == "message" and role == "user"
    if filter == "no-tools":
        return not settings and not (etype == "message" and role == "toolResult")
    if filter == "labeled-only":
        return label is not None
    if filter == "all":
        return True
    return not settings


def graph(tree, filter="default", search=None, leaf=None, previewer=None, keep=None, whole=False):
    """Rows of the graph, in pi's order, as a Drawing (each row drawn as it is read).
    `leaf` defaults to the session's leaf; `keep` (row -> bool), when given, shows only the rows
    it passes besides the filter and search (log's --since, --until, --role, --model).

    Works on rows and columns; a Node is made only for the rows shown. Laid out as the rows
    are read (stree.output.graph_walk), or with `whole` (and for entries that shadow others)
    all at once before the first row."""
    from ..format.stdlib import array

    from ..core.preview import Previewer, searchable_text

    if filter not in FILTERS:
        raise ValueError(filter)
    leaf = tree.leaf if leaf is None else leaf
    previewer = previewer or Previewer(tree)
    shape = tree.shape
    if not whole and not shape.shadowed and len(shape.prow) < 1 << 31 and hasattr(tree._nodes, "value"):
        return _walked(tree, filter, search, leaf, previewer, keep)
    labels = tree.labels
    leaf_row = tree._row(leaf) if leaf is not None else None
    flat = preorder(tree, leaf if leaf_row is not None else None)
    nodes = tree._nodes
    col = nodes.col
    ids, types, roles, hidden = col("id"), col("type"), col("role"), col("hidden")
    prow = tree.shape.prow

    tokens = [t for t in (search or "").lower().split() if t]
    visible = array("i")
    for r in flat:
        entry_id = ids[r]
        label = labels.get(entry_id)
        if not passes(types[r], roles[r], hidden[r], entry_id, filter, label, leaf):
            continue
        if tokens:
            text = searchable_text(tree.load(nodes[r]), label).lower()
            if not all(t in text for t in tokens):
                continue
        if keep is not None and not keep(r):
            continue
        visible.append(r)
    if not visible:
        return Drawing(visible, None, ids)

    # nearest visible ancestor of every entry (pre-order: parents come first) and how many rows
    # are drawn under each: flags and counts per row in arrays, not sets, maps and lists (a million
    # entries)
    n = len(prow)
    is_visible = bytearray(n)
    for r in visible:
        is_visible[r] = 1
    up = array("i", bytes(4 * n))  # -1: none
    for r in flat:
        j = prow[r]
        up[r] = -1 if j < 0 else j if is_visible[j] else up[j]
    del flat
    count = array("i", bytes(4 * n))
    roots = 0
    for r in visible:
        j = up[r]
        if j < 0:
            roots += 1
        else:
            count[j] += 1
    multiple_roots = roots > 1

    marked = leaf_row  # the leaf, or the nearest visible entry above a hidden one
    while marked is not None and not is_visible[marked]:
        j = prow[marked]
        marked = j if j >= 0 else None
    # what chain() needs of the walk, taken now: the walk's maps are not kept while rows are drawn
    below = count[marked] if marked is not None else 0
    beside = (count[up[marked]] if up[marked] >= 0 else roots) if marked is not None else 0

    # the rows in `visible` order are pi's walk of what is shown (pre-order: a row's parent is laid
    # out before it): each row's place from its parent's, which waits for its children in `waiting`
    layout = [None] * n  # row -> (indent, show_connector, is_last, gutters, virtual_root_child)
    shared = {}  # rows laid out alike share one tuple (a line of single children: all of its rows)
    waiting = {}  # row -> (its children's indent, several children, their gutters), until its last child
    root = 0
    for r in visible:
        j = up[r]
        if j < 0:
            root += 1
            indent, just_branched, show_connector, is_last, gutters, virtual_root_child = \
                1 if multiple_roots else 0, multiple_roots, multiple_roots, root == roots, None, multiple_roots
        else:
            indent, just_branched, gutters = waiting[j]
            show_connector = just_branched
            virtual_root_child = False
            count[j] -= 1
            is_last = not count[j]
            if is_last:
                del waiting[j]
        layout[r] = placed(shared, indent, show_connector, is_last, gutters, virtual_root_child)
        children = count[r]
        if children:
            waiting[r] = rows_below(indent, just_branched, show_connector, is_last, gutters, virtual_root_child,
                                    children, multiple_roots)
    del up, count, shared

    active = bytearray(n)  # 1: on the path to the leaf
    for r in tree.path_rows(leaf) if leaf is not None else ():
        active[r] = 1

    def state(r):
        indent, show_connector, is_last, gutters, virtual_root_child = layout[r]
        prefix = prefix_of(indent, show_connector, is_last, gutters, virtual_root_child, multiple_roots)
        return prefix, active[r] == 1, labels.get(ids[r]), r == marked

    def draw(r):
        prefix, on_path, label, leaf_mark = state(r)
        node = nodes[r]
        return Row(node, prefix, on_path, label, previewer.segments(node), leaf_mark)

    def chain():
        """(the marked row, its layout, how many rows are drawn under it, under the row above it,
        whether it is the leaf, several roots), or None without a marked row."""
        if marked is None:
            return None
        return (marked, layout[marked], below, beside, marked == leaf_row, multiple_roots)

    return Drawing(visible, draw, ids, state, chain)


def _walked(tree, filter, search, leaf, previewer, keep):
    """graph() laid out as its rows are read (stree.output.graph_walk): the first rows are
    written before the rest of the tree is walked."""
    from ..core.preview import searchable_text
    from .graph_walk import STATS as WALK, IdColumn, Rows, walk

    nodes = tree._nodes
    labels = tree.labels
    value = nodes.value
    tokens = [t for t in (search or "").lower().split() if t]
    leaf_row = tree._row(leaf) if leaf is not None else None
    tested = [0, None]  # rows tested, then the columns (decoded whole once many rows were)

    def test(r):
        cols = tested[1]
        if cols is not None:
            entry_id, etype, role, hidden = cols[0][r], cols[1][r], cols[2][r], cols[3][r]
        else:
            tested[0] += 1
            if tested[0] > COLUMNS_AFTER:
                tested[1] = tuple(nodes.col(name) for name in ("id", "type", "role", "hidden"))
            entry_id, etype, role, hidden = value("id", r), value("type", r), value("role", r), value("hidden", r)
        label = labels.get(entry_id)
        if not passes(etype, role, hidden, entry_id, filter, label, leaf):
            return False
        if tokens:
            text = searchable_text(tree.load(nodes[r]), label).lower()
            if not all(t in text for t in tokens):
                return False
        return keep is None or keep(r)

    active = path_flags(tree, leaf, leaf_row)  # (first: a loop of the leaf's parents raises CycleError here)
    marked = leaf_row  # the leaf, or the nearest visible entry above a hidden one
    while marked is not None and not test(marked):
        j = tree.shape.prow[marked]
        marked = j if j >= 0 else None
    layout = [None] * len(nodes)
    counts = {}
    order = Rows(walk(tree, test, active, leaf_row is not None, layout, counts))

    def state(r):
        if layout[r] is None:
            order[-1]  # (a row not reached yet: the rest of the tree walked)
        indent, show_connector, is_last, gutters, virtual_root_child = layout[r]
        prefix = prefix_of(indent, show_connector, is_last, gutters, virtual_root_child, counts["roots"] > 1)
        return prefix, active[r] == 1, labels.get(value("id", r) if tested[1] is None else tested[1][0][r]), r == marked

    def draw(r):
        prefix, on_path, label, leaf_mark = state(r)
        node = nodes[r]
        return Row(node, prefix, on_path, label, previewer.segments(node), leaf_mark)

    def chain(reach=True):
        """As graph()'s; `reach`: walk on to the marked row when the rows read so far end above it
        (not counted in WALK), else None then."""
        if marked is None or (not reach and marked not in counts):
            return None
        if marked not in counts:
            given = dict(WALK)
            for r in order:
                if r == marked:
                    break
            WALK.update(given)
        below, up = counts.get(marked, (0, -1))
        beside = counts[up][0] if up >= 0 else counts["roots"]
        return (marked, layout[marked], below, beside, marked == leaf_row, counts["roots"] > 1)

    return Drawing(order, draw, IdColumn(nodes), state, chain, _id_width(nodes))


def path_flags(tree, leaf, row):
    """1 for each row of tree.path_rows(leaf) (`row`: the leaf's, or None), walked up once (no list
    of a million rows: a path as long as the session is a good part of a first screen's cost;
    an index keeps the path of its last row: stree.storage.shape.Shape.path_flags)."""
    active = tree.shape.path_flags(row)
    if active is None:  # (a loop of parents: path_rows raises CycleError, naming it)
        tree.path_rows(leaf)
        active = bytearray(len(tree.shape.prow))
    return active


COLUMNS_AFTER = 1 << 14  # rows tested one value at a time before the columns are decoded whole


def _id_width(nodes):
    """The width of every id when all have one (an index knows it), else None."""
    width = getattr(nodes, "fixed_width", None)
    return width("id") if width is not None else None


def preorder(tree, first=None):
    """tree.depth_first_rows(first) without its children lists (a list per parent: most of a
    million-entry tree's walk): the rows sorted by parent (file order among siblings) and
    each parent's children found by its count of them (tree.shape.nkids), in arrays."""
    from ..format.stdlib import array
    from itertools import accumulate

    from ..format.timestamp import ts_millis

    shape = tree.shape
    prow, nkids = shape.prow, shape.nkids
    n = len(prow)
    if shape.shadowed or n >= 1 << 31:
        return tree.depth_first_rows(first, materialize=False)  # (rows pi's tree leaves out)
    by_parent = sorted(range(n), key=prow.__getitem__)  # stable: siblings in file order
    roots = 0
    while roots < n and prow[by_parent[roots]] < 0:
        roots += 1
    if roots != n - sum(nkids) or (n and prow[by_parent[0]] != -1):  # (a shape that does not add up)
        return tree.depth_first_rows(first, materialize=False)
    by_parent = array("i", by_parent)
    starts = array("q", accumulate(nkids, initial=roots))  # row j's children: by_parent[starts[j]:][:nkids[j]]
    path = tree.path_rows(first) if first is not None and tree._row(first) is not None else ()
    on_path = bytearray(n)
    for r in path:
        on_path[r] = 1
    stamps = None
    out = array("i")
    append = out.append
    stack = list(by_parent[:roots])
    if path:
        stack.sort(key=lambda r: not on_path[r])  # stable
    stack.reverse()
    pop, push = stack.pop, stack.append
    while stack:
        r = pop()
        append(r)
        k = nkids[r]
        if k == 1:
            push(by_parent[starts[r]])
        elif k:
            kids = by_parent[starts[r]:starts[r] + k].tolist()
            if stamps is None:  # (the children of branch points only: their values read one by one while few)
                nodes = tree._nodes
                stamps = (lambda c: nodes.value("ts", c)) if hasattr(nodes, "value") else nodes.col("ts").__getitem__
            kids.sort(key=lambda c: _ts_key(ts_millis(stamps(c))))  # stable: equal timestamps keep file order
            if path:
                kids.sort(key=lambda c: not on_path[c])
            kids.reverse()
            stack += kids
    return out


def _ts_key(ms):
    return ms if ms is not None else float("-inf")


def shown(tree, row, filter="default", tokens=(), leaf=None):
    """Whether the entry at `row` passes a /tree filter and search (every token, lowercased),
    as in the graph; for lists other than the graph (log without --graph)."""
    from ..core.preview import searchable_text

    node = tree._nodes[row]
    label = tree.labels.get(node.id)
    if not passes(node.type, node.role, node.hidden, node.id, filter, label, leaf):
        return False
    if tokens:
        text = searchable_text(tree.load(node), label).lower()
        return all(t in text for t in tokens)
    return True


def fold(prefix, room):
    """A row's connectors in at most `room` columns on a terminal: the outer levels folded into
    a marker `⋯N⋯` (N levels folded), the inner ones kept as drawn. Levels fold in steps of half
    what is kept, so rows of neighbouring depths fold alike and their connectors stay aligned;
    the marker's number changes where the step does. (pi's /tree scrolls its whole body sideways
    to the selected row instead; a printed graph has no selected row, and one offset for all
    rows would hide the entries of either the shallow rows or the deep ones.)"""
    if len(prefix) <= room:
        return prefix
    levels = len(prefix) // 3  # (cells of 3 columns: "│  ", "├─ ", "└─ ", "   ")
    keep = max(1, (room - 7) // 3)  # (7: the marker and its digits)
    step = max(1, keep // 2)
    folded = min(levels - 1, -(-(levels - keep) // step) * step)
    return f"⋯{folded}⋯" + prefix[folded * 3:]
