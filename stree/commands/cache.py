import os

import click

from .options import output_options
from ..output.fields import describe

CACHE_FIELDS = {
    "path": "the cache file",
    "kind": "index (a session's structure), graph (a `log --graph` output kept for reuse) or catalog "
            "(the session catalogue, stree catalog)",
    "session": "the session file it belongs to",
    "bytes": "size of the cache file",
    "stale": "true when it no longer matches its session file",
}


@click.command("cache", epilog=f"""\b
Examples:
  stree cache                        list the cache files and the sessions they belong to
  stree cache gc                     remove those of deleted, rewritten or changed sessions
  stree cache clear                  remove every cache file (they are rebuilt on demand)
  stree --no-cache log -n 5          one command without reading or writing the index

\b
Fields for --json / --format:
{describe(CACHE_FIELDS)}""")
@click.argument("action", required=False, default="list", type=click.Choice(["list", "gc", "clear"]))
@output_options(CACHE_FIELDS)
@click.pass_obj
def command(env, action, json_mode, fmt, nul):
    """Show or clean the index cache (list, gc, clear).

    stree keeps an index of each session file it reads (entry structure and
    previews) in its cache directory, so the next command parses only what was
    appended. An index is checked against its file every time and rebuilt when
    the file changed in any other way. `log --graph` into a pipe also keeps its
    output there, printed again while the session file is unchanged. `gc`
    removes indexes whose session file is gone or was replaced and kept graphs
    of files that changed since; `clear` removes all of them. Only stree's own
    files are listed or removed (<dev>-<inode>.idx, <dev>-<inode>-<crc>.graph
    and their temp files), never a link, a directory or any other file of the
    cache directory ($STREE_CACHE_DIR).
    """
    from ..storage import cachefiles

    if action == "list":
        out = env.output(json_mode, fmt, nul, CACHE_FIELDS)
        for full, meta in cachefiles.entries():
            kind = "index" if full.endswith(".idx") else "catalog" if (meta or {}).get("kind") == "catalog" \
                else "graph"
            rec = {"path": full, "kind": kind, "session": (meta or {}).get("path"), "bytes": _size(full),
                   "stale": cachefiles.is_stale(full, meta)}
            human = f"{rec['bytes']:>10}  {kind:<5}  {'stale' if rec['stale'] else 'ok   '}  {rec['session'] or full}"
            out.record(rec, human)
        out.close()
        return
    _collect(everything=action == "clear")


@click.command("gc", epilog="""\b
Examples:
  stree gc                           remove cache files of deleted, rewritten or changed sessions
  stree gc --all                     remove every cache file (same as 'stree cache clear')""")
@click.option("--all", "everything", is_flag=True, help="Remove every cache file, not only stale ones.")
def gc(everything):
    """Remove stale session indexes and kept graphs from stree's cache.

    The same as `stree cache gc` (with --all: `stree cache clear`).

    An index is stale when its session file is gone, was replaced (a new
    inode, as after `stree migrate`), or shrank; a kept `log --graph` output
    when its session file changed in any way since it was drawn. Fresh ones
    are kept. Only stree's own files are removed (<dev>-<inode>.idx,
    <dev>-<inode>-<crc>.graph and their temp files), never a link, a
    directory or any other file of the cache directory ($STREE_CACHE_DIR).
    """
    _collect(everything)


def _collect(everything):
    """`cache gc` and `gc` (stale files), `cache clear` and `gc --all` (every file)."""
    from ..format.terminal import inert
    from ..storage import cachefiles
    from ..storage.cachedir import cache_dir

    removed = cachefiles.collect(everything)
    click.echo(inert(f"stree: removed {removed} cache file(s) from {cache_dir()}", oneline=True), err=True)


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
