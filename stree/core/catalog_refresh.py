"""The catalogue kept up to date (stree.storage.catalog holds the database): which files
changed, what is read of them, and what a session row holds. One concept at three depths:
stree.storage.catalog (the database), this module and stree.core.catalog_shared (a team's
PostgreSQL catalogue), stree.commands.catalog (the command).

A file whose identity (device, inode, size, mtime, ctime) is the one its row was read at is
not opened (unless its row was read in the same tick of the clock as a change: the racy rule
of stree.storage.index). Files are read a batch per transaction. A file that only grew
(same inode, the bytes where the row stopped unchanged, its last line complete then) is read
through its per-session index (stree.storage.index): only the appended lines are parsed and
only the new entries decoded. Anything else is read again whole; a file under INDEX_MIN is
parsed without writing an index (a first build over thousands of small sessions writes the
catalogue only: reading one of them whole again when it grows costs less than its index).
Entry text is what `:/TEXT` searches (stree.core.preview.entry_text).

An update stopped part-way (Ctrl-C, a kill, a request cancelled or past its deadline: those
are raised wherever the work is, a parse too) keeps the batches committed before and nothing
of the one under way: a row's identity is only ever committed with its entries, so the files
of that batch are read again next time. A file is kept as unreadable (ok=0, not read again
until it changes) only on an error that says so of the file (_about_file)."""

import os

from ..errors import StreeError
from ..format.timestamp import activity_millis, iso_millis, ts_millis

WINDOW = 4096  # bytes checked at the start of a file and before where its row stopped
USAGE_COLUMNS = ("input", "output", "cache_read", "cache_write", "cost")  # format.usage.FIELDS, as stored


def enabled(no_cache=False):
    """The catalogue is used unless --no-cache / STREE_NO_CACHE (then files are read as before)."""
    return not no_cache and not os.environ.get("STREE_NO_CACHE")


INDEX_MIN = 64 << 10  # a session file this big gets its per-session index when read
BATCH_FILES = 256  # files read into one transaction (one commit, one WAL append, per batch)
BATCH_BYTES = 32 << 20  # ... or fewer, once their size comes to this
KEEP_MAX = 16 << 20  # a file read whole up to this size keeps the entries its parse decoded (beyond:
#                     decoded again one by one, memory staying near the file's structure)
FAST_BYTES = 8 << 20  # files to read that come to this: the fast decoder from the first (storage.scan.FAST_MIN_BYTES)


CHECKED = ("path", "root", "agent", "state", "ok", "dev", "ino", "size", "mtime_ns", "ctime_ns", "racy_crc")
# (the columns of a session row the freshness check reads: sync(columns=...) reads these and those)


def sync(files, prune_roots=(), progress=None, rebuild=False, wait=False, quiet=False, columns=None):
    """Bring the catalogue up to date for `files` ((path, agent, state, root) each) and
    return (catalog, {abspath: row}); rows of files gone from `prune_roots` are dropped.
    `columns`: what the caller reads of an unchanged file's row, besides CHECKED (default:
    every column; a row read again is whole).
    catalog.stale lists the files ((abspath, agent, state)) left out: changed while another
    process held the write lock, which a reading command does not wait for (`wait` is for
    `stree catalog --update`); the caller reads them directly (a warning says so).
    A database found damaged on the way is built again once; raises
    storage.catalog.Unavailable when there is no catalogue to be had."""
    import sqlite3

    from ..storage.catalog import Unavailable
    from ..storage.cachedir import debug

    files = list(files)
    try:
        return _sync(files, prune_roots, progress, rebuild, wait, quiet, columns)
    except (Unavailable, sqlite3.DatabaseError) as e:
        if "locked" in str(e) or "busy" in str(e) or getattr(e, "hint", None):
            raise
        debug(f"catalogue damaged ({e}): rebuilt")
    try:
        return _sync(files, prune_roots, progress, True, wait, quiet, columns)
    except sqlite3.DatabaseError as e:
        raise Unavailable(str(e)) from None


def _sync(files, prune_roots, progress, rebuild, wait, quiet, columns):
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
        todo = []
        for full, (agent, state, root) in wanted.items():
            row = rows.get(full)
            try:
                st = os.stat(full)
            except OSError:
                todo.append((full, agent, state, root, None))
                continue
            if row is not None and (row["agent"], row["state"]) == (agent, state) and unchanged(row, st):
                continue
            todo.append((full, agent, state, root, st))
        roots = {str(r) for r in prune_roots}
        gone = [full for full, row in rows.items() if row["root"] in roots
                and full not in wanted]
        cat.stale = []
        try:
            _apply(cat, todo, gone, rows, progress)
        except Busy:
            from ..storage.catalog import warn

            # not waited for: the files read before stay in; the others are read directly
            cat.stale = [(full, agent, state) for full, agent, state, _, _ in todo if full not in rows
                         or not _current(rows[full], agent, state)]
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


def _apply(cat, todo, gone, rows, progress):
    """Read the files of `todo` into the catalogue and drop the rows of `gone`, a batch of
    files per transaction; `rows` is updated with what was committed. Busy when another
    process holds the write lock (what was committed before stays)."""
    import gc

    i = commits = 0
    if sum(t[4].st_size for t in todo if t[4] is not None) >= FAST_BYTES:
        from ..format.decode import fast_decoder

        fast_decoder(now=True)  # (many small files: msgspec, worth its import over all of them)
    enabled = gc.isenabled()
    gc.disable()  # many objects made and dropped, no cycles: collections would only cost time
    try:
        while i < len(todo) or gone:
            i, gone = _batch(cat, todo, i, gone, rows, progress)
            commits += 1
    finally:
        if enabled:
            gc.enable()
        if commits:
            from ..storage.cachedir import debug

            debug(f"catalogue: {i} file(s) read in {commits} transaction(s)")


def _batch(cat, todo, i, gone, rows, progress):
    """One transaction: the next files of `todo` from `i`, then the rows of `gone` once
    `todo` is done; returns (where the next batch starts, what is left of `gone`)."""
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
            done[full] = _update(cat, full, agent, state, root)
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
    for full in dropped:
        rows.pop(full, None)
    return i, gone


def _current(row, agent, state):
    try:
        st = os.stat(row["path"])
    except OSError:
        return False
    return (row["agent"], row["state"]) == (agent, state) and unchanged(row, st)


def _garbage_due(cat):
    dead, live = cat.garbage(least=50_000)  # (the living counted only past that: a scan of every entry)
    return live is not None and dead > live


def unchanged(row, st):
    """True when the file is as its row was read: device, inode, size, mtime and ctime (an
    edit with the mtime put back still moves the ctime) unchanged, and the row not read in
    the same tick of the clock as a change (racy_crc: the stat proves nothing then; the file
    is read again once, and its row is then clean)."""
    return row["racy_crc"] is None and (row["dev"], row["ino"], row["size"], row["mtime_ns"], row["ctime_ns"]) \
        == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _update(cat, full, agent, state, root):
    """Read what changed of one file into its row (inside the caller's transaction, which
    checks the row again first: another stree process may have just read the file)."""
    old = cat.current(full)
    try:
        st = os.stat(full)
    except OSError:
        if old is not None:
            cat.forget(old)
        return None
    if old is not None and (old["agent"], old["state"]) == (agent, state) and unchanged(old, st):
        return old
    return _read(cat, full, st, old, {"path": full, "root": root, "agent": agent, "state": state})


def crc_range(fd, start, end):
    start = max(0, start)
    from binascii import crc32

    return crc32(os.pread(fd, end - start, start)) if end > start else 0


def _grown(old, fd, st):
    """True when the file is the one `old` was read from with lines appended since."""
    if old is None or not old["ok"] or (old["dev"], old["ino"]) != (st.st_dev, st.st_ino):
        return False
    size = old["size"]
    if old["covered"] != size or st.st_size <= size or old["rows"] is None:
        return False  # (a torn last line then, or the same size changed in place: read again whole)
    return (crc_range(fd, 0, min(WINDOW, size)) == old["head_crc"]
            and crc_range(fd, size - WINDOW, size) == old["window_crc"])


def _read(cat, full, st, old, row):
    from ..storage.session import open_file
    from .loading import open_session

    try:
        fd = open_file(full)
    except StreeError as e:
        return _failed(cat, old, row, st, _about_file(e))
    try:
        st = os.fstat(fd)
        grown = _grown(old, fd, st)
        try:
            keep = [] if not grown and st.st_size <= KEEP_MAX else None  # (read whole: decoded once, by the parse)
            # through the index (next time: only the appended lines parsed) unless the file is small
            session = open_session(full, no_cache=not (grown or st.st_size >= INDEX_MIN), previews=False,
                                   keep=keep).session
        except StreeError as e:
            return _failed(cat, old, row, st, _about_file(e))
        try:
            if session.size != st.st_size:
                raise StreeError(f"{full}: changed while reading")
            return _fill(cat, session, fd, st, old if grown else None, row)
        except StreeError as e:
            return _failed(cat, old, row, st, _about_file(e))
        finally:
            session.keep = None
            session.close()
    finally:
        os.close(fd)


def _about_file(error):
    """The message of `error` when it says what the file is (not a readable session: its row
    says so until the file changes); else `error` raised again: a request stopped meanwhile
    (a client's cancellation, a deadline: stree.core.budget raises them wherever the work is,
    in the middle of a parse too) is no news about the file, and recorded as its answer it
    would leave the row's identity without the file's entries (grep finding nothing in it
    until the file changes). Raised, it rolls the transaction back: the file is read again."""
    from ..errors import Stopped

    if isinstance(error, Stopped):
        raise error
    return str(error)


def _identity(row, fd, st, covered):
    from ..storage.index import racy

    row.update(dev=st.st_dev, ino=st.st_ino, size=st.st_size, mtime_ns=st.st_mtime_ns, ctime_ns=st.st_ctime_ns,
               racy_crc=crc_range(fd, 0, st.st_size) if racy(st) else None, covered=covered,
               head_crc=crc_range(fd, 0, min(WINDOW, st.st_size)),
               window_crc=crc_range(fd, st.st_size - WINDOW, st.st_size))


def _failed(cat, old, row, st, error):
    """A file that is not a readable session: kept as such (not read again until it changes)."""
    if old is not None:
        cat.forget(old)
    row.update(ok=0, error=error, dev=st.st_dev, ino=st.st_ino, size=st.st_size, mtime_ns=st.st_mtime_ns,
               ctime_ns=st.st_ctime_ns, racy_crc=None)
    cat.put_session(row)
    return row


def _fill(cat, session, fd, st, old, row):
    from array import array

    from .entrytypes import grepped, may_have_usage, usage_of
    from .loading import tree_of
    from .preview import entry_text
    from ..format.header import CURRENT_VERSION
    from ..format.text import full_text, normalize

    nodes = session.nodes
    n = len(nodes)
    header = session.header
    if old is not None and old["rows"] <= n:
        start, gen = old["rows"], old["gen"]
        first, activity = old["first_message"], old["activity"]
        models = set(_json_list(old["models"]))
        totals = {k: old[k] or 0 for k in USAGE_COLUMNS}
    else:
        if old is not None:
            cat.forget(old)
        start, gen = 0, cat.new_gen()
        first, activity, models, totals = None, None, set(), dict.fromkeys(USAGE_COLUMNS, 0)
    covered = st.st_size if session.ends_with_newline else -1  # a torn last line: read whole next time
    kept = session.keep  # (the objects the parse decoded: each entry decoded once, when they are all there)
    if not (start == 0 and kept is not None and len(kept) == n and session.version >= CURRENT_VERSION):
        kept = None
        if start == 0 and n:
            session.data = os.pread(fd, st.st_size, 0)  # one read rather than one per entry
            if len(session.data) != st.st_size:
                raise StreeError(f"{session.path}: changed while reading")
    items, usages = [], []  # (the usage of each entry: what `stats --all` sums, stree.core.stats_catalog)
    text_types = grepped()  # (stree.core.entrytypes: a type's row says whether grep searches it)
    columns = [nodes.tail(c, start) if start else nodes.col(c) for c in ("type", "role", "ts", "offset", "length", "id")]
    for r, (etype, role, ts, offset, length, id) in enumerate(zip(*columns), start):
        usage = may_have_usage(etype, role)
        if not (usage or etype in text_types or etype == "model_change"):
            continue
        entry = kept[r] if kept is not None else session.load(nodes[r])
        ms = None
        if usage:
            found = usage_of(entry)
            if found is not None:
                ms = ts_millis(ts)
                for column, value in zip(USAGE_COLUMNS, found[1]):
                    totals[column] += value
                usages.append((r, found[0], ms, found[1]))
        if etype == "message":
            message = entry.get("message")
            if isinstance(message, dict):
                if role in ("user", "assistant") and "content" in message:
                    if not first and role == "user":  # (pi: the first user message with text)
                        first = normalize(full_text(message.get("content")))
                    last = activity_millis(message, ts)
                    if last is not None and (activity is None or last > activity):
                        activity = last
                if role == "assistant":
                    _model(models, message.get("provider"), message.get("model"))
        elif etype == "model_change":
            _model(models, entry.get("provider"), entry.get("modelId"))
        text = entry_text(entry) if etype in text_types else ""
        if text:
            items.append((r, offset, length, role if etype == "message" else etype,
                          ts_millis(ts) if ms is None else ms, id, text))
    if kept is not None:
        kept.clear()
    session.data = None
    tree = tree_of(session, previews=False)
    try:
        path_rows = tree.path_rows(tree.leaf) if tree.leaf is not None else []
    except StreeError as e:
        _about_file(e)
        path_rows = []
    parents = {}
    for parent in nodes.col("parent"):
        if parent is not None:
            parents[parent] = parents.get(parent, 0) + 1
    import json

    row.update(ok=1, error=None, gen=gen, rows=n, id=header.get("id"), cwd=header.get("cwd"),
               name=tree.name(), first_message=first, created=header.get("timestamp"),
               activity=activity, entries=n, messages=sum(1 for t in nodes.col("type") if t == "message"),
               branch_points=sum(1 for c in parents.values() if c > 1),
               labels=json.dumps(sorted({v for v in tree.labels.values() if isinstance(v, str)})), models=json.dumps(sorted(models)),
               parent_session=header.get("parentSession"), headerless=int(session.headerless),
               path_rows=array("i", path_rows).tobytes(), **totals)
    _identity(row, fd, st, covered)
    cat.put_entries(gen, items)
    from . import usage_sums

    if start:  # (kept sums grow by what was appended; none kept stays none)
        kept = usage_sums.decode(cat.sums({gen}).get(gen))
        kept = usage_sums.extend(kept, usages) if kept is not None else None
    else:
        kept = usage_sums.extend(None, usages)
    cat.put_usage(gen, start, usages, list(nodes.tail("id", start) if start else nodes.col("id")),
                  usage_sums.encode(kept))
    cat.put_session(row)
    return row


def _model(models, provider, model):
    if isinstance(model, str) and model:
        models.add(f"{provider}/{model}" if isinstance(provider, str) and provider else model)


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


def _json_list(text):
    import json

    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return value if isinstance(value, list) else []
