"""Which rows `stree log` shows (log_rows: the one walk, for the command, stree.fastread, serve
and MCP), and the records of `stree log --json` for one question (a revision or range, a /tree filter,
search words, a count), and of `stree log --graph --json` row by row: what serve's log
request and the MCP log and tree tools answer."""


class LogRows:
    """Which rows `log REV` shows: `rows` (newest first, or oldest with reverse), `active` (the
    rows on the path to @; None when every row shown is on it), `kind` (of the revision:
    single, range, symmetric) and `matched` (False when a filter or search left no entry,
    before -n cut them)."""

    def __init__(self, rows, active, kind, matched=True):
        self.rows = rows
        self.active = active
        self.kind = kind
        self.matched = matched


def log_rows(tree, revision="@", filter_=None, search=None, max_count=None, reverse=False, only=None):
    """The one answer to "which rows does `log REV` show" (the command, stree.fastread, serve and
    MCP): the path root -> `revision` (or the range A..B / A...B), passed through a /tree filter,
    every word of `search` and `only` (tree -> (row -> shown?): --since, --until, --role,
    --model), then at most `max_count` of them."""
    from ..core.leaf import position
    from ..core.revs import Resolver

    if not tree.nodes and revision == "@":
        return LogRows([], None, "single")
    resolver = Resolver(tree)
    kind, *ends = resolver.resolve_range(revision)
    filtering = filter_ not in (None, "all") or search or only
    matched = True
    if kind == "single" and max_count is not None and not filtering:
        rows = tree.ancestor_rows(ends[0], max_count)  # only the entries shown
    else:
        rows = resolver.rows_of(revision)[::-1]
        if filtering:  # before -n: -n counts the entries shown
            rows = filtered(tree, rows, filter_, search, only)
            matched = bool(rows)
        if max_count is not None:
            rows = rows[:max_count]
    if reverse:
        rows.reverse()
    at = position(tree)
    if kind == "single" and ends[0] == at:
        active = None  # the path to @: every entry on it is active
    else:
        active = set(tree.path_rows(at)) if at else set()
    return LogRows(rows, active, kind, matched)


def filtered(tree, rows, filter_, search, only=None):
    """The rows that pass a /tree filter, every word of the search and `only` (--since, --until,
    --role, --model), in their order."""
    from ..core.leaf import position
    from .graph import shown

    tokens = [t for t in (search or "").lower().split() if t]
    leaf = position(tree)
    test = only(tree) if only is not None else None
    if filter_ is None and search is None:  # (--since and the like alone: every entry of the path is a candidate)
        return [r for r in rows if test(r)]
    return [r for r in rows if shown(tree, r, filter_ or "all", tokens, leaf) and (test is None or test(r))]


def log_records(tree, revision="@", filter_=None, search=None, max_count=None, reverse=False, only=None):
    """The entries on the path root -> `revision` (or in the range A..B / A...B), newest first."""
    from ..core.preview import Previewer
    from .fields import entry_record

    walk = log_rows(tree, revision, filter_, search, max_count, reverse, only)
    previewer = Previewer(tree)
    active = walk.active
    return [entry_record(tree, tree.node(row), previewer, active=active is None or row in active)
            for row in walk.rows]


def graph_records(tree, filter_=None, search=None, max_count=None, only=None):
    """The rows of the whole tree as pi's /tree draws them, top to bottom."""
    from ..core.preview import Previewer
    from .fields import entry_record
    from .graph import graph

    previewer = Previewer(tree)
    rows = graph(tree, filter_ or "default", search, previewer=previewer, keep=only(tree) if only else None)
    if max_count is not None:
        rows = rows[:max_count]
    return [entry_record(tree, row.node, previewer, graph=row.prefix, active=row.active, row=row.text(marker=False))
            for row in rows]


def entry_filter(since=None, until=None, roles=(), models=()):
    """--since, --until, --role and --model (log's, serve's and MCP's since, until, roles, models)
    as one test: tree -> (row -> shown?), or None. A date that is not one is a UsageError."""
    if not (since or until or roles or models):
        return None
    from ..core.entrytypes import role_of
    from ..core.grep_match import parse_when

    low = parse_when(since, "--since") if since else None
    high = parse_when(until, "--until") if until else None
    wanted = set(roles or ())
    patterns = [m.lower() for m in models or ()]

    def of(tree):
        from fnmatch import fnmatchcase

        from ..format.timestamp import ts_millis

        def test(row):
            node = tree.node(row)
            if low is not None or high is not None:
                ms = ts_millis(node.ts) if node.ts else None
                if ms is None or (low is not None and ms < low) or (high is not None and ms > high):
                    return False
            if wanted and role_of(node.type, node.role) not in wanted:  # (its row: stree.core.entrytypes)
                return False
            if patterns:
                if node.type != "message" or node.role != "assistant":
                    return False
                message = tree.load(node).get("message")
                message = message if isinstance(message, dict) else {}
                provider = message.get("provider")
                names = []
                for key in ("model", "responseModel"):
                    model = message.get(key)
                    if isinstance(model, str) and model:
                        names.append(model.lower())
                        if isinstance(provider, str) and provider:
                            names.append(f"{provider}/{model}".lower())
                if not any(fnmatchcase(n, p) for n in names for p in patterns):
                    return False
            return True
        return test
    return of
