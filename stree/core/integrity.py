"""Problems in a session file, with line numbers (what `stree fsck` reports)."""

import re

from ..errors import BadFile
from ..format.header import CURRENT_VERSION
from ..storage.session import parse
from .tree import Tree
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

# every entry type pi writes, 0.73.1 to 1.5.2 (context_edit and usage since 0.74-0.87)
ENTRY_TYPES = frozenset(("message", "thinking_level_change", "model_change", "compaction", "branch_summary",
                         "custom", "custom_message", "label", "session_info", "context_edit", "usage"))


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


def check(path, data=None):
    """Every problem in the file at `path`, in line order."""
    try:
        session = parse(path, data)
    except BadFile as e:
        message = str(e).split(": ", 1)[-1]
        m = re.match(r"line (\d+)", message) or re.search(r"\(line (\d+)", message)
        return [Problem(int(m.group(1)) if m else None, "header", message)], None
    problems = [Problem(line, "malformed", reason) for line, reason in session.malformed]
    problems += _header(session)
    tree = Tree(session.nodes, session.load)
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
    out = []
    first_line = {}
    for node in session.nodes:
        if node.id in first_line:
            out.append(Problem(node.line, "duplicate-id",
                               f"duplicate id {node.id} (first on line {first_line[node.id]})", node.id))
        else:
            first_line[node.id] = node.line
        if node.parent == node.id:
            out.append(Problem(node.line, "self-parent", f"entry {node.id} is its own parent", node.id))
        elif node.parent is not None and node.parent not in tree.by_id:
            out.append(Problem(node.line, "missing-parent",
                               f"entry {node.id}: parent {node.parent} not found", node.id))
        if ts_millis(node.ts) is None:
            out.append(Problem(node.line, "bad-timestamp",
                               f"entry {node.id}: timestamp {node.ts!r} does not parse", node.id))
        if node.type == "label" and node.aux is not None and node.aux[0] not in tree.by_id:
            out.append(Problem(node.line, "dangling-label",
                               f"label entry {node.id}: target {node.aux[0]} not found", node.id))
        elif node.type == "context_edit":
            out += _context_edit(session, tree, node)
        elif node.type not in ENTRY_TYPES:
            out.append(Problem(node.line, "unknown-type",
                               f"entry {node.id}: type {node.type!r} is not one pi writes", node.id))
    out += _cycles(tree)
    out += _first_kept(tree)
    return out


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


def _cycles(tree):
    out = []
    stuck = tree.unreachable()
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


def _first_kept(tree):
    out = []
    stuck = {n.id for n in tree.unreachable()}
    for node in tree.nodes:
        if node.type != "compaction" or tree.by_id.get(node.id) is not node:
            continue
        first = node.aux
        if not isinstance(first, str) or first not in tree.by_id:
            out.append(Problem(node.line, "dangling-first-kept",
                               f"compaction {node.id}: firstKeptEntryId {first} not found", node.id))
        elif node.id not in stuck and first not in tree.path_ids(node.id):
            out.append(Problem(node.line, "dangling-first-kept",
                               f"compaction {node.id}: firstKeptEntryId {first} is not on its path "
                               "(pi keeps no messages before it)", node.id))
    return out
