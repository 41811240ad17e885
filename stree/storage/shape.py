"""The tree's shape by row (parents, children counts, labels, the session name), computed
from the columns of Nodes and extended as lines are appended: what an index stores so
that a warm command does not recompute it. Pure structure, no entry content."""

from itertools import islice, repeat
from operator import eq


def hashable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return True


# -- context building (pi's buildSessionContext and message helpers) ----------


_STORED = object()  # a Shape's field still in its index, not decoded yet


def _stored_field(name):
    slot = "_" + name

    def get(self):
        value = getattr(self, slot)
        if value is _STORED:
            value = self._decode(name)
        return value

    def put(self, value):
        setattr(self, slot, value)

    return property(get, put)


class Shape:
    """The tree's structure by row: what commands need besides the columns.

    prow[r]: the row of r's parent as pi's byId finds it (-1: a root); nkids[r]:
    how many children pi's tree gives r; shadowed: rows an entry with the same id
    further down the file hides; dangling: parent id -> rows naming it while no
    entry has that id; labels/stamps: pi's label map; name_row: the latest
    session_info; targets: label target -> its row, for the targets that exist;
    ordered: True when every parent comes before its child in the file (prow[r] < r for
    every row: then no path has a loop, and a walk up a path meets its rows in falling order),
    False when not, None until known (ordered_rows()). An index stores it, so a warm command
    does not recompute it; a Shape read from an index (Shape.stored) decodes each field when
    it is first read, and parents() reads a few rows of prow without decoding it. setters():
    the last thinking-level and model setters on each row's path, when an index keeps them.
    path_flags(): the rows of a path, found through the path of the index's last row it keeps."""

    __slots__ = ("_prow", "_nkids", "_shadowed", "_dangling", "_labels", "_stamps", "name_row", "_targets",
                 "ordered", "_stored", "_setters", "_path")

    def __init__(self, prow, nkids, shadowed, dangling, labels, stamps, name_row, targets, ordered=None):
        self._prow = prow
        self._nkids = nkids
        self._shadowed = shadowed
        self._dangling = dangling
        self._labels = labels
        self._stamps = stamps
        self.name_row = name_row
        self._targets = targets
        self.ordered = ordered
        self._stored = None
        self._setters = None
        self._path = None  # (ordered only) 1 for each row on the path of the index's last row: bytes, as kept

    prow = _stored_field("prow")
    nkids = _stored_field("nkids")
    shadowed = _stored_field("shadowed")
    dangling = _stored_field("dangling")
    labels = _stored_field("labels")
    stamps = _stored_field("stamps")
    targets = _stored_field("targets")

    @classmethod
    def stored(cls, prow, nkids, rest, name_row, ordered, setters=None, path=None):
        """The Shape an index holds: `prow` and `nkids` the bytes of int32 arrays, `rest` the
        marshal data of (shadowed, dangling, labels, stamps, targets), each decoded when read;
        `setters`: the bytes of the two int32 arrays of setters(), or None; `path`: last_path()'s
        bytes, or None."""
        shape = cls(_STORED, _STORED, _STORED, _STORED, _STORED, _STORED, name_row, _STORED, ordered)
        shape._stored = {"prow": prow, "nkids": nkids, "rest": rest}
        if setters is not None:
            shape._setters = setters  # (a function giving their bytes, checked: read in place when first asked)
        if path is not None and ordered:
            shape._path = path
        return shape

    def path_flags(self, row):
        """A bytearray of 1 for each row on the path from `row` up to its root (`row` None or -1:
        none), or None when that path loops. Walked up until it meets the path an index keeps
        (last_path()): in an ordered shape, that path's rows up to the one met are exactly its
        ancestors, copied at once (a path can be most of a session: a walk of it, most of the
        first screen of a million-entry graph). Counts the rows walked (STREE_DEBUG_STATS: `path
        rows walked`, as stree.core.context does)."""
        from . import counters

        walked = counters("path")
        prow = self.parents()
        n = len(prow)
        active = bytearray(n)
        kept = self._path
        known = len(kept) if kept is not None else 0
        steps = 0
        try:
            while row is not None and row >= 0:
                if row < known and kept[row]:
                    active[:row + 1] = kept[:row + 1]  # (the rows walked so far come after it: ordered)
                    return active
                active[row] = 1
                row = prow[row]
                steps += 1
                if steps > n:
                    return None
            return active
        finally:
            if walked is not None:
                walked["walked"] += steps

    def last_path(self):
        """The bytes an index keeps for path_flags(): 1 for each row on the last row's path; None
        when the rows are not ordered (a parent's row after its child's)."""
        if not self.ordered_rows():
            return None
        prow = self.parents()
        flags = self.path_flags(len(prow) - 1)
        return bytes(flags) if flags is not None else None

    def setters(self, nodes=None):
        """(thinking, model): for every row, the row of the last thinking_level_change on its path
        and that of the last model setter (a model_change or an assistant message), the row
        itself included, -1 for none: a context finds them without walking the whole path. None
        when not known; made from the type and role columns of `nodes` when given (once, for an
        index: a pass over every row), only for an ordered shape (a parent's row comes first)."""
        self._kept_setters()
        if self._setters is None and nodes is not None and self.ordered_rows():
            from ..format.stdlib import array

            self._setters = (array("i"), array("i"))
            extend_setters(self._setters, self.prow, nodes.col("type"), nodes.col("role"), 0)
        return self._setters

    def _kept_setters(self):
        """The setters an index keeps, read in place; None when their bytes there are not those
        written (stree.storage.area.Damaged): then they are made again, as when an index has none."""
        if callable(self._setters):
            from .area import Damaged

            try:
                self._setters = tuple(memoryview(b).cast("i") for b in self._setters())
            except Damaged:
                self._setters = None
        return self._setters

    def _decode(self, name):
        stored = self._stored
        if name in ("prow", "nkids"):
            from ..format.stdlib import array

            value = array("i")
            value.frombytes(stored[name])
            setattr(self, "_" + name, value)
            return value
        import marshal

        for field, value in zip(("shadowed", "dangling", "labels", "stamps", "targets"), marshal.loads(stored["rest"])):
            if getattr(self, "_" + field) is _STORED:  # (not one given a new value meanwhile)
                setattr(self, "_" + field, value)
        return getattr(self, "_" + name)

    def parents(self):
        """prow, or a view of its stored bytes when it is not decoded yet: for a walk that reads
        a few rows of a long session (nothing copied, only the pages read are touched)."""
        if self._prow is _STORED:
            return memoryview(self._stored["prow"]).cast("i")
        return self._prow

    def state(self):
        """Every field, decoded (`ordered` found first when not known yet)."""
        return (self.prow, self.nkids, self.shadowed, self.dangling, self.labels, self.stamps, self.name_row,
                self.targets, self.ordered_rows())

    def rest(self):
        """(shadowed, dangling, labels, stamps, targets): what an index stores with prow and nkids."""
        return self.shadowed, self.dangling, self.labels, self.stamps, self.targets

    def ordered_rows(self):
        """self.ordered, found when not known yet (a pass over every row, at C speed)."""
        if self.ordered is None:
            from operator import ge

            prow = self.prow
            self.ordered = not any(map(ge, prow, range(len(prow))))
        return self.ordered


def compute_shape(nodes):
    """The Shape of every row of a Nodes sequence."""
    from collections import Counter  # (here: a warm command loads no collections)

    ids = nodes.col("id")
    parents = nodes.col("parent")
    n = len(ids)
    row_of = dict(zip(ids, range(n)))  # a later duplicate wins, as in pi's byId
    get = row_of.get
    shadowed = set() if len(row_of) == n else {r for r, x in enumerate(ids) if row_of[x] != r}
    dangling = {}
    try:  # every row at once, at C speed: then the few roots, self-parents and missing parents
        prow = list(map(get, parents, repeat(-2)))
    except TypeError:  # an unhashable parentId names no entry
        prow = [get(p, -2) if hashable(p) else -3 for p in parents]
        for r in positions(prow, -3):
            prow[r] = -1
    for r in positions(prow, -2):  # no parent, or one no entry has
        prow[r] = -1
        p = parents[r]
        if p is not None:
            dangling.setdefault(p, []).append(r)
    for r in positions(list(map(eq, ids, parents)), True):
        prow[r] = -1  # its own parent: a root
    counts = Counter(prow)
    for r in shadowed:  # a shadowed entry is nobody's child in pi's tree
        if prow[r] >= 0:
            counts[prow[r]] -= 1
    nkids = list(map(counts.get, range(n), repeat(0)))
    shape = Shape(prow, nkids, shadowed, dangling, {}, {}, -1, {})
    scan_labels(shape, nodes, 0, get)
    return shape, row_of


def positions(values, value):
    """The indexes of `value` in a list, in order (C-speed scans: it is rare)."""
    out = []
    i = -1
    index = values.index
    try:
        while True:
            i = index(value, i + 1)
            out.append(i)
    except ValueError:
        pass
    return out


def extend_setters(setters, prow, types, roles, start):
    """Append the rows from `start` on (`types`, `roles`: theirs) to the arrays of Shape.setters
    (every parent's row comes before its child's: it is there already)."""
    thinking, model = setters
    think, set_model = thinking.append, model.append
    for r, p, etype, role in zip(range(start, start + len(types)), islice(prow, start, None), types, roles):
        if p < 0:
            think(r if etype == "thinking_level_change" else -1)
            set_model(r if etype == "model_change" or (etype == "message" and role == "assistant") else -1)
        elif etype == "message":
            think(thinking[p])
            set_model(r if role == "assistant" else model[p])
        else:
            think(r if etype == "thinking_level_change" else thinking[p])
            set_model(r if etype == "model_change" else model[p])


def extend_shape(shape, nodes, start, find):
    """The Shape after rows [start:] were appended, or None when they change earlier
    rows (a repeated id, or a parent that was missing): then compute_shape() it. An appended
    row's parent is an earlier row: `ordered` stays as it was.
    `find(id)` -> the row of an entry before `start`, or None."""
    ids = nodes.tail("id", start)
    parents = nodes.tail("parent", start)
    prow = shape.prow
    nkids = shape.nkids
    if len(prow) != start or shape.shadowed:
        return None
    new = {}
    for k, x in enumerate(ids):
        if x in new or x in shape.dangling or find(x) is not None:
            return None
        r = start + k
        new[x] = r
        p = parents[k]
        j = -1
        if p is not None and p != x:
            j = new.get(p)
            if j is None:
                j = find(p)
            if j is None:
                j = -1
                shape.dangling.setdefault(p, []).append(r)
            else:
                nkids[j] += 1
        prow.append(j)
        nkids.append(0)
        if x in shape.labels:
            shape.targets[x] = r  # a labelled id that was missing
    shape.prow = prow
    shape.nkids = nkids
    if shape._kept_setters() is not None:  # (kept by the index: extended, in arrays of their own)
        from ..format.stdlib import array

        shape._setters = tuple(array("i", a.tobytes()) if a.__class__ is memoryview else a for a in shape._setters)
        extend_setters(shape._setters, prow, nodes.tail("type", start), nodes.tail("role", start), start)
    scan_labels(shape, nodes, start, lambda t: new[t] if t in new else find(t))
    return shape


def scan_labels(shape, nodes, start, locate):
    types = nodes.tail("type", start)
    infos = positions(types, "session_info")
    if infos:
        shape.name_row = start + infos[-1]  # the latest wins
    rows = positions(types, "label")
    if not rows:
        return
    if hasattr(nodes, "value"):  # only the label rows' values: the columns stay undecoded
        def value(name, k):
            return nodes.value(name, start + k)
    else:
        cols = {"aux": nodes.tail("aux", start), "ts": nodes.tail("ts", start)}

        def value(name, k):
            return cols[name][k]
    labels = shape.labels
    times = shape.stamps
    targets = shape.targets
    for k in rows:
        aux = value("aux", k)
        if aux is None:
            continue
        target, label = aux
        if label:
            if target not in targets:
                try:
                    row = locate(target)
                except TypeError:  # an unhashable targetId names no entry
                    row = None
                if row is not None:
                    targets[target] = row
            labels[target] = label
            times[target] = value("ts", k)
        else:
            labels.pop(target, None)
            times.pop(target, None)
            targets.pop(target, None)


def meet(prow, a, b):
    """(the row where the paths of rows a and b meet or None, the rows from a up to it, oldest
    first), as a branch summary covers them (stree.core.tree.Tree.abandoned), found by walking
    both paths up in turn: a move near the leaf of a long path keeps no set of the whole path.
    None when a's path or the walk is longer than the tree (a parent loop: the caller raises)."""
    n = len(prow)
    r = a
    for _ in repeat(None, n + 1):  # a's path must end at a root
        if r < 0:
            break
        r = prow[r]
    else:
        return None
    common = None
    if b is not None:
        seen_a, seen_b = {a}, {b}
        x, y = a, b
        common = a if a == b else None
        steps = 0
        while common is None and (x >= 0 or y >= 0):
            steps += 1
            if steps > 2 * n + 2:
                return None
            if y >= 0:  # the first row either walk finds the other has walked is where they meet
                if y in seen_a:
                    common = y
                    break
                seen_b.add(y)
                y = prow[y]
            if x >= 0:
                x = prow[x]
                if x >= 0:
                    if x in seen_b:
                        common = x
                        break
                    seen_a.add(x)
    out = []
    r = a
    while r >= 0 and r != common:
        out.append(r)
        r = prow[r]
    out.reverse()
    return common, out


def reshape(nodes, known, many):
    """Bring the stored tree shape of `nodes` up to date with the rows parsed after row `known`
    (stree.storage.index, as it reads appended lines). `many`: more than a few rows were
    appended (the indexed ids are then mapped once, rather than each new id looked up)."""
    if nodes.shape is not None and len(nodes.shape.parents()) == len(nodes):
        return  # (the parse made it: stree.storage.parallel)
    if nodes.shape is not None:
        ids = None
        if known == nodes.nbase and not many:
            def find(id):  # an id among the indexed rows, found in the index's id text
                return nodes.find_base(id)
        elif many:
            base = nodes.col("id")[:known]
            row_of = dict(zip(base, range(known)))
            find = row_of.get
        else:
            def find(id):
                nonlocal ids
                if ids is None:
                    ids = nodes.col("id")
                try:
                    return ids.index(id, 0, known)
                except (ValueError, TypeError):
                    return None
        if extend_shape(nodes.shape, nodes, known, find) is not None:
            return
    nodes.shape = compute_shape(nodes)[0]
