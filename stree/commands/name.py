import click

from .options import warn_user
from ..errors import NEGATIVE
from ..format.terminal import inert
from ..writing.append import append_entries


@click.command("name", epilog="""\b
Examples:
  stree name                         print the session's display name
  stree name "fix csv quoting"       set it (a session_info entry, as pi's /name)
  stree -s 0199a1b2 name "spike"     name another session
  stree name --clear                 remove the name

\b
Exit status 1 when the session has no name.""")
@click.argument("name", required=False)
@click.option("--clear", is_flag=True, help="Remove the display name.")
@click.pass_obj
def command(env, name, clear):
    """Show or set the session's display name (the latest session_info entry)."""
    if name is None and not clear:
        session, tree = env.load()
        current = tree.name()
        if current is None:
            click.echo(inert(f"stree: {session.path} has no name", oneline=True), err=True)
            return NEGATIVE
        click.echo(inert(current, oneline=True))
        return
    text = "" if clear else name
    append_entries(env.session_path(), lambda s, tree, new: [new.session_info(text, tree.leaf)], say=warn_user)
    shown = text.strip()
    click.echo(inert(f"stree: name set to '{shown}'" if shown else "stree: name cleared", oneline=True), err=True)
