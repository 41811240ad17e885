"""SQLite catalogues kept open by a resident process (stree.grepserver), once keep_open() was
called: Catalog.close() leaves the connection open, with a page cache of CACHE_KIB, so the
next command finds its pages in memory; and the session rows (Catalog.rows), when no other
connection committed since (PRAGMA data_version) and this one changed nothing
(total_changes), are not read again. A catalogue replaced on disk (rebuilt, removed) is
opened anew; one the process removes itself is let go first (Catalog.remove_files)."""

import os

CACHE_KIB = 65536  # a kept catalogue's page cache: the text of a common word's entries fits
KEPT = {}  # path -> [connection, (device, inode), (key, rows) or None]
_ON = []  # not empty once keep_open() was called


def keep_open():
    _ON.append(True)


def connection(path):
    """The kept connection of the catalogue at `path`, while it is still that file; None when
    none is kept (or catalogues are not kept at all)."""
    entry = KEPT.get(path) if _ON else None
    if entry is None:
        return None
    try:
        st = os.stat(path)
        same = (st.st_dev, st.st_ino) == entry[1]
    except OSError:
        same = False
    if not same:
        forget(path)
        return None
    return entry[0]


def keep(path, db):
    """Keep `db`, just opened and checked, when catalogues are kept."""
    if not _ON:
        return
    db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    st = os.stat(path)
    KEPT[path] = [db, (st.st_dev, st.st_ino), None]


def is_kept(path, db):
    entry = KEPT.get(path)
    return entry is not None and entry[0] is db


def forget(path):
    entry = KEPT.pop(path, None)
    if entry is not None:
        try:
            entry[0].close()
        except Exception:
            pass


def rows(path, db, columns, read):
    """read()'s session rows of the kept catalogue at `path`, read again only when the
    database changed since (module doc); a copy each time (the caller's to change)."""
    entry = KEPT[path]
    key = (columns, db.execute("PRAGMA data_version").fetchone()[0], db.total_changes)
    if entry[2] is None or entry[2][0] != key:
        entry[2] = (key, read())
    return {full: dict(row) for full, row in entry[2][1].items()}
