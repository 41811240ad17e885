"""The statistics line of STREE_DEBUG_STATS (not `stree stats`: that is output.usage_tables) (read by the fast path too: no imports)."""

import sys


def stats_line(parsed, state):
    """The line STREE_DEBUG_STATS prints at the end of a command."""
    import resource

    unit = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB elsewhere
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    session = sys.modules.get("stree.storage.scan")
    decoded = session.STATS["decoded"] if session else 0
    columns = sys.modules.get("stree.storage.columns")
    values = columns.STATS["values"] if columns else 0
    line = (f"stree: stats: parsed {parsed} lines, index {state}, decoded {decoded} entries, "
            f"index values {values}, peak rss {own * unit // 1024} KiB")
    graph = sys.modules.get("stree.output.keptgraph")
    if graph is not None:
        line += f", graph rows drawn {graph.STATS['drawn']}, kept {graph.STATS['kept']} ({graph.STATS['how']})"
        drawing = sys.modules.get("stree.output.graph")
        if drawing is not None:
            line += f", connector levels walked {drawing.STATS['levels']}"
    workers = session.STATS["workers"] if session else 0
    if workers:  # the largest of them (the parse workers are this process's only children then)
        child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        line += f", {workers} parse worker(s), peak rss {child * unit // 1024} KiB"
    return line
