import click


@click.command("gc", epilog="""\b
Examples:
  stree gc                           remove cache files of deleted, rewritten or changed sessions
  stree gc --all                     remove every cache file (same as 'stree cache clear')""")
@click.option("--all", "everything", is_flag=True, help="Remove every cache file, not only stale ones.")
def command(everything):
    """Remove stale session indexes and kept graphs from stree's cache.

    An index is stale when its session file is gone, was replaced (a new
    inode, as after `stree migrate`), or shrank; a kept `log --graph` output
    when its session file changed in any way since it was drawn. Fresh ones
    are kept. Only stree's own files are removed (<dev>-<inode>.idx,
    <dev>-<inode>-<crc>.graph and their temp files), never a link, a
    directory or any other file of the cache directory ($STREE_CACHE_DIR).
    """
    from ..storage.cachedir import cache_dir

    from ..storage.cachefiles import collect

    removed = collect(everything)
    from ..format.terminal import inert

    click.echo(inert(f"stree: removed {removed} cache file(s) from {cache_dir()}", oneline=True), err=True)
