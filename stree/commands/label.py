"""`stree label`: the label list (the labels question) and the label writes. The same concept one
layer down, the label entries appended under the lock: stree.writing.label."""

import click

from .adapter import answer, question
from .options import output_options, warn_user
from ..errors import UsageError
from ..output.fields import LABEL_FIELDS, describe
from ..output.reads import label_list
from ..writing.label import delete_changes, set_changes, write_labels


@click.command("label", epilog=f"""\b
Examples:
  stree label                        list labels: name, entry id, preview
  stree label reviewed               label the leaf (@)
  stree label csv-attempt @~3        label an entry
  stree label -f bug-found @^        move an existing label
  stree label -d bug-found           clear a label (by name, or by the labelled REV)

\b
Like pi, an entry has at most one label: setting another replaces it (stderr says
which). A label entry is appended as a child of the leaf, and a blank NAME clears;
when nothing changes (the same label again, clearing where there is none) nothing
is written. NAME must be usable as a revision: not @, HEAD or root, and without
whitespace, ~ ^ : .. @{{ or a leading -.
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
        return _write(env, delete_changes(delete))
    if name is None:
        return _list(env, json_mode, fmt, nul)
    return _write(env, set_changes(name, revision, force))


def _list(env, json_mode, fmt, nul):
    records = answer(question("labels"), env)
    out = env.output(json_mode, fmt, nul, LABEL_FIELDS)
    label_list(out, records)
    out.close()



def _write(env, changes):
    """Append one label entry per change, each a child of the leaf, under the lock."""
    for line in write_labels(env.session_path(), changes, say=warn_user):
        click.echo(line, err=True)
