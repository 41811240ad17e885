"""The catalogue kept up to date (stree.storage.catalog holds the database): which files
changed, what is read of them, and what a session row holds.

A file whose identity (device, inode, size, mtime) is the one its row was read at is not
opened. A file that only grew (same inode, the bytes where the row stopped unchanged, its
last line complete then) is read through its per-session index (stree.storage.index):
only the appended lines are parsed and only the new entries decoded. Anything else is
read again whole. Entry text is what `:/TEXT` searches (stree.core.preview.entry_text)."""

import os
from binascii import crc32

from ..errors import StreeError
from ..format.timestamp import activity_millis, iso_millis, ts_millis
from ..format.usage import usage_of
from .entrytypes import grepped, may_have_usage

WINDOW = 4096  # bytes checked at the start of a file and before where its row stopped
USAGE_COLUMNS = ("input", "output", "cache_read", "cache_write", "cost")  # format.usage.FIELDS, as stored


def enabled(no_cache=False):
    """The catalogue is used unless --no-cache / STREE_NO_CACHE (then files are read as before)."""
    return not no_cache and not os.environ.get("STREE_NO_CACHE")


def add_usage(totals, entry):
    """Add the usage one entry records to `totals`, read as `stree stats` reads it
    (format.usage.usage_of: pi 1.6.0's sums, so a row's totals are the stats of its file)."""
    found = usage_of(entry)
    if found is not None:
        for column, value in zip(USAGE_COLUMNS, found[1]):
            totals[column] += value


def sync(files, prune_roots=(), progress=None, rebuild=False):
    """Bring the catalogue up to date for `files` ((path, agent, state, root) each) and
    return (catalog, {abspath: row}); rows of files gone from `prune_roots` are dropped.
    A database found damaged on the way is built again once; raises
    storage.catalog.Unavailable when there is no catalogue to be had."""
    import sqlite3

    from ..storage.catalog import Unavailable
    from ..storage.cachedir import debug

    files = list(files)
    try:
        return _sync(files, prune_roots, progress, rebuild)
    except (Unavailable, sqlite3.DatabaseError) as e:
        if "locked" in str(e) or "busy" in str(e):
            raise Unavailable(str(e)) from None
        debug(f"catalogue damaged ({e}): rebuilt")
    try:
        return _sync(files, prune_roots, progress, True)
    except sqlite3.DatabaseError as e:
        raise Unavailable(str(e)) from None


def _sync(files, prune_roots, progress, rebuild):
    from ..storage.catalog import Catalog, Unavailable

    cat = Catalog()
    cat.open()
    try:
        if rebuild or _garbage_due(cat):
            cat.close()
            cat.remove_files()
            cat.open()
        wanted = {}
        for path, agent, state, root in files:
            wanted[os.path.abspath(str(path))] = (agent, state, str(root))
        rows = cat.rows()
        for full, (agent, state, root) in wanted.items():
            row = rows.get(full)
            try:
                st = os.stat(full)
            except OSError:
                if row is not None:
                    _forget(cat, full)
                rows.pop(full, None)
                continue
            if row is not None and _same(row, st) and (row["agent"], row["state"]) == (agent, state):
                continue
            if progress is not None:
                progress()
            new = _update(cat, full, st, agent, state, root)
            if new is not None:
                rows[full] = new
        roots = {str(r) for r in prune_roots}
        for full, row in list(rows.items()):
            if row["root"] in roots and full not in wanted:
                _forget(cat, full)
                del rows[full]
        return cat, {full: rows[full] for full in wanted if full in rows}
    except Unavailable:
        cat.close()
        raise
    except BaseException:
        cat.rollback()
        cat.close()
        raise


def _garbage_due(cat):
    dead, live = cat.garbage()
    return dead > 50_000 and dead > live


def _same(row, st):
    return (row["dev"], row["ino"], row["size"], row["mtime_ns"]) == (st.st_dev, st.st_ino, st.st_size,
                                                                       st.st_mtime_ns)


def _forget(cat, full):
    cat.begin()
    try:
        row = cat.current(full)
        if row is not None:
            cat.forget(row)
        cat.touch()
        cat.commit()
    except BaseException:
        cat.rollback()
        raise


def _update(cat, full, st, agent, state, root):
    """Read what changed of one file into its row, in one transaction (another stree
    process doing the same waits, then finds the row current and reads nothing)."""
    cat.begin()
    try:
        old = cat.current(full)
        try:
            st = os.stat(full)
        except OSError:
            if old is not None:
                cat.forget(old)
            cat.commit()
            return None
        if old is not None and _same(old, st) and (old["agent"], old["state"]) == (agent, state):
            cat.commit()
            return old
        row = _read(cat, full, st, old, {"path": full, "root": root, "agent": agent, "state": state})
        cat.touch()
        cat.commit()
        return row
    except BaseException:
        cat.rollback()
        raise


def _crc(fd, start, end):
    start = max(0, start)
    return crc32(os.pread(fd, end - start, start)) if end > start else 0


def _grown(old, fd, st):
    """True when the file is the one `old` was read from with lines appended since."""
    if old is None or not old["ok"] or (old["dev"], old["ino"]) != (st.st_dev, st.st_ino):
        return False
    size = old["size"]
    if old["covered"] != size or st.st_size < size or old["rows"] is None:
        return False  # (a torn last line then: read again whole)
    return (_crc(fd, 0, min(WINDOW, size)) == old["head_crc"]
            and _crc(fd, size - WINDOW, size) == old["window_crc"])


def _read(cat, full, st, old, row):
    from ..storage import index
    from ..storage.session import open_file, parse

    try:
        fd = open_file(full)
    except StreeError as e:
        return _failed(cat, old, row, st, str(e))
    try:
        st = os.fstat(fd)
        grown = _grown(old, fd, st)
        try:
            if index.enabled():
                session = index.load(full)[0]
            else:
                session = parse(full)
        except StreeError as e:
            return _failed(cat, old, row, st, str(e))
        try:
            if session.size != st.st_size:
                raise StreeError(f"{full}: changed while reading")
            return _fill(cat, session, fd, st, old if grown else None, row)
        except StreeError as e:
            return _failed(cat, old, row, st, str(e))
        finally:
            session.close()
    finally:
        os.close(fd)


def _identity(row, fd, st, covered):
    row.update(dev=st.st_dev, ino=st.st_ino, size=st.st_size, mtime_ns=st.st_mtime_ns, covered=covered,
               head_crc=_crc(fd, 0, min(WINDOW, st.st_size)), window_crc=_crc(fd, st.st_size - WINDOW, st.st_size))


def _failed(cat, old, row, st, error):
    """A file that is not a readable session: kept as such (not read again until it changes)."""
    if old is not None:
        cat.forget(old)
    row.update(ok=0, error=error, dev=st.st_dev, ino=st.st_ino, size=st.st_size, mtime_ns=st.st_mtime_ns)
    cat.put_session(row)
    return row


def _fill(cat, session, fd, st, old, row):
    from array import array

    from .tree import Tree
    from .preview import entry_text
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
    if start == 0 and n:
        session.data = os.pread(fd, st.st_size, 0)  # one read rather than one per entry
        if len(session.data) != st.st_size:
            raise StreeError(f"{session.path}: changed while reading")
    items = []
    text_types = grepped()  # (stree.core.entrytypes: a type's row says whether grep searches it)
    for r in range(start, n):
        node = nodes[r]
        etype = node.type
        if not (etype in text_types or etype == "model_change" or may_have_usage(etype, node.role)):
            continue
        entry = session.load(node)
        if may_have_usage(etype, node.role):
            add_usage(totals, entry)
        if etype == "message":
            message = entry.get("message")
            if isinstance(message, dict):
                if node.role in ("user", "assistant") and "content" in message:
                    if not first and node.role == "user":  # (pi: the first user message with text)
                        first = normalize(full_text(message.get("content")))
                    ms = activity_millis(message, node.ts)
                    if ms is not None and (activity is None or ms > activity):
                        activity = ms
                if node.role == "assistant":
                    _model(models, message.get("provider"), message.get("model"))
        elif etype == "model_change":
            _model(models, entry.get("provider"), entry.get("modelId"))
        text = entry_text(entry) if etype in text_types else ""
        if text:
            items.append((r, node.offset, node.length, node.role if etype == "message" else etype,
                          ts_millis(node.ts), node.id, text))
    session.data = None
    tree = Tree(nodes, session.load)
    try:
        path_rows = tree.path_rows(tree.leaf) if tree.leaf is not None else []
    except StreeError:
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
    cat.put_session(row)
    return row


def _model(models, provider, model):
    if isinstance(model, str) and model:
        models.add(f"{provider}/{model}" if isinstance(provider, str) and provider else model)


def record(row):
    """The `ls` record of a session row (as stree.commands.ls builds it from the file)."""
    activity = row["activity"]
    created = row["created"]
    if activity is None or activity <= 0:
        activity = ts_millis(created)
    if activity is None:
        activity = int(os.stat(row["path"]).st_mtime * 1000)
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
