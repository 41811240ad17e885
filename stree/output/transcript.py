"""A session as a document, for `stree export`: its branches (core.outline) and each entry
as a list of parts (text, thinking, tool calls and results, images, summaries, ...), which
export_md and export_html render (and `show`, for the terminal). Nothing here escapes: each
renderer does, for its format. What an entry shows is its type's row (stree.core.entrytypes)."""

import re

from ..core import entrytypes
from ..core.entryparts import dropped_reasoning
from ..core.outline import branches, walk


class Item:
    """One entry as the export shows it."""

    __slots__ = ("id", "parent", "type", "role", "ts", "label", "active", "leaf", "preview", "depth", "row",
                 "tools_only")

    def __init__(self, **fields):
        for k, v in fields.items():
            setattr(self, k, v)


class Document:
    """header, title, items by row, the branch outline, the position (@), the usage in all."""

    def __init__(self, session, tree, images=None):
        from ..core.leaf import position
        from ..core.preview import Previewer

        self.header = session.header or {}
        slot = getattr(session, "title", None)  # oh-my-pi's title slot
        self.slot_title = slot.get("title") if isinstance(slot, dict) and isinstance(slot.get("title"), str) else None
        self.path = str(session.path)
        self.tree = tree
        self.name = tree.name()
        self.at = position(tree)
        self.branches = branches(tree)
        on_path = set(tree.path_rows(self.at)) if self.at is not None else set()
        previewer = Previewer(tree)
        from ..core.usage_totals import entry_usages, total

        usages = entry_usages(tree, raw=getattr(session, "raw", None))
        self.usage = total(usages)  # as `stree stats` sums it
        self.costs = {u.row: u.values[4] for u in usages}
        self._sizes = {}
        self._title = None
        self.images = images or (lambda data: data if isinstance(data, str) else None)
        labels = tree.labels
        self.items = {}
        depth = {}
        for branch in walk(self.branches):
            d = 0 if branch.parent is None else depth[id(branch.parent)] + 1
            depth[id(branch)] = d
            for r in branch.rows:  # the previews only (kept in the index): the content is read as it is shown
                node = tree.node(r)
                self.items[r] = Item(
                    id=node.id, parent=node.parent, type=node.type, role=node.role, ts=node.ts,
                    label=labels.get(node.id), active=r in on_path, leaf=node.id == self.at,
                    preview=previewer.text(node), depth=d, row=r)
                item = self.items[r]
                item.tools_only = node.role == "assistant" and item.preview == "assistant: (no content)"

    def content(self, item):
        """(kind, parts) of an item, read from the file now (not kept: a page of a big session
        is written entry by entry)."""
        entry = self.tree.load(self.tree.node(item.row))
        previous = self._previous_drop(item) if item.role == "assistant" else None
        return entrytypes.heading(entry), list(parts_of(entry, self.images, summary=item.preview, previous=previous))

    def branch_cost(self, branch):
        """The cost of a branch's own entries (not those of the branches leaving it)."""
        return sum(self.costs.get(r, 0) for r in branch.rows)

    def below(self, branch):
        """How many entries the branches leaving `branch` hold, at any depth."""
        n = self._sizes.get(id(branch))
        if n is None:
            n = sum(len(b.rows) for b in walk(branch.children))
            self._sizes[id(branch)] = n
        return n

    def _previous_drop(self, item):
        return previous_drop(self.tree, self.tree.node(item.row))

    @property
    def title(self):
        if self._title is None:
            self._title = self._find_title()
        return self._title

    def _find_title(self):
        if self.name:
            return self.name
        for title in (self.slot_title, self.header.get("title")):  # oh-my-pi's, the slot first
            if isinstance(title, str) and title.strip():
                return title.strip()
        for item in self.items.values():
            if item.role == "user":
                for part in self.content(item)[1]:
                    if part[0] == "text" and part[1].strip():
                        return headline(part[1])
        return f"session {self.header.get('id', '?')}"

    def count(self):
        return len(self.items)


def previous_drop(tree, node):
    """dropped_reasoning() of the assistant message before `node` on its path, or None."""
    while node.parent is not None:
        node = tree.get(node.parent)
        if node is None:
            return None
        if node.type == "message" and node.role == "assistant":
            return dropped_reasoning(tree.load(node).get("message"))
    return None


_SPAN = re.compile(r"(?<!`)(`{1,2})(?!`)(.*?)(?<!`)\1(?!`)")


def headline(text, width=80):
    """The first line of `text`, cut at a word boundary to `width` characters (an ellipsis
    said), never inside a `code span`."""
    text = text.strip()
    end = text.find("\n")
    line = " ".join((text if end < 0 else text[:end])[:width * 4].split())
    if len(line) <= width:
        return line
    spans = [m.span() for m in _SPAN.finditer(line[:width * 2])]
    cut = width - 1
    while cut > 0 and (line[cut] != " " or any(a < cut < b for a, b in spans)):
        cut -= 1
    if cut < width // 2:  # one long word or code span: cut before the span, or cut it open-free
        split = [a for a, b in spans if a < width - 1 < b]
        if split and line[:split[0]].strip():
            return line[:split[0]].rstrip() + "…"
        head = line[:width - 1]
        return (head.replace("`", "") if split else head).rstrip() + "…"
    return line[:cut].rstrip() + "…"


def parts_of(entry, images, summary=None, previous=None, brief=True):
    """The parts of one entry (its row in stree.core.entrytypes; the parts: stree.core.entryparts)."""
    return entrytypes.parts(entry, images, summary, previous, brief)
