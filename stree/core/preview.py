"""One-line previews of entries, exactly as pi's /tree rows show them.

A preview is a list of (style, text) segments; styles are pi theme names that
output/modes.py maps to terminal colours. Text here is raw: escaping happens at output.
"""

import math
import os
import re

from ..format.jsjson import number
from ..format.text import extract_content, full_text, js_json, js_len, js_slice, js_string, js_trim, normalize


def _truthy(v):
    return v not in (None, "", 0, False) and not (isinstance(v, float) and math.isnan(v))


def shorten_path(p):
    """pi's shortenHomePath (1.5): `~` only for an absolute path inside $HOME, both normalised."""
    home = os.environ.get("HOME") or os.environ.get("USERPROFILE") or ""
    if not home or not p.startswith("/"):
        return p
    home, path = _resolve(home), _resolve(p)
    if path == home:
        return "~"
    inside = home if home.endswith("/") else home + "/"
    if not path.startswith(inside):
        return p
    return "~/" + path[len(inside):]


def _resolve(p):
    """node's path.posix.resolve: absolute, normalised, no trailing slash."""
    import posixpath

    if not p.startswith("/"):
        p = posixpath.join(os.getcwd(), p)
    p = posixpath.normpath(p)
    return "/" + p.lstrip("/") if p.startswith("//") else p


def _js_to_number(text):
    """JavaScript's Number(string): NaN when it is not a number literal."""
    t = js_trim(text)
    if not t:
        return 0.0
    m = _RADIX.fullmatch(t)
    if m:
        return float(int(m.group(2), {"x": 16, "o": 8, "b": 2}[m.group(1).lower()]))
    if not _DECIMAL.fullmatch(t):
        return math.nan
    if t.lstrip("+-") == "Infinity":
        return -math.inf if t.startswith("-") else math.inf
    return float(t)


_RADIX = re.compile(r"0([xXoObB])([0-9a-fA-F]+)")
_DECIMAL = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|Infinity)")


def _line_number(value):
    """pi's parseLineNumber: finite numbers and numeric strings, else None."""
    if isinstance(value, str) and js_trim(value):
        value = _js_to_number(value)
        if value.__class__ is float and value.is_integer() and abs(value) <= 2 ** 53:
            value = int(value)
    if value.__class__ in (int, float) and math.isfinite(value):
        return value
    return None


def _js_number_of(value, present=True):
    """JavaScript's Number(value) for a JSON value (arithmetic on a field): a float."""
    if not present:
        return math.nan
    if value is None or value is False:
        return 0.0
    if value is True:
        return 1.0
    if value.__class__ in (int, float):
        return float(value)
    if isinstance(value, str):
        return _js_to_number(value)
    if isinstance(value, list):  # via its string: [] -> 0, [5] -> 5
        return _js_to_number(js_string(value))
    return math.nan


def _js_num(x):
    if x.__class__ is float and math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return number(x)


def read_line_range(offset, limit):
    """pi's formatReadLineRange (1.3): `:10-29`, `:10`, or "" (null ignored, junk dropped)."""
    if offset is None and limit is None:
        return ""
    start = 1 if offset is None else _line_number(offset)
    if start is None:
        return ""
    if limit is None:
        return f":{_js_num(start)}"
    count = _line_number(limit)
    if count is None:
        return ""
    end = start + count - 1
    if end.__class__ is int and abs(end) > 2 ** 53:
        end = float(start) + float(count) - 1  # JavaScript adds doubles
    return f":{_js_num(start)}" + (f"-{_js_num(end)}" if end else "")


def format_tool_call(name, args):
    """pi's formatToolCall: `[read: ~/f.py:10-29]`, `[bash: git status]`, ..."""
    if not isinstance(args, dict):
        args = {}

    def path_arg(*keys):
        for k in keys:
            if _truthy(args.get(k)):
                return shorten_path(js_string(args[k]))
        return ""

    if name == "read":
        return f"[read: {path_arg('path', 'file_path')}{read_line_range(args.get('offset'), args.get('limit'))}]"
    if name in ("write", "edit"):
        return f"[{name}: {path_arg('path', 'file_path')}]"
    if name == "bash":
        raw = js_string(args["command"]) if _truthy(args.get("command")) else ""
        cmd = js_slice(js_trim(raw.replace("\n", " ").replace("\t", " ")), 50)
        return f"[bash: {cmd}{'...' if js_len(raw) > 50 else ''}]"
    if name == "grep":
        pattern = js_string(args["pattern"]) if _truthy(args.get("pattern")) else ""
        path = shorten_path(js_string(args["path"])) if _truthy(args.get("path")) else "."
        return f"[grep: /{pattern}/ in {path}]"
    if name == "find":
        pattern = js_string(args["pattern"]) if _truthy(args.get("pattern")) else ""
        path = shorten_path(js_string(args["path"])) if _truthy(args.get("path")) else "."
        return f"[find: {pattern} in {path}]"
    if name == "ls":
        path = shorten_path(js_string(args["path"])) if _truthy(args.get("path")) else "."
        return f"[ls: {path}]"
    text = js_json(args)
    return f"[{name}: {js_slice(text, 40)}{'...' if js_len(text) > 40 else ''}]"


def tool_calls(message):
    """(id, name, arguments) of each toolCall block in an assistant message."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [(b.get("id"), b.get("name"), b.get("arguments")) for b in content
            if isinstance(b, dict) and b.get("type") == "toolCall"]


def entry_preview(entry, tool_call=None):
    """Segments for one entry. `tool_call(id)` -> (name, args) resolves tool results."""
    etype = entry.get("type")
    if etype == "message":
        msg = entry.get("message")
        if not isinstance(msg, dict):
            return [("dim", "[message]")]
        role = msg.get("role")
        if role == "user":
            return [("accent", "user: "), ("", normalize(extract_content(msg.get("content"))))]
        if role == "assistant":
            text = normalize(extract_content(msg.get("content")))
            if text:
                return [("success", "assistant: "), ("", text)]
            if msg.get("stopReason") == "aborted":
                return [("success", "assistant: "), ("muted", "(aborted)")]
            if _truthy(msg.get("errorMessage")):
                err = js_slice(normalize(js_string(msg["errorMessage"])), 80)
                return [("success", "assistant: "), ("error", err)]
            return [("success", "assistant: "), ("muted", "(no content)")]
        if role == "toolResult":
            call = tool_call(msg.get("toolCallId")) if tool_call and _truthy(msg.get("toolCallId")) else None
            if call is not None:
                return [("muted", format_tool_call(call[0], call[1]))]
            name = msg.get("toolName")
            return [("muted", f"[{js_string(name) if name is not None else 'tool'}]")]
        if role == "bashExecution":
            cmd = msg.get("command")
            return [("dim", f"[bash]: {normalize(js_string(cmd) if cmd is not None else '')}")]
        return [("dim", f"[{_template(role, 'role' in msg)}]")]
    if etype == "custom_message":
        content = entry.get("content")
        text = content if isinstance(content, str) else full_text(content)
        custom_type = _template(entry.get("customType"), "customType" in entry)
        return [("customMessageLabel", f"[{custom_type}]: "), ("", normalize(text))]
    if etype == "compaction":
        tokens = _js_number_of(entry.get("tokensBefore"), "tokensBefore" in entry)
        k = _js_num(math.floor(tokens / 1000 + 0.5)) if math.isfinite(tokens) else _js_num(tokens) \
            if not math.isnan(tokens) else "NaN"
        return [("borderAccent", f"[compaction: {k}k tokens]")]
    if etype == "branch_summary":
        summary = entry.get("summary")
        return [("warning", "[branch summary]: "), ("", normalize(summary if isinstance(summary, str) else ""))]
    if etype == "model_change":
        model_id = _template(entry.get("modelId"), "modelId" in entry)
        if entry.get("modelId") is None and isinstance(entry.get("model"), str):  # oh-my-pi
            model_id = entry["model"].partition("/")[2] or entry["model"]
        return [("dim", f"[model: {model_id}]")]
    if etype == "thinking_level_change":
        return [("dim", f"[thinking: {_template(entry.get('thinkingLevel'), 'thinkingLevel' in entry)}]")]
    if etype == "custom":
        return [("dim", f"[custom: {_template(entry.get('customType'), 'customType' in entry)}]")]
    if etype == "context_edit":
        return [("dim", f"[context {_edit_kind(entry)}: {_template(entry.get('targetId'), 'targetId' in entry)}]")]
    if etype == "label":
        label = entry.get("label")
        return [("dim", f"[label: {'(cleared)' if label is None else js_string(label)}]")]
    if etype == "session_info":
        name = entry.get("name")
        return [("dim", f"[title: {js_string(name) if _truthy(name) else 'empty'}]")]
    return []  # an entry type pi does not know (a `leaf` a port wrote, a future one): pi shows nothing


def _edit_kind(entry):
    return "omit" if "replacement" in entry and entry["replacement"] is None else "replace"


def _template(value, present=True):
    """`${value}` in a template string: a missing field reads `undefined`."""
    return js_string(value) if present else "undefined"


def _join(value):
    """A value as Array.prototype.join shows it: null and undefined become ""."""
    return "" if value is None else js_string(value)


def plain(segments):
    return "".join(text for _, text in segments)


def searchable_text(entry, label=None):
    """pi's getSearchableText: what /tree's search matches against."""
    parts = [label] if label else []
    etype = entry.get("type")
    if etype == "message":
        msg = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        parts.append(_join(msg.get("role")))  # Array.join: null and undefined read ""
        if msg.get("content"):
            parts.append(extract_content(msg.get("content")))
        if msg.get("role") == "bashExecution" and msg.get("command"):
            parts.append(js_string(msg["command"]))
    elif etype == "custom_message":
        parts.append(_join(entry.get("customType")))
        content = entry.get("content")
        parts.append(content if isinstance(content, str) else extract_content(content))
    elif etype == "context_edit":
        parts.extend(["context edit", _edit_kind(entry), _join(entry.get("targetId"))])
    elif etype == "compaction":
        parts.append("compaction")
    elif etype == "branch_summary":
        parts.extend(["branch summary", _join(entry.get("summary"))])
    elif etype == "session_info":
        parts.append("title")
        if entry.get("name"):
            parts.append(js_string(entry["name"]))
    elif etype == "model_change":
        parts.extend(["model", _join(entry.get("modelId"))])
    elif etype == "thinking_level_change":
        parts.extend(["thinking", _join(entry.get("thinkingLevel"))])
    elif etype == "custom":
        parts.extend(["custom", _join(entry.get("customType"))])
    elif etype == "label":
        parts.extend(["label", _join(entry.get("label"))])  # entry.label ?? "": a label may be any JSON value
    return " ".join(parts)


def entry_text(entry):
    """The whole text of an entry, for :/text revisions and `show`."""
    etype = entry.get("type")
    if etype == "message":
        msg = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        parts = []
        content = msg.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            for b in content:
                if not isinstance(b, dict):
                    continue
                if b.get("type") == "text" and isinstance(b.get("text"), str):
                    parts.append(b["text"])
                elif b.get("type") == "thinking" and isinstance(b.get("thinking"), str):
                    parts.append(b["thinking"])
                elif b.get("type") == "toolCall":
                    parts.append(f"{b.get('name')} {js_json(b.get('arguments'))}")
        for key in ("command", "output", "errorMessage"):
            if isinstance(msg.get(key), str):
                parts.append(msg[key])
        return "\n".join(parts)
    if etype == "custom_message":
        return full_text(entry.get("content"))
    if etype in ("compaction", "branch_summary"):
        return js_string(entry.get("summary") or "")
    if etype == "label":
        return entry.get("label") or ""
    if etype == "session_info":
        return entry.get("name") or ""
    if etype == "model_change":
        return js_string(entry.get("modelId") or entry.get("model"))
    return ""


class Previewer:
    """Previews for the entries of one tree, resolving tool results to their calls.

    Uses the index's cached previews when the tree has them; resolves a tool result
    through the toolCall ids the parse keeps on assistant nodes, so only the one
    assistant message holding the call is loaded."""

    def __init__(self, tree):
        self.tree = tree
        self._calls = None
        self._repeated = set()  # toolCall ids more than one call has
        self._cache = {}

    def tool_call(self, call_id):
        if self._calls is None:
            self._calls = self._call_rows()
        try:
            row = self._calls.get(call_id)
        except TypeError:  # an unhashable toolCallId names no call
            return None
        if row is None:
            return None
        node = self.tree.nodes[row]
        for cid, name, args in reversed(tool_calls(self.tree.load(node).get("message"))):
            if cid == call_id:
                return (name, args)
        return None

    def _call_rows(self):
        """toolCall id -> the row of the assistant message whose call pi's /tree shows for it.

        pi fills its map while it walks the tree (pre-order, the leaf's branch first), so
        of two calls with one id the one it walks last wins. When no id repeats, any order
        gives that map: file order, without walking the tree."""
        from itertools import compress, repeat
        from operator import eq

        nodes = self.tree.nodes
        col = nodes.col if hasattr(nodes, "col") else lambda name: [getattr(n, name) for n in nodes]
        types, auxes, roles = col("type"), col("aux"), col("role")
        rows = compress(range(len(roles)), map(eq, roles, repeat("assistant")))
        for walk in ("file", "tree"):
            calls = {}
            for row in rows:
                aux = auxes[row]
                if aux and types[row] == "message" and roles[row] == "assistant":
                    for cid in aux:
                        if walk == "file" and cid in calls:
                            self._repeated.add(cid)
                        calls[cid] = row
            if not self._repeated:
                break
            rows = self.tree.depth_first_rows(self.tree.leaf)
        return calls

    def segments(self, node, keep=True):
        """The preview segments of `node`; kept for the next call unless `keep` is false (a graph
        drawn row by row reads each once: its previews are not all held at once)."""
        seg = self._cache.get(node.offset)
        if seg is None:
            cached = self.tree.previews
            seg = cached.get(node) if cached is not None else None
            if seg is None:
                seg = entry_preview(self.tree.load(node), self.tool_call)
                if cached is not None and not self._depends_on_leaf(node):
                    cached.put(node, seg)
            if keep:
                self._cache[node.offset] = seg
        return seg

    def _depends_on_leaf(self, node):
        """A tool result naming a repeated call id: which call pi shows depends on the walk."""
        if not self._repeated or node.role != "toolResult":
            return False
        try:
            return node.aux in self._repeated
        except TypeError:
            return False

    def text(self, node):
        return plain(self.segments(node))
