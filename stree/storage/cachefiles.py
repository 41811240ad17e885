"""The files in stree's cache directory (indexes, kept graphs and the catalogue), listed and
checked for `stree cache` and `stree gc`."""

import os

from .cachedir import cache_dir
from .index import FORMAT
from .indexfile import meta_of


def entries():
    """(path, meta or None) for every file stree wrote in the cache: indexes (.idx) and
    kept graphs (.graph, stree.storage.keptgraph). Other files, links and directories are not
    listed (STREE_CACHE_DIR may hold anything); temp files: see temp_entries()."""
    from . import keptgraph as kept_store
    from .cachedir import own_files

    directory = cache_dir()
    out = []
    for name, temp in own_files(directory):
        if temp:
            continue
        full = os.path.join(directory, name)
        meta = None
        if name.endswith(".idx"):
            try:
                meta, _ = meta_of(full)
            except Exception:
                meta = None
        elif name.endswith(kept_store.SUFFIX):
            meta = kept_store.read_meta(full)
        elif name.startswith("catalog."):
            from .catalog import NAME, is_own

            if not is_own(os.path.join(directory, NAME)):
                continue  # (a file of another program by that name: never listed, never removed)
            meta = {"kind": "catalog"}  # (never stale: it checks each session file itself)
        out.append((full, meta))
    return out


def temp_entries():
    """Paths of stree's own temp files in the cache (a write in progress, or one killed)."""
    from .cachedir import own_files

    directory = cache_dir()
    return [os.path.join(directory, name) for name, temp in own_files(directory) if temp]


def is_stale(full, meta):
    """True when a cache file no longer belongs to a session file as it is (a graph
    file: as it was when the graph was drawn)."""
    from . import keptgraph as kept_store

    if full.endswith(kept_store.SUFFIX):
        return kept_store.is_stale(meta)
    if meta is not None and meta.get("kind") == "catalog":
        return False
    if not full.endswith(".idx") or meta is None or meta.get("format") != FORMAT:
        return True
    try:
        st = os.stat(meta["path"])
    except OSError:
        return True
    if (st.st_dev, st.st_ino) != (meta["dev"], meta["ino"]) or st.st_size < meta["covered"]:
        return True
    return False


STALE_TEMP_AGE = 15 * 60  # seconds: a temp file this old belongs to a write that was killed


def collect(everything):
    """Remove stale cache files (all of them with `everything`); returns how many. Only
    stree's own file names are ever removed (stree.storage.cachedir.OWN_NAME), never a link."""
    import time

    removed = 0
    stale = [full for full, meta in entries() if everything or is_stale(full, meta)]
    now = time.time()
    for full in temp_entries():
        try:
            if everything or now - os.lstat(full).st_mtime > STALE_TEMP_AGE:
                stale.append(full)
        except OSError:
            pass
    for full in stale:
        try:
            os.unlink(full)
            removed += 1
        except OSError:
            pass
    return removed
