"""Where stree keeps its cache (indexes, rendered graphs): a light module, read by
the fast paths that must not import the index."""

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
