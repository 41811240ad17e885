"""pi 1.6.0's RPC commands about the session, with pi's shapes (rpc-types.ts, rpc-mode.ts),
answered from the file: no agent, no model. Each takes (served, request) and returns the
response's data (protocol.UNSET: a response without data)."""

import os
from pathlib import Path

from ..core.warm import Entries
from ..errors import StreeError
from ..format.text import js_string, js_trim
from .protocol import UNSET, RequestError, param


def get_entries(served, request):
    since = param(request, "since", str)
    session, tree = served.load()
    nodes = tree.nodes
    start = 0
    if since is not None:
        try:  # pi: findIndex, the first entry with that id
            start = _ids(nodes).index(since) + 1
        except ValueError:
            raise RequestError(f"Entry not found: {since}", "not_found") from None
    load = tree.load
    if isinstance(load, Entries):  # kept warm: each entry's text made once, then spliced in as it is
        from .protocol import Texts, json_bytes

        return {"entries": Texts(load.texts(nodes, start, json_bytes)), "leafId": tree.leaf}
    return {"entries": [load(nodes[row]) for row in range(start, len(nodes))], "leafId": tree.leaf}


def _ids(nodes):
    """The entries' ids in file order (a column of the index when it has one)."""
    return nodes.col("id") if hasattr(nodes, "col") else [node.id for node in nodes]


def get_tree(served, request):
    if param(request, "lightweight", bool, default=False):
        from .projection import project

        return project(*served.load())
    session, tree = served.load()
    return {"tree": pi_tree(tree), "leafId": tree.leaf}


def pi_tree(tree):
    """SessionManager.getTree(): {entry, children, label?, labelTimestamp?} from each root in file
    order, children by timestamp (oldest first). Built without recursion: a chain of 10k entries
    is 10k levels deep."""
    labels = tree.labels
    stamps = tree.label_timestamps
    roots = []
    stack = [(row, roots) for row in reversed([tree.row_of(n) for n in tree.roots])]
    while stack:
        row, siblings = stack.pop()
        node = tree.node(row)
        item = {"entry": tree.load(node), "children": []}
        label = labels.get(node.id)
        if label is not None:
            item["label"] = label
            stamp = stamps.get(node.id)
            if stamp is not None:
                item["labelTimestamp"] = stamp
        siblings.append(item)
        for child in reversed(tree.child_rows(row)):
            stack.append((child, item["children"]))
    return roots


def get_messages(served, request):
    session, tree = served.load()
    return {"messages": tree.build_context(tree.leaf)["messages"]}


def get_last_assistant_text(served, request):
    """AgentSession.getLastAssistantText (pi 1.6.0) over the context at the leaf: the text of the
    last assistant message, skipping those without text whose turn did not end with "stop"
    (aborted, failed, only calling tools); no text: no `text` (pi's undefined). pi 1.6.0 skipped
    only an aborted message with no content at all."""
    session, tree = served.load()
    for message in reversed(tree.build_context(tree.leaf)["messages"]):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        blocks = [b for b in _blocks(message.get("content")) if b.get("type") == "text"]
        if message.get("stopReason") != "stop" and not any(isinstance(b.get("text"), str) and js_trim(b["text"])
                                                           for b in blocks):
            continue
        text = js_trim("".join(js_string(b["text"]) if "text" in b else "undefined" for b in blocks))  # JS +=
        return {"text": text} if text else {}
    return {}


def get_fork_messages(served, request):
    """AgentSession.getUserMessagesForForking: every user message of the file (any branch, file
    order) with its text (pi-ai's contentText: a string, or the text blocks joined), those
    without text left out."""
    session, tree = served.load()
    out = []
    for node in tree.nodes:
        if node.type != "message" or node.role != "user":
            continue
        message = tree.load(node).get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            text = content
        else:
            text = "".join("" if b.get("text") is None else js_string(b["text"])  # Array.join
                           for b in _blocks(content) if b.get("type") == "text")
        if text:
            out.append({"entryId": node.id, "text": text})
    return {"messages": out}


def _blocks(content):
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def get_state(served, request):
    """pi's RpcSessionState without an agent: no model (none is running), the session's own
    thinking level (pi clamps it to what its model supports: "off" without one), nothing
    streaming, compacting or pending, and pi's default modes. The answer is kept (kept.py): the
    next get_state is answered from it while the file is unchanged."""
    session, tree = served.load()
    kept = served.context_counts
    if kept is None or kept[0] is not tree:  # (a tree is read again when its file changes)
        context = tree.build_context(tree.leaf)
        kept = served.context_counts = (tree, context["thinkingLevel"], len(context["messages"]))
    state = {
        "thinkingLevel": kept[1],
        "isStreaming": False,
        "isCompacting": False,
        "steeringMode": "one-at-a-time",
        "followUpMode": "one-at-a-time",
        "sessionFile": served.path,
        "sessionId": session.header.get("id"),
    }
    name = tree.name()
    if name is not None:
        state["sessionName"] = name
    state.update(autoCompactionEnabled=True, messageCount=kept[2], pendingMessageCount=0)
    served.answers.keep("get_state", served.path, served.identity(tree), state)
    return state


def get_session_stats(served, request):
    """AgentSession.getSessionStats(): message counts over every entry, usage summed as pi's
    addUsageToTotals does (assistant messages, tool results, usage entries, summaries).
    contextUsage is left out, as pi does without a model."""
    session, tree = served.load()
    counts = {"user": 0, "assistant": 0, "toolResult": 0}
    total = calls = 0
    sums = [0, 0, 0, 0, 0]  # input, output, cacheRead, cacheWrite, cost

    def add(usage):  # pi's addUsageToTotals (fields read of undefined fail it, as in pi)
        if usage is _MISSING or usage is None:
            raise RequestError(f"Cannot read properties of {_js_name(usage)} (reading 'input')", "bad_file")
        fields = usage if isinstance(usage, dict) else {}
        cost = fields.get("cost", _MISSING)
        for i, key in enumerate(("input", "output", "cacheRead", "cacheWrite")):
            sums[i] = sums[i] + _number(fields.get(key))
        if cost is _MISSING or cost is None:
            raise RequestError(f"Cannot read properties of {_js_name(cost)} (reading 'total')", "bad_file")
        sums[4] = sums[4] + _number(cost.get("total") if isinstance(cost, dict) else None)

    for node in tree.nodes:
        kind = node.type
        if kind == "usage":
            add(tree.load(node).get("usage", _MISSING))
        elif kind in ("branch_summary", "compaction"):
            usage = tree.load(node).get("usage")
            if usage:
                add(usage)
        if kind != "message":
            continue
        total += 1
        role = node.role
        if role == "user":
            counts["user"] += 1
        elif role == "toolResult":
            counts["toolResult"] += 1
            message = tree.load(node).get("message") or {}
            if message.get("usage"):
                add(message["usage"])
        elif role == "assistant":
            counts["assistant"] += 1
            message = tree.load(node).get("message") or {}
            content = message.get("content")
            if isinstance(content, list):
                calls += sum(1 for b in content if isinstance(b, dict) and b.get("type") == "toolCall")
            add(message.get("usage", _MISSING))
    input_, output, cache_read, cache_write, cost = sums
    return {
        "sessionFile": served.path,
        "sessionId": session.header.get("id"),
        "userMessages": counts["user"],
        "assistantMessages": counts["assistant"],
        "toolCalls": calls,
        "toolResults": counts["toolResult"],
        "totalMessages": total,
        "tokens": {"input": input_, "output": output, "cacheRead": cache_read, "cacheWrite": cache_write,
                   "total": input_ + output + cache_read + cache_write},
        "cost": cost,
    }


_MISSING = object()


def _js_name(value):
    return "undefined" if value is _MISSING else "null"


def _nan():
    return float("nan")


def _number(value):
    """A usage field as JavaScript adds it: a number, else NaN (written as null)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    return _nan()


def set_session_name(served, request):
    name = param(request, "name", str, required=True).strip()
    if not name:
        raise RequestError("Session name cannot be empty")
    append(served, served.path, lambda s, tree, new: [new.session_info(name, tree.leaf)])
    return UNSET


def append(served, path, make_entries):
    """Append under the file lock, one write at a time per file."""
    from ..writing.append import append_entries

    with served.writing(path):
        return append_entries(path, make_entries, say=served.warn)


def export_html(served, request):
    """pi's export_html; an existing file is replaced only with `overwrite: true`, and a session
    file never (service.targets)."""
    output = param(request, "outputPath", str)
    overwrite = param(request, "overwrite", bool, default=False)
    session, tree = served.load()
    if output is None:  # pi: pi-session-<file name>.html in the working directory
        output = f"pi-session-{Path(served.path).name.removesuffix('.jsonl')}.html"
    from .targets import checked_target
    from ..output.export_html import render
    from ..output.transcript import Document
    from ..storage.blobs import blob_dirs, image_base64
    from ..writing.atomic import write_atomic

    target = checked_target(served, output, overwrite)
    dirs = blob_dirs(session.path)  # the page `stree export` writes (output.export_html)
    doc = Document(session, tree, images=lambda data: image_base64(data, dirs))
    page = "".join(render(doc)).encode("utf-8", "replace")  # (a lone surrogate of the session: ?)
    write_atomic(target, page, replace=overwrite)
    return {"path": output}


def switch_session(served, request):
    value = param(request, "sessionPath", str, required=True)
    from ..core.store import resolve_session

    path = resolve_session(value, served.cwd, served.agent_dir, served.session_dir)
    served.load(path)  # a session it can read, else the error
    served.switch(path)
    return {"cancelled": False}


def fork(served, request):
    """pi's fork: a user message's path up to its parent becomes a new session, served from now
    on; the message's text comes back (for the editor)."""
    entry_id = param(request, "entryId", str, required=True)
    session, tree = served.load()
    node = tree.get(entry_id)
    if node is None or not (node.type == "message" and node.role == "user"):
        raise RequestError("Invalid entry ID for forking", "not_found" if node is None else "bad_params")
    from ..format.text import full_text

    text = full_text(tree.load(node)["message"].get("content"))
    parent = tree.parent_of(node)
    _write_fork(served, session, tree, parent.id if parent is not None else None)
    return {"text": text, "cancelled": False}


def clone(served, request):
    """pi's clone: the path root -> pi's leaf (the last entry) as a new session, served from now on."""
    session, tree = served.load()
    if not tree.nodes:
        raise RequestError("Cannot clone session: no current entry selected", "not_found")
    _write_fork(served, session, tree, tree.leaf)
    return {"cancelled": False}


def _write_fork(served, session, tree, leaf):
    """Write the new session next to its source (as `stree fork`), then serve it."""
    from ..core.store import demo_path, project_session_dir
    from ..writing.atomic import NEW_FILE_MODE, write_atomic
    from ..writing.entries import forked, session_file_name, session_header

    source = served.path
    is_demo = Path(source).resolve() == demo_path()
    header = session_header(session.header.get("cwd"), source)
    data, _ = forked(session, tree, leaf, header)
    if is_demo:
        directory = project_session_dir(served.cwd, served.agent_dir, served.session_dir)
    else:
        directory = Path(source).parent
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        mode = NEW_FILE_MODE if is_demo else os.stat(source).st_mode & 0o777
    except OSError as e:
        raise StreeError(f"{directory}: {e.strerror}", code=6) from None
    target = directory / session_file_name(header)
    write_atomic(target, data, mode=mode, replace=False)
    served.load(target)
    served.switch(target)


HANDLERS = {
    "get_state": get_state,
    "get_messages": get_messages,
    "get_last_assistant_text": get_last_assistant_text,
    "get_fork_messages": get_fork_messages,
    "get_entries": get_entries,
    "get_tree": get_tree,
    "get_session_stats": get_session_stats,
    "export_html": export_html,
    "switch_session": switch_session,
    "fork": fork,
    "clone": clone,
    "set_session_name": set_session_name,
}
