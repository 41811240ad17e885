"""pi's convertToLlm, and the system prompt and tools of a context's system messages (the
requests built from them: core.request)."""

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


def _text(block):
    text = block.get("text", "")
    return text if isinstance(text, str) else ""  # a broken block carries no text
