"""Where stree keeps its cache (indexes, kept graphs) and how a cache file is
written: a light module, read by the fast paths that must not import the index."""

import os
import sys


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
