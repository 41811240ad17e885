"""The entry types pi writes, one row each: what every reader of a type needs to know.

A row says, for one `type`:
- that fsck accepts it (every row is a type pi writes; another type is `unknown-type`);
- its /tree filter class (stree.output.graph, export's page): `message` (by role),
  `content` (shown by default), `setting` (shown only by `--filter all` / `labeled-only`),
  `never` (not even as the leaf: pi's usage entries);
- its one-line preview, as pi's /tree row shows it: (style, text) segments
  (stree.core.preview, `log`, the graph);
- its searchable text, what /tree's search (`log --search`) matches;
- its whole text, what `:/TEXT`, `show` and (when `grep` is set) `grep` and the catalogue
  search;
- how `show` and export render it: its parts (stree.core.entryparts; by default its text,
  then its fields as JSON), export's one-line note and heading;
- its node in serve's lightweight tree, and whether that tree leaves it out;
- whether it can carry usage, and where (`stats`, the catalogue's totals);
- the role pi gives it for the model (`log --role`), whether it is bookkeeping (@ is seen
  through it).
Adding a type pi starts writing is one row in TYPES (its preview beside it; the rest as
keywords, each with a default that shows it everywhere). tests/cli/test_entrytypes.py adds one.
"""

import math

from ..format.jsvalue import joined, number_of, number_text, template, truthy
from ..format.text import extract_content, full_text, js_json, js_slice, js_string, normalize
from ..format.usage import SUMMARIES, assistant_key, counted, model_key
from . import entryparts as show


class EntryType:
    """One row. `preview(entry, tool_call)` -> segments, where `tool_call(id)` is the formatted
    call a tool result answers, or None; `search(entry)` -> the parts of its searchable text;
    `text(entry)` -> its whole text. How it is shown (stree.core.entryparts): `parts(entry,
    images, summary, previous)` -> its parts, for a type with its own rendering (else its text
    and its fields as JSON); `note(entry)` -> the one line export shows instead of its fields;
    `heading(entry)` -> what export's heading calls it (else its type); `node(entry, call)` ->
    its node in serve's lightweight tree (else its type only), `dropped` from that tree.
    `usage_at(entry)` -> (bucket, its `usage` object) or None, for a type that may carry
    usage (else pi's "Tools/summaries" and the entry's `usage` field). `role`: the role of the
    message pi makes of it for the model (`log --role`; a message's is its own).
    `bookkeeping`: it records something about the tree without being a place in it (a
    label, a name): @ is seen through it (stree.core.leaf)."""

    def __init__(self, name, preview, search=None, text=None, filter="content", usage=False, grep=False,
                 parts=None, note=None, heading=None, node=None, dropped=False, usage_at=None, role=None,
                 bookkeeping=False):
        self.name = name
        self.preview = preview
        self.search = search or (lambda entry: [])
        self.text = text or (lambda entry: "")
        self.filter = filter  # message, content, setting or never
        self.usage = usage  # False, True, or the roles of the messages that may carry it
        self.grep = grep  # grep (and the catalogue) search its text
        self.parts = parts
        self.note = note
        self.heading = heading or (lambda entry: js_string(entry.get("type")))
        self.node = node or (lambda entry, call: {"type": entry.get("type")})
        self.dropped = dropped  # bookkeeping: not a node of serve's lightweight tree (its children move up)
        self.usage_at = usage_at or (lambda entry: (SUMMARIES, entry.get("usage")))
        self.role = role
        self.bookkeeping = bookkeeping


# -- message ------------------------------------------------------------------------

def _message(entry):
    msg = entry.get("message")
    return msg if isinstance(msg, dict) else {}


def message_preview(entry, tool_call=None):
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
        if truthy(msg.get("errorMessage")):
            err = js_slice(normalize(js_string(msg["errorMessage"])), 80)
            return [("success", "assistant: "), ("error", err)]
        return [("success", "assistant: "), ("muted", "(no content)")]
    if role == "toolResult":
        call = tool_call(msg.get("toolCallId")) if tool_call and truthy(msg.get("toolCallId")) else None
        if call is not None:
            return [("muted", call)]
        name = msg.get("toolName")
        return [("muted", f"[{js_string(name) if name is not None else 'tool'}]")]
    if role == "bashExecution":
        cmd = msg.get("command")
        return [("dim", f"[bash]: {normalize(js_string(cmd) if cmd is not None else '')}")]
    return [("dim", f"[{template(role, 'role' in msg)}]")]


def message_search(entry):
    msg = _message(entry)
    parts = [joined(msg.get("role"))]  # Array.join: null and undefined read ""
    if msg.get("content"):
        parts.append(extract_content(msg.get("content")))
    if msg.get("role") == "bashExecution" and msg.get("command"):
        parts.append(js_string(msg["command"]))
    return parts


def message_text(entry):
    msg = _message(entry)
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


def message_usage(entry):
    """pi's usage totals: an assistant message's usage by its model, a tool result's as
    "Tools/summaries"; another role's is not counted."""
    msg = _message(entry)
    role = msg.get("role")
    if role == "assistant":
        return assistant_key(msg), msg.get("usage")
    if role == "toolResult":
        return SUMMARIES, msg.get("usage")
    return None


# -- the other types ----------------------------------------------------------------

def _custom_message_preview(entry, tool_call=None):
    content = entry.get("content")
    text = content if isinstance(content, str) else full_text(content)
    custom_type = template(entry.get("customType"), "customType" in entry)
    return [("customMessageLabel", f"[{custom_type}]: "), ("", normalize(text))]


def _custom_message_search(entry):
    content = entry.get("content")
    return [joined(entry.get("customType")), content if isinstance(content, str) else extract_content(content)]


def _compaction_preview(entry, tool_call=None):
    tokens = number_of(entry.get("tokensBefore"), "tokensBefore" in entry)
    k = number_text(math.floor(tokens / 1000 + 0.5)) if math.isfinite(tokens) else number_text(tokens) \
        if not math.isnan(tokens) else "NaN"
    return [("borderAccent", f"[compaction: {k}k tokens]")]


def _branch_summary_preview(entry, tool_call=None):
    summary = entry.get("summary")
    return [("warning", "[branch summary]: "), ("", normalize(summary if isinstance(summary, str) else ""))]


def _summary_text(entry):
    return js_string(entry.get("summary") or "")


def _model_change_preview(entry, tool_call=None):
    model_id = template(entry.get("modelId"), "modelId" in entry)
    if entry.get("modelId") is None and isinstance(entry.get("model"), str):  # oh-my-pi
        model_id = entry["model"].partition("/")[2] or entry["model"]
    return [("dim", f"[model: {model_id}]")]


def edit_kind(entry):
    """A context_edit's kind: omit (replacement null) or replace."""
    return "omit" if "replacement" in entry and entry["replacement"] is None else "replace"


def _label_preview(entry, tool_call=None):
    label = entry.get("label")
    return [("dim", f"[label: {'(cleared)' if label is None else js_string(label)}]")]


def _session_info_preview(entry, tool_call=None):
    name = entry.get("name")
    return [("dim", f"[title: {js_string(name) if truthy(name) else 'empty'}]")]


def _session_info_search(entry):
    return ["title", js_string(entry["name"])] if entry.get("name") else ["title"]


def _field(name):
    return lambda entry: template(entry.get(name), name in entry)


def _dim(fmt, field):
    value = _field(field)
    return lambda entry, tool_call=None: [("dim", fmt.format(value(entry)))]


def _note(fmt, *fields):
    return lambda entry: fmt.format(*(js_string(entry.get(name)) for name in fields))


TYPES = {row.name: row for row in (
    EntryType("message", message_preview, message_search, message_text, filter="message",
              usage=("assistant", "toolResult"), usage_at=message_usage, grep=True,
              parts=show.message_parts, heading=show.message_heading, node=show.message_node),
    EntryType("compaction", _compaction_preview, lambda e: ["compaction"], _summary_text, usage=True, grep=True,
              parts=show.compaction_parts, node=show.fields_node("tokensBefore"), role="compactionSummary"),
    EntryType("branch_summary", _branch_summary_preview, lambda e: ["branch summary", joined(e.get("summary"))],
              _summary_text, usage=True, grep=True,
              parts=show.branch_summary_parts, node=show.fields_node("summary"), role="branchSummary"),
    EntryType("custom_message", _custom_message_preview, _custom_message_search,
              lambda e: full_text(e.get("content")), grep=True, parts=show.custom_message_parts,
              heading=lambda e: f"custom message [{js_string(e.get('customType'))}]", node=show.custom_message_node,
              role="custom"),
    EntryType("model_change", _model_change_preview, lambda e: ["model", joined(e.get("modelId"))],
              lambda e: js_string(e.get("modelId") or e.get("model")), filter="setting",
              note=_note("model: {}/{}", "provider", "modelId"), node=show.fields_node("provider", "modelId")),
    EntryType("thinking_level_change", _dim("[thinking: {}]", "thinkingLevel"),
              lambda e: ["thinking", joined(e.get("thinkingLevel"))], filter="setting",
              note=_note("thinking level: {}", "thinkingLevel"), node=show.fields_node("thinkingLevel")),
    EntryType("custom", _dim("[custom: {}]", "customType"), lambda e: ["custom", joined(e.get("customType"))],
              filter="setting", dropped=True),
    EntryType("context_edit", lambda e, tool_call=None: [("dim", f"[context {edit_kind(e)}: "
                                                                 f"{_field('targetId')(e)}]")],
              lambda e: ["context edit", edit_kind(e), joined(e.get("targetId"))], filter="setting"),
    EntryType("label", _label_preview, lambda e: ["label", joined(e.get("label"))],  # a label: any JSON value
              lambda e: e.get("label") or "", filter="setting", note=show.label_note, dropped=True,
              bookkeeping=True),
    EntryType("session_info", _session_info_preview, _session_info_search, lambda e: e.get("name") or "",
              filter="setting", note=_note("session name: {}", "name"), dropped=True, bookkeeping=True),
    EntryType("usage", lambda e, tool_call=None: [], filter="never", usage=True,  # (0.74-0.87 on)
              usage_at=lambda e: (model_key(e.get("provider"), e.get("model")), e.get("usage")),
              note=_note("usage ({}): {}/{}", "kind", "provider", "model")),
)}


# -- what the dispatchers ask --------------------------------------------------------

def _row(entry):
    etype = entry.get("type")
    return TYPES.get(etype) if etype.__class__ is str else None


def preview(entry, tool_call=None):
    """The segments of one entry's /tree row; none for a type pi does not know (pi shows an
    empty row for a `leaf` a port wrote, or a future type)."""
    row = _row(entry)
    return row.preview(entry, tool_call) if row is not None else []


def searchable_text(entry, label=None):
    """pi's getSearchableText: what /tree's search matches against."""
    row = _row(entry)
    return " ".join(([label] if label else []) + (row.search(entry) if row is not None else []))


def entry_text(entry):
    """The whole text of an entry, for :/text revisions, `show` and grep."""
    row = _row(entry)
    return row.text(entry) if row is not None else ""


def known(etype):
    """A type pi writes (fsck reports any other as `unknown-type`)."""
    return etype in TYPES


def with_filter(kind):
    """The types of one /tree filter class (content, setting, never)."""
    return frozenset(name for name, row in TYPES.items() if row.filter == kind)


def grepped():
    """The types whose text grep and the catalogue search, in table order."""
    return tuple(name for name, row in TYPES.items() if row.grep)


def may_have_usage(etype, role):
    """Whether an entry of this type and role can carry usage (the others need not be read)."""
    row = TYPES.get(etype)
    usage = row.usage if row is not None else False
    return role in usage if usage.__class__ is tuple else usage


def parts(entry, images, summary=None, previous=None, brief=True):
    """The parts of one entry as `show` and export render them (stree.core.entryparts), in
    reading order. `images(data)`: an image's base64 data as it may be embedded, or None;
    `summary`, `previous`: see entryparts.message_parts. `brief` (export): a settings entry
    as its one-line note; else (`show`), as every type without parts of its own: its whole
    text, then its fields."""
    row = _row(entry)
    if row is not None and row.parts is not None:
        yield from row.parts(entry, images, summary, previous)
        return
    if brief and row is not None and row.note is not None:
        yield ("meta", row.note(entry))
        return
    text = row.text(entry) if row is not None else ""
    if text:
        yield ("text", text)
    rest = show.fields_of(entry)
    if rest:
        yield ("data", show.as_json(rest))


def heading(entry):
    """What export's heading calls an entry (`assistant (anthropic/claude-...)`, `compaction`)."""
    row = _row(entry)
    return row.heading(entry) if row is not None else js_string(entry.get("type"))


def lightweight_node(entry, call):
    """The fields of an entry's node in serve's lightweight tree after its id, parentId,
    timestamp, label and children: its type, and what the PR shows of it."""
    row = _row(entry)
    return row.node(entry, call) if row is not None else {"type": entry.get("type")}


def bookkeeping():
    """The types that record something about the tree without being a place in it."""
    return frozenset(name for name, row in TYPES.items() if row.bookkeeping)


def dropped():
    """The bookkeeping types serve's lightweight tree leaves out."""
    return frozenset(name for name, row in TYPES.items() if row.dropped)


def usage_of(entry):
    """(bucket, (input, output, cacheRead, cacheWrite, cost)) of one entry (migrated to v3, as
    parsed from its line), as pi 1.6.0 sums it (stree.format.usage), or None when it records
    none."""
    row = _row(entry) if isinstance(entry, dict) else None
    found = row.usage_at(entry) if row is not None and row.usage else None
    return counted(*found) if found is not None else None


def role_of(etype, role):
    """The role an entry speaks in (`log --role`): a message's own, a summary's or a custom
    message's as pi names it for the model (branchSummary, compactionSummary, custom), else None."""
    row = TYPES.get(etype)
    if row is None:
        return None
    return role if row.filter == "message" else row.role
