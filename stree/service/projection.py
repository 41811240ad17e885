"""The lightweight tree of pi PR #1762 (`get_tree` with `lightweight: true`): one small node
per entry for a browsing UI, `{id, parentId, timestamp, type, label?, children, ...}`.

Bookkeeping entries (label, session_info, custom: stree's checkout markers too) are dropped
and their children re-parented to the nearest kept ancestor; a tool result carries the
toolName / toolArgs / formattedToolCall of its call, found along its own branch first
(the same toolCallId on another branch may name another call), then anywhere."""

from ..core.preview import format_tool_call, tool_calls
from ..format.text import js_slice, js_string, js_trim

DROPPED = ("label", "session_info", "custom")
STATS = {"calls": 0}  # calls set in the branch's map (each once: linear; tests count it)
_ABSENT = object()
ROLES = ("user", "assistant", "custom", "branchSummary", "compactionSummary")


def project(session, tree):
    """{tree, leafId}: the projected roots and the leaf seen through dropped entries."""
    everywhere = {}
    loaded = {}  # row -> entry, each decoded once
    for row, node in enumerate(tree.nodes):
        if node.type == "message" and node.role == "assistant":
            loaded[row] = tree.load(node)
            for call_id, name, args in _calls(loaded[row].get("message")):
                everywhere[call_id] = (name, args)
    roots = []
    # one map of the calls along the branch walked, undone as the walk leaves an assistant
    # message's subtree (an _Undo on the stack): each call is set once and undone once
    calls = {}
    stack = [(tree.row_of(n), roots, None) for n in reversed(tree.roots)]
    while stack:
        item = stack.pop()
        if type(item) is _Undo:
            item.apply(calls)
            continue
        row, target, parent_id = item
        node = tree.node(row)
        children = tree.child_rows(row)
        if node.type in DROPPED:
            for child in reversed(children):
                stack.append((child, target, parent_id))
            continue
        entry = loaded.pop(row, None) or tree.load(node)
        base = {"id": node.id, "parentId": parent_id, "timestamp": entry.get("timestamp")}
        label = tree.labels.get(node.id)
        if label is not None:
            base["label"] = label
        kids = []
        base["children"] = kids
        target.append(_node(base, entry, calls, everywhere))
        if node.type == "message" and node.role == "assistant":
            own = _calls(entry.get("message"))
            if own:
                stack.append(_Undo(calls, own))
        for child in reversed(children):
            stack.append((child, kids, node.id))
    return {"tree": roots, "leafId": _visible_leaf(tree)}


class _Undo:
    """Sets an assistant message's calls in the branch's map; apply() puts back what they hid."""

    __slots__ = ("saved",)

    def __init__(self, calls, own):
        self.saved = [(call_id, calls.get(call_id, _ABSENT)) for call_id, _, _ in own]
        STATS["calls"] += len(own)
        for call_id, name, args in own:
            calls[call_id] = (name, args)

    def apply(self, calls):
        for call_id, previous in reversed(self.saved):
            if previous is _ABSENT:
                calls.pop(call_id, None)
            else:
                calls[call_id] = previous


def _calls(message):
    """(id, name, args) of the well-formed tool calls of an assistant message."""
    out = []
    for call_id, name, args in tool_calls(message):
        if isinstance(call_id, str) and isinstance(name, str):
            out.append((call_id, name, args if isinstance(args, dict) else {}))
    return out


def _visible_leaf(tree):
    node = tree.get(tree.leaf) if tree.leaf is not None else None
    seen = set()
    while node is not None and node.type in DROPPED and node.id not in seen:
        seen.add(node.id)
        node = tree.parent_of(node)
    return node.id if node is not None and node.type not in DROPPED else None


def _text(content, limit=None):
    """The PR's extractText: a string as it is, else the text blocks joined with spaces."""
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = " ".join(b["text"] for b in content
                        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str))
    else:
        text = ""
    return js_slice(text, limit) if limit is not None else text


def _preview(text):
    return js_trim(text.replace("\n", " ").replace("\t", " "))


def _node(base, entry, branch_calls, everywhere):
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        role = message.get("role")
        if role == "toolResult":
            call_id = message.get("toolCallId")
            call = (branch_calls.get(call_id) or everywhere.get(call_id)) if isinstance(call_id, str) else None
            formatted = format_tool_call(call[0], call[1]) if call else None
            node = dict(base, type="tool_result")
            name = call[0] if call else message.get("toolName")
            if name is not None:
                node["toolName"] = name
            if call:
                node["toolArgs"] = call[1]
                node["formattedToolCall"] = formatted
            node["preview"] = _preview(formatted or f"[{js_string(message.get('toolName') or 'tool')}]")
            return node
        if role == "bashExecution":
            command = message.get("command")
            return dict(base, type="message", role="bashExecution",
                        preview=format_tool_call("bash", {"command": command}))
        if role == "assistant":
            text = _text(message.get("content"), 200)
            if text:
                preview = _preview(text)
            elif message.get("stopReason") == "aborted":
                preview = "(aborted)"
            elif message.get("errorMessage"):
                preview = _preview(js_string(message["errorMessage"]))
            else:
                preview = "(no content)"
            node = dict(base, type="message", role="assistant", preview=preview)
            for key in ("stopReason", "errorMessage"):
                if message.get(key) is not None:
                    node[key] = message[key]
            return node
        node = dict(base, type="message")
        if role in ROLES:
            node["role"] = role
        else:
            node["role"] = "unknown"
            node["rawRole"] = role
        node["preview"] = _preview(_text(message.get("content"), 200))
        return node
    if kind == "compaction":
        return dict(base, type="compaction", tokensBefore=entry.get("tokensBefore"))
    if kind == "model_change":
        return dict(base, type="model_change", provider=entry.get("provider"), modelId=entry.get("modelId"))
    if kind == "thinking_level_change":
        return dict(base, type="thinking_level_change", thinkingLevel=entry.get("thinkingLevel"))
    if kind == "branch_summary":
        return dict(base, type="branch_summary", summary=entry.get("summary"))
    if kind == "custom_message":
        return dict(base, type="custom_message", customType=entry.get("customType"),
                    preview=_preview(_text(entry.get("content"), 200)))
    # an entry type the PR does not know (context_edit, usage, a newer pi's): its type, nothing more
    return dict(base, type=kind)
