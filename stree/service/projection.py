"""The lightweight tree of pi PR #1762 (`get_tree` with `lightweight: true`): one small node
per entry for a browsing UI, `{id, parentId, timestamp, type, label?, children, ...}`.

Bookkeeping entries (label, session_info, custom: stree's checkout markers too) are dropped
and their children re-parented to the nearest kept ancestor; a tool result carries the
toolName / toolArgs / formattedToolCall of its call, found along its own branch first
(the same toolCallId on another branch may name another call), then anywhere. Which types
are dropped and what a node shows of its entry are in the type's row (stree.core.entrytypes,
stree.core.entryparts.message_node ...)."""

from ..core.entrytypes import dropped, lightweight_node
from ..core.preview import tool_calls

DROPPED = dropped()  # label, session_info, custom
STATS = {"calls": 0}  # calls set in the branch's map (each once: linear; tests count it)
_ABSENT = object()


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


def _node(base, entry, branch_calls, everywhere):
    def call(call_id):  # the call a tool result answers: along its own branch first, then anywhere
        return branch_calls.get(call_id) or everywhere.get(call_id)

    return dict(base, **lightweight_node(entry, call))  # (its type's row: stree.core.entrytypes)
