"""One-line previews of entries, exactly as pi's /tree rows show them.

A preview is a list of (style, text) segments; styles are pi theme names that
output/modes.py maps to terminal colours. Text here is raw: escaping happens at output.
"""

from ..storage.area import Damaged
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
            rows = self._calls.get(call_id)
        except TypeError:  # an unhashable toolCallId names no call
            return None
        except Damaged:  # (the index's table of calls: its bytes are not those written)
            self._calls = self._call_rows(table=False)
            return self.tool_call(call_id)
        if rows is None:
            return None
        for row in rows if rows.__class__ is list else (rows,):  # (a list: candidates, _TableCalls)
            call = self._call_in(row, call_id)
            if call is not None:
                return call
        return None

    def _call_in(self, row, call_id):
        """(name, args) of the last call `call_id` of the assistant message at `row`, or None."""
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

    def _call_rows(self, table=True):
        """toolCall id -> the row of the assistant message whose call pi's /tree shows for it.

        pi fills its map while it walks the tree (pre-order, the leaf's branch first), so
        of two calls with one id the one it walks last wins. When no id repeats, any order
        gives that map: file order, without walking the tree. An index that proved no id repeats
        keeps them in a table (stree.storage.calltable): then no row but the candidates is read."""
        from itertools import compress, repeat
        from operator import eq

        nodes = self.tree.nodes
        found = _TableCalls.of(nodes) if table else None
        if found is not None:
            return found
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

    def text(self, node, keep=True):
        return plain(self.segments(node, keep))


class _TableCalls:
    """The call map of an index's table (its ids all str, none repeated) and of the rows parsed
    after it, when these prove the same: get(id) -> the candidate rows (the caller confirms
    one by the message's calls) or a row, or None."""

    def __init__(self, table, tail):
        self._table = table
        self._tail = tail

    @classmethod
    def of(cls, nodes):
        table = getattr(nodes, "calls", None)
        if table is None:
            return None
        from ..storage.calltable import ids_of

        start = table.rows
        tail = {}
        if start < len(nodes):  # rows appended since the index was written: few (or it is written again)
            for cid, row in ids_of(nodes.tail("type", start), nodes.tail("role", start), nodes.tail("aux", start), start):
                try:
                    if cid.__class__ is not str or cid in tail or table.candidates(cid):
                        return None  # (maybe repeated: the whole map decides)
                except Damaged:  # (the table's bytes in the index are not those written: the same)
                    return None
                tail[cid] = row
        return cls(table, tail)

    def get(self, call_id):
        if call_id.__class__ is not str:
            hash(call_id)  # (unhashable: TypeError, as a dict's get; else no str id equals it)
            return None
        row = self._tail.get(call_id)
        if row is not None:
            return row
        return self._table.candidates(call_id) or None  # (Damaged: Previewer.tool_call)


class ParsedPreviews:
    """Previews made while a parse decodes the entries (the Session's keep: the scan hands
    append() every entry it reads, in file order), for a command that then draws most rows: no
    entry is read again to draw it. A tool result shows its call from an assistant message
    before it; one whose call is not known yet, or all of them when a call id is repeated or
    not a string (pi's walk then decides), is left to the drawing (Previewer), as are the
    messages with no content (hidden: rarely drawn)."""

    NONE = [("success", "assistant: "), ("muted", "(no content)")]

    def __init__(self):
        from ..format.stdlib import array

        from ..storage.previews import encode

        self._encode = encode
        self.blob = bytearray()  # the previews made, encoded as an index keeps them, one after the other
        self.ends = array("q")  # each entry's: where its preview ends in blob (none: where the one before ends)
        self.calls = {}  # toolCall id -> the call formatted (pi's formatToolCall)
        self.results = set()  # the rows whose preview shows a call
        self.unsure = False  # a call id repeated or not a string
        self._missed = self._used = False

    def _call(self, call_id):
        text = self.calls.get(call_id) if call_id.__class__ is str else None
        if text is None:
            self._missed = True
        else:
            self._used = True
        return text

    def append(self, entry):
        self._missed = self._used = False
        try:
            seg = entrytypes.preview(entry, self._call)
            if seg != self.NONE and not self._missed:
                self.blob += self._encode(seg)
                if self._used:
                    self.results.add(len(self.ends))
            msg = entry.get("message")
            if msg.__class__ is dict and msg.get("role") == "assistant" and entry.get("type") == "message":
                for cid, name, args in tool_calls(msg):
                    if cid.__class__ is not str or cid in self.calls:
                        self.unsure = True
                    if cid.__class__ is str:
                        self.calls[cid] = format_tool_call(name, args)
        except Exception:  # (the drawing meets it again, as it would have)
            self.unsure = True
            del self.blob[self.ends[-1] if self.ends else 0:]
        self.ends.append(len(self.blob))

    def into(self, session):
        """Give the session's preview cache what was made, when the parse read every row here;
        whether it did."""
        from ..format.stdlib import array

        session.keep = None
        ends, blob, self.ends, self.blob, self.calls = self.ends, self.blob, array("q"), bytearray(), {}
        cache = session.previews
        whole = len(ends) == len(session.nodes)
        if cache is None or not whole or session.needs_migration:
            return whole
        col = session.nodes.col("offset")
        offsets, starts, kept = array("q"), array("q", [0]), bytearray()
        start = 0
        for r, end in enumerate(ends):
            if end != start:
                if not (self.unsure and r in self.results):
                    offsets.append(col[r])
                    if self.unsure:
                        kept += blob[start:end]
                    starts.append(len(kept) if self.unsure else end)
                start = end
        cache.adopt(offsets, starts, kept if self.unsure else blob)
        return True
