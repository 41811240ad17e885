"""pi's convertToLlm, and the OpenAI / Anthropic message shapes for replaying a context."""

import json

COMPACTION_PREFIX = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
COMPACTION_SUFFIX = "\n</summary>"
BRANCH_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUFFIX = "</summary>"


def bash_execution_text(msg):
    text = f"Ran `{msg.get('command')}`\n"
    if msg.get("output"):
        text += f"```\n{msg['output']}\n```"
    else:
        text += "(no output)"
    if msg.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif msg.get("exitCode") not in (None, 0):
        text += f"\n\nCommand exited with code {msg['exitCode']}"
    if msg.get("truncated") and msg.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {msg['fullOutputPath']}]"
    return text


def _user(content, timestamp):
    return {"role": "user", "content": content, "timestamp": timestamp}


def convert_to_llm(messages):
    """pi's convertToLlm: custom roles become user messages; unknown roles are dropped."""
    out = []
    for m in messages:
        if not isinstance(m, dict):
            continue  # a `message` that is not an object: m.role is undefined, pi drops it
        role = m.get("role")
        if role == "bashExecution":
            if m.get("excludeFromContext"):
                continue
            out.append(_user([{"type": "text", "text": bash_execution_text(m)}], m.get("timestamp")))
        elif role == "custom":
            content = m.get("content")
            out.append(_user([{"type": "text", "text": content}] if isinstance(content, str) else content,
                             m.get("timestamp")))
        elif role == "branchSummary":
            out.append(_user([{"type": "text", "text": BRANCH_PREFIX + str(m.get("summary")) + BRANCH_SUFFIX}],
                             m.get("timestamp")))
        elif role == "compactionSummary":
            out.append(_user([{"type": "text", "text": COMPACTION_PREFIX + str(m.get("summary")) + COMPACTION_SUFFIX}],
                             m.get("timestamp")))
        elif role in ("system", "user", "assistant", "toolResult"):
            out.append(m)
    return out


def content_text(content, separator="\n"):
    """pi-ai's contentText: a string as is, else its text blocks joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return separator.join(_text(b) for b in content if isinstance(b, dict) and b.get("type") == "text")


def _entries(value):
    """Object.entries for a JSON value (a list's keys are its indexes)."""
    if isinstance(value, dict):
        return list(value.items())
    if isinstance(value, list):
        return [(str(i), v) for i, v in enumerate(value)]
    return []


def system_prompt(messages):
    """The system prompt and tools pi's providers send for the system messages of a context
    (pi-ai's collapseSystemMessages, then getSystemMessageText and getCurrentTools): their
    texts joined, sections merged by name (null removes one), tools added and removed in
    order. Returns (text, tools); ("", []) when the context has no system message."""
    content, sections, tools = [], {}, {}
    for m in messages:
        if not isinstance(m, dict) or m.get("role") != "system":
            continue
        text = content_text(m.get("content"))
        if text:
            content.append(text)
        for name, value in _entries(m.get("sections")):
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
        for tool in m.get("toolsRemoved") or []:
            if isinstance(tool, dict):
                tools.pop(tool.get("name"), None)
        for tool in m.get("toolsAdded") or []:
            if isinstance(tool, dict):
                tools[tool.get("name")] = tool
    parts = ["\n\n".join(content)] + [v for v in sections.values() if isinstance(v, str)]
    return "\n\n".join(p for p in parts if p), list(tools.values())


def _schema(tool):
    parameters = tool.get("parameters")
    return parameters if isinstance(parameters, dict) else {}


def _blocks(content):
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict)]


def _text(block):
    text = block.get("text", "")
    return text if isinstance(text, str) else ""  # a broken block carries no text


def _text_of(blocks):
    return "".join(_text(b) for b in blocks if b.get("type") == "text")


def to_openai(context):
    """Chat Completions messages for pi's context at an entry; its system messages become
    one system message first, and their tools the request's tools (as pi-ai sends them)."""
    llm = convert_to_llm(context["messages"])
    system, tools = system_prompt(llm)
    messages = [{"role": "system", "content": system}] if system else []
    for m in llm:
        role = m["role"]
        blocks = _blocks(m.get("content"))
        if role == "user":
            parts = []
            for b in blocks:
                if b.get("type") == "text":
                    parts.append({"type": "text", "text": _text(b)})
                elif b.get("type") == "image":
                    parts.append({"type": "image_url",
                                  "image_url": {"url": f"data:{b.get('mimeType')};base64,{b.get('data')}"}})
            if all(p["type"] == "text" for p in parts):
                messages.append({"role": "user", "content": "".join(p["text"] for p in parts)})
            else:
                messages.append({"role": "user", "content": parts})
        elif role == "assistant":
            msg = {"role": "assistant", "content": _text_of(blocks) or None}
            calls = [{"id": b.get("id"), "type": "function",
                      "function": {"name": b.get("name"),
                                   "arguments": json.dumps(b.get("arguments") or {}, ensure_ascii=False)}}
                     for b in blocks if b.get("type") == "toolCall"]
            if calls:
                msg["tool_calls"] = calls
            messages.append(msg)
        elif role == "toolResult":
            messages.append({"role": "tool", "tool_call_id": m.get("toolCallId"), "content": _text_of(blocks)})
    body = {"messages": messages}
    if tools:
        body["tools"] = [{"type": "function", "function": {"name": t.get("name"), "description": t.get("description"),
                                                           "parameters": _schema(t)}} for t in tools]
    model = context.get("model")
    if model and model.get("modelId"):
        body = {"model": model["modelId"], **body}
    return body


def to_anthropic(context):
    """Anthropic Messages for pi's context: tool results folded into user turns."""
    messages = []

    def push(role, blocks):
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": list(blocks)})

    llm = convert_to_llm(context["messages"])
    system, tools = system_prompt(llm)
    for m in llm:
        role = m["role"]
        blocks = _blocks(m.get("content"))
        if role == "user":
            out = []
            for b in blocks:
                if b.get("type") == "text":
                    out.append({"type": "text", "text": _text(b)})
                elif b.get("type") == "image":
                    out.append({"type": "image", "source": {"type": "base64", "media_type": b.get("mimeType"),
                                                            "data": b.get("data")}})
            push("user", out)
        elif role == "assistant":
            out = []
            for b in blocks:
                if b.get("type") == "thinking" and b.get("thinkingSignature"):
                    out.append({"type": "thinking", "thinking": b.get("thinking", ""),
                                "signature": b.get("thinkingSignature")})
                elif b.get("type") == "text" and b.get("text"):
                    out.append({"type": "text", "text": b["text"]})
                elif b.get("type") == "toolCall":
                    out.append({"type": "tool_use", "id": b.get("id"), "name": b.get("name"),
                                "input": b.get("arguments") or {}})
            if out:
                push("assistant", out)
        elif role == "toolResult":
            push("user", [{"type": "tool_result", "tool_use_id": m.get("toolCallId"),
                           "content": [{"type": "text", "text": _text_of(blocks)}],
                           "is_error": bool(m.get("isError"))}])
    body = {"messages": messages}
    if system:
        body["system"] = [{"type": "text", "text": system}]
    if tools:
        body["tools"] = [{"name": t.get("name"), "description": t.get("description"),
                          "input_schema": {"type": "object", "properties": _schema(t).get("properties") or {},
                                           "required": _schema(t).get("required") or []}} for t in tools]
    model = context.get("model")
    if model and model.get("modelId"):
        body = {"model": model["modelId"], **body}
    return body
