"""The record fields of --json and --format, documented once for every command."""

from ..core.entrytypes import grepped
from ..format import agents

ENTRY_FIELDS = {
    "id": "the entry id",
    "parentId": "the parent's id, or null for a root",
    "type": "entry type (message, compaction, branch_summary, label, ...)",
    "role": "message role (user, assistant, toolResult, ...), null for other types",
    "timestamp": "ISO 8601 UTC timestamp of the entry",
    "label": "the label on this entry, or null",
    "preview": "one-line preview, as pi's /tree shows it",
    "line": "line number of the entry in the session file",
    "leaf": "true for the current position (@, seen through stree's checkout markers)",
    "active": "true when the entry is on the path root -> @",
    "children": "number of child entries",
    "graph": "the graph drawing before the row (log --graph only)",
}

GRAPH_FIELDS = dict(ENTRY_FIELDS, row="the whole row exactly as pi's /tree draws it (graph, marker, label, preview)")

SESSION_FIELDS = {
    "id": "session id (header)",
    "path": "path of the session file",
    "cwd": "working directory the session belongs to",
    "name": "display name (latest session_info), or null",
    "created": "header timestamp",
    "modified": "last user/assistant activity (as pi sorts sessions)",
    "messages": "number of message entries",
    "entries": "number of entries",
    "firstMessage": "text of the first user message",
    "parentSession": "path of the session this one was forked from, or null",
    "current": "true for the session stree opens without -s (marked * by ls)",
    "agent": f"the agent that wrote it: {agents.described()}",
    "state": agents.states_text(),
}

GREP_FIELDS = {
    "session": "session id (header; for a file without one, its name)",
    "path": "path of the session file",
    "agent": agents.spoken(agents.names()),
    "state": agents.states_text(short=True),
    "entry": "id of the matching entry",
    "rev": "SESSION:ENTRY, a revision other commands take (with -l / -c: the session id)",
    "role": "message role (user, assistant, toolResult, ...), null for other entries",
    "type": f"entry type ({', '.join(grepped())})",
    "onPath": "true when the entry is on the session's active path (root to the leaf)",
    "lineNumber": "line of the entry's text that matches, from 1",
    "line": "the matching line",
    "timestamp": "the entry's timestamp",
    "count": "with -c: matching lines in the session",
}

MESSAGE_FIELDS = {
    "index": "position in the context, from 0",
    "role": "pi message role (user, assistant, toolResult, custom, branchSummary, compactionSummary, ...)",
    "text": "the message text on one line (text blocks, summaries)",
    "timestamp": "message timestamp in epoch milliseconds",
}

LABEL_FIELDS = {
    "label": "label name",
    "id": "id of the labelled entry",
    "timestamp": "when the label was set",
    "preview": "preview of the labelled entry",
}

REV_FIELDS = {
    "rev": "the revision as given",
    "id": "the entry id it names",
}


def entry_record(tree, node, previewer, **extra):
    from ..core.leaf import position

    rec = {
        "id": node.id,
        "parentId": node.parent,
        "type": node.type,
        "role": node.role,
        "timestamp": node.ts,
        "label": tree.labels.get(node.id),
        "preview": previewer.text(node),
        "line": node.line,
        "leaf": node.id == position(tree),
        "children": tree.child_count(node.id, node),
    }
    rec.update(extra)
    return rec


def describe(fields):
    """Help text listing fields, for --help epilogs and man pages."""
    return "\n".join(f"  {name:<14} {text}" for name, text in fields.items())
