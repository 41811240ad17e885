"""The per-session index, the parallel cold parse, kept outputs, the cache directory (depends on format only).

Also the work this process has done, counted where it is done (lines parsed, entries decoded,
index values made, graph rows drawn): each counting module registers its counters here when it
is imported, and the load report (stree.core.loading.LoadReport) reads them for
STREE_DEBUG_STATS. Here rather than in a module of its own: every reader imports this package
already, and the fast paths count their imports."""

_COUNTERS = {}


def register_counters(name, counts):
    """Keep `counts` (a dict the module adds to) under `name`; returns it."""
    _COUNTERS[name] = counts
    return counts


def counters(name):
    """The counters registered under `name`, or None when nothing of that kind ran here."""
    return _COUNTERS.get(name)
