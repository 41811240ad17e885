"""A session as a document, for `stree export`: its branches (core.outline) and each entry
as a list of parts (text, thinking, tool calls and results, images, summaries, ...), which
export_md and export_html render. Nothing here escapes: each renderer does, for its format."""

import json
import re

from ..core.outline import branches, walk
from ..core.preview import format_tool_call
from ..format.text import full_text, js_string

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")  # embedded; others named only
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


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
        return kind_of(entry), list(parts_of(entry, self.images, summary=item.preview, previous=previous))

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


# pi 1.6.0 (interactive-mode REASONING_DROP_DIAGNOSTICS): reasoning a provider withheld from the model
_DROPS = {"anthropic_input_transformations": ("Anthropic", "thinking_dropped", ("thinking block", "thinking blocks")),
          "openai_input_transformations": ("OpenAI", "reasoning", ("reasoning item", "reasoning items"))}


def dropped_reasoning(message):
    """(diagnostic type, count, reasons) of the first diagnostic that dropped reasoning, or None
    (pi's getDroppedReasoning)."""
    diagnostics = message.get("diagnostics") if isinstance(message, dict) else None
    for diagnostic in diagnostics if isinstance(diagnostics, list) else ():
        kind = _DROPS.get(diagnostic.get("type")) if isinstance(diagnostic, dict) else None
        details = diagnostic.get("details") if kind else None
        changes = details.get("transformations") if isinstance(details, dict) else None
        if not isinstance(changes, list):
            continue
        dropped = [t for t in changes if isinstance(t, dict) and t.get("type") == kind[1]]
        if dropped:
            reasons = list(dict.fromkeys(t["reason"] for t in dropped if isinstance(t.get("reason"), str)))
            return diagnostic["type"], len(dropped), reasons
    return None


def dropped_notice(dropped):
    """pi's words: `OpenAI dropped 2 reasoning items: prefix_mismatch (details in session)`."""
    provider, _, nouns = _DROPS[dropped[0]]
    reasons = ": " + ", ".join(dropped[2]) if dropped[2] else ""
    return f"{provider} dropped {dropped[1]} {nouns[dropped[1] != 1]}{reasons} (details in session)"


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


def kind_of(entry):
    etype = entry.get("type")
    if etype == "message":
        msg = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        role = msg.get("role")
        if role == "assistant" and msg.get("model"):
            return f"assistant ({js_string(msg.get('provider'))}/{js_string(msg.get('model'))})"
        return js_string(role) if role is not None else "message"
    if etype == "custom_message":
        return f"custom message [{js_string(entry.get('customType'))}]"
    return js_string(etype)


def _json(value):
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def image_part(block, images):
    mime = block.get("mimeType")
    data = images(block.get("data"))
    if mime not in IMAGE_TYPES or not isinstance(data, str):
        return ("image", js_string(mime), None)
    data = "".join(data.split())
    return ("image", mime, data if _BASE64.fullmatch(data) else None)


def content_parts(content, images):
    if isinstance(content, str):
        yield ("text", content)
        return
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            yield ("text", js_string(block.get("text", "")))
        elif btype == "thinking":
            yield ("thinking", js_string(block.get("thinking", "")))
        elif btype == "toolCall":
            name, args = js_string(block.get("name")), block.get("arguments")
            yield ("call", name, _json(args), js_string(block.get("id")), format_tool_call(name, args))
        elif btype == "image":
            yield image_part(block, images)
        else:
            yield ("meta", f"[{js_string(btype)}]")


def parts_of(entry, images, summary=None, previous=None):
    """The parts of one entry, in reading order. `summary`: a tool result's call as pi's /tree
    names it (`[read: path]`); `previous`: dropped_reasoning() of the assistant message before
    this one on its path (pi notes only reasoning dropped beyond it)."""
    etype = entry.get("type")
    if etype == "message":
        msg = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        role = msg.get("role")
        if role == "bashExecution":
            yield ("bash", js_string(msg.get("command", "")), js_string(msg.get("output", "")),
                   js_string(msg.get("exitCode")))
            return
        if role == "toolResult":
            text = full_text(msg.get("content"))
            name = js_string(msg.get("toolName"))
            yield ("result", name, text, bool(msg.get("isError")), summary or f"[{name}]")
            content = msg.get("content")
            for part in content_parts(content if isinstance(content, list) else [], images):
                if part[0] == "image":
                    yield part
            details = msg.get("details")
            unsupported = details.get("imageUnsupportedByModel") if isinstance(details, dict) else None
            if unsupported:  # pi 1.6.0's read renderer: the model saw a placeholder, not the image
                yield ("notice", f"[{js_string(unsupported)} does not support images; it saw a placeholder instead]")
            return
        yield from content_parts(msg.get("content"), images)
        if role == "assistant":
            dropped = dropped_reasoning(msg)
            if dropped and not (previous and previous[0] == dropped[0] and dropped[1] <= previous[1]):
                yield ("notice", dropped_notice(dropped))
        error = msg.get("errorMessage")
        error = js_string(error) if error else None
        if role == "assistant":  # pi's AssistantMessageComponent
            stop = msg.get("stopReason")
            calls = any(isinstance(b, dict) and b.get("type") == "toolCall" for b in msg.get("content") or ()
                        if isinstance(msg.get("content"), list))
            if stop == "length":
                yield ("error", "Response was truncated before completion.")
            elif stop == "aborted" and not calls:
                yield ("error", error if error and error != "Request was aborted" else "Operation aborted")
            elif stop == "error" and not calls:
                yield ("error", f"Error: {error or 'Unknown error'}")
            elif error:
                yield ("error", error)
        elif error:
            yield ("error", error)
        return
    if etype == "compaction":
        yield ("summary", "compaction", js_string(entry.get("summary") or ""),
               f"tokens before: {js_string(entry.get('tokensBefore'))}, "
               f"first kept: {js_string(entry.get('firstKeptEntryId'))}")
        return
    if etype == "branch_summary":
        yield ("summary", "branch summary", js_string(entry.get("summary") or ""),
               f"from: {js_string(entry.get('fromId'))}")
        return
    if etype == "custom_message":
        yield from content_parts(entry.get("content"), images)
        return
    if etype == "label":
        label = entry.get("label")
        yield ("meta", f"label {js_string(label)!s} on {js_string(entry.get('targetId'))}" if label
               else f"label cleared on {js_string(entry.get('targetId'))}")
        return
    if etype == "session_info":
        yield ("meta", f"session name: {js_string(entry.get('name'))}")
        return
    if etype == "model_change":
        yield ("meta", f"model: {js_string(entry.get('provider'))}/{js_string(entry.get('modelId'))}")
        return
    if etype == "thinking_level_change":
        yield ("meta", f"thinking level: {js_string(entry.get('thinkingLevel'))}")
        return
    if etype == "usage":
        yield ("meta", f"usage ({js_string(entry.get('kind'))}): {js_string(entry.get('provider'))}/"
                       f"{js_string(entry.get('model'))}")
        return
    rest = {k: v for k, v in entry.items() if k not in ("type", "id", "parentId", "timestamp")}
    if rest:
        yield ("data", _json(rest))
