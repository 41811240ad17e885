"""stree's own read commands over the wire: log, show, rev_parse, context, grep. Each answers
with what the CLI's --json prints for the same question: `records`, the JSON lines of
`stree log/show/rev-parse/grep --json`, and for context the object of `stree context --json`."""

from ..core.revs import Resolver
from .protocol import param

FILTERS = ("default", "no-tools", "user-only", "labeled-only", "all")


def _revisions(request, name="revisions"):
    value = param(request, name, list, default=None)
    if value is None:
        return ["@"]
    if not value or not all(isinstance(v, str) for v in value):
        raise_bad(f"{request.get('type')}: field '{name}' must be a non-empty array of strings")
    return value


def raise_bad(message):
    from .protocol import RequestError

    raise RequestError(message)


def log(served, request):
    """`stree log [REV|RANGE] [--graph] [--filter F] [--search W] [-n N] [--reverse] --json`."""
    from ..output.records import graph_records, log_records

    revision = param(request, "revision", str, default="@")
    as_graph = param(request, "graph", bool, default=False)
    filter_ = param(request, "filter", str, choices=FILTERS)
    search = param(request, "search", str)
    max_count = param(request, "maxCount", int)
    reverse = param(request, "reverse", bool, default=False)
    if max_count is not None and max_count < 0:
        raise_bad("log: field 'maxCount' must be 0 or more")
    if as_graph and reverse:
        raise_bad("log: graph and reverse cannot be combined: the graph is drawn top-down")
    session, tree = served.load()
    if as_graph:
        return {"records": graph_records(tree, filter_, search, max_count)}
    return {"records": log_records(tree, revision, filter_, search, max_count, reverse)}


def show(served, request):
    """`stree show REV... --json`: each entry as it is in the file (migrated to v3)."""
    revisions = _revisions(request)
    session, tree = served.load()
    resolver = Resolver(tree)
    return {"records": [tree.load(tree.get(resolver.resolve(rev))) for rev in revisions]}


def rev_parse(served, request):
    """`stree rev-parse REV... [--verify] --json` (ids in full, as --json prints them)."""
    revisions = _revisions(request)
    verify = param(request, "verify", bool, default=False)
    if verify and len(revisions) != 1:
        raise_bad("rev_parse: verify takes exactly one revision")
    session, tree = served.load()
    resolver = Resolver(tree)
    records = []
    for rev in revisions:
        for mark, id in resolver.parsed(rev, verify):
            records.append({"rev": rev, "id": id, "negated": True} if mark else {"rev": rev, "id": id})
    return {"records": records}


def context(served, request):
    """`stree context [REV] --json`: {messages, thinkingLevel, model}, as pi's buildSessionContext."""
    revision = param(request, "revision", str, default="@")
    session, tree = served.load()
    leaf = Resolver(tree).resolve(revision) if tree.nodes else None
    return tree.build_context(leaf)


def grep(served, request):
    """`stree grep PATTERN [-i] [-w] [-E] [-l|-c] [-m N] [--role R]... [--type T]... [--since D]
    [--until D] [--cwd DIR] --json`, over every session of the agents `agent` selects (default:
    serve's --agent), or the one `session` names (a path or id prefix, as -s)."""
    from ..core.grep_match import ROLES, TEXT_TYPES
    from ..core.grep_sessions import Grep
    from ..core.store import resolve_session
    from ..format.agents import choices as agent_choices

    pattern = param(request, "pattern", str, required=True)
    roles = _strings(request, "roles", ROLES)
    types = _strings(request, "types", TEXT_TYPES)
    max_count = param(request, "maxCount", int)
    if max_count is not None and max_count < 1:
        raise_bad("grep: field 'maxCount' must be 1 or more")
    agent = param(request, "agent", str, default=served.agent, choices=agent_choices())
    session = param(request, "session", str)
    path = resolve_session(session, served.cwd, served.agent_dir, served.session_dir, agent) if session else None
    files_only = param(request, "filesOnly", bool, default=False)
    count = param(request, "count", bool, default=False)
    if files_only and count:
        raise_bad("grep: filesOnly and count do not go together")
    question = Grep(pattern, regex=param(request, "regex", bool, default=False),
                    ignore_case=param(request, "ignoreCase", bool, default=False),
                    word=param(request, "word", bool, default=False), roles=roles, types=types,
                    since=param(request, "since", str), until=param(request, "until", str),
                    cwd=param(request, "cwd", str), files_only=files_only, count=count, max_count=max_count,
                    session_path=path, agent=agent, agent_dir=served.agent_dir, no_cache=served.no_cache,
                    option_names=("since", "until"))
    return {"records": [rec for rec, _ in question.records()]}


def _strings(request, name, choices):
    value = param(request, name, list, default=())
    for v in value:
        if v not in choices:
            raise_bad(f"{request.get('type')}: field '{name}' holds {v!r}; each must be one of "
                      + ", ".join(choices))
    return value


HANDLERS = {"log": log, "show": show, "rev_parse": rev_parse, "context": context, "grep": grep}
