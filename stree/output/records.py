"""The records of `stree log --json` for one question (a revision or range, a /tree filter,
search words, a count), and of `stree log --graph --json` row by row: what serve's log
request and the MCP log and tree tools answer."""


def log_records(tree, revision="@", filter_=None, search=None, max_count=None, reverse=False):
    """The entries on the path root -> `revision` (or in the range A..B / A...B), newest first."""
    from ..core.leaf import position
    from ..core.preview import Previewer
    from ..core.revs import Resolver
    from .fields import entry_record

    if not tree.nodes and revision == "@":
        return []
    previewer = Previewer(tree)
    resolver = Resolver(tree)
    kind, *ends = resolver.resolve_range(revision)
    filtering = filter_ not in (None, "all") or search
    if kind == "single" and max_count is not None and not filtering:
        rows = tree.ancestor_rows(ends[0], max_count)
    else:
        rows = resolver.rows_of(revision)[::-1]
        if filtering:
            from .graph import shown

            tokens = [t for t in (search or "").lower().split() if t]
            leaf = position(tree)
            rows = [r for r in rows if shown(tree, r, filter_ or "all", tokens, leaf)]
        if max_count is not None:
            rows = rows[:max_count]
    if reverse:
        rows.reverse()
    at = position(tree)
    active = None if kind == "single" and ends[0] == at else (set(tree.path_rows(at)) if at else set())
    return [entry_record(tree, tree.node(row), previewer, active=active is None or row in active) for row in rows]


def graph_records(tree, filter_=None, search=None, max_count=None):
    """The rows of the whole tree as pi's /tree draws them, top to bottom."""
    from ..core.preview import Previewer
    from .fields import entry_record
    from .graph import graph

    previewer = Previewer(tree)
    rows = graph(tree, filter_ or "default", search, previewer=previewer)
    if max_count is not None:
        rows = rows[:max_count]
    return [entry_record(tree, row.node, previewer, graph=row.prefix, active=row.active, row=row.text(marker=False))
            for row in rows]
