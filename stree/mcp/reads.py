"""The read tools: list_sessions, grep, log, tree, show, context, labels. Each returns the
records of the matching CLI command's --json."""

import os

from ..errors import StreeError, UsageError
from ..core.entrytypes import grepped
from ..format import agents
from ..output.fields import ENTRY_FIELDS, GREP_FIELDS, LABEL_FIELDS, MESSAGE_FIELDS, SESSION_FIELDS
from ..output.graph import FILTERS
from .tools import REVISION, SESSION, Tool, records


def list_sessions(ws, query=None, all=False, limit=None):
    from ..core.listing import session_paths, session_records

    try:
        current = os.path.abspath(ws.path())
    except (StreeError, OSError):
        current = None
    paths, listed, _ = session_paths(ws.cwd, ws.agent_dir, ws.session_dir, all, ws.agent)
    from ..core.budget import shielded

    with shielded():  # (the catalogue is brought up to date whole: never cut short)
        infos = session_records(paths, listed, current, no_cache=ws.no_cache, everything=all)
    words = [w for w in (query or "").lower().split() if w]
    if words:
        def text(info):
            return " ".join(str(info.get(k) or "") for k in ("id", "name", "firstMessage", "cwd", "path")).lower()
        infos = [i for i in infos if all_words(words, text(i))]
    return {"sessions": infos[:limit] if limit is not None else infos}


def all_words(words, text):
    return all(w in text for w in words)


def grep(ws, pattern, ignore_case=False, word=False, regex=False, files_only=False, count=False, max_count=None,
         roles=(), types=(), since=None, until=None, cwd=None, agent=None, session=None):
    from ..core.grep_match import ROLES, TEXT_TYPES
    from ..core.grep_sessions import Grep
    from ..core.store import resolve_session

    for name, values, choices in (("roles", roles, ROLES), ("types", types, TEXT_TYPES)):
        for value in values:
            if value not in choices:
                raise UsageError(f"argument '{name}' holds {value!r}; each must be one of: {', '.join(choices)}")
    agent = agent or ws.agent
    path = resolve_session(session, ws.cwd, ws.agent_dir, ws.session_dir, agent) if session else None
    question = Grep(pattern, regex=regex, ignore_case=ignore_case, word=word, roles=roles, types=types, since=since,
                    until=until, cwd=cwd, files_only=files_only, count=count, max_count=max_count, session_path=path,
                    agent=agent, agent_dir=ws.agent_dir, no_cache=ws.no_cache, option_names=("since", "until"))
    return {"results": [rec for rec, _ in question.records()]}


def log(ws, session=None, revision="@", max_count=None, filter=None, search=None):
    from ..output.records import log_records

    loaded, tree = ws.load(session)
    return {"entries": log_records(tree, revision, filter, search, max_count)}


def tree_rows(ws, session=None, filter="default", search=None, max_count=None, cursor=None):
    """One page of the drawing's rows (about PAGE_BYTES of records, each drawn as it is
    written: the whole drawing is never held), from row `cursor`; `nextCursor` when more."""
    from ..core.preview import Previewer
    from ..output.fields import entry_record
    from ..output.modes import to_json
    from ..output.graph import graph
    from .tools import page_bytes

    start = 0
    if cursor is not None:
        if not cursor.isdigit():
            raise UsageError(f"argument 'cursor' must be a cursor a tree answer gave (nextCursor), not {cursor!r}")
        start = int(cursor)
    loaded, tree = ws.load(session)
    previewer = Previewer(tree)
    rows = graph(tree, filter or "default", search, previewer=previewer)
    if max_count is not None:
        rows = rows[:max_count]
    total = len(rows)
    limit = page_bytes()
    out, size, stop = [], 0, None
    for i in range(start, total):
        row = rows[i]
        record = entry_record(tree, row.node, previewer, graph=row.prefix, active=row.active,
                              row=row.text(marker=False))
        size += len(to_json(record)) + 1
        if out and size > limit:
            stop = i
            break
        out.append(record)
    result = {"rows": out}
    if start or stop is not None:
        result["total"] = total
    if stop is not None:
        result["nextCursor"] = str(stop)
        result["note"] = (f"rows {start + 1}-{stop} of {total}; call tree again with cursor={stop} for the next "
                          "page (or narrow it: filter, search, max_count)")
    return result


def show(ws, session=None, revisions=None):
    from ..core.revs import Resolver

    loaded, tree = ws.load(session)
    resolver = Resolver(tree)
    ids = [resolver.resolve(rev) for rev in (revisions or ["@"])]
    return {"entries": [tree.load(tree.get(id)) for id in ids]}


def context(ws, session=None, revision="@"):
    from ..core.revs import Resolver

    loaded, tree = ws.load(session)
    leaf = Resolver(tree).resolve(revision) if tree.nodes else None
    return tree.build_context(leaf)


def labels(ws, session=None):
    from ..core.preview import Previewer

    loaded, tree = ws.load(session)
    previewer = Previewer(tree)
    out = []
    for target, label in sorted(tree.labels.items(), key=lambda item: item[1]):
        node = tree.get(target)
        preview = previewer.text(node) if node is not None else "(missing entry)"
        out.append({"label": label, "id": target, "timestamp": tree.label_timestamps.get(target),
                    "preview": preview})
    return {"labels": out}


GRAPH_FIELDS = dict(ENTRY_FIELDS, row="the whole row exactly as pi's /tree draws it (graph, marker, label, preview)")
FILTER = {"type": "string", "enum": list(FILTERS), "description":
          "Which entries, as pi's /tree filters them: default (no settings entries), no-tools, user-only, "
          "labeled-only, all."}
SEARCH = {"type": "string", "description": "Only entries whose text holds every one of these words "
                                           "(case-insensitive, as /tree search)."}
MAX_COUNT = {"type": "integer", "minimum": 0, "description": "At most this many entries."}

def _paged(schema):
    schema["properties"].update(
        total={"type": "integer", "description": "rows in the whole drawing (after filter, search, max_count), when this "
                                                   "answer is a page of it"},
        nextCursor={"type": "string", "description": "set when more rows follow: pass it as cursor"},
        note={"type": "string", "description": "what this page holds, when it is not the whole drawing"})
    return schema


READ_TOOLS = [
    Tool("list_sessions", "List sessions",
         "List pi sessions, newest activity first: this project's (the directory the server runs in), or "
         "every project's with all=true. Each record has the session id, file path, cwd, display name, "
         "first user message, entry and message counts and dates: the records of `stree ls --json`. Use "
         "`query` to find a past session by words of its name, first message, cwd or id; pass a record's "
         "id or path as `session` to the other tools.",
         {"query": {"type": "string", "description": "Only sessions whose id, name, first message, cwd or path "
                                                     "contains every one of these words (case-insensitive)."},
          "all": {"type": "boolean", "description": "Sessions of every project, not only this directory's "
                                                    "(default false)."},
          "limit": {"type": "integer", "minimum": 0, "description": "At most this many sessions."}},
         [], list_sessions, records("sessions", SESSION_FIELDS, "the sessions, newest activity first")),
    Tool("log", "Entries on a path",
         "The entries on the path from the root to a revision (default @, the current leaf), newest first: "
         "the records of `stree log --json`. A range A..B gives the entries on B's path that are not on A's "
         "(what branch B added since A); A...B those on either side since their common ancestor. Each record "
         "has id, parentId, type, role, timestamp, label, a one-line preview and whether it is the leaf or on "
         "the active path. Use `show` for an entry's full content.",
         {"session": SESSION, "revision": {"type": "string", "description": REVISION + " Or a range A..B / A...B."},
          "max_count": MAX_COUNT, "filter": FILTER, "search": SEARCH},
         [], log, records("entries", ENTRY_FIELDS, "the entries, newest first")),
    Tool("tree", "A session's tree",
         "The whole session tree, every branch, as pi's /tree draws it: one record per row in drawing order "
         "(the branch holding the leaf first), with the graph prefix, the drawn row text, and whether the row "
         "is on the active path: the records of `stree log --graph --json`. Use it to see which branches a "
         "session has, where they fork and which one is current; filter and search as /tree does. Every row "
         "is a record: on a long session narrow it (filter user-only, search, max_count). A long answer comes "
         "in pages: `nextCursor` is set when more rows follow; pass it as `cursor` for the next page.",
         {"session": SESSION, "filter": FILTER, "search": SEARCH, "max_count": MAX_COUNT,
          "cursor": {"type": "string", "description": "Where the page starts: the nextCursor of the previous "
                                                      "page (default: the first row)."}},
         [], tree_rows, _paged(records("rows", GRAPH_FIELDS, "the rows of the drawing, top to bottom"))),
    Tool("show", "Show entries in full",
         "Entries in full, as they are in the session file (migrated to version 3): the message with all its "
         "content blocks, tool calls and results, usage, summaries: `stree show --json REV...`. Default: the "
         "leaf.",
         {"session": SESSION, "revisions": {"type": "array", "items": {"type": "string"},
                                            "description": "The entries to show, each a revision. " + REVISION}},
         [], show, {"type": "object", "required": ["entries"], "properties": {"entries": {
             "type": "array", "items": {"type": "object"}, "description": "the entries, in the order asked"}}}),
    Tool("context", "The LLM context at an entry",
         "The context pi builds for the model at a revision (default @): {messages, thinkingLevel, model}, "
         "exactly as pi 1.6.0's buildSessionContext returns it (compactions, branch summaries and context "
         "edits applied): `stree context --json REV`. What the agent saw at that point of the session.",
         {"session": SESSION, "revision": {"type": "string", "description": REVISION}},
         [], context, {"type": "object", "required": ["messages"], "properties": {
             "messages": {"type": "array", "items": {"type": "object"},
                          "description": "pi's messages, in order (fields per message: "
                                         + ", ".join(MESSAGE_FIELDS) + " and the rest of pi's message)"},
             "thinkingLevel": {"description": "the thinking level last set on the path"},
             "model": {"description": "{provider, modelId} last used on the path, or null"}}}),
    Tool("labels", "List labels",
         "The session's labels (named entries, usable as revisions), by name: `stree label --json`.",
         {"session": SESSION}, [], labels, records("labels", LABEL_FIELDS, "the labels, by name")),
    Tool("grep", "Search every session's text",
         "Find the lines of past sessions' text that match a pattern, across every session of every project "
         "(or the one `session` names): user and assistant text (thinking too), tool calls and results, bash "
         "executions, custom messages, branch summaries and compactions. One record per matching line, newest "
         "session first, with the session, the entry id, role, type, the line, whether the entry is on its "
         "session's active path, and `rev` (SESSION:ENTRY): pass the session as `session` and the entry as a "
         "revision to show, log or context. The records of `stree grep --json`. A plain pattern is a fixed "
         "string (case-sensitive unless ignore_case); regex=true makes it a Python regular expression.",
         {"pattern": {"type": "string", "description": "What to look for: a fixed string, or a regular "
                                                       "expression with regex=true."},
          "ignore_case": {"type": "boolean", "description": "Ignore case (grep -i)."},
          "word": {"type": "boolean", "description": "Match whole words only (grep -w)."},
          "regex": {"type": "boolean", "description": "The pattern is a Python regular expression (grep -E)."},
          "files_only": {"type": "boolean", "description": "One record per matching session instead (grep -l)."},
          "count": {"type": "boolean", "description": "One record per matching session with its number of "
                                                      "matching lines (grep -c)."},
          "max_count": {"type": "integer", "minimum": 1, "description": "Stop after this many matching lines."},
          "roles": {"type": "array", "items": {"type": "string"}, "description":
                    "Only messages of these roles: user, assistant, toolResult, bashExecution, custom, "
                    "branchSummary, compactionSummary."},
          "types": {"type": "array", "items": {"type": "string"}, "description":
                    f"Only entries of these types: {', '.join(grepped())}."},
          "since": {"type": "string", "description": "Only entries written at or after this date (2026-01-31, "
                                                     "3d, 2 weeks ago)."},
          "until": {"type": "string", "description": "Only entries written at or before this date."},
          "cwd": {"type": "string", "description": "Only sessions whose working directory is this one."},
          "agent": {"type": "string", "enum": list(agents.choices()), "description":
                    f"Whose sessions: {agents.described()}, or all (default: serve's --agent, else all)."},
          "session": dict(SESSION, description="Only this session: a path or a session id prefix (default: "
                                                "every session).")},
         ["pattern"], grep, records("results", GREP_FIELDS, "the matching lines (with files_only or count: "
                                                             "the matching sessions), newest session first")),
]


def offered(allow_writes=False):
    """The tools the server offers: the read tools, and the write tools with --allow-writes."""
    if not allow_writes:
        return list(READ_TOOLS)
    from .writes import WRITE_TOOLS

    return READ_TOOLS + WRITE_TOOLS
