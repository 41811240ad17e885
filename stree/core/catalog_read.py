"""One session file read into its catalogue row (stree.core.catalog_refresh decides which files
are read, a batch per transaction): its row, and what is asked of its entries.

A file that only grew since its row was read (same inode, the bytes where the row stopped
unchanged, its last line complete then) is read through its per-session index
(stree.storage.index): only the appended lines are parsed and only the new entries decoded.
Anything else is read again whole. A file read whole gets its index only when it is likely to
grow (_through_index): not under INDEX_MIN (a first build over thousands of small sessions writes
the catalogue only: reading one of them whole again when it grows costs less than its index),
nor when it was last written more than LIVE_NS ago (most of a history: given its index when
first seen grown), nor beyond the LIVE_MAX newest of one update (live_files: a first build just
after a day of many sessions indexes the few that pi may still append to; any other is given its
index when first seen grown, as an old one). A file whose row is current and whose entries are
not all in yet (`ls` read only its row) has only its entries read: decoded from where its
per-session index says they are, or the file parsed again."""

import os
from itertools import count

from ..errors import StreeError
from ..format.timestamp import activity_millis, ts_millis
from ..storage import register_counters

WINDOW = 4096  # bytes checked at the start of a file and before where its row stopped
USAGE_COLUMNS = ("input", "output", "cache_read", "cache_write", "cost")  # format.usage.FIELDS, as stored
INDEX_MIN = 64 << 10  # a session file this big gets its per-session index when read
LIVE_NS = 24 * 3600 * 10**9  # a file written within this long gets its index at its first read (below),
LIVE_MAX = 16  # ... if it is among the newest this many of the files one update reads (live_files)
KEEP_MAX = 16 << 20  # a file read whole up to this size keeps the entries its parse decoded (beyond:
#                     decoded again one by one, memory staying near the file's structure)
STATS = register_counters("catalog", {"indexed": 0})  # sessions whose entries were read into the catalogue
#                                                     (STREE_DEBUG_STATS: "sessions indexed")


def unchanged(row, st):
    """True when the file is as its row was read: device, inode, size, mtime and ctime (an
    edit with the mtime put back still moves the ctime) unchanged, and the row not read in
    the same tick of the clock as a change (racy_crc: the stat proves nothing then; the file
    is read again once, and its row is then clean)."""
    return row["racy_crc"] is None and (row["dev"], row["ino"], row["size"], row["mtime_ns"], row["ctime_ns"]) \
        == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def crc_range(fd, start, end):
    start = max(0, start)
    from binascii import crc32

    return crc32(os.pread(fd, end - start, start)) if end > start else 0


def _grown_file(old, fd, st):
    """True when the file is the one `old` was read from with lines appended since."""
    if old is None or not old["ok"] or (old["dev"], old["ino"]) != (st.st_dev, st.st_ino):
        return False
    size = old["size"]
    if old["covered"] != size or st.st_size <= size or old["rows"] is None:
        return False  # (a torn last line then, or the same size changed in place: read again whole)
    return (crc_range(fd, 0, min(WINDOW, size)) == old["head_crc"]
            and crc_range(fd, size - WINDOW, size) == old["window_crc"])


def live_files(todo):
    """The paths among `todo` ((path, stat or None) each: the files one update reads) given their
    index for being written lately (_through_index): the LIVE_MAX newest of those over INDEX_MIN
    written within LIVE_NS."""
    import time

    now = time.time_ns()
    live = [(st.st_mtime_ns, full) for full, st in todo
            if st is not None and st.st_size >= INDEX_MIN and now - st.st_mtime_ns < LIVE_NS]
    return {full for _, full in sorted(live, reverse=True)[:LIVE_MAX]}


def read(cat, full, st, old, row, content, live=True):
    """The file `full` (`st`: its stat) read into `row` (its path, root, agent and state), inside
    the caller's transaction, and returned: what changed since `old` (its row as the catalogue
    holds it, or None), and with `content` its entries not in yet. `live`: false when the file,
    however lately written, is not given its index for it (live_files)."""
    from ..storage.session import open_file
    from .loading import open_session

    try:
        fd = open_file(full)
    except StreeError as e:
        return _failed(cat, old, row, st, about_file(e))
    try:
        st = os.fstat(fd)
        grown = _grown_file(old, fd, st)
        same = not grown and old is not None and old["ok"] and old["rows"] is not None and unchanged(old, st)
        try:
            keep = [] if not grown and st.st_size <= KEEP_MAX else None  # (read whole: decoded once, by the parse)
            opened = open_session(full, no_cache=not _through_index(st, grown, same, live), previews=False,
                                  keep=keep)
        except StreeError as e:
            return _failed(cat, old, row, st, about_file(e))
        session = opened.session
        try:
            if session.size != st.st_size:
                raise StreeError(f"{full}: changed while reading")
            return _fill(cat, session, opened.tree, fd, st, old if grown or same else None, row, content)
        except StreeError as e:
            return _failed(cat, old, row, st, about_file(e))
        finally:
            session.keep = None
            session.close()
    finally:
        os.close(fd)


def _through_index(st, grown, same, live=True):
    """Whether a file is read through its per-session index (which a read writes when there is
    none: next time, only the lines appended since are parsed). A file that grew, yes; a small
    one (under INDEX_MIN), no: read whole again, it costs less than its index. Another is given
    its index when it is likely to grow: written within LIVE_NS (pi appends to a session while
    it is open) and `live` (among the newest of its update: live_files); an older one when it is
    first seen grown (parsed whole that once), its entries read through the index it has
    (`same`: its row current)."""
    if grown:
        return True
    if st.st_size < INDEX_MIN:
        return False
    import time

    if live and time.time_ns() - st.st_mtime_ns < LIVE_NS:
        return True
    if not same:
        return False
    from ..storage.index import index_path

    try:
        return os.path.exists(index_path(st))
    except (StreeError, OSError):  # (a cache directory refused: read without)
        return False


def about_file(error):
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


def _fill(cat, session, tree, fd, st, old, row, content):
    """Fill `row` from the file read (`session`, its `tree`) and, with `content`, put its
    entries not in yet. `old`: the file's row when the file is the one it was read from, as it
    was or with lines appended (only the rows appended are read for the row then, only the
    entries not in yet for the index); else None (all of it read)."""
    from ..format.stdlib import array

    from ..format.header import CURRENT_VERSION

    nodes = session.nodes
    n = len(nodes)
    header = session.header
    if old is not None and old["rows"] <= n:
        start, gen = old["rows"], old["gen"]
        done = min(cat.indexed_rows(gen), start)
        first, activity = old["first_message"], old["activity"]
        models = set(_json_list(old["models"]))
        totals = {k: old[k] or 0 for k in USAGE_COLUMNS}
    else:
        if old is not None:
            cat.forget(old)
        start, gen, done = 0, cat.new_gen(), 0
        first, activity, models, totals = None, None, set(), dict.fromkeys(USAGE_COLUMNS, 0)
    since = done if content else n  # the first entry read for the index (n: none)
    low = min(start, since)
    covered = st.st_size if session.ends_with_newline else -1  # a torn last line: read whole next time
    kept = session.keep  # (the objects the parse decoded: each entry decoded once, when they are all there)
    if not (low == 0 and kept is not None and len(kept) == n and session.version >= CURRENT_VERSION):
        kept = None
        if low == 0 and n:
            session.data = os.pread(fd, st.st_size, 0)  # one read rather than one per entry
            if len(session.data) != st.st_size:
                raise StreeError(f"{session.path}: changed while reading")
    if kept is not None:
        def load(r, *_):
            return kept[r]
        load_at = load
    else:
        def load(r, *_):
            return session.load(nodes[r])

        def load_at(r, offset, length):  # (no node made for each entry: only a migration reads it)
            return session.load_at(offset, length) if session.version >= CURRENT_VERSION else load(r)
    items = usages = ()
    if content:  # (each entry decoded once for both)
        items, usages, first, activity = _read_entries(nodes, start, since, load_at, models, totals, first,
                                                       activity)
    else:
        first, activity = _listed(nodes, start, load, first, activity)
    if kept is not None:
        kept.clear()
    session.data = None
    try:
        path_rows = tree.path_rows(tree.leaf) if tree.leaf is not None else []
    except StreeError as e:
        about_file(e)
        path_rows = []
    import json
    from collections import Counter

    parents = Counter(nodes.col("parent"))
    parents.pop(None, None)
    row.update(ok=1, error=None, gen=gen, rows=n, id=header.get("id"), cwd=header.get("cwd"),
               name=tree.name(), first_message=first, created=header.get("timestamp"),
               activity=activity, entries=n, messages=list(nodes.col("type")).count("message"),
               branch_points=sum(1 for c in parents.values() if c > 1),
               labels=json.dumps(sorted({v for v in tree.labels.values() if isinstance(v, str)})),
               models=json.dumps(sorted(models)),
               parent_session=header.get("parentSession"), headerless=int(session.headerless),
               path_rows=array("i", path_rows).tobytes(), **totals)
    _identity(row, fd, st, covered)
    if content:
        _put_content(cat, gen, since, n, nodes, items, usages)
    cat.put_session(row)
    return row


def _listed(nodes, start, load, first, activity):
    """(first, activity) of `ls` grown by the rows from `start` (_message's, inline: it runs for
    every message of every file a first `ls --all` reads). `load(row)`: the entry of a row."""
    for r, etype, role, ts in zip(count(start), *(nodes.tail(c, start) if start else nodes.col(c)
                                                  for c in ("type", "role", "ts"))):
        if etype != "message" or (role != "user" and role != "assistant"):
            continue
        message = load(r).get("message")
        if message.__class__ is not dict or "content" not in message:
            continue
        if not first and role == "user":
            first = _first_text(message)
        stamp = message.get("timestamp")
        last = stamp if stamp.__class__ is int or stamp.__class__ is float else activity_millis(message, ts)
        if last is not None and (activity is None or last > activity):
            activity = last
    return first, activity


def _first_text(message):
    from ..format.text import full_text, normalize

    return normalize(full_text(message.get("content")))


def _message(entry, role, ts, first, activity):
    """(first, activity) grown by a user or assistant message: the text of the first user
    message with content (pi's firstMessage), the last activity in ms (pi's
    getMessageActivityTime: the message's own timestamp, else its entry's)."""
    message = entry.get("message")
    if message.__class__ is not dict or "content" not in message:
        return first, activity
    if not first and role == "user":
        first = _first_text(message)
    stamp = message.get("timestamp")  # (activity_millis, its common case inline)
    last = stamp if stamp.__class__ is int or stamp.__class__ is float else activity_millis(message, ts)
    if last is not None and (activity is None or last > activity):
        activity = last
    return first, activity


def _read_entries(nodes, start, since, load_at, models, totals, first, activity):
    """(text items, usages, first, activity): the entries from row `since` on read for the
    catalogue (put_entries, put_usage; the models they name added to `models`, their usage to
    `totals`), and the messages from row `start` on for `ls` (_message). `load_at(row, offset,
    length)`: the entry of a row."""
    from .entrytypes import grepped, may_have_usage, usage_of
    from .preview import entry_text

    items, usages = [], []  # (the usage of each entry: what `stats --all` sums, stree.core.stats_catalog)
    text_types = grepped()  # (stree.core.entrytypes: a type's row says whether grep searches it)
    low = min(start, since)
    columns = [nodes.tail(c, low) if low else nodes.col(c) for c in ("type", "role", "ts", "offset", "length", "id")]
    for r, (etype, role, ts, offset, length, id) in enumerate(zip(*columns), low):
        listed = r >= start and etype == "message" and (role == "user" or role == "assistant")
        read = r >= since
        usage = read and may_have_usage(etype, role)
        if not (listed or usage or read and (etype in text_types or etype == "model_change")):
            continue
        entry = load_at(r, offset, length)
        if listed:
            first, activity = _message(entry, role, ts, first, activity)
        if not read:
            continue
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
            if isinstance(message, dict) and role == "assistant":
                _model(models, message.get("provider"), message.get("model"))
        elif etype == "model_change":
            _model(models, entry.get("provider"), entry.get("modelId"))
        text = entry_text(entry) if etype in text_types else ""
        if text:
            items.append((r, offset, length, role if etype == "message" else etype,
                          ts_millis(ts) if ms is None else ms, id, text))
    return items, usages, first, activity


def _put_content(cat, gen, since, n, nodes, items, usages):
    """The entries of the session `gen` from row `since` on into the catalogue: their text
    (`items`), their usage, their ids; the session's usage sums grown by them."""
    from . import usage_sums

    cat.put_entries(gen, items)
    if since:  # (kept sums grow by what was appended; none kept stays none)
        kept = usage_sums.decode(cat.sums({gen}).get(gen))
        kept = usage_sums.extend(kept, usages) if kept is not None else None
    else:
        kept = usage_sums.extend(None, usages)
    cat.put_usage(gen, since, usages, list(nodes.tail("id", since) if since else nodes.col("id")),
                  usage_sums.encode(kept))
    cat.put_indexed(gen, n)
    if since < n:
        STATS["indexed"] += 1


def _model(models, provider, model):
    if isinstance(model, str) and model:
        models.add(f"{provider}/{model}" if isinstance(provider, str) and provider else model)


def _json_list(text):
    import json

    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return value if isinstance(value, list) else []
