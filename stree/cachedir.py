"""Where stree keeps its cache (indexes, kept graphs) and how a cache file is
written: a light module, read by the fast paths that must not import the index."""

import os
import re
import stat
import sys

# The only names stree ever writes in its cache dir: <dev>-<inode>.idx (stree.index),
# <dev>-<inode>-<crc>.graph (stree.graphcache), and their temp files while being written.
# Nothing else there is ever removed, whatever the directory (STREE_CACHE_DIR) holds.
OWN_NAME = re.compile(r"[0-9a-f]+-[0-9a-f]+(?:-[0-9a-f]{8}\.graph|\.idx)")
OWN_TEMP = re.compile(r"(?P<target>[0-9a-f]+-[0-9a-f]+(?:-[0-9a-f]{8}\.graph|\.idx))\.[0-9]+(?:-[0-9a-f]+)?\.tmp")


def cache_dir():
    override = os.environ.get("STREE_CACHE_DIR")
    if override:
        return override
    if sys.platform.startswith("linux"):  # platformdirs' own rule, without importing it
        base = os.environ.get("XDG_CACHE_HOME", "")
        if not base.strip():
            base = os.path.expanduser("~/.cache")
        return os.path.join(base, "stree", "index")
    from platformdirs import user_cache_dir

    return os.path.join(user_cache_dir("stree"), "index")


def own_files(directory):
    """(name, is_temp) of the regular files (not links, not directories) in `directory` that
    stree wrote: its indexes, kept graphs and their temp files; [] when unreadable."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    out = []
    for name in names:
        own, temp = OWN_NAME.fullmatch(name), OWN_TEMP.fullmatch(name)
        if not own and not temp:
            continue
        try:
            st = os.lstat(os.path.join(directory, name))
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            out.append((name, bool(temp)))
    return out


def write_file(target, parts):
    """Write a cache file readable by this user only, as a temp file and a rename:
    concurrent stree processes never see half of one (the last writer wins)."""
    directory = os.path.dirname(target)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    tmp = f"{target}.{os.getpid()}.tmp"
    try:
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
            f.writelines(parts)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
