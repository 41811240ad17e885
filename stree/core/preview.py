"""One-line previews of entries, exactly as pi's /tree rows show them.

A preview is a list of (style, text) segments; styles are pi theme names that
output/modes.py maps to terminal colours. Text here is raw: escaping happens at output.
"""

from . import entrytypes
from .entrytypes import entry_text, searchable_text  # (their rows: stree.core.entrytypes)
from .toolcall import format_tool_call, tool_calls  # (pi's formatToolCall: stree.core.toolcall)


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


RECENT = 64  # assistant messages whose tool calls a Previewer keeps


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
        self._recent = {}  # offset -> tool_calls() of the assistant messages read last (RECENT at most)

    def tool_call(self, call_id):
        if self._calls is None:
            self._calls = self._call_rows()
        try:
            row = self._calls.get(call_id)
        except TypeError:  # an unhashable toolCallId names no call
            return None
        if row is None:
            return None
        nodes = self.tree.nodes
        node = nodes.peek(row) if hasattr(nodes, "peek") else nodes[row]  # (not kept: read once or twice)
        calls = self._recent.get(node.offset)
        if calls is None:
            calls = self._remember(node.offset, tool_calls(self.tree.load(node).get("message")))
        for cid, name, args in reversed(calls):
            if cid == call_id:
                return (name, args)
        return None

    def _remember(self, offset, calls):
        """Keep the tool calls of the message at `offset` for its results, which a drawing
        reaches next (its other results, or its own row drawn first): read once, not once each."""
        if len(self._recent) >= RECENT:
            self._recent.clear()
        self._recent[offset] = calls
        return calls

    def _call_rows(self):
        """toolCall id -> the row of the assistant message whose call pi's /tree shows for it.

        pi fills its map while it walks the tree (pre-order, the leaf's branch first), so
        of two calls with one id the one it walks last wins. When no id repeats, any order
        gives that map: file order, without walking the tree."""
        from itertools import compress, repeat
        from operator import eq

        nodes = self.tree.nodes
        col = nodes.col if hasattr(nodes, "col") else lambda name: [getattr(n, name) for n in nodes]
        types, roles = col("type"), col("role")
        calls = {}
        start = 0
        # in file order, the aux column a block at a time (not kept: the ids are all the map needs)
        for auxes in nodes.column_chunks("aux") if hasattr(nodes, "column_chunks") else [col("aux")]:
            end = start + len(auxes)
            for row in compress(range(start, end), map(eq, roles[start:end], repeat("assistant"))):
                aux = auxes[row - start]
                if aux and types[row] == "message":
                    for cid in aux:
                        if cid in calls:
                            self._repeated.add(cid)
                        calls[cid] = row
            start = end
        if self._repeated:  # pi's walk decides which call an id repeated names
            auxes = col("aux")
            calls = {}
            for row in self.tree.depth_first_rows(self.tree.leaf):
                aux = auxes[row]
                if aux and types[row] == "message" and roles[row] == "assistant":
                    for cid in aux:
                        calls[cid] = row
        return calls

    def segments(self, node, keep=True):
        """The preview segments of `node`; kept for the next call unless `keep` is false (a graph
        drawn row by row reads each once: its previews are not all held at once)."""
        seg = self._cache.get(node.offset)
        if seg is None:
            cached = self.tree.previews
            seg = cached.get(node) if cached is not None else None
            if seg is None:
                entry = self.tree.load(node)
                if node.role == "assistant":
                    self._remember(node.offset, tool_calls(entry.get("message")))
                seg = entry_preview(entry, self.tool_call)
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
