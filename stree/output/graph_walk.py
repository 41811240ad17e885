"""The graph's layout made row by row as the rows are read (stree.output.graph), so that the first
screen of a long session is written before the rest of the tree is walked.

The same order and places as graph()'s whole layout (pi's flattenTree, applyFilter,
recalculateVisualStructure), from what each row needs, found when it is reached: its children
(from the parents' column, searched from the row on), how many rows are drawn under it (its
children, or below a hidden child theirs, as far as the first shown ones), whether it is on
the path to the leaf. Rows are visited in pi's pre-order: a row's parent is laid out before
it, and its last drawn sibling is known when the parent's count of them runs out.

Costs before the first row: the path to the leaf (its depth) and the hidden rows between a
shown row and the shown rows under it (a few with the default filter; with --filter
labeled-only, a search or --since, as far as the next match). A branch whose children are far
apart in the file is searched for them; past a budget of bytes searched, every row's children
are listed at once (what graph() did before the first row) and the walk goes on with them.
"""

from ..format.stdlib import array
from ..storage import register_counters
from .graph_prefix import below as rows_below, placed

# when the last row given out was laid out: rows tested (shown or not), bytes of the parents' column searched
STATS = register_counters("walk", {"given": 0, "searched": 0})
SEARCH_BUDGET = 1 << 26  # bytes of the parents' column searched for children before listing them all
MEMO_ROWS = 1 << 16  # children lists kept between a count below a row and the walk reaching them


class Rows:
    """The rows of a drawing in order, made as they are read: iterate (lazily), index, slice
    (a head lazily), len() and reverse() (which walk the whole tree first)."""

    def __init__(self, walk, head=None):
        self._walk = walk  # a generator of rows, or None when done
        self._made = array("i")
        self._head = head  # at most this many rows

    def _more(self, upto=None):
        """Make rows until `upto` are made (all when None); whether that many exist."""
        made = self._made
        walk = self._walk
        limit = self._head
        while walk is not None and (upto is None or len(made) < upto) and (limit is None or len(made) < limit):
            r = next(walk, None)
            if r is None:
                walk = self._walk = None
                break
            made.append(r)
        if walk is not None and limit is not None and len(made) >= limit:
            self._walk = None
        return upto is not None and len(made) >= upto

    def __iter__(self):
        made = self._made
        k = 0
        while True:
            if k < len(made):
                yield made[k]
                k += 1
            elif not self._more(k + 1):
                return

    def __len__(self):
        self._more()
        return len(self._made)

    def __bool__(self):
        return self._more(1)

    def __getitem__(self, i):
        if isinstance(i, slice):
            if (i.start or 0) == 0 and i.step in (None, 1) and i.stop is not None and i.stop >= 0:
                return Rows(iter(self), i.stop)
            self._more()
            return self._made[i]
        if i < 0:
            self._more()
        else:
            self._more(i + 1)
        return self._made[i]

    def holds(self, r):
        """Whether row `r` is among the rows made (and given, for a head) so far."""
        return r in self._made

    def index(self, r):
        self._more()
        return self._made.index(r)

    def reverse(self):
        self._more()
        self._made.reverse()


class IdColumn:
    """ids[r] without decoding the id column (each read from the index as it is asked)."""

    def __init__(self, nodes):
        self._value = nodes.value

    def __getitem__(self, r):
        return self._value("id", r)


def as_bytes(prow):
    """The parents' column as the bytes of int32s (an index's array, or a parse's list)."""
    return (prow if prow.__class__ is array and prow.typecode == "i" else array("i", prow)).tobytes()


def roots_of(prow, data):
    """The rows without a parent, in file order (the int32 -1 at aligned places of `data`, the
    parents' column as bytes)."""
    out = []
    needle = b"\xff\xff\xff\xff"
    pos = data.find(needle)
    while pos >= 0:
        if pos % 4:
            pos = data.find(needle, pos + 4 - pos % 4)
            continue
        out.append(pos // 4)
        pos = data.find(needle, pos + 4)
    return out


def walk(tree, test, on_path, path, layout, counts):
    """The shown rows in pi's order, each laid out in `layout` (row -> place, as graph() lays it
    out) before it is given. `test(r)`: whether row r is shown (filter, search, keep);
    `on_path`: 1 for the rows from a root to the leaf (`path`: whether there are any). `counts`
    gets "roots" (how many rows are drawn without a shown row above them) before the first row,
    and for each shown row of the path r: (how many rows are drawn under it, the nearest shown
    row above it or -1), what chain() needs. A generator: nothing is done before the first row
    is asked."""
    from ..format.timestamp import ts_millis

    shape = tree.shape
    prow, nkids = shape.prow, shape.nkids
    n = len(prow)
    nodes = tree._nodes
    data = None  # the parents' column as bytes, searched for a row's children
    ordered = shape.ordered is True
    searched = tested = 0
    index = None  # (by_parent, starts): every row's children, once the search budget is spent
    memo = {}
    seen = bytearray(n)  # 0: not tested yet, 1: shown, 2: not

    def kids(r):
        nonlocal data, searched, index
        k = nkids[r]
        if not k:
            return []
        got = memo.pop(r, None)
        if got is not None:
            return got
        if index is not None:
            by_parent, starts = index
            return by_parent[starts[r]:starts[r] + k].tolist()
        if k == 1 and r + 1 < n and prow[r + 1] == r:
            return [r + 1]
        if searched > SEARCH_BUDGET:
            index = children_index(shape)
            return kids(r)
        if data is None:
            data = as_bytes(prow)
        needle = r.to_bytes(4, "little" if _LITTLE else "big", signed=True)
        start = 4 * (r + 1) if ordered else 0
        out = []
        pos = data.find(needle, start)
        while pos >= 0:
            if pos % 4:
                pos = data.find(needle, pos + 4 - pos % 4)
                continue
            out.append(pos // 4)
            if len(out) == k:
                break
            pos = data.find(needle, pos + 4)
        searched += (pos if pos >= 0 else len(data)) - start
        return out

    def shown(r):
        nonlocal tested
        v = seen[r]
        if not v:
            tested += 1
            v = seen[r] = 1 if test(r) else 2
        return v == 1

    def below(r, children=None):
        """How many rows are drawn under shown row r: its shown children, and below a hidden
        child its shown descendants nearest to it (their children lists kept for the walk)."""
        count = 0
        stack = list(kids(r) if children is None else children)
        while stack:
            x = stack.pop()
            if shown(x):
                count += 1
            else:
                got = memo.get(x)
                if got is None:
                    got = kids(x)
                    if len(memo) < MEMO_ROWS:
                        memo[x] = got
                stack += got
        return count

    stamps = None

    def ts(c):
        nonlocal stamps
        if stamps is None:
            stamps = (lambda c: nodes.value("ts", c)) if hasattr(nodes, "value") else nodes.col("ts").__getitem__
        ms = ts_millis(stamps(c))
        return ms if ms is not None else float("-inf")

    data = as_bytes(prow) if n else b""
    starts = roots_of(prow, data) if n else []
    if path:
        starts.sort(key=lambda r: not on_path[r])  # stable
    roots = 0
    for r in starts:
        roots += 1 if shown(r) else below(r)
    multiple_roots = roots > 1
    counts["roots"] = roots

    shared = {}
    waiting = {}  # shown row -> [its children's indent, several children, their gutters, rows left to lay out]
    root = 0
    stack = [(r, -1) for r in reversed(starts)]
    pop, push = stack.pop, stack.append
    while stack:
        r, j = pop()
        children = kids(r)
        if len(children) > 1:
            children.sort(key=ts)  # stable: equal timestamps keep file order
            if path:
                children.sort(key=lambda c: not on_path[c])
        if not shown(r):
            for c in reversed(children):
                push((c, j))
            continue
        if j < 0:
            root += 1
            indent, just_branched, show_connector, is_last, gutters, virtual_root_child = \
                1 if multiple_roots else 0, multiple_roots, multiple_roots, root == roots, None, multiple_roots
        else:
            wait = waiting[j]
            indent, just_branched, gutters = wait[0], wait[1], wait[2]
            show_connector = just_branched
            virtual_root_child = False
            wait[3] -= 1
            is_last = not wait[3]
            if is_last:
                del waiting[j]
        layout[r] = placed(shared, indent, show_connector, is_last, gutters, virtual_root_child)
        count = below(r, children)
        if on_path[r]:
            counts[r] = (count, j)
        if count:
            waiting[r] = [*rows_below(indent, just_branched, show_connector, is_last, gutters, virtual_root_child,
                                      count, multiple_roots), count]
        for c in reversed(children):
            push((c, r))
        STATS["given"], STATS["searched"] = tested, searched
        yield r


def children_index(shape):
    """(by_parent, starts): the rows sorted by parent (file order among siblings) and where each
    row's children begin among them (as stree.output.graph.preorder lists them)."""
    from itertools import accumulate

    prow, nkids = shape.prow, shape.nkids
    n = len(prow)
    by_parent = sorted(range(n), key=prow.__getitem__)
    roots = 0
    while roots < n and prow[by_parent[roots]] < 0:
        roots += 1
    return array("i", by_parent), array("q", accumulate(nkids, initial=roots))


_LITTLE = __import__("sys").byteorder == "little"
