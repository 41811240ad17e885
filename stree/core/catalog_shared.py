"""A shared catalogue (stree.storage.catalog.postgres): which one is configured, `stree
catalog push`, and the rows and matches `ls`, `grep` and MCP answer from it. The local one is
kept up to date by stree.core.catalog_refresh (the same concept: the catalogue, at core depth).

A push brings this machine's SQLite catalogue up to date first (stree.core.catalog_refresh: only
the files that changed are read), then sends what the shared one lacks: nothing for a file
whose identity it already holds, the appended entries of a file that only grew since it was
pushed, everything of any other. One transaction per batch of files, each file locked
(an advisory lock on owner, host and path) and its row read again inside it: a push killed
at any point leaves whole files, and running it again sends the rest; two pushes at once
(two machines, or two shells) never send an entry twice."""

import os

from ..errors import StreeError

BATCH_FILES = 64
EXIT = 5  # the catalogue's server failed or refused (as a model or network failure)


def configured(explicit=None):
    """The shared catalogue's URL, or None for this machine's SQLite catalogue:
    --catalog, else STREE_CATALOG, else the config's `catalog`."""
    url = explicit or os.environ.get("STREE_CATALOG")
    if not url:
        from ..config import load_config

        url = load_config().get("catalog")
    if not url or url == "sqlite":
        return None
    from ..storage.catalog.postgres import is_url

    if not is_url(url):
        from ..errors import UsageError

        raise UsageError(f"catalogue {url!r}: not a postgresql:// URL",
                         hint="use postgresql://USER@HOST/DB (or ?host=/socket/dir), or `sqlite` for this machine's")
    return url


def open_shared(url, migrate=True, light=False):
    """The shared catalogue at `url`, open; `light`: a grep's reads, through libpq where it
    loads (stree.storage.catalog.libpq: no psycopg to import)."""
    from ..storage.catalog import Unavailable
    from ..storage.catalog.postgres import Catalog

    cat = Catalog(url, migrate=migrate, light=light)
    try:
        cat.open()
    except Unavailable as e:
        raise failed(e) from None
    return cat


def failed(e):
    return StreeError(str(e), code=EXIT, hint=getattr(e, "hint", None))


def records(url, paths=None):
    """The ls records of the shared catalogue's sessions (of `paths` on this host, or every
    row this role may see), as core.listing builds them."""
    from ..storage.catalog import Unavailable
    from .catalog_refresh import record

    cat = open_shared(url, migrate=False)
    try:
        rows = cat.rows(host=cat.host if paths is not None else None)
    except Unavailable as e:
        raise failed(e) from None
    finally:
        cat.close()
    wanted = None if paths is None else {os.path.abspath(p) for p, *_ in paths}
    out = []
    for row in rows.values():
        if row["ok"] and (wanted is None or row["path"] in wanted):
            out.append(_record(record, row))
    return out


def _record(record, row):
    try:
        return record(row)
    except OSError:  # (no activity, no timestamp: the file's mtime, which another host's file lacks)
        return record({**row, "activity": row["mtime_ns"] // 1_000_000 if row["mtime_ns"] else 0})


def grep_candidates(url, pattern, path=None):
    """(gen -> row; candidates with their text) from the shared catalogue: every session this
    role may see, or with `path` only that file of this host. The sessions with candidates
    come first, newest first, as whole rows; every other one after them as the few columns
    grep reads of it (gen, id, cwd: short ids, --cwd), in no order (none is printed)."""
    from ..storage.catalog import Unavailable

    cat = open_shared(url, migrate=False, light=True)
    try:
        heads = cat.heads(os.path.abspath(path) if path is not None else None)
        found = cat.candidates(pattern, heads)
        whole = cat.rows(gens={c[0] for c in found}) if found else {}
    except Unavailable as e:
        raise failed(e) from None
    finally:
        cat.close()
    whole = {r["gen"]: r for r in whole.values() if r["ok"]}
    found = [c for c in found if c[0] in whole]  # (a row dropped or changed meanwhile: as if read after)
    sessions = {r["gen"]: r for r in sorted(whole.values(), key=_sort, reverse=True)}
    for gen, row in heads.items():
        sessions.setdefault(gen, row)
    return sessions, found


def _sort(row):
    """When a session was last active (ms), as `ls` sorts (its record's _sort); a row of another
    host's file without activity or timestamp: the file's mtime there."""
    from .catalog_refresh import last_activity

    try:
        return last_activity(row)
    except OSError:
        return last_activity({**row, "activity": row["mtime_ns"] // 1_000_000 if row["mtime_ns"] else 0})


def push_record(url, agent=None, agent_dir=None, since=None):
    """`stree catalog push`: the sessions of the agents `agent` selects (--agent, STREE_AGENT),
    with `since` (--since) those active at or after it, sent to the shared catalogue at `url`;
    its record (what --json prints). Files skipped are warned about."""
    from .grep_match import parse_when
    from .store import agent_files, selected_agents
    from ..storage.catalog import warn
    from ..storage.catalog.postgres import describe as hide

    low = parse_when(since, "--since") if since else None
    found = agent_files(selected_agents(agent), agent_dir)
    files = [(p, a, s, os.path.dirname(os.path.abspath(p))) for p, a, s, _ in found]
    stats = push(url, files, {f[3] for f in files}, since=low)
    for path in stats["skipped"]:
        warn(f"{path}: unreadable, or replaced, since this machine's catalogue read it; not pushed",
             hint="run `stree catalog push` again")
    return {"path": hide(url), "pushed": stats["files"], "sent": stats["entries"], "unchanged": stats["unchanged"],
            "dropped": stats["dropped"], "skipped": len(stats["skipped"])}


def push(url, files, prune_roots, progress=None, since=None):
    """Send this machine's sessions (`files`: (path, agent, state, root)) to the shared
    catalogue, with `since` (ms) only those active at or after it; rows of files gone from
    `prune_roots` are dropped there. Returns {"files": pushed, "entries": sent, "dropped": n,
    "unchanged": m, "skipped": [paths unreadable or replaced since the local catalogue read
    them, not sent]}."""
    from ..storage.catalog import Unavailable
    from . import catalog_refresh as catalog

    try:
        local, rows = catalog.sync(files, prune_roots=prune_roots, progress=progress, wait=True, quiet=True,
                                   content=True)
    except Unavailable as e:
        raise StreeError(f"cannot read this machine's catalogue: {e}", hint=getattr(e, "hint", None)
                         or "check the cache directory (STREE_CACHE_DIR)") from None
    try:
        shared = open_shared(url)
        try:
            return _push(local, shared, rows, {str(r) for r in prune_roots}, since)
        except Unavailable as e:
            raise failed(e) from None
        finally:
            shared.close()
    finally:
        local.close()


def _push(local, shared, rows, roots, since=None):
    remote = shared.guard(shared.rows, None, shared.host, shared.user)
    todo, unchanged = [], 0
    for full, row in rows.items():
        if since is not None and _active(row) < since:
            continue
        have = remote.get((shared.user, shared.host, full))
        if have is not None and _same(have, row):
            unchanged += 1
            continue
        todo.append((full, row))
    gone = [r["path"] for r in remote.values() if r["root"] in roots and r["path"] not in rows]
    stats = {"files": 0, "entries": 0, "dropped": 0, "unchanged": unchanged, "skipped": []}
    from .usage_totals import ParentIds

    parents = ParentIds()  # (a parent's ids read once for all its forks)
    for i in range(0, max(len(todo), 1 if gone else 0), BATCH_FILES):
        batch = todo[i:i + BATCH_FILES]
        last = i + BATCH_FILES >= len(todo)
        shared.guard(_send, local, shared, batch, gone if last else (), stats, parents)
    from ..storage.cachedir import debug

    debug(f"push: {stats['files']} file(s), {stats['entries']} entries sent, {unchanged} unchanged, "
          f"{stats['dropped']} dropped")
    return stats


def _active(row):
    """When the session was last active (ms): its last entry's time, else its file's mtime."""
    return row["activity"] or (row["mtime_ns"] or 0) // 1_000_000


IDENTITY = ("dev", "ino", "size", "mtime_ns", "ctime_ns", "rows", "ok", "agent", "state", "head_crc", "window_crc")


def _same(have, row):
    return all(have[k] == row[k] for k in IDENTITY)


def _send(local, shared, batch, gone, stats, parents):
    from ..storage.catalog.common import SESSION_COLUMNS, enc
    from ..storage.catalog.postgres import entry_values, session_values, words_of

    db = shared.db
    host = shared.host
    cols = ["host"] + list(SESSION_COLUMNS) + ["sid"]
    marks = ", ".join("nextval('sessions_gen')" if c == "gen" else "%s" for c in cols)
    update = ", ".join(f"{c} = EXCLUDED.{c}" for c in cols if c not in ("host", "path", "gen"))
    upsert = (f"INSERT INTO sessions({', '.join(cols)}) VALUES ({marks}) "
              f"ON CONFLICT (owner, host, path) DO UPDATE SET {update}")
    vocab = set()
    with db.transaction():
        for full, row in batch:
            key = enc(full)
            db.execute("SELECT pg_advisory_xact_lock(hashtextextended(current_user || %s || %s, 0))", (host, key))
            have = db.execute("SELECT size, ino, dev, head_crc, window_crc, covered, rows, ok, words IS NULL "
                              "FROM sessions WHERE owner = current_user AND host = %s AND path = %s FOR UPDATE",
                              (host, key)).fetchone()
            start = _appended_from(have, row, full)
            if start is None:
                continue  # (pushed meanwhile by another process: as it is now)
            items, usages, own = [], [], None
            if row["ok"]:
                items = _items(local, row, full, start)
                usages, own = _usages(local, row, full, start, parents) if items is not None else ([], None)
                if items is None or own is None:  # (unreadable or replaced since it was read: left as it was)
                    stats["skipped"].append(full)
                    continue
            db.execute("DELETE FROM entries WHERE owner = current_user AND host = %s AND path = %s AND row >= %s",
                       (host, key, start))
            db.execute("DELETE FROM usage WHERE owner = current_user AND host = %s AND path = %s AND row >= %s",
                       (host, key, start))
            values = entry_values(None, host, full, items)
            if values:
                _insert(shared, "entries", "host, path, row, off, len, kind, ts, id, text, raw", values)
            if usages:
                _insert(shared, "usage", "host, path, row, model, ms, input, output, cache_read, cache_write, cost",
                        [(host, key, u.row, u.key, u.ms, *u.values) for u in usages])
            words = sorted(words_of(v[8] for v in values))
            vocab.update(words)
            values = session_values(host, row)
            values.pop(1 + SESSION_COLUMNS.index("gen"))
            db.execute(upsert, values)
            db.execute("UPDATE sessions SET own_entries = %s, words = "
                       + ("%s::text[]" if start == 0 else
                          "ARRAY(SELECT DISTINCT w FROM unnest(words || %s::text[]) w ORDER BY 1)")
                       + " WHERE owner = current_user AND host = %s AND path = %s", (own, words, host, key))
            stats["files"] += 1
            stats["entries"] += len(items)
        for path in gone:
            key = enc(path)
            db.execute("DELETE FROM entries WHERE owner = current_user AND host = %s AND path = %s", (host, key))
            db.execute("DELETE FROM usage WHERE owner = current_user AND host = %s AND path = %s", (host, key))
            n = db.execute("DELETE FROM sessions WHERE owner = current_user AND host = %s AND path = %s",
                           (host, key)).rowcount
            stats["dropped"] += n
        if vocab:  # (last, in one statement, in order: two pushes of one role wait for each other, never deadlock)
            db.execute("INSERT INTO vocab(word) SELECT w FROM unnest(%s::text[]) w ORDER BY 1 "
                       "ON CONFLICT DO NOTHING", (sorted(vocab),))


def _insert(shared, table, columns, rows):
    """Rows into `table`: by COPY (one stream) where row-level security does not apply to this
    role (the tables' owner), else by COPY into a temporary table and one INSERT from it
    (PostgreSQL refuses COPY FROM under row-level security; INSERT checks the policies)."""
    db = shared.db
    if shared.copy is None:
        shared.copy = db.execute("SELECT rolsuper OR rolbypassrls OR pg_has_role(current_user, "
                                 "(SELECT tableowner FROM pg_tables WHERE tablename = 'entries' "
                                 "AND schemaname = current_schema()), 'MEMBER') FROM pg_roles "
                                 "WHERE rolname = current_user").fetchone()[0]
        shared.staged = set()
    target = table
    if not shared.copy:
        target = f"stree_stage_{table}"
        if table not in shared.staged:
            db.execute(f"CREATE TEMPORARY TABLE IF NOT EXISTS {target} AS SELECT {columns} FROM {table} LIMIT 0")
            shared.staged.add(table)
    with db.cursor() as cur:
        with cur.copy(f"COPY {target}({columns}) FROM STDIN") as copy:
            for values in rows:
                copy.write_row(values)
        if target != table:
            cur.execute(f"INSERT INTO {table}({columns}) SELECT {columns} FROM {target}")
            cur.execute(f"TRUNCATE {target}")


def _appended_from(have, row, full):
    """The first entry row to send: the rows the shared catalogue holds when the file only
    grew since it was pushed, else 0 (all of it); None when it holds the file as it is."""
    if have is None or not row["ok"]:
        return 0
    size, ino, dev, head, window, covered, rows, ok, unworded = have
    if unworded:  # (pushed by an stree before the word index: all of it again, its words with it)
        return 0
    if (size, int(ino), int(dev)) == (row["size"], row["ino"], row["dev"]) and rows == row["rows"] \
            and head == row["head_crc"] and window == row["window_crc"]:
        return None
    if not ok or (int(ino), int(dev)) != (row["ino"], row["dev"]) or head != row["head_crc"] or covered != size \
            or size >= row["size"] or rows is None or rows > row["rows"]:
        return 0
    from .catalog_refresh import WINDOW, crc_range
    from ..storage.session import open_file

    try:
        fd = open_file(full)
    except StreeError:
        return 0
    try:
        return rows if crc_range(fd, size - WINDOW, size) == window else 0
    finally:
        os.close(fd)


def _usages(local, row, full, start, parents):
    """(the usages of the file's entries from row `start` on, its own entries), as `stats --all`
    counts them (stree.core.usage_totals: a fork's copied prefix is its parent's): from the
    usage and ids the local catalogue read with the entries (stree.storage.catalog.usage),
    nothing parsed again; None for its own entries when they cannot be read."""
    from .usage_totals import Usage

    usages = [Usage(*u) for u in local.usage(row["gen"]) if u[0] >= start]
    skip = parents.of({"parentSession": row["parent_session"]}, full)
    if not skip:
        return usages, row["rows"]
    ids = local.ids_of(row["gen"])
    if len(ids) != row["rows"]:
        return [], None
    return [u for u in usages if ids[u.row] not in skip], sum(1 for i in ids if i not in skip)


def across(url, since=None, until=None):
    """`stats --all` over the shared catalogue: a stree.core.usage_totals.Across of every session
    this role may see, one per session id (the same session pushed from two machines, or by
    two people, counted once: the copy with the most entries)."""
    from ..storage.catalog import Unavailable
    from .usage_totals import Across, Usage, day_of, grouped, total, within

    cat = open_shared(url, migrate=False)
    try:
        rows, usage = cat.rows(), cat.usage()
    except Unavailable as e:
        raise failed(e) from None
    finally:
        cat.close()
    chosen = {}
    for key in sorted(rows, key=lambda k: (k[2], k[1], k[0])):
        row = rows[key]
        if not row["ok"]:
            continue
        sid = row["sid"] if row["sid"] is not None else key
        if sid not in chosen or (row["rows"] or 0) > (rows[chosen[sid]]["rows"] or 0):
            chosen[sid] = key
    out = Across(since, until)
    for key in sorted(chosen.values(), key=lambda k: (k[2], k[1], k[0])):
        row = rows[key]
        usages = [u for u in (Usage(*values) for values in usage.get(key, ())) if within(u, since, until)]
        t = total(usages)
        t.entries = row["own_entries"] if row["own_entries"] is not None else row["entries"]
        if t.count or (since is None and until is None):
            title = row["name"] or row["first_message"] or os.path.basename(row["path"] or "")
            out.sessions.append((row["id"], row["path"], t, row["name"], row["cwd"], title))
        for target, by in ((out.models, lambda u: u.key), (out.days, lambda u: day_of(u.ms))):
            for k, part in grouped(usages, by).items():
                target.setdefault(k, type(part)()).merge(part)
        out.total.merge(t)
    return out


def _items(local, row, full, start):
    """(row, offset, length, kind, ts, id, text) of the file's indexed entries from `start`,
    their text read again from the file (the local catalogue keeps only where they are); None
    when the file cannot be read now, or is no longer the file the local catalogue read (another
    inode, or shorter): a session row is never sent without its entries."""
    from ..format.decode import decode_line
    from ..storage.session import open_file
    from .preview import entry_text

    out = []
    try:
        fd = open_file(full)
    except (StreeError, OSError):
        return None
    try:
        st = os.fstat(fd)
        if (st.st_ino, st.st_dev) != (row["ino"], row["dev"]) or st.st_size < row["size"]:
            return None
        for r, off, length, kind, ts, id in local.entries_of(row["gen"], start):
            try:
                entry = decode_line(os.pread(fd, length, off))
            except ValueError:
                continue
            text = entry_text(entry) if isinstance(entry, dict) else ""
            if text:
                out.append((r, off, length, kind, ts, id, text))
    except OSError:
        return None
    finally:
        os.close(fd)
    return out
