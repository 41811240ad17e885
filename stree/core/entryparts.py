"""An entry as the transcript shows it: a list of parts, in reading order, which `show`
(terminal lines), export's Markdown and export's HTML each render for their format (nothing
here escapes). The functions of the types that have their own rendering; stree.core.entrytypes
names them in its rows and `entrytypes.parts` dispatches (any other type: its text, then
its fields as JSON).

The parts:
- ("text", text), ("thinking", text), ("error", text), ("notice", text)
- ("call", name, arguments as JSON, id, `[read: path]`)
- ("result", tool name, text, is error, `[read: path]`)
- ("image", mime type, base64 data or None when it cannot be shown)
- ("bash", command, output, exit code)
- ("summary", "compaction" | "branch summary", text, its details line)
- ("tag", `[customType]`): what export's heading already says (export skips it)
- ("meta", line): a one-line note (export's rendering of a settings entry)
- ("data", fields as JSON)
"""

from ..format.patterns import pattern
from ..format.text import full_text, js_slice, js_string, js_trim
from .toolcall import format_tool_call

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")  # embedded; others named only
_BASE64 = pattern(r"[A-Za-z0-9+/]*={0,2}")
HEAD = ("type", "id", "parentId", "timestamp")  # the fields every entry has: not shown as its data


def as_json(value):
    import json

    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def fields_of(entry):
    """An entry's own fields (all but type, id, parentId, timestamp)."""
    return {k: v for k, v in entry.items() if k not in HEAD}


def image_part(block, images):
    mime = block.get("mimeType")
    data = images(block.get("data"))
    if mime not in IMAGE_TYPES or not isinstance(data, str):
        return ("image", js_string(mime), None)
    data = "".join(data.split())
    return ("image", mime, data if _BASE64().fullmatch(data) else None)


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
            yield ("call", name, as_json(args), js_string(block.get("id")), format_tool_call(name, args))
        elif btype == "image":
            yield image_part(block, images)
        else:
            yield ("meta", f"[{js_string(btype)}]")


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


# -- the types with their own parts ----------------------------------------------------

def message_parts(entry, images, summary=None, previous=None):
    """`summary`: a tool result's call as pi's /tree names it (`[read: path]`); `previous`:
    dropped_reasoning() of the assistant message before this one on its path (pi notes only
    reasoning dropped beyond it)."""
    msg = entry.get("message")
    if not isinstance(msg, dict):  # a damaged message: what it holds
        yield ("data", as_json(fields_of(entry)))
        return
    role = msg.get("role")
    if role == "bashExecution":
        yield ("bash", js_string(msg.get("command", "")), js_string(msg.get("output", "")),
               js_string(msg.get("exitCode")))
        return
    if role == "toolResult":
        yield from _result_parts(msg, images, summary)
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


def _result_parts(msg, images, summary):
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


def message_heading(entry):
    msg = entry.get("message") if isinstance(entry.get("message"), dict) else {}
    role = msg.get("role")
    if role == "assistant" and msg.get("model"):
        return f"assistant ({js_string(msg.get('provider'))}/{js_string(msg.get('model'))})"
    return js_string(role) if role is not None else "message"


def compaction_parts(entry, images, summary=None, previous=None):
    yield ("summary", "compaction", js_string(entry.get("summary") or ""),
           f"tokens before: {js_string(entry.get('tokensBefore'))}, "
           f"first kept: {js_string(entry.get('firstKeptEntryId'))}")


def branch_summary_parts(entry, images, summary=None, previous=None):
    yield ("summary", "branch summary", js_string(entry.get("summary") or ""), f"from: {js_string(entry.get('fromId'))}")


def custom_message_parts(entry, images, summary=None, previous=None):
    yield ("tag", f"[{js_string(entry.get('customType'))}]")
    yield from content_parts(entry.get("content"), images)


def label_note(entry):
    label, target = entry.get("label"), js_string(entry.get("targetId"))
    return f"label {js_string(label)!s} on {target}" if label else f"label cleared on {target}"


# -- serve's lightweight tree (pi PR #1762): the fields of a node after id, parentId, timestamp, label

ROLES = ("user", "assistant", "custom", "branchSummary", "compactionSummary")  # the PR's message roles


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


def message_node(entry, call):
    """`call(toolCallId)`: (name, arguments) of the call a tool result answers, or None."""
    message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
    role = message.get("role")
    if role == "toolResult":
        call_id = message.get("toolCallId")
        found = call(call_id) if isinstance(call_id, str) else None
        formatted = format_tool_call(found[0], found[1]) if found else None
        node = {"type": "tool_result"}
        name = found[0] if found else message.get("toolName")
        if name is not None:
            node["toolName"] = name
        if found:
            node["toolArgs"] = found[1]
            node["formattedToolCall"] = formatted
        node["preview"] = _preview(formatted or f"[{js_string(message.get('toolName') or 'tool')}]")
        return node
    if role == "bashExecution":
        return {"type": "message", "role": "bashExecution",
                "preview": format_tool_call("bash", {"command": message.get("command")})}
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
        node = {"type": "message", "role": "assistant", "preview": preview}
        for key in ("stopReason", "errorMessage"):
            if message.get(key) is not None:
                node[key] = message[key]
        return node
    node = {"type": "message"}
    if role in ROLES:
        node["role"] = role
    else:
        node["role"] = "unknown"
        node["rawRole"] = role
    node["preview"] = _preview(_text(message.get("content"), 200))
    return node


def custom_message_node(entry, call):
    return {"type": "custom_message", "customType": entry.get("customType"),
            "preview": _preview(_text(entry.get("content"), 200))}


def fields_node(*names):
    """A node of the entry's type with these of its fields (null when absent)."""
    return lambda entry, call: dict({"type": entry.get("type")}, **{name: entry.get(name) for name in names})
