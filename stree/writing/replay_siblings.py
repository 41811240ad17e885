"""New answers kept as siblings of the recorded ones (`stree replay --write`).

Each new assistant message becomes a `message` entry whose parent is the recorded answer's
parent, so pi's /tree and `stree log --graph` show recorded and replayed side by side (the
recorded first: it is older). The entries end with a move back (a stree/checkout marker,
as `stree checkout` persists moves) to where the leaf was, so pi resumes on the recorded
branch: its leaf, the last entry, is that marker, whose context is the recorded leaf's.

Two ways to write: `fork_with_siblings` writes a new session file (the path root..leaf,
then the siblings) in one atomic write; `append_siblings` appends to the original under
the lock, in one write. Either writes all of the answers given or nothing.
"""

import time

from ..core.leaf import CHECKOUT_MARKER, position
from ..errors import CONFLICT, StreeError
from .append import append_entries
from .atomic import write_atomic
from .entries import NewEntries, Taken, forked, line_of


def _entries(new, answers, parent_of, back_to):
    out = []
    for recorded_id, message in answers:
        parent = parent_of(recorded_id)
        message = dict(message, timestamp=int(time.time() * 1000))
        out.append(new.entry("message", parent, message=message))
    if out:
        out.append(new.custom(CHECKOUT_MARKER, {"from": out[-1]["id"], "to": back_to}, back_to))
    return out


def _parent_in(tree):
    """The parent a recorded entry has in a fork of the path (label entries left out)."""
    def parent_of(entry_id):
        node = tree.parent_of(tree.get(entry_id))
        while node is not None and node.type == "label":
            node = tree.parent_of(node)
        return node.id if node is not None else None
    return parent_of


def fork_with_siblings(session, tree, leaf, header, answers, target, mode):
    """Write `target`: the path root..leaf (as `stree fork`), the answers as siblings, and
    a move back to the leaf. `answers`: [(recorded entry id, new message)]. Returns
    {recorded id: new entry id}."""
    data, _ = forked(session, tree, leaf, header)
    back_to = leaf
    while back_to is not None and tree.get(back_to).type == "label":
        back_to = tree.parent_of(tree.get(back_to))
        back_to = back_to.id if back_to is not None else None
    entries = _entries(NewEntries(Taken(tree)), answers, _parent_in(tree), back_to)
    write_atomic(target, data + b"".join(line_of(e) for e in entries), mode=mode, replace=False)
    return {recorded: e["id"] for (recorded, _), e in zip(answers, entries)}


def append_siblings(path, answers, say=None):
    """Append the answers as siblings to the session at `path` and move back to its leaf
    (the position when the entries are written, re-read under the lock). Returns
    {recorded id: new entry id}."""
    written = {}

    def make(session, tree, new):
        for recorded_id, _ in answers:
            if tree.get(recorded_id) is None:
                raise StreeError(f"{path}: entry {recorded_id} is gone (the file was rewritten); nothing written",
                                 code=CONFLICT)
        entries = _entries(new, answers, lambda i: tree.get(i).parent, position(tree))
        written.clear()
        written.update({recorded: e["id"] for (recorded, _), e in zip(answers, entries)})
        return entries

    append_entries(path, make, say=say)
    return written
