"""Problems in a session file, with line numbers (what `stree fsck` reports)."""

import re
from itertools import accumulate, compress

from ..format.stdlib import array
from ..errors import BadFile
from ..format.header import CURRENT_VERSION
from .entrytypes import known
from ..storage.shape import positions
from ..format.timestamp import ts_millis

KINDS = {
    "malformed": "a line pi cannot parse (skipped when reading)",
    "header": "missing or invalid session header",
    "duplicate-id": "an id used by more than one entry (the later one wins)",
    "missing-parent": "parentId names no entry (pi shows the entry as a root)",
    "self-parent": "parentId is the entry's own id",
    "cycle": "entries whose parent chain loops",
    "unreachable": "entries hanging below a cycle, reachable from no root",
    "dangling-label": "a label whose targetId names no entry",
    "dangling-first-kept": "a compaction whose firstKeptEntryId names no entry on its path",
    "bad-timestamp": "a timestamp that does not parse",
    "unknown-type": "an entry type no pi version writes (pi keeps it in the tree and shows an empty row)",
    "dangling-edit": "a context_edit whose targetId names no entry on its path (it changes nothing)",
    "bad-edit": "a context_edit whose replacement is neither null nor {content: string or list}",
}

class Problem:
    def __init__(self, line, kind, message, id=None):
        self.line = line
        self.kind = kind
        self.message = message
        self.id = id

    def record(self):
        return {"line": self.line, "kind": self.kind, "id": self.id, "message": self.message}

    def __str__(self):
        return f"line {self.line}: {self.message}" if self.line else self.message


def check(path, data=None, no_cache=False):
    """Every problem in the file at `path`, in line order. The file is read through its index
    (stree.storage.index: checked against the file as for every command, the lines appended
    since parsed) unless `no_cache` or `data` (the file's bytes) is given."""
    from .loading import open_session

    try:
        session, tree, _ = open_session(path, no_cache, data=data, previews=False)
    except BadFile as e:
        message = str(e).split(": ", 1)[-1]
        m = re.match(r"line (\d+)", message) or re.search(r"\(line (\d+)", message)
        return [Problem(int(m.group(1)) if m else None, "header", message)], None
    problems = [Problem(line, "malformed", reason) for line, reason in session.malformed]
    problems += _header(session)
    problems += _entries(session, tree)
    problems.sort(key=lambda p: (p.line or 0))
    return problems, session


def _header(session):
    h, line = session.header, session.header_line
    out = []
    version = h.get("version")
    if "version" in h and not (isinstance(version, int) and 1 <= version <= CURRENT_VERSION):
        out.append(Problem(line, "header", f"header: unknown version {version!r}"))
    if ts_millis(h.get("timestamp")) is None:
        out.append(Problem(line, "header", f"header: timestamp {h.get('timestamp')!r} does not parse"))
    if not isinstance(h.get("cwd"), str):
        out.append(Problem(line, "header", "header: no cwd"))
    return out


def _entries(session, tree):
    """The problems of the entries, each kind found from the columns and the tree's shape in
    linear time (a Node is made only for the entries a kind concerns), in the order one walk
    over the entries gives them on each line (check() sorts by line, stably)."""
    shape = tree.shape
    prow = shape.prow
    n = len(prow)
    types = tree.column("type")
    out = _duplicates(tree, shape)
    for r in positions(prow, -1):  # the roots: no parent, its own, or one no entry has
        node = tree.node(r)
        if node.parent == node.id:
            out.append(Problem(node.line, "self-parent", f"entry {node.id} is its own parent", node.id))
        elif node.parent is not None:
            out.append(Problem(node.line, "missing-parent",
                               f"entry {node.id}: parent {node.parent} not found", node.id))
    out += _timestamps(tree, n)
    labels = positions(types, "label")
    compactions = positions(types, "compaction")
    wanted = set()
    for r in labels:
        aux = tree.node(r).aux
        if aux is not None and aux[0].__class__ is str:
            wanted.add(aux[0])
    for r in compactions:
        if tree.node(r).aux.__class__ is str:
            wanted.add(tree.node(r).aux)
    found = _rows_of(tree, wanted)
    kinds = []
    for r in labels:
        node = tree.node(r)
        if node.aux is not None and not _exists(found, node.aux[0]):
            kinds.append(Problem(node.line, "dangling-label",
                                 f"label entry {node.id}: target {node.aux[0]} not found", node.id))
    for r in positions(types, "context_edit"):
        kinds += _context_edit(session, tree, tree.node(r))
    for r in compress(range(n), map(_unknown, types)):
        node = tree.node(r)
        kinds.append(Problem(node.line, "unknown-type",
                             f"entry {node.id}: type {node.type!r} is not one pi writes", node.id))
    kinds.sort(key=lambda p: p.line or 0)  # (one of these kinds per entry at most)
    out += kinds
    stuck = _stuck_rows(prow, shape.shadowed)
    out += _cycles(tree, [tree.node(r) for r in stuck])
    out += _first_kept(tree, compactions, found, set(stuck))
    return out


def _unknown(etype):
    return not known(etype)  # (a type pi writes has its row in stree.core.entrytypes)


def _exists(found, id):
    """Whether pi's byId has `id` (found: the rows of the ids asked, _rows_of)."""
    return id.__class__ is str and id in found


def _duplicates(tree, shape):
    """duplicate-id: every entry whose id an earlier entry has (the later one wins in pi)."""
    if not shape.shadowed:
        return []
    again = {tree.node(r).id for r in shape.shadowed}
    first = {}
    out = []
    r = 0
    for chunk in _chunks(tree, "id"):
        for k, id in enumerate(chunk):
            if id in again:
                node = tree.node(r + k)
                if id in first:
                    out.append(Problem(node.line, "duplicate-id",
                                       f"duplicate id {id} (first on line {first[id]})", id))
                else:
                    first[id] = node.line
        r += len(chunk)
    return out


def _timestamps(tree, n):
    out = []
    r = 0
    for chunk in _chunks(tree, "ts"):
        for k in compress(range(len(chunk)), map(_bad_ts, chunk)):
            node = tree.node(r + k)
            out.append(Problem(node.line, "bad-timestamp",
                               f"entry {node.id}: timestamp {node.ts!r} does not parse", node.id))
        r += len(chunk)
    return out


def _bad_ts(ts):
    return ts_millis(ts) is None


def _chunks(tree, name):
    """A column in consecutive lists, not kept (storage.nodes.Nodes.column_chunks)."""
    chunks = getattr(tree.nodes, "column_chunks", None)
    return chunks(name) if chunks is not None else [tree.column(name)]


def _rows_of(tree, wanted):
    """id -> its row in pi's byId (the last entry with it), for the ids in `wanted` only."""
    found = {}
    if not wanted:
        return found
    r = 0
    for chunk in _chunks(tree, "id"):
        for k in compress(range(len(chunk)), map(wanted.__contains__, chunk)):
            found[chunk[k]] = r + k
        r += len(chunk)
    return found


def _stuck_rows(prow, shadowed):
    """The rows no root reaches (in or below a parent cycle), shadowed rows left out, in file
    order: each row's parent chain is followed until a row already known, so every row is
    walked once."""
    state = bytearray(len(prow))  # 0 not known yet, 1 reaches a root, 2 stuck, 3 on the walk
    for r in range(len(prow)):
        if state[r]:
            continue
        walk = []
        j = r
        while j >= 0 and not state[j]:
            state[j] = 3
            walk.append(j)
            j = prow[j]
        mark = 1 if j < 0 or state[j] == 1 else 2  # 3: came back to this walk, a cycle
        for j in walk:
            state[j] = mark
    if 2 not in state:
        return []
    return [r for r in positions(state, 2) if r not in shadowed]


def _context_edit(session, tree, node):
    entry = session.load(node)
    replacement = entry.get("replacement", ...)
    out = []
    if replacement is not None and not (isinstance(replacement, dict)
                                        and isinstance(replacement.get("content"), (str, list))):
        shown = "missing" if replacement is ... else f"{type(replacement).__name__}"
        out.append(Problem(node.line, "bad-edit", f"context_edit {node.id}: replacement is {shown}, "
                                                  "not null or {content: string or list}", node.id))
    target = entry.get("targetId")
    if tree.by_id.get(node.id) is node and node.id not in {n.id for n in tree.unreachable()}:
        if not isinstance(target, str) or target not in tree.path_ids(node.id)[:-1]:
            out.append(Problem(node.line, "dangling-edit",
                               f"context_edit {node.id}: target {target} is not an entry on its path", node.id))
    return out


def _cycles(tree, stuck):
    out = []
    in_cycle = set()
    for node in stuck:
        if node.id in in_cycle:
            continue
        seen = []
        walk = node
        while walk is not None and walk.id not in seen:
            seen.append(walk.id)
            walk = tree.parent_of(walk)
        if walk is not None:  # came back to an entry already walked: a loop
            loop = seen[seen.index(walk.id):]
            if not in_cycle.intersection(loop):
                chain = " -> ".join(loop + [walk.id])
                for id in loop:
                    out.append(Problem(tree.get(id).line, "cycle", f"entry {id} is in a parent cycle: {chain}", id))
            in_cycle.update(loop)
    for node in stuck:
        if node.id not in in_cycle:
            out.append(Problem(node.line, "unreachable",
                               f"entry {node.id} is unreachable from any root (it hangs below a cycle)", node.id))
    return out


def _first_kept(tree, compactions, found, stuck):
    """dangling-first-kept: a compaction whose firstKeptEntryId is no entry, or none on its path.
    (`found`: the rows of the ids asked, _rows_of; `stuck`: rows below a cycle, which have
    no path.) Whether an entry is on a path is found by walking up from the compaction,
    within a budget: past it (first kept entries far up, or not on the path, many times), by
    the pre-order intervals of the tree (_Intervals), linear in the entries."""
    out = []
    shadowed = tree.shape.shadowed
    prow = tree.shape.prow
    budget = len(prow) + 64 * len(compactions)
    intervals = None
    for r in compactions:
        if r in shadowed:
            continue  # not the entry pi's byId gives for its id
        node = tree.node(r)
        first = node.aux
        if first == "":
            continue  # oh-my-pi's snapshot compaction: providerReplayThroughEntryId says what is kept
        if not _exists(found, first):
            out.append(Problem(node.line, "dangling-first-kept",
                               f"compaction {node.id}: firstKeptEntryId {first} not found", node.id))
            continue
        if r in stuck:
            continue
        f = found[first]
        if intervals is None:
            j = r
            while j >= 0 and j != f and budget > 0:
                j = prow[j]
                budget -= 1
            if budget <= 0:
                intervals = _Intervals(tree)
        on_path = intervals.contains(f, r) if intervals is not None else j == f
        if not on_path:
            out.append(Problem(node.line, "dangling-first-kept",
                               f"compaction {node.id}: firstKeptEntryId {first} is not on its path "
                               "(pi keeps no messages before it)", node.id))
    return out


class _Intervals:
    """The tree's rows numbered in pre-order: a row is on the path of another (an ancestor, or
    itself) when the other's number falls in its subtree's interval. Built from the shape in
    arrays (children by row as offsets into one array), linear in the entries."""

    def __init__(self, tree):
        shape = tree.shape
        prow, shadowed = shape.prow, shape.shadowed
        n = len(prow)
        first = array("i", accumulate(shape.nkids, initial=0))
        fill = array("i", first)
        kids = array("i", bytes(4 * first[-1]))
        roots = []
        for r, p in enumerate(prow):
            if shadowed and r in shadowed:
                continue  # pi's tree holds only the last of the entries with one id
            if p < 0:
                roots.append(r)
            else:
                kids[fill[p]] = r
                fill[p] += 1
        self.start = start = array("i", bytes(4 * n))
        self.size = size = array("i", [1]) * n
        order = array("i")
        stack = roots
        while stack:
            r = stack.pop()
            start[r] = len(order)
            order.append(r)
            stack.extend(kids[first[r]:first[r + 1]])
        for r in reversed(order):
            p = prow[r]
            if p >= 0:
                size[p] += size[r]

    def contains(self, above, row):
        s = self.start[above]
        return s <= self.start[row] < s + self.size[above]
