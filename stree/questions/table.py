"""The read questions, each once: log rows, tree, show, context, labels, rev-parse, grep and the
session list, with their arguments and their records (what `stree serve` and MCP answer, the
records of the matching command's --json)."""

import os

from ..core.entrytypes import grepped
from ..core.grep_match import ROLES
from ..errors import StreeError
from ..format import agents
from ..output.fields import ENTRY_FIELDS, GREP_FIELDS, LABEL_FIELDS, MESSAGE_FIELDS, SESSION_FIELDS
from ..output.graph import FILTERS
from .base import Arg, Question, Refused

SESSION_DOC = ("The session: a path to a .jsonl file, or a session id prefix as list_sessions gives it "
               "(the same as stree's -s). Default: the server's session (serve -s), else the newest "
               "session of the directory the server runs in.")
REVISION_DOC = ("A revision in stree's revision language: an entry id or id prefix (4+ characters), a label, "
                "@ (the current leaf), root, :/text (the newest entry whose text contains text), REV~N "
                "(N entries up), REV^ (the parent).")
FILTER_DOC = ("Which entries, as pi's /tree filters them: default (no settings entries), no-tools, user-only, "
              "labeled-only, all.")
SEARCH_DOC = "Only entries whose text holds every one of these words (case-insensitive, as /tree search)."
MAX_COUNT_DOC = "At most this many entries."
GRAPH_FIELDS = dict(ENTRY_FIELDS, row="the whole row exactly as pi's /tree draws it (graph, marker, label, preview)")


def _session(**attrs):
    """The session a question reads (MCP's argument; serve reads its own session)."""
    return Arg("session", str, SESSION_DOC, serve=False, cli=False, **attrs)


def records(key, fields, what):
    """An output schema: {key: [records]} with the records' fields described."""
    return {"type": "object", "required": [key], "properties": {key: {
        "type": "array", "description": what,
        "items": {"type": "object", "properties": {f: {"description": d} for f, d in fields.items()}}}}}


# -- log (the path, or with graph the drawing), tree -----------------------------------------

def log(place, session=None, revision="@", max_count=None, filter=None, search=None, graph=False, reverse=False):
    from ..output.records import graph_records, log_records

    _, tree = place.load(session)
    if graph:
        return graph_records(tree, filter, search, max_count)
    return log_records(tree, revision, filter, search, max_count, reverse)


def _log_check(args):
    if args.get("graph") and args.get("reverse"):
        raise Refused("{0} and {1} cannot be combined: the graph is drawn top-down", "graph", "reverse")


def tree(place, session=None, filter="default", search=None, max_count=None):
    """The drawing's rows, each record made as it is asked for (a long drawing is never held
    as records): (count, record(i))."""
    from ..core.preview import Previewer
    from ..output.fields import entry_record
    from ..output.graph import graph

    _, tree = place.load(session)
    previewer = Previewer(tree)
    rows = graph(tree, filter or "default", search, previewer=previewer)
    if max_count is not None:
        rows = rows[:max_count]

    def record(i):
        row = rows[i]
        return entry_record(tree, row.node, previewer, graph=row.prefix, active=row.active,
                            row=row.text(marker=False))
    return len(rows), record


# -- show, context, labels, rev-parse ---------------------------------------------------------

def show(place, session=None, revisions=None):
    from ..core.revs import Resolver

    _, tree = place.load(session)
    resolver = Resolver(tree)
    ids = [resolver.resolve(rev) for rev in (revisions or ["@"])]
    return [tree.load(tree.get(id)) for id in ids]


def context(place, session=None, revision="@"):
    from ..core.revs import Resolver

    _, tree = place.load(session)
    leaf = Resolver(tree).resolve(revision) if tree.nodes else None
    return tree.build_context(leaf)


def labels(place, session=None):
    from ..core.preview import Previewer
    from ..output.reads import label_records

    _, tree = place.load(session)
    return list(label_records(tree, Previewer(tree)))


def rev_parse(place, revisions=None, verify=False):
    from ..core.revs import Resolver

    _, tree = place.load(None)
    resolver = Resolver(tree)
    out = []
    for rev in revisions or ["@"]:
        for mark, id in resolver.parsed(rev, verify):
            out.append({"rev": rev, "id": id, "negated": True} if mark else {"rev": rev, "id": id})
    return out


def _rev_parse_check(args):
    if args.get("verify") and len(args.get("revisions") or ["@"]) != 1:
        raise Refused("{0} takes exactly one revision", "verify")


# -- every session: grep, the session list -----------------------------------------------------

def grep(place, pattern, ignore_case=False, word=False, regex=False, files_only=False, count=False, max_count=None,
         roles=(), types=(), since=None, until=None, cwd=None, agent=None, session=None):
    from ..core.grep_sessions import Grep
    from ..core.store import resolve_session

    agent = agent or place.agent
    path = resolve_session(session, place.cwd, place.agent_dir, place.session_dir, agent) if session else None
    question = Grep(pattern, regex=regex, ignore_case=ignore_case, word=word, roles=roles, types=types, since=since,
                    until=until, cwd=cwd, files_only=files_only, count=count, max_count=max_count, session_path=path,
                    agent=agent, agent_dir=place.agent_dir, no_cache=place.no_cache,
                    option_names=("since", "until"))
    return [rec for rec, _ in question.records()]


def _grep_check(args):
    if args.get("files_only") and args.get("count"):
        raise Refused("{0} and {1} do not go together", "files_only", "count")


def list_sessions(place, query=None, all=False, limit=None):
    from ..core.budget import shielded
    from ..core.listing import session_paths, session_records

    try:
        current = os.path.abspath(place.path())
    except (StreeError, OSError):
        current = None
    paths, listed, _ = session_paths(place.cwd, place.agent_dir, place.session_dir, all, place.agent)
    with shielded():  # (the catalogue is brought up to date whole: never cut short)
        infos = session_records(paths, listed, current, no_cache=place.no_cache, everything=all)
    words = [w for w in (query or "").lower().split() if w]
    if words:
        def text(info):
            return " ".join(str(info.get(k) or "") for k in ("id", "name", "firstMessage", "cwd", "path")).lower()
        infos = [i for i in infos if _all_words(words, text(i))]
    return infos[:limit] if limit is not None else infos


def _all_words(words, text):
    return all(w in text for w in words)  # (list_sessions's `all` is its argument)


def _paged(schema):
    schema["properties"].update(
        total={"type": "integer", "description": "rows in the whole drawing (after filter, search, max_count), "
                                                   "when this answer is a page of it"},
        nextCursor={"type": "string", "description": "set when more rows follow: pass it as cursor"},
        note={"type": "string", "description": "what this page holds, when it is not the whole drawing"})
    return schema


REVISIONS = Arg("revisions", list, nonempty=True, positional=True, schema={
    "type": "array", "items": {"type": "string"}, "description": "The entries to show, each a revision. " + REVISION_DOC})
MAX_COUNT = Arg("max_count", int, MAX_COUNT_DOC, minimum=0)
FILTER = Arg("filter", str, FILTER_DOC, choices=FILTERS)
SEARCH = Arg("search", str, SEARCH_DOC)

QUESTIONS = [
    Question("list_sessions", list_sessions, [
        Arg("query", str, "Only sessions whose id, name, first message, cwd or path contains every one of these "
                          "words (case-insensitive)."),
        Arg("all", bool, "Sessions of every project, not only this directory's (default false)."),
        Arg("limit", int, "At most this many sessions.", minimum=0)],
        mcp=("list_sessions", "sessions", "List sessions",
             "List pi sessions, newest activity first: this project's (the directory the server runs in), or "
             "every project's with all=true. Each record has the session id, file path, cwd, display name, "
             "first user message, entry and message counts and dates: the records of `stree ls --json`. Use "
             "`query` to find a past session by words of its name, first message, cwd or id; pass a record's "
             "id or path as `session` to the other tools.",
             records("sessions", SESSION_FIELDS, "the sessions, newest activity first"))),
    Question("log", log, [
        _session(), Arg("revision", str, REVISION_DOC + " Or a range A..B / A...B.", default="@", positional=True),
        Arg("graph", bool, mcp=False), MAX_COUNT, FILTER, SEARCH, Arg("reverse", bool, mcp=False)],
        check=_log_check, serve=("log", "records"),
        mcp=("log", "entries", "Entries on a path",
             "The entries on the path from the root to a revision (default @, the current leaf), newest first: "
             "the records of `stree log --json`. A range A..B gives the entries on B's path that are not on A's "
             "(what branch B added since A); A...B those on either side since their common ancestor. Each record "
             "has id, parentId, type, role, timestamp, label, a one-line preview and whether it is the leaf or on "
             "the active path. Use `show` for an entry's full content.",
             records("entries", ENTRY_FIELDS, "the entries, newest first"))),
    Question("tree", tree, [
        _session(), FILTER, SEARCH, MAX_COUNT,
        Arg("cursor", str, "Where the page starts: the nextCursor of the previous page (default: the first row).")],
        mcp=("tree", "rows", "A session's tree",
             "The whole session tree, every branch, as pi's /tree draws it: one record per row in drawing order "
             "(the branch holding the leaf first), with the graph prefix, the drawn row text, and whether the row "
             "is on the active path: the records of `stree log --graph --json`. Use it to see which branches a "
             "session has, where they fork and which one is current; filter and search as /tree does. Every row "
             "is a record: on a long session narrow it (filter user-only, search, max_count). A long answer comes "
             "in pages: `nextCursor` is set when more rows follow; pass it as `cursor` for the next page.",
             _paged(records("rows", GRAPH_FIELDS, "the rows of the drawing, top to bottom")))),
    Question("show", show, [_session(), REVISIONS], serve=("show", "records"),
             mcp=("show", "entries", "Show entries in full",
                  "Entries in full, as they are in the session file (migrated to version 3): the message with all "
                  "its content blocks, tool calls and results, usage, summaries: `stree show --json REV...`. "
                  "Default: the leaf.",
                  {"type": "object", "required": ["entries"], "properties": {"entries": {
                      "type": "array", "items": {"type": "object"},
                      "description": "the entries, in the order asked"}}})),
    Question("context", context, [_session(), Arg("revision", str, REVISION_DOC, default="@", positional=True)],
             serve=("context", None),
             mcp=("context", None, "The LLM context at an entry",
                  "The context pi builds for the model at a revision (default @): {messages, thinkingLevel, model}, "
                  "exactly as pi 1.6.0's buildSessionContext returns it (compactions, branch summaries and context "
                  "edits applied): `stree context --json REV`. What the agent saw at that point of the session.",
                  {"type": "object", "required": ["messages"], "properties": {
                      "messages": {"type": "array", "items": {"type": "object"},
                                   "description": "pi's messages, in order (fields per message: "
                                                  + ", ".join(MESSAGE_FIELDS) + " and the rest of pi's message)"},
                      "thinkingLevel": {"description": "the thinking level last set on the path"},
                      "model": {"description": "{provider, modelId} last used on the path, or null"}}})),
    Question("labels", labels, [_session()],
             mcp=("labels", "labels", "List labels",
                  "The session's labels (named entries, usable as revisions), by name: `stree label --json`.",
                  records("labels", LABEL_FIELDS, "the labels, by name"))),
    Question("grep", grep, [
        Arg("pattern", str, "What to look for: a fixed string, or a regular expression with regex=true.",
            required=True),
        Arg("ignore_case", bool, "Ignore case (grep -i)."),
        Arg("word", bool, "Match whole words only (grep -w)."),
        Arg("regex", bool, "The pattern is a Python regular expression (grep -E)."),
        Arg("files_only", bool, "One record per matching session instead (grep -l)."),
        Arg("count", bool, "One record per matching session with its number of matching lines (grep -c)."),
        Arg("max_count", int, "Stop after this many matching lines.", minimum=1),
        Arg("roles", list, "Only messages of these roles: user, assistant, toolResult, bashExecution, custom, "
                           "branchSummary, compactionSummary.", choices=ROLES, default=()),
        Arg("types", list, f"Only entries of these types: {', '.join(grepped())}.",
            choices=grepped(), default=()),
        Arg("since", str, "Only entries written at or after this date (2026-01-31, 3d, 2 weeks ago)."),
        Arg("until", str, "Only entries written at or before this date."),
        Arg("cwd", str, "Only sessions whose working directory is this one."),
        Arg("agent", str, f"Whose sessions: {agents.described()}, or all (default: serve's --agent, else all).",
            choices=agents.choices()),
        Arg("session", str, "Only this session: a path or a session id prefix (default: every session).")],
        check=_grep_check, serve=("grep", "records"),
        mcp=("grep", "results", "Search every session's text",
             "Find the lines of past sessions' text that match a pattern, across every session of every project "
             "(or the one `session` names): user and assistant text (thinking too), tool calls and results, bash "
             "executions, custom messages, branch summaries and compactions. One record per matching line, newest "
             "session first, with the session, the entry id, role, type, the line, whether the entry is on its "
             "session's active path, and `rev` (SESSION:ENTRY): pass the session as `session` and the entry as a "
             "revision to show, log or context. The records of `stree grep --json`. A plain pattern is a fixed "
             "string (case-sensitive unless ignore_case); regex=true makes it a Python regular expression.",
             records("results", GREP_FIELDS, "the matching lines (with files_only or count: the matching "
                                             "sessions), newest session first"))),
    Question("rev_parse", rev_parse, [REVISIONS, Arg("verify", bool)], check=_rev_parse_check,
             serve=("rev_parse", "records")),
]
