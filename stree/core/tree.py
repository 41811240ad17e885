"""The core: the entry tree, paths, merge base, ranges, labels, LLM context.

Everything here is iterative (sessions can be 100,000 entries deep) and works on
Node structure; entry content is fetched through `load` only where needed.
"""

from collections import Counter
from datetime import datetime, timezone
from itertools import repeat
from operator import eq

from ..errors import CycleError
from ..format.decode import JS_WHITESPACE


def ts_millis(ts):
    """`new Date(ts).getTime()` for pi's ISO timestamps; None when it does not parse."""
    if not isinstance(ts, str):
        return None
    try:
        text = ts[:-1] + "+00:00" if ts.endswith("Z") else ts
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        return None
    delta = dt - _EPOCH
    return delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class Shape:
    """The tree's structure by row: what commands need besides the columns.

    prow[r]: the row of r's parent as pi's byId finds it (-1: a root); nkids[r]:
    how many children pi's tree gives r; shadowed: rows an entry with the same id
    further down the file hides; dangling: parent id -> rows naming it while no
    entry has that id; labels/stamps: pi's label map; name_row: the latest
    session_info; targets: label target -> its row, for the targets that exist.
    An index stores it, so a warm command does not recompute it."""

    __slots__ = ("prow", "nkids", "shadowed", "dangling", "labels", "stamps", "name_row", "targets")

    def __init__(self, prow, nkids, shadowed, dangling, labels, stamps, name_row, targets):
        self.prow = prow
        self.nkids = nkids
        self.shadowed = shadowed
        self.dangling = dangling
        self.labels = labels
        self.stamps = stamps
        self.name_row = name_row
        self.targets = targets

    def state(self):
        return (self.prow, self.nkids, self.shadowed, self.dangling, self.labels, self.stamps, self.name_row,
                self.targets)


def compute_shape(nodes):
    """The Shape of every row of a Nodes sequence."""
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
        prow = [get(p, -2) if _hashable(p) else -3 for p in parents]
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
    _scan_labels(shape, nodes, 0, get)
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


def extend_shape(shape, nodes, start, find):
    """The Shape after rows [start:] were appended, or None when they change earlier
    rows (a repeated id, or a parent that was missing): then compute_shape() it.
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
    _scan_labels(shape, nodes, start, lambda t: new[t] if t in new else find(t))
    return shape


def _scan_labels(shape, nodes, start, locate):
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


class _ListNodes:
    """A plain list of Node objects seen through the interface of session.Nodes."""

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

    Works on rows (positions in file order) and the columns of session.Nodes; Node
    objects are made only for the entries a caller asks for."""

    def __init__(self, nodes, load=None, previews=None):
        self.nodes = nodes  # file order
        self._nodes = nodes if hasattr(nodes, "col") else _ListNodes(nodes)
        self.load = load  # node -> entry dict (content), migrated
        self.previews = previews  # cached preview segments (stree.index.PreviewCache) or None
        self._shape = getattr(self._nodes, "shape", None)
        self._row_of = None
        self._lookups = 0
        self._children = None
        self._roots = None
        self._paths = {}  # row -> path rows, as commands often ask twice
        n = len(self._nodes)
        self.leaf = self._nodes[n - 1].id if n else None

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
            return None if id is None else self._row_map().get(id) if _hashable(id) else None
        find = getattr(self._nodes, "find", None)
        if find is None:
            return self._row_map().get(id)
        return find(id)

    def row_of(self, node):
        return self._nodes.row(node)

    def node(self, row):
        return self._nodes[row]

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
        out.reverse()
        if len(self._paths) < 8:
            self._paths[out[-1]] = out
        return list(out)

    def ancestor_rows(self, id, limit):
        """The last `limit` rows of path_rows(id), newest first; walks the rest of the
        path only to raise CycleError on a loop, as path_rows() does."""
        r = self._row(id) if id is not None else None
        if r is None:
            return []
        prow = self.shape.prow
        out = []
        start = r
        while r >= 0 and len(out) < limit:
            out.append(r)
            r = prow[r]
        for _ in repeat(None, len(prow) + 1):
            if r < 0:
                return out
            r = prow[r]
        self._raise_cycle(start)

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

    def depth_first(self, first=None):
        """All entries in pre-order; at each level the child leading to `first` comes first."""
        return [self._nodes[r] for r in self.depth_first_rows(first)]

    def depth_first_rows(self, first=None):
        materialize = getattr(self._nodes, "materialize", None)
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

    def label_of(self, id):
        return self.labels.get(id)

    def name(self):
        """The session display name: the latest session_info entry (empty clears)."""
        r = self.shape.name_row
        if r < 0:
            return None
        return (self._nodes[r].aux or "").strip(JS_WHITESPACE) or None  # pi: name?.trim()

    # -- context -------------------------------------------------------

    def build_context(self, leaf):
        """What pi sends to the model from `leaf`: {messages, thinkingLevel, model}."""
        return build_context([self.load(n) for n in self._context_path(leaf)])

    def _context_path(self, leaf):
        if leaf is None:
            return []
        node = self.get(leaf)
        if node is None:
            if not len(self._nodes):
                return []
            node = self._nodes[len(self._nodes) - 1]
        return self.path(node.id)


def _ts_key(ts):
    ms = ts_millis(ts)
    return ms if ms is not None else float("-inf")


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return True


# -- context building (pi's buildSessionContext and message helpers) ----------


def _js_object(entry, role, fields, timestamp):
    """An object literal as JSON.stringify shows it: fields pi reads as undefined are left out."""
    out = {"role": role}
    for name, key in fields:
        if key in entry:
            out[name] = entry[key]
    out["timestamp"] = ts_millis(timestamp)
    return out


def custom_message(entry, empty=False):
    """pi's createCustomMessage of a custom_message entry; `empty`: missing or null content
    becomes [] (buildSessionContext since 1.5: entry.content ?? [])."""
    if empty and entry.get("content") is None:
        entry = dict(entry, content=[])
    return _js_object(entry, "custom", (("customType", "customType"), ("content", "content"),
                                        ("display", "display"), ("details", "details")), entry.get("timestamp"))


def branch_summary_message(entry):
    return _js_object(entry, "branchSummary", (("summary", "summary"), ("fromId", "fromId")), entry.get("timestamp"))


def compaction_message(entry):
    return _js_object(entry, "compactionSummary", (("summary", "summary"), ("tokensBefore", "tokensBefore")),
                      entry.get("timestamp"))


def entry_model(entry):
    """(provider, modelId) set by a model_change entry, tolerating oh-my-pi's `model`."""
    provider, model_id = entry.get("provider"), entry.get("modelId")
    if provider is None and model_id is None and isinstance(entry.get("model"), str):
        provider, _, model_id = entry["model"].partition("/")
        return {"provider": provider, "modelId": model_id}
    return _defined(("provider", entry, "provider"), ("modelId", entry, "modelId"))


def _defined(*fields):
    """An object literal of fields as JSON.stringify writes it: a missing one is left out."""
    return {name: source[key] for name, source, key in fields if key in source}


def _js_truthy(value):
    return value not in (None, False, 0, "") and value == value  # NaN is falsy


_EMPTY_CONTENT = {"user": list, "assistant": list, "toolResult": list, "system": str}


def entry_messages(entry):
    """pi's sessionEntryToContextMessages: the messages one entry gives the model, before
    context edits. Missing or null content is normalised as pi 1.5 does."""
    etype = entry.get("type")
    if etype == "message":
        msg = entry.get("message")
        if msg.__class__ is dict and msg.get("content") is None:
            empty = _EMPTY_CONTENT.get(msg.get("role"))
            if empty is not None:
                msg = dict(msg)
                msg["content"] = empty()
        return [msg]
    if etype == "custom_message":
        return [custom_message(entry, empty=True)]
    if etype == "branch_summary" and _js_truthy(entry.get("summary")):
        return [branch_summary_message(entry)]
    if etype == "compaction":
        summary = compaction_message(entry)
        system = entry.get("systemMessage")
        return [system, summary] if _js_truthy(system) else [summary]
    return []


_EDITABLE = ("user", "assistant", "toolResult", "custom")


def latest_edits(entries):
    """targetId -> the latest context_edit entry among `entries` (loaded, in path order)."""
    edits = {}
    for entry in entries:
        if entry.get("type") == "context_edit":
            target = entry.get("targetId")
            if target.__class__ is str:  # only a string can name an entry
                edits[target] = entry
    return edits


def project_entry(entry, edit=None):
    """pi's projectContextEntry: the messages of one entry after its latest context edit
    (`edit`, or None). A null replacement omits the entry; otherwise the replacement's
    content takes the place of the message's content (a string becomes one text block
    for assistant and tool results). Branch summaries apply edits with this too."""
    messages = entry_messages(entry)
    if edit is None:
        return messages
    if "replacement" not in edit:
        return messages  # pi would fail on this edit; stree leaves the target as it is
    replacement = edit["replacement"]
    if replacement is None:
        return []
    missing = replacement.__class__ is not dict or "content" not in replacement
    content = None if missing else replacement["content"]
    out = []
    for msg in messages:
        role = msg.get("role") if msg.__class__ is dict else None
        if role not in _EDITABLE:
            out.append(msg)
            continue
        msg = dict(msg)
        if missing:
            msg.pop("content", None)  # `content: undefined`: JSON.stringify leaves it out
        elif role in ("assistant", "toolResult") and content.__class__ is str:
            msg["content"] = [{"type": "text", "text": content}]
        else:
            msg["content"] = content
        out.append(msg)
    return out


def context_entries(path):
    """pi's buildContextEntries over a root-first path of loaded entries: the latest
    compaction, the kept entries from its firstKeptEntryId (system messages left out),
    then every entry after it. A compaction keeping its own id keeps nothing."""
    at = -1
    for i, entry in enumerate(path):
        if entry.get("type") == "compaction":
            at = i
    if at < 0:
        return list(path)
    compaction = path[at]
    first = compaction.get("firstKeptEntryId")
    out = [compaction]
    found = False
    for entry in path[:at]:
        if entry.get("id") == first:
            found = True
        if found and not _is_system_message(entry):
            out.append(entry)
    out.extend(path[at + 1:])
    return out


def _is_system_message(entry):
    msg = entry.get("message")
    return entry.get("type") == "message" and msg.__class__ is dict and msg.get("role") == "system"


def build_context(path):
    """pi's buildSessionContext (1.5.2: buildSessionProjection) over a root-first list of
    loaded entries: compaction, context edits, content normalisation."""
    if not path:
        return {"messages": [], "thinkingLevel": "off", "model": None}
    thinking = "off"
    model = None
    for entry in path:
        etype = entry.get("type")
        if etype == "thinking_level_change":
            thinking = entry.get("thinkingLevel")
        elif etype == "model_change":
            model = entry_model(entry)
        elif etype == "message" and isinstance(entry.get("message"), dict) \
                and entry["message"].get("role") == "assistant":
            msg = entry["message"]
            model = _defined(("provider", msg, "provider"), ("modelId", msg, "model"))
    entries = context_entries(path)
    edits = latest_edits(entries)
    messages = []
    for index, entry in enumerate(entries):
        if index and entry.get("type") == "compaction":
            continue  # an older compaction inside the kept range gives nothing
        id = entry.get("id")
        messages.extend(project_entry(entry, edits.get(id) if id.__class__ is str else None))
    return {"messages": messages, "thinkingLevel": thinking, "model": model}
