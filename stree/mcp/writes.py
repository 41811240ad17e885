"""The write tools (only with `serve --mcp --allow-writes`): set_label, checkout, set_name. Each
appends under the lock through stree.writing, as `stree label`, `stree checkout` and `stree name`
do; what the CLI says on stderr comes back in the result's `notes`."""

from ..errors import CONFLICT, StreeError
from ..writing.append import append_entries
from ..writing.atomic import refuse_bundled
from .tools import REVISION, SESSION, Tool


def set_label(ws, name, session=None, revision="@", force=False):
    from ..core.labels import label_changes, label_entries
    from ..core.revs import check_name

    if name.strip():
        check_name(name.strip())
    notes = []

    def make(loaded, tree, new):
        del notes[:]  # make runs again after a migration
        return label_entries(tree, new, label_changes(tree, name, revision, force, notes))

    written = append_entries(ws.path(session), make, say=notes.append)
    return {"written": written, "notes": notes}


def set_name(ws, name, session=None):
    notes = []
    written = append_entries(ws.path(session), lambda s, tree, new: [new.session_info(name, tree.leaf)],
                             say=notes.append)
    return {"name": name.strip() or None, "written": written, "notes": notes}


def checkout(ws, revision, session=None, exact=False, label=None):
    """`stree checkout REV [--exact] [--label NAME]`: a checkout marker (no summary), the hooks run
    as the CLI runs them."""
    from ..core.leaf import Checkout
    from ..core.revs import Resolver, check_name
    from ..core.navigate_tree import navigate

    if label and label.strip():
        check_name(label.strip())
    path = ws.path(session)
    refuse_bundled(path)  # before the hooks run, as the CLI
    loaded, tree = ws.load(session)
    plan = Checkout(tree, Resolver(tree).resolve(revision), exact)
    notes = []
    result = {"oldLeafId": plan.old_leaf, "newLeafId": plan.new_leaf, "editorText": plan.editor_text}
    if plan.noop:
        notes.append("already at this point; nothing written")
        return dict(result, written=[], notes=notes)
    done = navigate(plan, tree, path, append=lambda make: append_entries(path, make, say=notes.append),
                    warn=notes.append, label=label)
    if done.cancelled:
        raise StreeError("checkout cancelled by the before-tree hook; nothing written", code=CONFLICT)
    return dict(result, written=done.written, notes=notes)


WRITTEN = {"written": {"type": "array", "items": {"type": "object"},
                       "description": "the entries appended to the session file"},
           "notes": {"type": "array", "items": {"type": "string"},
                     "description": "what stree would say on stderr (a label replaced, nothing to do, ...)"}}
NAME = {"type": "string", "description": "The label: usable as a revision (no whitespace, ~ ^ : .. @{, "
                                         "not @, HEAD or root). Blank (whitespace) clears the entry's label."}

WRITE_TOOLS = [
    Tool("set_label", "Label an entry",
         "Set a label on an entry (default @), as pi's /tree label does: a label entry is appended to the "
         "session file under stree's lock. An entry has at most one label (a new one replaces it); a blank "
         "name clears the entry's label; a name already on another entry is refused unless force=true "
         "moves it. `stree label NAME REV`.",
         {"session": SESSION, "name": NAME, "revision": {"type": "string", "description": REVISION},
          "force": {"type": "boolean", "description": "Move the label if it is already on another entry."}},
         ["name"], set_label, {"type": "object", "properties": WRITTEN}, write=True),
    Tool("checkout", "Move the leaf",
         "Move the session's leaf to an entry the way pi's /tree does, and persist it by appending a "
         "checkout marker (pi resumes the session there). A user message moves the leaf to its parent and "
         "returns the message as editorText (to submit again); exact=true puts the leaf on the entry itself. "
         "The before-tree and tree hooks run as for `stree checkout REV`. No summary of the branch left "
         "(use the CLI's `stree checkout --summarize` for that).",
         {"session": SESSION, "revision": {"type": "string", "description": REVISION},
          "exact": {"type": "boolean", "description": "Put the leaf on the entry itself, whatever its type."},
          "label": dict(NAME, description="Label the target entry as well.")},
         ["revision"], checkout, {"type": "object", "properties": dict(WRITTEN, **{
             "oldLeafId": {"description": "where the leaf was"},
             "newLeafId": {"description": "where the leaf is now (null: the empty leaf before the root)"},
             "editorText": {"description": "the user message to submit again, or null"}})}, write=True),
    Tool("set_name", "Name a session",
         "Set the session's display name, as pi's /name does (a session_info entry appended); a blank name "
         "clears it. `stree name NAME`.",
         {"session": SESSION, "name": {"type": "string", "description": "The display name; blank clears it."}},
         ["name"], set_name, {"type": "object", "properties": dict(WRITTEN, name={
             "description": "the name now, or null"})}, write=True),
]
