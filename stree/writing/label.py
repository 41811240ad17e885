"""Setting and clearing labels: the write of `stree label NAME [REV]` and `label -d`, shared by
the click command and the fast path (stree.fastwrite). The same concept one layer up is the
command, stree.commands.label."""

from ..core.labels import clear_changes, label_changes, label_entries
from ..format.terminal import inert
from .append import append_entries


def set_changes(name, revision, force):
    """The changes of `label [-f] NAME [REV]` for write_labels; refuses a NAME that could never
    be a revision (a blank NAME clears REV's label)."""
    if name.strip():
        from ..core.revs import check_name

        check_name(name.strip())
    return lambda tree, notes: label_changes(tree, name, revision or "@", force, notes)


def delete_changes(what):
    """The changes of `label -d NAME|REV` for write_labels."""
    return lambda tree, notes: clear_changes(tree, what)


def write_labels(path, changes, say=None):
    """Append one label entry per change, each a child of the leaf, under the lock.
    `changes(tree, notes)` gives [(target, label or None)] on the tree as it is under the lock
    (stree.core.labels) and may add notes. Returns the lines that tell the user what was done
    (for stderr): the notes, then one line per entry written."""
    notes = []

    def make(session, tree, new):
        del notes[:]  # make runs again after a migration
        return label_entries(tree, new, changes(tree, notes))

    written = append_entries(path, make, say=say)
    lines = [inert(f"stree: {note}", oneline=True) for note in notes]
    for entry in written:
        what = f"label '{entry['label']}' set on" if entry.get("label") else "label cleared on"
        lines.append(inert(f"stree: {what} {entry['targetId']}", oneline=True))
    return lines
