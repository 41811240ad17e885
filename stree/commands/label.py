import click

from ..cli import output_options, warn_user
from ..errors import CONFLICT, NotFound, StreeError, UsageError
from ..fields import LABEL_FIELDS, describe
from ..output import inert
from ..preview import Previewer
from ..revs import Resolver
from ..writer import append_entries


@click.command("label", epilog=f"""\b
Examples:
  stree label                        list labels: name, entry id, preview
  stree label bug-found              label the leaf
  stree label csv-attempt @~3        label an entry
  stree label -f bug-found @^        move an existing label
  stree label -d bug-found           clear a label (by name, or by the labelled REV)

\b
Like pi, a label entry is appended as a child of the leaf, and a blank NAME clears.
Fields for --json / --format:
{describe(LABEL_FIELDS)}""")
@click.argument("name", required=False)
@click.argument("revision", required=False, metavar="[REV]")
@click.option("-d", "--delete", "delete", metavar="NAME|REV", help="Clear the label NAME, or REV's label.")
@click.option("-f", "--force", is_flag=True, help="Move NAME if it already labels another entry.")
@output_options(LABEL_FIELDS)
@click.pass_obj
def command(env, name, revision, delete, force, json_mode, fmt, nul):
    """List labels, or set NAME on REV (default @), as pi's /tree label does."""
    if delete is not None:
        if name is not None:
            raise UsageError("-d takes one NAME or REV, nothing else")
        return _write(env, lambda tree: _clear(tree, delete))
    if name is None:
        return _list(env, json_mode, fmt, nul)
    return _write(env, lambda tree: _set(tree, name, revision or "@", force))


def _list(env, json_mode, fmt, nul):
    session, tree = env.load()
    out = env.output(json_mode, fmt, nul, LABEL_FIELDS)
    previewer = Previewer(tree)
    for target, label in sorted(tree.labels.items(), key=lambda item: item[1]):
        node = tree.get(target)
        preview = previewer.text(node) if node is not None else "(missing entry)"
        rec = {"label": label, "id": target, "timestamp": tree.label_timestamps.get(target), "preview": preview}
        human = None
        if not out.machine:
            human = f"{out.segments([('warning', label)])}  {out.style('id', target)}  {out.segments([('', preview)])}"
        out.record(rec, human)
    out.close()


def _set(tree, name, revision, force):
    """[(target, label)] to write: NAME on REV (and off its old entry, with --force)."""
    target = Resolver(tree).resolve(revision)
    if not name.strip():
        return [(target, None)]
    name = name.strip()
    elsewhere = [t for t, label in tree.labels.items() if label == name and t != target]
    if elsewhere and not force:
        raise StreeError(f"label '{name}' already exists (on {elsewhere[-1]})", code=CONFLICT,
                         hint=f"move it with 'stree label -f {name} {revision}'")
    return [(t, None) for t in elsewhere] + [(target, name)]


def _clear(tree, what):
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


def _write(env, changes):
    """Append one label entry per change, each a child of the leaf, under the lock."""
    path = env.session_path()

    def make(session, tree, new):
        entries = []
        parent = tree.leaf
        for target, label in changes(tree):
            entry = new.label(target, label, parent)
            entries.append(entry)
            parent = entry["id"]
        return entries

    for entry in append_entries(path, make, say=warn_user):
        what = f"label '{entry['label']}' set on" if entry.get("label") else "label cleared on"
        click.echo(inert(f"stree: {what} {entry['targetId']}", oneline=True), err=True)
