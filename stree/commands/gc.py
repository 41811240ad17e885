import click

from .cache import collect


@click.command("gc", epilog="""\b
Examples:
  stree gc                           remove indexes of deleted or rewritten sessions
  stree gc --all                     remove every index (same as 'stree cache clear')""")
@click.option("--all", "everything", is_flag=True, help="Remove every index, not only stale ones.")
def command(everything):
    """Remove stale session indexes from stree's cache.

    An index is stale when its session file is gone, was replaced (a new
    inode, as after `stree migrate`), or shrank. Fresh indexes are kept.
    """
    from .. import index

    removed = collect(everything)
    click.echo(f"stree: removed {removed} index file(s) from {index.cache_dir()}", err=True)
