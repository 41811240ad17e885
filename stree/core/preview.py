"""One-line previews of entries, exactly as pi's /tree rows show them.

A preview is a list of (style, text) segments; styles are pi theme names that
output/modes.py maps to terminal colours. Text here is raw: escaping happens at output.
"""

import math
import os

from ..format.jsvalue import number_text, to_number, truthy
from ..format.text import js_json, js_len, js_slice, js_string, js_trim
from . import entrytypes
from .entrytypes import entry_text, searchable_text  # (their rows: stree.core.entrytypes)


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


def _line_number(value):
    """pi's parseLineNumber: finite numbers and numeric strings, else None."""
    if isinstance(value, str) and js_trim(value):
        value = to_number(value)
        if value.__class__ is float and value.is_integer() and abs(value) <= 2 ** 53:
            value = int(value)
    if value.__class__ in (int, float) and math.isfinite(value):
        return value
    return None


def read_line_range(offset, limit):
    """pi's formatReadLineRange (1.3): `:10-29`, `:10`, or "" (null ignored, junk dropped)."""
    if offset is None and limit is None:
        return ""
    start = 1 if offset is None else _line_number(offset)
    if start is None:
        return ""
    if limit is None:
        return f":{number_text(start)}"
    count = _line_number(limit)
    if count is None:
        return ""
    end = start + count - 1
    if end.__class__ is int and abs(end) > 2 ** 53:
        end = float(start) + float(count) - 1  # JavaScript adds doubles
    return f":{number_text(start)}" + (f"-{number_text(end)}" if end else "")


def format_tool_call(name, args):
    """pi's formatToolCall: `[read: ~/f.py:10-29]`, `[bash: git status]`, ..."""
    if not isinstance(args, dict):
        args = {}

    def path_arg(*keys):
        for k in keys:
            if truthy(args.get(k)):
                return shorten_path(js_string(args[k]))
        return ""

    if name == "read":
        return f"[read: {path_arg('path', 'file_path')}{read_line_range(args.get('offset'), args.get('limit'))}]"
    if name in ("write", "edit"):
        return f"[{name}: {path_arg('path', 'file_path')}]"
    if name == "bash":
        raw = js_string(args["command"]) if truthy(args.get("command")) else ""
        cmd = js_slice(js_trim(raw.replace("\n", " ").replace("\t", " ")), 50)
        return f"[bash: {cmd}{'...' if js_len(raw) > 50 else ''}]"
    if name == "grep":
        pattern = js_string(args["pattern"]) if truthy(args.get("pattern")) else ""
        path = shorten_path(js_string(args["path"])) if truthy(args.get("path")) else "."
        return f"[grep: /{pattern}/ in {path}]"
    if name == "find":
        pattern = js_string(args["pattern"]) if truthy(args.get("pattern")) else ""
        path = shorten_path(js_string(args["path"])) if truthy(args.get("path")) else "."
        return f"[find: {pattern} in {path}]"
    if name == "ls":
        path = shorten_path(js_string(args["path"])) if truthy(args.get("path")) else "."
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
    """Segments for one entry (its row in stree.core.entrytypes). `tool_call(id)` -> (name, args)
    resolves tool results."""
    if tool_call is None:
        return entrytypes.preview(entry)

    def formatted(call_id):
        call = tool_call(call_id)
        return format_tool_call(call[0], call[1]) if call is not None else None

    return entrytypes.preview(entry, formatted)


def plain(segments):
    return "".join(text for _, text in segments)


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
