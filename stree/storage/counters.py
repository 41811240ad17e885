"""The work this process has done, counted where it is done: lines parsed, entries decoded,
index values made, graph rows drawn. Each counting module registers its counters here when it
is imported; the load report (stree.core.loading.LoadReport) reads them for STREE_DEBUG_STATS.
No imports: the fast paths read it too."""

_COUNTERS = {}


def register(name, counts):
    """Keep `counts` (a dict the module adds to) under `name`; returns it."""
    _COUNTERS[name] = counts
    return counts


def get(name):
    """The counters registered under `name`, or None when nothing of that kind ran here."""
    return _COUNTERS.get(name)
