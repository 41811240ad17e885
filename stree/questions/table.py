"""The read questions, each once: log rows, tree, show, context, labels, rev-parse, grep, the
session list and stats, with their arguments, the checks of arguments that do not go together, and their
records' schemas (what `stree serve`, MCP and the commands answer, the records of the matching
command's --json). Their answers are answers.py's (stats: stats.py)."""

from . import answers, stats
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


# -- the checks: arguments that do not go together, dates that are not ------------------------

def _log_check(args):
    if args.get("graph") and args.get("reverse"):
        raise Refused("{0} and {1} cannot be combined: the graph is drawn top-down", "graph", "reverse",
                      hint="drop --reverse, or use 'stree log --reverse' for the path oldest first")
    _dates_check(args)


def _dates_check(args, usage=False):
    """since and until, each a date or refused: as grep and log read them (core.grep_match.
    parse_when: ages too), or with `usage` as stats does (core.usage_totals.parse_bound)."""
    if usage:
        from ..core.usage_totals import parse_bound

        def parse(value, name):
            return parse_bound(value, end=name == "until", option="\0")
    else:
        from ..core.grep_match import parse_when

        def parse(value, name):
            return parse_when(value, "\0")
    for name in ("since", "until"):
        if args.get(name) is not None:
            try:
                parse(args[name], name)
            except StreeError as e:
                raise Refused(_named(str(e)), name, hint=e.hint) from None


def _named(message):
    """An error's message naming its argument as \\0, made a Refused's (the name is {0})."""
    return message.replace("{", "{{").replace("}", "}}").replace("\0", "{0}")


REQUEST_ARGS = ("model", "provider", "base_url", "max_tokens", "system_prompt", "tools")


def _context_check(args):
    if args.get("as_", "pi") == "pi":
        given = next((name for name in REQUEST_ARGS if args.get(name) is not None), None)
        if given is not None:
            raise Refused("{0} describes a request: it needs {1} openai or {1} anthropic", given, "as_")
    if args.get("base_url") is not None:
        from ..providers import check_base_url

        try:
            check_base_url(args["base_url"], "\0")
        except StreeError as e:  # (said again with the argument's name as the front end spells it)
            raise Refused(_named(str(e)), "base_url", hint=e.hint) from None


def _rev_parse_check(args):
    if args.get("verify") and len(args.get("revisions") or ["@"]) != 1:
        raise Refused("{0} takes exactly one revision", "verify")


def _grep_check(args):
    if args.get("files_only") and args.get("count"):
        raise Refused("{0} and {1} do not go together", "files_only", "count")
    _dates_check(args)


def _stats_check(args):
    if args.get("all") and args.get("revision"):
        raise Refused("{0} sums every session; it takes no revision", "all",
                      hint="'stree stats REV' for a path or range of one session")
    _dates_check(args, usage=True)


def _paged(schema):
    schema["properties"].update(
        total={"type": "integer", "description": "rows in the whole drawing (after filter, search, max_count), "
                                                   "when this answer is a page of it"},
        nextCursor={"type": "string", "description": "set when more rows follow: pass it as cursor"},
        note={"type": "string", "description": "what this page holds, when it is not the whole drawing"})
    return schema


def _revisions(metavar, doc):
    return Arg("revisions", list, nonempty=True, positional=True, metavar=metavar, schema={
        "type": "array", "items": {"type": "string"}, "description": doc + " " + REVISION_DOC})


SINCE = Arg("since", str, "Only entries written at or after this date (2026-01-31, 3d, 2 weeks ago).", metavar="DATE",
            help="Only entries written at or after DATE (2026-01-31, 3d, 2 weeks ago).")
UNTIL = Arg("until", str, "Only entries written at or before this date.", metavar="DATE",
            help="Only entries written at or before DATE.")
MAX_COUNT = Arg("max_count", int, MAX_COUNT_DOC, minimum=0)
FILTER = Arg("filter", str, FILTER_DOC, choices=FILTERS)
SEARCH = Arg("search", str, SEARCH_DOC)

QUESTIONS = [
    Question("list_sessions", answers.list_sessions, [
        Arg("query", str, "Only sessions whose id, name, first message, cwd or path contains every one of these "
                          "words (case-insensitive).", cli=False),
        Arg("all", bool, "Sessions of every project, not only this directory's (default false).",
            flags=("-a", "--all"), dest="all_", help="Sessions of every project, not only this directory's."),
        Arg("limit", int, "At most this many sessions.", minimum=0, cli=False)],
        mcp=("list_sessions", "sessions", "List sessions",
             "List pi sessions, newest activity first: this project's (the directory the server runs in), or "
             "every project's with all=true. Each record has the session id, file path, cwd, display name, "
             "first user message, entry and message counts and dates: the records of `stree ls --json`. Use "
             "`query` to find a past session by words of its name, first message, cwd or id; pass a record's "
             "id or path as `session` to the other tools.",
             records("sessions", SESSION_FIELDS, "the sessions, newest activity first"))),
    Question("log", answers.log, [
        _session(),
        Arg("revision", str, REVISION_DOC + " Or a range A..B / A...B.", default="@", positional=True,
            metavar="[REV|RANGE]"),
        Arg("graph", bool, mcp=False, dest="as_graph",
            help="Draw the whole tree, as pi's /tree does. On a terminal each row is one line of its width: the "
                 "outer levels of deep connectors fold into a marker (⋯12⋯: 12 levels); into a pipe rows are "
                 "whole."),
        Arg("filter", str, FILTER_DOC, choices=FILTERS, dest="filter_",
            help="Which entries to show, as pi's /tree filters them (default: 'default' for --graph, 'all' for "
                 "the path)."),
        Arg("search", str, SEARCH_DOC, metavar="WORDS",
            help="Only entries whose text holds every word (as /tree search); none found: exit 1."),
        Arg("max_count", int, MAX_COUNT_DOC, minimum=0, flags=("-n", "--max-count"),
            help="Show at most N entries (-N: the same)."),
        SINCE, UNTIL,
        Arg("roles", list, "Only messages of these roles (as grep's).", choices=ROLES, default=(), flags=("--role",),
            metavar="ROLE", help="Only messages of this role, as grep's --role (user, assistant, toolResult, "
                                 "bashExecution, custom, branchSummary, compactionSummary); repeatable."),
        Arg("models", list, "Only assistant messages of a model matching one of these globs (on the model or "
                            "provider/model: 'gpt-*', 'anthropic/*').", default=(), flags=("--model",),
            metavar="PATTERN", help="Only assistant messages of a model matching PATTERN (a glob, on the model or "
                                    "provider/model: 'gpt-*', 'anthropic/*'); repeatable."),
        Arg("reverse", bool, mcp=False, help="Oldest first (not with --graph).")],
        check=_log_check, serve=("log", "records"),
        mcp=("log", "entries", "Entries on a path",
             "The entries on the path from the root to a revision (default @, the current leaf), newest first: "
             "the records of `stree log --json`. A range A..B gives the entries on B's path that are not on A's "
             "(what branch B added since A); A...B those on either side since their common ancestor. Each record "
             "has id, parentId, type, role, timestamp, label, a one-line preview and whether it is the leaf or on "
             "the active path. Use `show` for an entry's full content.",
             records("entries", ENTRY_FIELDS, "the entries, newest first"))),
    Question("tree", answers.tree, [
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
    Question("show", answers.show, [
        _session(),
        _revisions("[REV|RANGE...]", "The entries to show, each a revision, or a range A..B / A...B (its every "
                                     "entry, newest first).")],
             serve=("show", "records"),
             mcp=("show", "entries", "Show entries in full",
                  "Entries in full, as they are in the session file (migrated to version 3): the message with all "
                  "its content blocks, tool calls and results, usage, summaries: `stree show --json REV...`. "
                  "Default: the leaf.",
                  {"type": "object", "required": ["entries"], "properties": {"entries": {
                      "type": "array", "items": {"type": "object"},
                      "description": "the entries, in the order asked"}}})),
    Question("context", answers.context, [
        _session(), Arg("revision", str, REVISION_DOC, default="@", positional=True, metavar="[REV]"),
        Arg("as_", str, flags=("--as",), choices=("pi", "openai", "anthropic"), default="pi", serve=False, mcp=False,
            help="Message format."),
        Arg("model", str, metavar="ID", serve=False, mcp=False,
            help="With --as: the model asked (default: the session's model)."),
        Arg("provider", str, metavar="NAME", serve=False, mcp=False,
            help="With --as: pi's provider of the model (openai, anthropic, openrouter, groq, ...)."),
        Arg("base_url", str, metavar="URL", serve=False, mcp=False,
            help="With --as: the server (default: the API's own)."),
        Arg("max_tokens", int, minimum=1, serve=False, mcp=False,
            help="With --as: the model's output limit (default 16384, as pi for a model it does not know)."),
        Arg("system_prompt", str, metavar="FILE", dest="system_prompt_file", serve=False, mcp=False,
            help="With --as: the instructions (text file; default: the config's system_prompt, else none)."),
        Arg("tools", str, metavar="FILE", dest="tools_file", serve=False, mcp=False,
            help="With --as: tool definitions, a JSON array (default: the config's tools, else pi's built-in).")],
             check=_context_check,
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
    Question("labels", answers.labels, [_session()],
             mcp=("labels", "labels", "List labels",
                  "The session's labels (named entries, usable as revisions), by name: `stree label --json`.",
                  records("labels", LABEL_FIELDS, "the labels, by name"))),
    Question("grep", answers.grep, [
        Arg("pattern", str, "What to look for: a fixed string, or a regular expression with regex=true.",
            required=True),
        Arg("ignore_case", bool, "Ignore case (grep -i).", flags=("-i", "--ignore-case"), help="Ignore case."),
        Arg("word", bool, "Match whole words only (grep -w).", flags=("-w", "--word-regexp"),
            help="Match whole words only."),
        Arg("regex", bool, "The pattern is a Python regular expression (grep -E).", flags=("-E", "--extended-regexp"),
            help="PATTERN is a (Python) regular expression."),
        Arg("files_only", bool, "One record per matching session instead (grep -l).",
            flags=("-l", "--files-with-matches"),
            help="Print only the sessions that match (shortest id prefix; {path} with --format)."),
        Arg("count", bool, "One record per matching session with its number of matching lines (grep -c).",
            flags=("-c", "--count"), help="Print the number of matching lines per session."),
        Arg("max_count", int, "Stop after this many matching lines.", minimum=1, flags=("-m", "--max-count"),
            help="Stop after N matching lines in all."),
        Arg("roles", list, "Only messages of these roles: user, assistant, toolResult, bashExecution, custom, "
                           "branchSummary, compactionSummary.", choices=ROLES, default=(), flags=("--role",),
            metavar="ROLE", help="Only messages of this role (user, assistant, toolResult, bashExecution, custom, "
                                 "branchSummary, compactionSummary); repeatable."),
        Arg("types", list, f"Only entries of these types: {', '.join(grepped())}.",
            choices=grepped(), default=(), flags=("--type",), metavar="TYPE",
            help=f"Only entries of this type ({', '.join(grepped())}); repeatable."),
        SINCE, UNTIL,
        Arg("cwd", str, "Only sessions whose working directory is this one.", metavar="DIR",
            help="Only sessions whose working directory is DIR."),
        Arg("agent", str, f"Whose sessions: {agents.described()}, or all (default: serve's --agent, else all).",
            choices=agents.choices(), cli=False),
        Arg("session", str, "Only this session: a path or a session id prefix (default: every session).",
            cli=False)],
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
    Question("stats", stats.stats, [
        _session(),
        Arg("revision", str, "Only the entries on the path root -> this revision, or in this range A..B / A...B "
                             "(default: the whole session, split by path and branch). " + REVISION_DOC,
            positional=True, metavar="[REV|RANGE]"),
        Arg("all", bool, "Every session of every project instead (no revision), by session, model and day.",
            flags=("-a", "--all"), dest="all_",
            help="Every session of every project, of the agents --agent selects, as ls --all lists them (no REV)."),
        Arg("since", str, "Only usage recorded on or after this date (YYYY-MM-DD or ISO time).", metavar="DATE",
            help="Only usage recorded on or after DATE (YYYY-MM-DD or ISO time)."),
        Arg("until", str, "Only usage recorded up to this date (a date: the whole day).", metavar="DATE",
            help="Only usage recorded up to DATE (a date: the whole day).")],
        check=_stats_check, serve=("stats", "records"),
        mcp=("stats", "rows", "Tokens and cost",
             "Tokens and cost as pi recorded them: of a session (in all, what a fork inherited, the active path, "
             "the abandoned entries, each branch), of a path or range in it (revision), or of every session "
             "(all=true, from stree's catalogue), then by model and by day; since/until narrow by date. The "
             "records of `stree stats --json`: each row has its group (total, inherited, path, abandoned, branch, "
             "session, model, day), key, input/output/cache tokens, cost and counts.",
             records("rows", stats.STATS_FIELDS, "the rows, section by section"))),
    Question("rev_parse", answers.rev_parse, [
        _revisions("[REV...]", "The revisions to resolve (a range: its ends)."),
        Arg("verify", bool, help="Require exactly one revision that names an entry.")], check=_rev_parse_check,
             serve=("rev_parse", "records")),
]
