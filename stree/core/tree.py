"""The core: the entry tree, paths, merge base, ranges, labels, LLM context.

Everything here is iterative (sessions can be 100,000 entries deep) and works on
Node structure; entry content is fetched through `load` only where needed.
"""

from itertools import repeat

from ..errors import CycleError
from ..format.decode import JS_WHITESPACE
from ..format.timestamp import ts_millis
from ..storage.shape import compute_shape, hashable, meet
from .context import STATS, build_context_lazy, context_suffix, model_lazy


class _ListNodes:
    """A plain list of Node objects seen through the interface of storage.nodes.Nodes."""

    shape = None

    def __init__(self, nodes):
        self._list = nodes
        self._cols = {}
        self._rows = None

    def col(self, name):
        c = self._cols.get(name)
        if c is None:
            c = self._cols[name] = [getattr(n, name) for n in self._list]
        return c

    def tail(self, name, start):
        return self.col(name)[start:]

    def __len__(self):
        return len(self._list)

    def __getitem__(self, i):
        return self._list[i]

    def row(self, node):
        if self._rows is None:
            self._rows = {id(n): r for r, n in enumerate(self._list)}
        return self._rows[id(node)]


class _ById:
    """tree.by_id: id -> Node (pi's byId: a later duplicate wins), made on demand."""

    def __init__(self, tree):
        self._tree = tree

    def __contains__(self, id):
        return self._tree._row(id) is not None

    def get(self, id, default=None):
        r = self._tree._row(id)
        return default if r is None else self._tree._nodes[r]

    def __getitem__(self, id):
        r = self._tree._row(id)
        if r is None:
            raise KeyError(id)
        return self._tree._nodes[r]

    def __iter__(self):
        return iter(self._tree._row_map())

    def __len__(self):
        return len(self._tree._row_map())

    def keys(self):
        return self._tree._row_map().keys()

    def values(self):
        nodes = self._tree._nodes
        return [nodes[r] for r in self._tree._row_map().values()]

    def items(self):
        nodes = self._tree._nodes
        return [(id, nodes[r]) for id, r in self._tree._row_map().items()]


class Tree:
    """The entries of one session as a tree, as pi's SessionManager sees them.

    Works on rows (positions in file order) and the columns of storage.nodes.Nodes; Node
    objects are made only for the entries a caller asks for."""

    def __init__(self, nodes, load=None, previews=None):
        self.nodes = nodes  # file order
        self._nodes = nodes if hasattr(nodes, "col") else _ListNodes(nodes)
        self.load = load  # node -> entry dict (content), migrated
        self.previews = previews  # cached preview segments (stree.storage.previews.PreviewCache) or None
        self._shape = getattr(self._nodes, "shape", None)
        self._row_of = None
        self._lookups = 0
        self._children = None
        self._roots = None
        self._paths = {}  # row -> path rows, as commands often ask twice
        n = len(self._nodes)
        self.leaf = self._nodes[n - 1].id if n else None

    def of_entries(self, nodes):
        """A tree of some of this one's entries (a path, a range's entries: export), the last
        its leaf; their content read as this tree reads it."""
        return Tree(nodes, self.load)

    # -- rows ----------------------------------------------------------

    @property
    def shape(self):
        if self._shape is None:
            self._shape, self._row_of = compute_shape(self._nodes)
        return self._shape

    def _row_map(self):
        if self._row_of is None:
            ids = self._nodes.col("id")
            self._row_of = dict(zip(ids, range(len(ids))))
        return self._row_of

    def _row(self, id):
        """The row pi's byId gives `id` (the last entry with it), or None."""
        if self._row_of is not None:
            try:
                return self._row_of.get(id)
            except TypeError:
                return None
        self._lookups += 1
        if self._lookups > 16:  # many lookups: a map pays for itself
            return self._row(id) if self._row_map() is not None else None
        if id.__class__ is not str:
            return None if id is None else self._row_map().get(id) if hashable(id) else None
        find = getattr(self._nodes, "find", None)
        if find is None:
            return self._row_map().get(id)
        return find(id)

    def row_of(self, node):
        return self._nodes.row(node)

    def node(self, row):
        return self._nodes[row]

    def column(self, name):
        """One field of every row, in file order (storage.nodes.Nodes.col)."""
        return self._nodes.col(name)

    def id_of(self, row):
        return self._nodes[row].id

    @property
    def by_id(self):
        return _ById(self)

    # -- structure -----------------------------------------------------

    def get(self, id):
        r = self._row(id)
        return None if r is None else self._nodes[r]

    def parent_of(self, node):
        j = self.shape.prow[self._nodes.row(node)]
        return None if j < 0 else self._nodes[j]

    def _build_children(self):
        shape = self.shape
        prow = shape.prow
        shadowed = shape.shadowed
        kids = {}
        roots = []
        get = kids.get
        for r, j in enumerate(prow):
            if shadowed and r in shadowed:
                continue  # an earlier duplicate: pi's tree holds only the last
            if j < 0:
                roots.append(r)
            else:
                lst = get(j)
                if lst is None:
                    kids[j] = [r]
                else:
                    lst.append(r)
        stamps = None
        for j, lst in kids.items():
            if len(lst) > 1:
                if stamps is None:
                    stamps = self._nodes.col("ts")
                lst.sort(key=lambda r: _ts_key(stamps[r]))  # stable: equal timestamps keep file order
        self._children = kids
        self._roots = roots

    def child_rows(self, row):
        if self._children is None:
            self._build_children()
        return self._children.get(row, ())

    def children(self, id):
        r = self._row(id)
        if r is None:
            return ()
        nodes = self._nodes
        return [nodes[c] for c in self.child_rows(r)]

    def child_count(self, id, node=None):
        """len(children(id)), without building the children lists (`node`: the entry
        with that id, when the caller has it)."""
        shape = self.shape
        if node is not None and not shape.shadowed:
            return shape.nkids[self._nodes.row(node)]
        r = self._row(id)
        return 0 if r is None else shape.nkids[r]

    @property
    def roots(self):
        if self._roots is None:
            self._build_children()
        nodes = self._nodes
        return [nodes[r] for r in self._roots]

    def path_rows(self, id):
        """Rows from the root to `id`, oldest first. Raises CycleError on a loop."""
        r = self._row(id) if id is not None else None
        if r is None:
            return []
        cached = self._paths.get(r)
        if cached is not None:
            return list(cached)
        prow = self.shape.prow
        out = []
        append = out.append
        start = r
        for _ in repeat(None, len(prow) + 1):
            if r < 0:
                break
            append(r)
            r = prow[r]
        else:  # longer than the tree: a parent loop
            self._raise_cycle(start)
        STATS["walked"] += len(out)
        out.reverse()
        if len(self._paths) < 8:
            self._paths[out[-1]] = out
        return list(out)

    def ancestor_rows(self, id, limit):
        """The last `limit` rows of path_rows(id), newest first. The rest of the path is walked
        (path_rows()) only to raise CycleError on a loop: not where every parent's row comes
        before its child's (Shape.ordered, as an index keeps it), where none can be."""
        r = self._row(id) if id is not None else None
        if r is None:
            return []
        prow, out = self.shape.prow, []
        while r >= 0 and len(out) < limit:
            out.append(r)
            r = prow[r]
        STATS["walked"] += len(out)
        if r >= 0 and not self.shape.ordered:
            self.path_rows(id)
        return out

    def _raise_cycle(self, r):
        prow = self.shape.prow
        out = []
        seen = set()
        while r not in seen:
            seen.add(r)
            out.append(r)
            r = prow[r]
        loop = [self.id_of(x) for x in out[out.index(r):]]
        raise CycleError(loop + [self.id_of(r)])

    def path(self, id):
        """Entries from the root to `id`, oldest first. Raises CycleError on a loop."""
        nodes = self._nodes
        return [nodes[r] for r in self.path_rows(id)]

    def path_ids(self, id):
        ids = self._nodes.col("id")
        return [ids[r] for r in self.path_rows(id)]

    def merge_base(self, a, b):
        """The deepest entry on both paths, or None."""
        if a is None or b is None:
            return None
        on_a = set(self.path_rows(a))
        for r in reversed(self.path_rows(b)):
            if r in on_a:
                return self.id_of(r)
        return None

    def is_ancestor(self, a, b):
        """True when `a` is on the path to `b` (an entry is its own ancestor, as in git)."""
        return a is not None and a in set(self.path_ids(b))

    def range(self, a, b):
        """`a..b`: entries on b's path that are not on a's path, oldest first."""
        exclude = set(self.path_ids(a)) if a is not None else set()
        ids = self._nodes.col("id")
        nodes = self._nodes
        return [nodes[r] for r in self.path_rows(b) if ids[r] not in exclude]

    def symmetric_range(self, a, b):
        """`a...b`: entries on either side since the merge base, in file order."""
        base = self.merge_base(a, b)
        shared = set(self.path_rows(base)) if base is not None else set()
        rows = set()
        for side in (a, b):
            if side is not None:
                rows.update(r for r in self.path_rows(side) if r not in shared)
        nodes = self._nodes
        return [nodes[r] for r in sorted(rows)]

    def abandoned(self, old_leaf, target):
        """Entries a branch summary covers when moving from old_leaf to target
        (pi's collectEntriesForBranchSummary): oldest first, plus the common ancestor."""
        if old_leaf is None:
            return [], None
        a = self._row(old_leaf)
        b = self._row(target) if target is not None else None
        met = meet(self.shape.prow, a, b) if a is not None and (b is not None or target is None) else None
        if met is not None:  # (None: a row missing or a loop, found and raised below)
            common, out = met
            nodes = self._nodes
            return [nodes[r] for r in out], (None if common is None else self.id_of(common))
        old_path = set(self.path_rows(old_leaf))
        common = None
        if target is not None:
            prow = self.shape.prow
            r = self._row(target)
            for _ in repeat(None, len(prow) + 1):
                if r is None or r < 0:
                    break
                if r in old_path:
                    common = r
                    break
                r = prow[r]
            else:
                self.path_rows(target)  # a parent loop: raises CycleError
        out = []
        r = self._row(old_leaf)
        prow = self.shape.prow
        seen = set()
        while r is not None and r >= 0 and r != common and r not in seen:
            seen.add(r)
            out.append(r)
            r = prow[r]
        out.reverse()
        nodes = self._nodes
        return [nodes[r] for r in out], (None if common is None else self.id_of(common))

    def unreachable(self):
        """Entries not reachable from any root: those in or below a parent cycle."""
        if self._roots is None:
            self._build_children()
        seen = set()
        stack = list(self._roots)
        while stack:
            r = stack.pop()
            seen.add(r)
            stack.extend(self.child_rows(r))
        shadowed = self.shape.shadowed
        nodes = self._nodes
        return [nodes[r] for r in range(len(nodes)) if r not in seen and r not in shadowed]

    def depth_first_rows(self, first=None, materialize=True):
        """Rows in pre-order; at each level the child leading to `first` comes first.
        `materialize`: decode every column first, for a caller that reads every field of every
        row (the graph reads a few: it does not)."""
        materialize = getattr(self._nodes, "materialize", None) if materialize else None
        if materialize is not None:
            materialize()  # a walk over every entry
        on_path = set(self.path_rows(first)) if first is not None and self._row(first) is not None else set()
        if self._roots is None:
            self._build_children()
        out = []
        roots = sorted(self._roots, key=lambda r: r not in on_path)  # stable
        stack = list(reversed(roots))
        kids_of = self._children
        while stack:
            r = stack.pop()
            out.append(r)
            kids = kids_of.get(r)
            if kids:
                if on_path and len(kids) > 1:
                    kids = sorted(kids, key=lambda k: k not in on_path)
                stack.extend(reversed(kids))
        return out

    # -- labels --------------------------------------------------------

    @property
    def labels(self):
        """targetId -> label, latest label entry wins (targets may be dangling)."""
        return self.shape.labels

    @property
    def label_timestamps(self):
        return self.shape.stamps

    @property
    def label_targets(self):
        """target id -> row, for the labels whose target is an entry of this tree."""
        return self.shape.targets

    def name(self):
        """The session display name: the latest session_info entry (empty clears)."""
        r = self.shape.name_row
        if r < 0:
            return None
        return (self._nodes[r].aux or "").strip(JS_WHITESPACE) or None  # pi: name?.trim()

    # -- context -------------------------------------------------------

    def build_context(self, leaf):
        """What pi sends to the model from `leaf`: {messages, thinkingLevel, model}."""
        loaded = {}  # row -> its entry, decoded by the walk (the compaction): not decoded twice
        rows = self._context_rows(leaf, False, loaded)
        path, types, roles = self._path_columns(rows)

        def load(node):
            entry = loaded.pop(self._nodes.row(node), None) if loaded else None
            return entry if entry is not None else self.load(node)

        def find(id, stop):  # the rows of a path are byId's, one per id: its row is the only match
            try:
                r = self._row(id)
                return None if r is None else rows.index(r, 0, stop)
            except ValueError:
                return None

        return build_context_lazy(path, load, types, roles, find)

    def context_model(self, leaf):
        """build_context(leaf)["model"], decoding only the entry that sets it."""
        path, types, roles = self._path_columns(self._context_rows(leaf, True))
        return model_lazy(path, self.load, types, roles)

    def _context_rows(self, leaf, model_only, loaded=None):
        """The rows of the path to `leaf` (else the last entry) the context reads, oldest first."""
        if leaf is None:
            return []
        node = self.get(leaf)
        if node is None:
            if not len(self._nodes):
                return []
            node = self._nodes[len(self._nodes) - 1]
        rows = self.context_suffix(node.id, model_only, loaded)
        return rows if rows is not None else self.path_rows(node.id)

    def context_suffix(self, id, model_only=False, loaded=None):
        """core.context.context_suffix of the path to `id`, or None when only the whole path can
        tell (then path_rows). `loaded`: a dict given the entries the walk decoded, by row."""
        r = self._row(id)
        value = getattr(self._nodes, "value", None)
        if value is None or r is None or self._shape is None or not self._shape.ordered:
            return None  # (ordered not known: a tree not read through an index: the full walk)
        return context_suffix(value, self._shape.parents(), r, lambda r: self.load(self._nodes[r]), self._row,
                              model_only, loaded, self._shape.setters())

    def _path_columns(self, rows):
        """(the path's Nodes, made when read; its types; its roles) from the columns: a long
        path costs two lookups per entry, not a Node each; a short one decodes no column."""
        nodes = self._nodes
        if not hasattr(nodes, "col"):
            path = [nodes[r] for r in rows]
            return path, None, None
        value = nodes.value
        return _PathNodes(nodes, rows), [value("type", r) for r in rows], [value("role", r) for r in rows]


class _PathNodes:
    """The Nodes of a path's rows, each made when it is read (a sequence, slices included)."""

    __slots__ = ("_nodes", "_rows")

    def __init__(self, nodes, rows):
        self._nodes = nodes
        self._rows = rows

    def __len__(self):
        return len(self._rows)

    def __getitem__(self, i):
        nodes = self._nodes
        if i.__class__ is slice:
            return [nodes[r] for r in self._rows[i]]
        return nodes[self._rows[i]]

    def __iter__(self):
        nodes = self._nodes
        return (nodes[r] for r in self._rows)


def _ts_key(ts):
    ms = ts_millis(ts)
    return ms if ms is not None else float("-inf")
