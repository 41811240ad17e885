"""The usage the SQLite catalogue keeps per entry, so that `stats --all` sums every session
without reading its file (stree.core.catalog_refresh fills it, stree.core.stats_catalog reads it).

    usage   one row per entry that records usage (stree.format.usage.usage_of, the same
            concept one layer down: an entry's usage as read): its model key, its time
            (epoch ms) and its five values, as stats reads them from the file;
            numbered as the entries are (<generation> << 32 | <row>)
    ids     the ids of every entry of a session in file order, a chunk per read (numbered
            <generation> << 32 | <first row>): what a family of forks shares is counted once
    sums    per session (by generation), its usage summed in all, by model and by day
            (stree.core.usage_sums: JSON; null when they cannot be kept)

Values are kept as they were read (an int stays an int, a float a float: the columns have no
type affinity), so the sums are the file's to the last bit; an int SQLite cannot hold is kept
as its text."""

from .common import ROW_BITS, as_text, from_text

DDL = [
    "CREATE TABLE usage(rowid INTEGER PRIMARY KEY, model, ms, input, output, cache_read, cache_write, cost)",
    "CREATE TABLE ids(rowid INTEGER PRIMARY KEY, ids TEXT)",
    "CREATE TABLE sums(rowid INTEGER PRIMARY KEY, sums TEXT)",
]
TABLES = {"usage", "ids", "sums"}
_BIG = 1 << 63


def _value(v):
    return str(v) if v.__class__ is int and not -_BIG <= v < _BIG else v


def _back(v):
    return int(v) if v.__class__ is str else v


def put(db, gen, start, usages, ids, sums):
    """The usage rows of a session's entries read from row `start` ((row, model key, ms,
    (input, output, cacheRead, cacheWrite, cost)) each), the ids of those entries, and the
    session's sums (JSON text, or None) now."""
    base = gen << ROW_BITS
    if usages:
        db.executemany("INSERT OR REPLACE INTO usage VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       [(base + row, as_text(key), ms, *map(_value, values)) for row, key, ms, values in usages])
    if ids:
        import json

        db.execute("INSERT OR REPLACE INTO ids VALUES (?, ?)", (base + start, json.dumps(ids)))
    db.execute("INSERT OR REPLACE INTO sums VALUES (?, ?)", (gen, sums))


def forget(db, gen):
    lo = gen << ROW_BITS
    hi = lo + (1 << ROW_BITS)
    db.execute("DELETE FROM usage WHERE rowid >= ? AND rowid < ?", (lo, hi))
    db.execute("DELETE FROM ids WHERE rowid >= ? AND rowid < ?", (lo, hi))
    db.execute("DELETE FROM sums WHERE rowid = ?", (gen,))


def read(db, gen):
    """[(row, model key, ms, values)] of the session `gen`, in file order."""
    lo = gen << ROW_BITS
    out = []
    for rowid, key, ms, i, o, r, w, c in db.execute("SELECT * FROM usage WHERE rowid >= ? AND rowid < ? "
                                                    "ORDER BY rowid", (lo, lo + (1 << ROW_BITS))):
        values = (i, o, r, w, c)
        if str in (i.__class__, o.__class__, r.__class__, w.__class__):
            values = tuple(map(_back, values))
        out.append((rowid - lo, from_text(key), ms, values))
    return out


def sums(db, gens):
    """{gen: the sums' JSON text or None} of the sessions of `gens` (absent: none kept)."""
    return {gen: text for gen, text in db.execute("SELECT rowid, sums FROM sums") if gen in gens}


def ids_of(db, gen):
    """The ids of the session `gen`'s entries, by row."""
    import json

    lo = gen << ROW_BITS
    out = []
    for (chunk,) in db.execute("SELECT ids FROM ids WHERE rowid >= ? AND rowid < ? ORDER BY rowid",
                               (lo, lo + (1 << ROW_BITS))):
        out.extend(json.loads(chunk))
    return out
