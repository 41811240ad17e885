"""The leaf: where it is (position), its moves (iter_leaf_moves, the reflog), stree's checkout
marker, and a move planned on a Tree (Checkout: pi's AgentSession.navigateTree). A move run
with its hooks is stree.core.navigate_tree.

pi keeps the leaf in memory; stree persists it by appending: a branch_summary at
the new position, or a context-free `custom` marker (customType stree/checkout)
whose parent is the new position.
"""

from ..errors import CONFLICT, StreeError
from .entrytypes import bookkeeping
from ..format.text import full_text as message_text

CHECKOUT_MARKER = "stree/checkout"


def is_marker(node):
    return node is not None and node.type == "custom" and node.aux == CHECKOUT_MARKER


# entries that record something about the tree without being a place in it: a label
# or a name appended at the leaf does not move the user's position (git: a tag, a note);
# `bookkeeping` in their rows of stree.core.entrytypes
BOOKKEEPING = bookkeeping()


def is_bookkeeping(node):
    return node is not None and (node.type in BOOKKEEPING or is_marker(node))


def position(tree):
    """The leaf as a position (`@`): the last entry, looking through stree's checkout
    markers and the label / session_info entries appended after them (None = the empty
    leaf, before the first entry)."""
    try:
        return tree.stree_position  # asked once per record by --json: computed once per tree
    except AttributeError:
        tree.stree_position = _through_markers(tree, tree.get(tree.leaf) if tree.leaf is not None else None)
        return tree.stree_position


class Checkout:
    """Where a checkout of `target` goes, and what it leaves behind."""

    def __init__(self, tree, target, exact=False):
        node = tree.get(target)
        while is_bookkeeping(node):  # a marker (or label, name) stands for the position it is at, as @
            parent = tree.parent_of(node)
            if parent is None:  # one at the empty leaf stands for it (pi: a context-free leaf)
                break
            node = parent
            target = node.id
        self.old_leaf = position(tree)
        if is_bookkeeping(node):
            self.target, self.new_leaf, self.new_position, self.editor_text = target, None, None, None
            nodes, self.common_ancestor = tree.abandoned(self.old_leaf, None)
            self.abandoned = [tree.load(n) for n in nodes]
            return
        entry = tree.load(node)
        self.target = target
        self.new_leaf = target
        self.editor_text = None
        resubmit = (node.type == "message" and node.role == "user") or node.type == "custom_message"
        if resubmit and not exact:
            parent = tree.parent_of(node)
            self.new_leaf = parent.id if parent is not None else None
            content = entry.get("message", {}).get("content") if node.type == "message" else entry.get("content")
            self.editor_text = message_text(content)
        # the new position as @ will name it (a user message's parent may be a label entry pi appended)
        self.new_position = _through_markers(tree, tree.get(self.new_leaf)) if self.new_leaf is not None else None
        nodes, self.common_ancestor = tree.abandoned(self.old_leaf, target)
        self.abandoned = [tree.load(n) for n in nodes]

    @property
    def noop(self):
        return self.new_leaf == self.old_leaf

    def preparation(self, wants_summary, instructions, replace_instructions, label):
        """pi's session_before_tree preparation, as the before-tree hook sees it."""
        return {
            "targetId": self.target,
            "oldLeafId": self.old_leaf,
            "newLeafId": self.new_leaf,
            "commonAncestorId": self.common_ancestor,
            "entriesToSummarize": self.abandoned,
            "userWantsSummary": wants_summary,
            "customInstructions": instructions,
            "replaceInstructions": replace_instructions,
            "label": label,
        }

    def entries(self, tree, new, summary=None, details=None, from_hook=False, label=None, usage=None):
        """The entries to append, computed under the lock from the file as it is now."""
        if position(tree) != self.old_leaf or tree.get(self.target) is None:
            raise StreeError("the session changed while stree was working (new entries were appended); "
                             "nothing written", code=CONFLICT, hint="run the checkout again")
        if summary:
            # fromId: the leaf pi would have on this file (its last entry, a marker included)
            first = new.branch_summary(self.new_leaf, summary, details, from_hook, tree.leaf, usage)
            label_target = first["id"]
        else:
            first = new.custom(CHECKOUT_MARKER, {"from": self.old_leaf, "to": self.target}, self.new_leaf)
            label_target = self.target
        out = [first]
        if label and label.strip():
            out.append(new.label(label_target, label, first["id"]))
        return out


class Move:
    """One past leaf move, as `stree reflog` lists it."""

    def __init__(self, kind, node, old, new, position):
        self.kind = kind  # commit (an entry appended at the leaf), checkout (stree marker), summary, jump
        self.node = node  # the entry that records the move
        self.old = old
        self.new = new
        self.position = position  # where the leaf went (None = the empty leaf)


def iter_leaf_moves(tree):
    """The leaf's past moves, newest first, one at a time: every entry appended at the leaf (a
    commit, as git counts one: the leaf moved to it), stree checkout markers, branch summaries
    (navigation with a summary), and jumps visible in the file: an entry whose parent is not the
    entry on the line before it (pi moved the leaf and appended there; its entry gives its commit,
    then the jump before it). Labels and names move nothing. A move depends only on its entry,
    its parent and the entry on the line before; the Nodes are made newest first, as far as the
    caller reads (a long session has about as many moves as entries)."""
    n = len(tree.nodes)
    if not n:
        return
    types = tree.column("type")
    prow = tree.shape.prow
    node_at = getattr(tree.nodes, "peek", tree.node)  # (a Node not kept once read: the walk reads each
    #                                                   row once or twice, a million of them in a long session)
    for r in range(n - 1, -1, -1):
        kind = types[r]
        maybe = kind in _MAY_MOVE or (r and prow[r] != r - 1)
        if not maybe and kind in _NO_COMMIT:
            continue
        node = node_at(r)
        if kind not in _NO_COMMIT and not (kind == "custom" and is_marker(node)):
            parent = node_at(prow[r]) if prow[r] >= 0 else None
            yield Move("commit", node, _through_markers(tree, parent), node.id, node.id)
        if maybe:
            move = _move(tree, node, node_at(r - 1) if r else None, prow[r])
            if move is not None:
                yield move


_MAY_MOVE = frozenset(("custom", "branch_summary"))
_NO_COMMIT = BOOKKEEPING | {"branch_summary"}  # (a summary is a move of its own)


def last_checkout(tree):
    """The newest move that is not a commit (`checkout -` goes back to its `old`), or None. Only
    the rows that can be such a move are looked at: the custom entries (a marker), the branch
    summaries and the rows whose parent is not the row before (the tree's shape tells, at C
    speed); no Node of the other rows is made."""
    from itertools import compress, islice
    from operator import ne

    n = len(tree.nodes)
    if not n:
        return None
    types = tree.column("type")
    prow = tree.shape.prow
    rows = set(compress(range(1, n), map(ne, islice(prow, 1, None), range(n - 1))))
    rows.update(compress(range(n), map(_MAY_MOVE.__contains__, types)))
    for r in sorted(rows, reverse=True):
        move = _move(tree, tree.node(r), tree.node(r - 1) if r else None, prow[r])
        if move is not None:
            return move
    return None


def _move(tree, node, prev, parent_row):
    """The move the entry `node` (after `prev`, the entry on the line before) records, or None."""
    before = _through_markers(tree, prev)
    if is_marker(node):
        data = tree.load(node).get("data")
        data = data if isinstance(data, dict) else {}
        return Move("checkout", node, data.get("from", before), data.get("to", node.parent), node.parent)
    if node.type == "branch_summary":
        return Move("summary", node, before, node.parent, node.parent)
    if prev is not None and node.parent != prev.id:
        p = node.parent
        if parent_row >= 0:
            parent = tree.node(parent_row)  # pi's byId of the parent id, as the shape found it
        elif p is not None and p == node.id:
            parent = tree.get(p)  # its own parent: the shape makes it a root
        else:
            parent = None  # no parent, or one no entry has
        if _through_markers(tree, parent) != before:
            return Move("jump", node, before, p, p)
    return None


def _through_markers(tree, node):
    seen = set()
    while is_bookkeeping(node) and node.id not in seen:
        seen.add(node.id)
        node = tree.parent_of(node)
    return node.id if node is not None else None
