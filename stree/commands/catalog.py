import os

import click

from .options import output_options
from ..format.timestamp import iso_millis
from ..output.fields import describe

CATALOG_FIELDS = {
    "path": "the catalogue (a database file, or a postgresql:// URL without its password)",
    "bytes": "its size on disk (with its write-ahead log; on PostgreSQL: its tables)",
    "sessions": "session files it holds (readable ones)",
    "entries": "entries in its text index",
    "dead": "text rows of files read again since, left unreachable until the next rebuild",
    "updated": "when a process last changed it",
    "sessionBytes": "size of the session files it holds",
    "pushed": "push: session files sent (new, grown or changed)",
    "sent": "push: entries sent",
    "unchanged": "push: session files the shared catalogue already held as they are",
    "dropped": "push: rows of this host's files gone since, dropped",
    "skipped": "push: session files unreadable or replaced since they were read, not sent (push again)",
    "schema": "migrate: the shared catalogue's schema version now",
    "usage": "export: rows written to usage/ (entries with usage)",
    "exported": "export: the directory written",
}


@click.command("catalog", epilog=f"""\b
Examples:
  stree catalog                      where the catalogue is, its size, how many sessions
  stree catalog --update             read what changed in every agent's sessions now
  stree catalog --rebuild            build it again from the session files
  stree --no-cache ls --all          list without it (every file parsed)
  stree --catalog postgresql:///stree catalog push      send this machine's sessions to the team's
  stree --agent pi --catalog postgresql:///stree catalog push --since 7d   pi's sessions active this week
  STREE_CATALOG=postgresql:///stree stree grep -c x     search every session the team pushed
  stree --catalog postgresql:///stree catalog migrate   create or upgrade its schema (as its owner)
  stree catalog export --parquet sessions.parquet.d     sessions, usage and entries as Parquet files

\b
Fields for --json / --format:
{describe(CATALOG_FIELDS)}""")
@click.argument("action", required=False, default="show", type=click.Choice(["show", "push", "migrate", "export"]))
@click.option("--update", is_flag=True, help="Bring it up to date with every session file of the selected agents.")
@click.option("--rebuild", is_flag=True, help="Remove it and build it again from the session files.")
@click.option("--parquet", "parquet_dir", metavar="DIR", type=click.Path(),
              help="export: write Parquet files into this new directory (the `parquet` extra: pyarrow).")
@click.option("--no-text", is_flag=True, help="export: leave the entries' text out of entries/.")
@click.option("--since", metavar="DATE", help="push: only sessions active at or after DATE (2026-01-31, 3d, "
              "2 weeks ago); rows already there are kept.")
@output_options(CATALOG_FIELDS)
@click.pass_obj
def command(env, action, update, rebuild, parquet_dir, no_text, since, json_mode, fmt, nul):
    """Show the session catalogue's state, rebuild it, or push to a shared one.

    The catalogue is one SQLite database in stree's cache directory
    (catalog.sqlite): a row per session file (id, cwd, name, first message,
    activity, entry and message counts, branch points, labels, models, token and
    cost totals, parentSession, and the identity it was read at) and a full-text
    index of entry text. `ls`, `ls --all`, `grep` and the completion of -s
    answer from it; each checks every file's identity first and reads only the
    files that changed (only the appended lines of a file that grew). `ls` reads
    only the rows; a session's entries (their text, usage and ids) are read by
    the first grep, `stats --all`, push or --update that needs them. It is
    rebuilt by itself when damaged. --no-cache (or STREE_NO_CACHE) leaves it alone.

    A team shares one on PostgreSQL (the `pg` extra: psycopg 3): `push` sends
    this machine's sessions there (only new and grown files, only their appended
    entries; run again after an interruption, it sends the rest), keyed by who
    pushes, the host and the path; --agent and --since choose which sessions
    (by the agent, and by their last entry's time). With --catalog URL (or STREE_CATALOG, or
    `catalog = "postgresql://..."` in the config) `ls`, `grep` and this command
    answer from it. `migrate` creates or upgrades its schema (the roles
    stree_pusher and stree_reader come with it: see the README, Team scale).

    `export --parquet DIR` writes this machine's sessions (every agent's, or
    --agent's) as Parquet: DIR/sessions, DIR/usage and DIR/entries (the last two
    partitioned by day=YYYY-MM-DD), for DuckDB, ClickHouse, Spark or BigQuery;
    the sums over usage/ are `stats --all`'s.
    """
    from ..core import catalog_shared as teamcatalog

    out = env.output(json_mode, fmt, nul, CATALOG_FIELDS)
    shared = teamcatalog.configured()
    if action in ("push", "migrate") and shared is None:
        from ..errors import UsageError

        raise UsageError(f"catalog {action} needs a shared catalogue",
                         hint="give --catalog postgresql://USER@HOST/DB, or set STREE_CATALOG")
    if since is not None and action != "push":
        from ..errors import UsageError

        raise UsageError(f"--since goes with `catalog push`, not `catalog {action}`",
                         hint="stree catalog push --since 7d")
    if action == "export":
        rec = _export(env, parquet_dir, not no_text)
        human = (f"exported   {rec['sessions']} sessions, {rec['usage']} usage rows, {rec['entries']} entries "
                 f"to {rec['exported']}")
    elif action == "push":
        from ..output.catalog_push import pushed

        rec = teamcatalog.push_record(shared, env.agent, env.agent_dir, since)
        human = pushed(rec)
    elif action == "migrate" or shared is not None:
        rec = _shared_state(teamcatalog, shared, migrate=action == "migrate")
        human = (f"catalogue  {rec['path']}\n"
                 f"schema     {rec['schema']}\n"
                 f"sessions   {rec['sessions']}\n"
                 f"entries    {rec['entries']} in the text index")
    else:
        rec, human = _local_state(env, update, rebuild)
    out.record(rec, human)
    out.close()


def _export(env, target, text):
    from ..core.listing import session_paths
    from ..core.parquet import export
    from ..errors import UsageError

    if not target:
        raise UsageError("catalog export needs --parquet DIR", hint="stree catalog export --parquet DIR")
    paths = [p for p, _, _ in session_paths(env.cwd, env.agent_dir, env.session_dir, all_=True, agent=env.agent)[0]]
    counts = export(paths, target, text)
    return {"exported": os.path.abspath(target), **counts}


def _shared_state(teamcatalog, url, migrate):
    from ..storage.catalog import Unavailable

    cat = teamcatalog.open_shared(url, migrate=migrate)
    try:
        sessions, entries = cat.counts()
        size = cat.guard(lambda: cat.db.execute("SELECT pg_total_relation_size('sessions') + "
                                                "pg_total_relation_size('entries') + pg_total_relation_size('usage') "
                                                "+ pg_total_relation_size('vocab')").fetchone()[0])
        return {"path": cat.describe(), "schema": cat.version(), "sessions": sessions, "entries": entries,
                "bytes": size}
    except Unavailable as e:
        raise teamcatalog.failed(e) from None
    finally:
        cat.close()


def _local_state(env, update, rebuild):
    from ..core import catalog_refresh as catalog
    from ..core.store import agent_files, selected_agents
    from ..storage.catalog import Catalog, Unavailable, db_path

    sessions = entries = dead = updated = 0
    size_of_sessions = 0
    try:
        if update or rebuild:
            found = agent_files(selected_agents(env.agent), env.agent_dir)
            files = [(p, a, s, os.path.dirname(os.path.abspath(p))) for p, a, s, _ in found]
            cat, rows = catalog.sync(files, prune_roots={f[3] for f in files}, rebuild=rebuild, wait=True,
                                     quiet=True, content=True)
            cat.close()
        with Catalog(quiet=True) as cat:
            sessions, entries = cat.counts()
            dead = cat.meta("dead", 0)
            updated = cat.meta("updated", 0)
            size_of_sessions = sum(r["size"] or 0 for r in cat.rows().values() if r["ok"])
    except Unavailable as e:
        from ..errors import StreeError

        raise StreeError(str(e), hint=e.hint or "stree works without it (each file is parsed); "
                                                "check the cache directory")
    path = db_path()
    size = sum(_size(path + suffix) for suffix in ("", "-wal"))
    rec = {"path": path, "bytes": size, "sessions": sessions, "entries": entries, "dead": dead,
           "updated": iso_millis(updated) if updated else None, "sessionBytes": size_of_sessions}
    ratio = f" ({size / size_of_sessions:.2f} of the sessions' {size_of_sessions} bytes)" if size_of_sessions else ""
    human = (f"catalogue  {path}\n"
             f"size       {size} bytes{ratio}\n"
             f"sessions   {sessions}\n"
             f"entries    {entries} in the text index ({dead} dead)\n"
             f"updated    {rec['updated'] or 'never'}")
    return rec, human


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
