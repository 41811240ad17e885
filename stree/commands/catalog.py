import os

import click

from .options import output_options
from ..format.timestamp import iso_millis
from ..output.fields import describe

CATALOG_FIELDS = {
    "path": "the catalogue database",
    "bytes": "its size on disk (with its write-ahead log)",
    "sessions": "session files it holds (readable ones)",
    "entries": "entries in its text index",
    "dead": "text rows of files read again since, left unreachable until the next rebuild",
    "updated": "when a process last changed it",
    "sessionBytes": "size of the session files it holds",
}


@click.command("catalog", epilog=f"""\b
Examples:
  stree catalog                      where the catalogue is, its size, how many sessions
  stree catalog --update             read what changed in every agent's sessions now
  stree catalog --rebuild            build it again from the session files
  stree --no-cache ls --all          list without it (every file parsed)

\b
Fields for --json / --format:
{describe(CATALOG_FIELDS)}""")
@click.option("--update", is_flag=True, help="Bring it up to date with every session file of the selected agents.")
@click.option("--rebuild", is_flag=True, help="Remove it and build it again from the session files.")
@output_options(CATALOG_FIELDS)
@click.pass_obj
def command(env, update, rebuild, json_mode, fmt, nul):
    """Show the session catalogue's state, or update or rebuild it.

    The catalogue is one SQLite database in stree's cache directory
    (catalog.sqlite): a row per session file (id, cwd, name, first message,
    activity, entry and message counts, branch points, labels, models, token and
    cost totals, parentSession, and the identity it was read at) and a full-text
    index of entry text. `ls`, `ls --all`, `grep` and the completion of -s
    answer from it; each checks every file's identity first and reads only the
    files that changed (only the appended lines of a file that grew). It is
    rebuilt by itself when damaged. --no-cache (or STREE_NO_CACHE) leaves it alone.
    """
    from ..core import catalog
    from ..core.store import agent_files, selected_agents
    from ..storage.catalog import Catalog, Unavailable, db_path

    sessions = entries = dead = updated = 0
    size_of_sessions = 0
    try:
        if update or rebuild:
            found = agent_files(selected_agents(env.agent), env.agent_dir)
            files = [(p, a, s, os.path.dirname(os.path.abspath(p))) for p, a, s, _ in found]
            cat, rows = catalog.sync(files, prune_roots={f[3] for f in files}, rebuild=rebuild, wait=True,
                                     quiet=True)
            cat.close()
        with Catalog(quiet=True) as cat:
            sessions, entries = cat.counts()
            dead = cat.meta("dead", 0)
            updated = cat.meta("updated", 0)
            size_of_sessions = sum(r["size"] or 0 for r in cat.rows().values() if r["ok"])
    except Unavailable as e:
        from ..errors import StreeError

        raise StreeError(str(e), hint=e.hint or "stree works without it (each file is parsed); check the cache directory")
    path = db_path()
    size = sum(_size(path + suffix) for suffix in ("", "-wal"))
    rec = {"path": path, "bytes": size, "sessions": sessions, "entries": entries, "dead": dead,
           "updated": iso_millis(updated) if updated else None, "sessionBytes": size_of_sessions}
    out = env.output(json_mode, fmt, nul, CATALOG_FIELDS)
    ratio = f" ({size / size_of_sessions:.2f} of the sessions' {size_of_sessions} bytes)" if size_of_sessions else ""
    human = (f"catalogue  {path}\n"
             f"size       {size} bytes{ratio}\n"
             f"sessions   {sessions}\n"
             f"entries    {entries} in the text index ({dead} dead)\n"
             f"updated    {rec['updated'] or 'never'}")
    out.record(rec, human)
    out.close()


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
