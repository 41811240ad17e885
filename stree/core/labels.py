"""What setting or clearing a label changes: [(target id, label or None)], one label entry each
(`stree label`, and the MCP server's set_label)."""

from ..errors import CONFLICT, NotFound, StreeError
from .revs import Resolver


def label_changes(tree, name, revision, force, notes):
    """[(target, label)] to write: NAME on REV (and off its old entry, with --force)."""
    target = Resolver(tree).resolve(revision)
    old = tree.labels.get(target)
    if not name.strip():
        if old is None:
            notes.append(f"{target} has no label; nothing written")
            return []
        return [(target, None)]
    name = name.strip()
    elsewhere = [t for t, label in tree.labels.items() if label == name and t != target]
    if elsewhere and not force:
        raise StreeError(f"label '{name}' already exists (on {elsewhere[-1]})", code=CONFLICT,
                         hint=f"move it with 'stree label -f {name} {revision}'")
    if old == name and not elsewhere:
        notes.append(f"{target} is already labelled '{name}'; nothing written")
        return []
    if old is not None and old != name:
        notes.append(f"label '{old}' on {target} replaced by '{name}' (an entry has one label)")
    return [(t, None) for t in elsewhere] + ([] if old == name else [(target, name)])


def label_entries(tree, new, changes):
    """The label entries of `changes` ([(target, label or None)]), chained from the leaf (each
    the child of the one before); `new` makes an entry (stree.writing.entries)."""
    entries = []
    parent = tree.leaf
    for target, label in changes:
        entry = new.label(target, label, parent)
        entries.append(entry)
        parent = entry["id"]
    return entries


def clear_changes(tree, what):
    targets = [t for t, label in tree.labels.items() if label == what.strip()]
    if not targets:
        try:
            target = Resolver(tree).resolve(what)
        except NotFound:
            raise NotFound(f"no label '{what}' and no entry of that name",
                           hint="'stree label' lists labels") from None
        if target not in tree.labels:
            raise NotFound(f"{what} ({target}) has no label")
        targets = [target]
    return [(t, None) for t in targets]
