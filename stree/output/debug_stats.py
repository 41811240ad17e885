"""The statistics line of STREE_DEBUG_STATS (not `stree stats`: that is output.usage_tables), from the
command's load report (stree.core.loading.LoadReport; read by the fast paths too: no imports at the top)."""

import sys


def stats_line(report):
    """The line STREE_DEBUG_STATS prints at the end of a command."""
    import resource

    from ..storage import counters

    unit = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB elsewhere
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    line = (f"stree: stats: parsed {report.parsed} lines, index {report.index}, decoded {report.decoded} entries, "
            f"index values {report.values}, peak rss {own * unit // 1024} KiB")
    graph = report.graph
    if graph is not None:
        line += f", graph rows drawn {graph['drawn']}, kept {graph['kept']} ({graph['how']})"
        if report.levels is not None:
            line += f", connector levels walked {report.levels}"
        walk = counters("walk")
        if walk is not None and walk["given"]:  # (stree.output.graph_walk: the layout made as rows are read)
            line += f", entries tested {walk['given']} and parent bytes searched {walk['searched']} for the rows laid out"
    grep = counters("grep")
    if grep is not None and grep["paths"]:  # (stree.core.grep_match: a session's work done once, not per line)
        line += f", active paths read {grep['paths']}, short ids worked out {grep['ids']}"
    if report.indexed is not None:
        line += f", sessions indexed {report.indexed}"
    if report.walked is not None:
        line += f", path rows walked {report.walked}"
    workers = report.workers
    if workers:  # the largest of them (the parse workers are this process's only children then)
        child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        line += f", {workers} parse worker(s), peak rss {child * unit // 1024} KiB"
    return line
