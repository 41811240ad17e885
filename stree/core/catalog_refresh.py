"""The catalogue kept up to date (stree.storage.catalog holds the database): which files
changed, what is read of them, and what a session row holds. One concept at three depths:
stree.storage.catalog (the database), this module and stree.core.catalog_shared (a team's
PostgreSQL catalogue), stree.commands.catalog (the command).

A file whose identity (device, inode, size, mtime, ctime) is the one its row was read at is
not opened (unless its row was read in the same tick of the clock as a change: the racy rule
of stree.storage.index). Files are read a batch per transaction, each by
stree.core.catalog_read (a file that only grew: its appended lines only). Entry text is what
`:/TEXT` searches (stree.core.preview.entry_text).

A session is read in two parts, each once: its row (what `ls` shows, and the tree grep marks
matches on the path by), and its entries (their text in the word index, their usage and ids:
what grep, `stats --all` and a push read). `ls` asks for the rows only (sync without `content`);
the first command that asks for the entries (`content`) reads the entries of every session
whose entries are not all in yet (Catalog.indexed: how many of a session's are), through the
per-session index when the file has one (nothing parsed again), else parsed again; a command
that finds neither part in reads both in one parse. A row's `models` and usage totals are those
of its entries read so far.

An update stopped part-way (Ctrl-C, a kill, a request cancelled or past its deadline: those
are raised wherever the work is, a parse too) keeps the batches committed before and nothing
of the one under way: a row's identity is only ever committed with its entries, so the files
of that batch are read again next time. A file is kept as unreadable (ok=0, not read again
until it changes) only on an error that says so of the file (catalog_read.about_file)."""

import os

from ..format.timestamp import iso_millis, ts_millis
from .catalog_read import INDEX_MIN, WINDOW, crc_range, live_files, read, unchanged  # noqa: F401
#   (INDEX_MIN, WINDOW, crc_range: the push's and the tests', from here)


def enabled(no_cache=False):
    """The catalogue is used unless --no-cache / STREE_NO_CACHE (then files are read as before)."""
    return not no_cache and not os.environ.get("STREE_NO_CACHE")


BATCH_FILES = 256  # files read into one transaction (one commit, one WAL append, per batch)
BATCH_BYTES = 32 << 20  # ... or fewer, once their size comes to this
FAST_BYTES = 8 << 20  # files to read that come to this: the fast decoder from the first (storage.scan.FAST_MIN_BYTES)


CHECKED = ("path", "root", "agent", "state", "ok", "gen", "rows", "dev", "ino", "size", "mtime_ns", "ctime_ns",
           "racy_crc")
# (the columns of a session row the freshness check reads: sync(columns=...) reads these and those)


def sync(files, prune_roots=(), progress=None, rebuild=False, wait=False, quiet=False, content=False, columns=None):
    """Bring the catalogue up to date for `files` ((path, agent, state, root) each) and
    return (catalog, {abspath: row}); rows of files gone from `prune_roots` are dropped.
    With `content`, the sessions' entries too (their text, usage and ids: grep, stats, a push);
    without, their rows (ls). `columns`: what the caller reads of an unchanged file's row,
    besides CHECKED (default: every column; a row read again is whole).
    catalog.stale lists the files ((abspath, agent, state)) left out: changed while another
    process held the write lock, which a reading command does not wait for (`wait` is for
    `stree catalog --update`); the caller reads them directly (a warning says so).
    A database found damaged on the way is built again once; raises
    storage.catalog.Unavailable when there is no catalogue to be had."""
    from ..storage.catalog import Unavailable, sqlite3 as stdlib_sqlite
    from ..storage.cachedir import debug

    sqlite3 = stdlib_sqlite()

    files = list(files)
    try:
        return _sync(files, prune_roots, progress, rebuild, wait, quiet, content, columns)
    except (Unavailable, sqlite3.DatabaseError) as e:
        if "locked" in str(e) or "busy" in str(e) or getattr(e, "hint", None):
            raise
        debug(f"catalogue damaged ({e}): rebuilt")
    try:
        return _sync(files, prune_roots, progress, True, wait, quiet, content, columns)
    except sqlite3.DatabaseError as e:
        raise Unavailable(str(e)) from None


def _sync(files, prune_roots, progress, rebuild, wait, quiet, content, columns):
    from ..storage.catalog import Busy, Unavailable
    from ..storage.catalog import Catalog

    cat = Catalog(wait=wait, quiet=quiet)
    cat.open()
    try:
        if rebuild or _garbage_due(cat):
            cat.close()
            cat.remove_files()
            cat.open()
        wanted = {}
        for path, agent, state, root in files:
            wanted[os.path.abspath(str(path))] = (agent, state, str(root))
        rows = cat.rows() if columns is None else cat.rows(columns=CHECKED + tuple(columns))
        indexed = cat.indexed() if content else None  # (None: the entries are not asked for)
        todo = []
        for full, (agent, state, root) in wanted.items():
            row = rows.get(full)
            try:
                st = os.stat(full)
            except OSError:
                todo.append((full, agent, state, root, None))
                continue
            if row is not None and _current(row, agent, state, st) and _whole(row, indexed):
                continue
            todo.append((full, agent, state, root, st))
        roots = {str(r) for r in prune_roots}
        gone = [full for full, row in rows.items() if row["root"] in roots
                and full not in wanted]
        cat.stale = []
        try:
            _apply(cat, todo, gone, rows, progress, indexed)
        except Busy:
            from ..storage.catalog import warn

            # not waited for: the files read before stay in; the others are read directly
            cat.stale = [(full, agent, state) for full, agent, state, _, _ in todo if full not in rows
                         or not _current(rows[full], agent, state) or not _whole(rows[full], indexed)]
            for full, *_ in cat.stale:
                rows.pop(full, None)
            warn(f"the catalogue {cat.describe()} is being updated by another process: not waiting for it; "
                 f"{len(cat.stale)} changed session file(s) read directly")
        return cat, {full: rows[full] for full in wanted if full in rows}
    except Unavailable:
        cat.close()
        raise
    except BaseException:
        cat.rollback()
        cat.close()
        raise


def _apply(cat, todo, gone, rows, progress, indexed):
    """Read the files of `todo` into the catalogue and drop the rows of `gone`, a batch of
    files per transaction; `rows` (and `indexed`, unless None: the entries are read too) is
    updated with what was committed. Busy when another process holds the write lock (what was
    committed before stays)."""
    import gc

    i = commits = 0
    if sum(t[4].st_size for t in todo if t[4] is not None) >= FAST_BYTES:
        from ..format.decode import fast_decoder

        fast_decoder(now=True)  # (many small files: msgspec, worth its import over all of them)
    live = live_files([(t[0], t[4]) for t in todo])
    enabled = gc.isenabled()
    gc.disable()  # many objects made and dropped, no cycles: collections would only cost time
    try:
        while i < len(todo) or gone:
            i, gone = _batch(cat, todo, i, gone, rows, progress, indexed, live)
            commits += 1
    finally:
        if enabled:
            gc.enable()
        if commits:
            from ..storage.cachedir import debug

            debug(f"catalogue: {i} file(s) read in {commits} transaction(s)")


def _batch(cat, todo, i, gone, rows, progress, indexed, live):
    """One transaction: the next files of `todo` from `i`, then the rows of `gone` once
    `todo` is done; returns (where the next batch starts, what is left of `gone`). `live`: the
    files given their index for being written lately (catalog_read.live_files)."""
    batch, size = [], 0
    while i < len(todo) and len(batch) < BATCH_FILES and size < BATCH_BYTES:
        batch.append(todo[i])
        size += todo[i][4].st_size if todo[i][4] is not None else 0
        i += 1
    done, dropped = {}, []
    cat.begin()
    try:
        for full, agent, state, root, _ in batch:
            if progress is not None:
                progress()
            done[full] = _update(cat, full, agent, state, root, indexed is not None, full in live)
        if i >= len(todo):
            for full in gone:
                row = cat.current(full)
                if row is not None:
                    cat.forget(row)
                dropped.append(full)
            gone = []
        cat.touch()
        cat.commit()
    except BaseException:
        cat.rollback()
        raise
    for full, row in done.items():
        if row is None:
            rows.pop(full, None)
        else:
            rows[full] = row
            if indexed is not None and row["ok"]:  # (its entries read with it)
                indexed[row["gen"]] = row["rows"]
    for full in dropped:
        rows.pop(full, None)
    return i, gone


def _current(row, agent, state, st=None):
    """True when `row` is of the file as it is now (`st`: its stat, else taken here), read as
    of `agent` and `state`."""
    if st is None:
        try:
            st = os.stat(row["path"])
        except OSError:
            return False
    return (row["agent"], row["state"]) == (agent, state) and unchanged(row, st)


def _whole(row, indexed):
    """True when the catalogue holds what is asked of the session of `row`: its row (`indexed`
    None), or its entries too (`indexed`: Catalog.indexed)."""
    return indexed is None or not row["ok"] or indexed.get(row["gen"], 0) >= row["rows"]


def _garbage_due(cat):
    dead, live = cat.garbage(least=50_000)  # (the living counted only past that: a scan of every entry)
    return live is not None and dead > live


def _update(cat, full, agent, state, root, content, live=True):
    """Read what changed of one file into its row, and with `content` the entries not in yet
    (inside the caller's transaction, which checks the row again first: another stree process
    may have just read the file); `live`: as catalog_read.read's."""
    old = cat.current(full)
    try:
        st = os.stat(full)
    except OSError:
        if old is not None:
            cat.forget(old)
        return None
    if old is not None and _current(old, agent, state, st) and (
            not content or _whole(old, {old["gen"]: cat.indexed_rows(old["gen"])})):
        return old
    return read(cat, full, st, old, {"path": full, "root": root, "agent": agent, "state": state}, content, live)


def last_activity(row):
    """When the session of a row was last active (ms): what `ls` sorts by (record's _sort)."""
    activity = row["activity"]
    if activity is None or activity <= 0:
        activity = ts_millis(row["created"])
    if activity is None:
        activity = int(os.stat(row["path"]).st_mtime * 1000)
    return activity


def record(row):
    """The `ls` record of a session row (as stree.commands.ls builds it from the file)."""
    activity = last_activity(row)
    created = row["created"]
    return {
        "id": row["id"], "path": row["path"], "cwd": row["cwd"], "name": row["name"], "created": created,
        "modified": iso_millis(activity),
        "messages": row["messages"], "entries": row["entries"], "firstMessage": row["first_message"] or "(no messages)",
        "parentSession": row["parent_session"], "agent": row["agent"], "state": row["state"], "_sort": activity,
    }

