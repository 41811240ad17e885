import click

from ..errors import NEGATIVE
from ..format.terminal import inert
from ..format.header import CURRENT_VERSION
from ..writing.append import migrate


@click.command("migrate", epilog="""\b
Examples:
  stree migrate                      upgrade the newest session of this project
  stree -s old.jsonl migrate --check   exit 1 if old.jsonl needs upgrading, write nothing
  for f in ~/.pi/agent/sessions/*/*.jsonl; do stree -s "$f" migrate; done

\b
Entries get the same deterministic ids the read commands show for the old file,
so ids printed before the migration stay valid. The rewrite is atomic (temporary
file, fsync, rename) and keeps the file's permissions; an oh-my-pi title line and
lines pi cannot parse are kept as they are.""")
@click.option("--check", is_flag=True, help="Only report whether the file needs migrating (exit 1 if it does).")
@click.pass_obj
def command(env, check):
    """Rewrite a version 1 or 2 session file as version 3, in place."""
    session, tree = env.load()
    if not session.needs_migration:
        click.echo(inert(f"stree: {session.path} is already version {session.version}", oneline=True), err=True)
        return
    if check:
        click.echo(f"{session.path}: version {session.version}, needs migration to {CURRENT_VERSION}")
        return NEGATIVE
    migrate(session.path)
