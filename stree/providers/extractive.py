"""An offline, deterministic summary in pi's section format, taken from the entries themselves.

No model is asked: user requests become the goal, tool calls the progress, failed
tools and errors the blockers, the last assistant text the next step. The text says
that it is extractive, so nobody mistakes it for a model's reading of the branch.
"""

from . import Answer
from ..format.jsjson import stringify
from ..format.text import js_slice, js_len, js_trim

MARK = "(Extractive summary made by stree from the entries themselves, without a model.)"
MAX_LINE = 200
MAX_ITEMS = 20


def _clip(text, limit=MAX_LINE):
    text = " ".join(str(text).split())
    return text if js_len(text) <= limit else js_slice(text, limit - 3) + "..."


def _text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content
                         if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str))
    return ""


def _call(block):
    name = str(block.get("name"))
    args = block.get("arguments") if isinstance(block.get("arguments"), dict) else {}
    for key in ("path", "command", "pattern", "query", "url"):
        if isinstance(args.get(key), str):
            return f"{name} {args[key]}"
    return f"{name}({_clip(stringify(args), 80)})" if args else name


def _limit(items):
    if len(items) <= MAX_ITEMS:
        return items
    return items[:MAX_ITEMS // 2] + [f"... {len(items) - MAX_ITEMS} more ..."] + items[-MAX_ITEMS // 2:]


def extract(entries):
    """The section text for loaded entries (oldest first)."""
    requests, done, pending, blocked, earlier = [], [], {}, [], []
    last_text = None
    for entry in entries:
        etype = entry.get("type")
        if etype in ("branch_summary", "compaction") and entry.get("summary"):
            earlier.append(entry["summary"])
        if etype == "custom_message":
            text = js_trim(_text(entry.get("content")))
            if text:
                requests.append(text)
        if etype != "message" or not isinstance(entry.get("message"), dict):
            continue
        msg = entry["message"]
        role = msg.get("role")
        if role == "user":
            text = js_trim(_text(msg.get("content")))
            if text:
                requests.append(text)
        elif role == "assistant":
            content = msg.get("content") if isinstance(msg.get("content"), list) else []
            text = js_trim(_text(content))
            if text:
                last_text = text
            for block in content:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    pending[block.get("id")] = _call(block)
            if msg.get("stopReason") == "error":
                blocked.append("Model error: " + _clip(msg.get("errorMessage") or "unknown error"))
            elif msg.get("stopReason") == "aborted":
                blocked.append("Aborted by the user")
        elif role == "toolResult":
            call = pending.pop(msg.get("toolCallId"), None) or str(msg.get("toolName"))
            if msg.get("isError"):
                first = js_trim(_text(msg.get("content"))).split("\n")[0]
                blocked.append(f"`{_clip(call, 120)}` failed: {_clip(first)}")
            else:
                done.append(f"`{_clip(call, 120)}`")
        elif role == "bashExecution":
            command = _clip(msg.get("command") or "", 120)
            if msg.get("exitCode") not in (None, 0):
                blocked.append(f"`{command}` exited with code {msg['exitCode']}")
            else:
                done.append(f"`{command}`")

    goal = _clip(requests[0], 500) if requests else "(no user request in this branch)"
    lines = [MARK, "", "## Goal", goal, "", "## Constraints & Preferences"]
    follow = [f"- User: {_clip(r)}" for r in requests[1:]]
    lines += _limit(follow) or ["- (none)"]
    lines += ["", "## Progress", "### Done"]
    lines += _limit([f"- [x] {d}" for d in done]) or ["- (none)"]
    lines += ["", "### In Progress"]
    lines += _limit([f"- [ ] `{_clip(c, 120)}` (no result)" for c in pending.values()]) or ["- (none)"]
    lines += ["", "### Blocked"]
    lines += _limit([f"- {b}" for b in blocked]) or ["- (none)"]
    lines += ["", "## Key Decisions"]
    lines += [f"- Earlier summary: {_clip(s.replace(_PREAMBLE_LINE, ''), 300)}" for s in earlier[-3:]] or \
        ["- (not extracted: no model read this branch)"]
    lines += ["", "## Next Steps"]
    lines += [f"1. Last assistant message: {_clip(last_text, 500)}" if last_text else
              "1. (no assistant message in this branch)"]
    return "\n".join(lines)


_PREAMBLE_LINE = "The user explored a different conversation branch before returning here.\nSummary of that exploration:"


def complete(options, request):
    return Answer(extract(request.entries), "extractive", None, "stop")
