"""The core: the entry tree, paths, merge base, ranges, labels, LLM context.

Everything here is iterative (sessions can be 100,000 entries deep) and works on
Node structure; entry content is fetched through `load` only where needed.
"""

from datetime import datetime, timezone

from .errors import CycleError
from .session import JS_WHITESPACE


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


class Tree:
    """The entries of one session as a tree, as pi's SessionManager sees them."""

    def __init__(self, nodes, load=None, previews=None):
        self.nodes = nodes  # file order
        self.load = load  # node -> entry dict (content), migrated
        self.previews = previews  # cached preview segments (stree.index.PreviewCache) or None
        self.by_id = {node.id: node for node in nodes}  # pi's byId: a later duplicate wins
        self.leaf = nodes[-1].id if nodes else None
        self._children = None
        self._roots = None
        self._labels = None
        self._paths = {}  # id -> path, as commands often ask twice

    # -- structure -----------------------------------------------------

    def get(self, id):
        return self.by_id.get(id)

    def parent_of(self, node):
        p = node.parent
        if p is None or p == node.id:
            return None
        return self.by_id.get(p)

    def _build_children(self):
        children = {}
        roots = []
        by_id = self.by_id
        get = children.get
        for node in self.nodes:
            nid = node.id
            if by_id[nid] is not node:
                continue  # an earlier duplicate: pi's tree holds only the last
            p = node.parent
            if p is None or p == nid or p not in by_id:
                roots.append(node)
            else:
                lst = get(p)
                if lst is None:
                    children[p] = [node]
                else:
                    lst.append(node)
        for lst in children.values():
            if len(lst) > 1:
                lst.sort(key=_sort_key)  # stable: equal timestamps keep file order
        self._children = children
        self._roots = roots

    def children(self, id):
        if self._children is None:
            self._build_children()
        return self._children.get(id, ())

    @property
    def roots(self):
        if self._roots is None:
            self._build_children()
        return self._roots

    def path(self, id):
        """Entries from the root to `id`, oldest first. Raises CycleError on a loop."""
        cached = self._paths.get(id)
        if cached is not None:
            return list(cached)
        out = []
        by_id = self.by_id
        node = by_id.get(id) if id is not None else None
        seen = set()
        add = seen.add
        append = out.append
        while node is not None:
            nid = node.id
            if nid in seen:
                loop = [n.id for n in out[[n.id for n in out].index(nid):]]
                raise CycleError(loop + [nid])
            add(nid)
            append(node)
            p = node.parent
            node = None if p is None or p == nid else by_id.get(p)
        out.reverse()
        if len(self._paths) < 8:
            self._paths[id] = out
        return list(out)

    def path_ids(self, id):
        return [n.id for n in self.path(id)]

    def merge_base(self, a, b):
        """The deepest entry on both paths, or None."""
        if a is None or b is None:
            return None
        on_a = set(self.path_ids(a))
        for node in reversed(self.path(b)):
            if node.id in on_a:
                return node.id
        return None

    def is_ancestor(self, a, b):
        """True when `a` is on the path to `b` (an entry is its own ancestor, as in git)."""
        return a is not None and a in set(self.path_ids(b))

    def range(self, a, b):
        """`a..b`: entries on b's path that are not on a's path, oldest first."""
        exclude = set(self.path_ids(a)) if a is not None else set()
        return [n for n in self.path(b) if n.id not in exclude]

    def symmetric_range(self, a, b):
        """`a...b`: entries on either side since the merge base, in file order."""
        base = self.merge_base(a, b)
        shared = set(self.path_ids(base)) if base is not None else set()
        ids = set()
        for side in (a, b):
            if side is not None:
                ids.update(n.id for n in self.path(side) if n.id not in shared)
        return [n for n in self.nodes if n.id in ids and self.by_id.get(n.id) is n]

    def abandoned(self, old_leaf, target):
        """Entries a branch summary covers when moving from old_leaf to target
        (pi's collectEntriesForBranchSummary): oldest first, plus the common ancestor."""
        if old_leaf is None:
            return [], None
        old_path = set(self.path_ids(old_leaf))
        common = None
        for node in reversed(self.path(target)) if target is not None else ():
            if node.id in old_path:
                common = node.id
                break
        out = []
        node = self.by_id.get(old_leaf)
        seen = set()
        while node is not None and node.id != common and node.id not in seen:
            seen.add(node.id)
            out.append(node)
            node = self.by_id.get(node.parent) if node.parent is not None else None
        out.reverse()
        return out, common

    def unreachable(self):
        """Entries not reachable from any root: those in or below a parent cycle."""
        seen = set()
        stack = list(self.roots)
        while stack:
            node = stack.pop()
            seen.add(node.id)
            stack.extend(self.children(node.id))
        return [n for n in self.nodes if n.id not in seen and self.by_id.get(n.id) is n]

    def depth_first(self, first=None):
        """All entries in pre-order; at each level the child leading to `first` comes first."""
        on_path = set(self.path_ids(first)) if first is not None and first in self.by_id else set()
        out = []
        roots = sorted(self.roots, key=lambda n: n.id not in on_path)  # stable
        stack = list(reversed(roots))
        while stack:
            node = stack.pop()
            out.append(node)
            kids = self.children(node.id)
            if on_path and len(kids) > 1:
                kids = sorted(kids, key=lambda n: n.id not in on_path)
            stack.extend(reversed(kids))
        return out

    # -- labels --------------------------------------------------------

    def _build_labels(self):
        labels = {}
        stamps = {}
        for node in self.nodes:
            if node.type == "label" and node.aux is not None:
                target, label = node.aux
                if label:
                    labels[target] = label
                    stamps[target] = node.ts
                else:
                    labels.pop(target, None)
                    stamps.pop(target, None)
        self._labels = (labels, stamps)

    @property
    def labels(self):
        """targetId -> label, latest label entry wins (targets may be dangling)."""
        if self._labels is None:
            self._build_labels()
        return self._labels[0]

    @property
    def label_timestamps(self):
        if self._labels is None:
            self._build_labels()
        return self._labels[1]

    def label_of(self, id):
        return self.labels.get(id)

    def name(self):
        """The session display name: the latest session_info entry (empty clears)."""
        for node in reversed(self.nodes):
            if node.type == "session_info":
                return (node.aux or "").strip(JS_WHITESPACE) or None  # pi: name?.trim()
        return None

    # -- context -------------------------------------------------------

    def build_context(self, leaf):
        """What pi sends to the model from `leaf`: {messages, thinkingLevel, model}."""
        return build_context([self.load(n) for n in self._context_path(leaf)])

    def _context_path(self, leaf):
        if leaf is None:
            return []
        node = self.by_id.get(leaf)
        if node is None:
            if not self.nodes:
                return []
            node = self.nodes[-1]
        return self.path(node.id)


def _sort_key(node):
    ms = ts_millis(node.ts)
    return ms if ms is not None else float("-inf")


# -- context building (pi's buildSessionContext and message helpers) ----------


def _js_object(entry, role, fields, timestamp):
    """An object literal as JSON.stringify shows it: fields pi reads as undefined are left out."""
    out = {"role": role}
    for name, key in fields:
        if key in entry:
            out[name] = entry[key]
    out["timestamp"] = ts_millis(timestamp)
    return out


def custom_message(entry):
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


def _context_message(entry):
    etype = entry.get("type")
    if etype == "message":
        return entry.get("message")
    if etype == "custom_message":
        return custom_message(entry)
    if etype == "branch_summary" and entry.get("summary"):
        return branch_summary_message(entry)
    return None


def build_context(path):
    """pi's buildSessionContext over a root-first list of loaded entries."""
    if not path:
        return {"messages": [], "thinkingLevel": "off", "model": None}
    thinking = "off"
    model = None
    compaction = None
    compaction_at = -1
    for i, entry in enumerate(path):
        etype = entry.get("type")
        if etype == "thinking_level_change":
            thinking = entry.get("thinkingLevel")
        elif etype == "model_change":
            model = entry_model(entry)
        elif etype == "message" and isinstance(entry.get("message"), dict) \
                and entry["message"].get("role") == "assistant":
            msg = entry["message"]
            model = {"provider": msg.get("provider"), "modelId": msg.get("model")}
        elif etype == "compaction":
            compaction = entry
            compaction_at = i
    messages = []

    def append(entry):
        msg = _context_message(entry)
        if msg is not None:
            messages.append(msg)

    if compaction is not None:
        messages.append(compaction_message(compaction))
        first = compaction.get("firstKeptEntryId")
        found = False
        for entry in path[:compaction_at]:
            if entry.get("id") == first:
                found = True
            if found:
                append(entry)
        for entry in path[compaction_at + 1:]:
            append(entry)
    else:
        for entry in path:
            append(entry)
    return {"messages": messages, "thinkingLevel": thinking, "model": model}
