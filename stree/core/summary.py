"""Branch summaries as pi makes them (core/compaction/branch-summarization.js, utils.js).

entries (Nodes, oldest first) -> prepare_branch_entries (newest first within the token
budget; file operations) -> conversation text -> build_request (pi's prompts) ->
a provider -> stored text = preamble + model text + <read-files>/<modified-files>.
"""

import math
from dataclasses import dataclass

from .convert import convert_to_llm
from ..errors import MODEL, StreeError
from .fileops import FileOps, format_file_operations
from ..format.jsjson import entries as js_entries, stringify
from ..format.text import js_len, js_string
from ..providers import RESERVE_TOKENS, Options, Request, complete, reasoning_level, resolve_options
from .context import branch_summary_message, compaction_message, custom_message, latest_edits, project_entry

SUMMARIZATION_SYSTEM_PROMPT = """You are a context summarization assistant. Your task is to read a conversation between a user and an AI assistant, then produce a structured summary following the exact format specified.

Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary."""  # noqa: E501

BRANCH_SUMMARY_PREAMBLE = """The user explored a different conversation branch before returning here.
Summary of that exploration:

"""

BRANCH_SUMMARY_PROMPT = """Create a structured summary of this conversation branch for context when returning later.

Use this EXACT format:

## Goal
[What was the user trying to accomplish in this branch?]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Work that was started but not finished]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [What should happen next to continue this work]

Keep each section concise. Preserve exact file paths, function names, and error messages."""

NO_CONTENT = "No content to summarize"
# The answer's token cap: the one place it is set (the reliability caps size answers from it).
# pi 0.73 asked for 2048, 0.87 for 4096, 1.5.2 and 1.6.0 for the model's whole output limit, which
# stree does not know: 4096 every model accepts, plus the thinking budget when it reasons.
MAX_TOKENS = 4096
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}  # pi-ai's defaults
TOOL_RESULT_MAX_CHARS = 2000


# -- token estimate (pi's estimateTokens: chars / 4, rounded up) ----------------


def _text(value):
    return "" if value is None else value if isinstance(value, str) else js_string(value)


IMAGE_CHARS = 4800  # pi's estimate for an image block


def _content_chars(content):
    """pi's estimateTextAndImageContentChars."""
    if isinstance(content, str):
        return js_len(content)
    chars = 0
    for b in _blocks(content):
        if b.get("type") == "text" and b.get("text"):
            chars += js_len(_text(b["text"]))
        elif b.get("type") == "image":
            chars += IMAGE_CHARS
    return chars


def estimate_tokens(message):
    """pi 1.6.0's estimateTokens: images count 4800 characters, system messages their
    text, sections and added tools."""
    role = message.get("role")
    chars = 0
    if role == "system":
        chars = _content_chars(message.get("content"))
        sections = message.get("sections")
        if isinstance(sections, dict):
            chars += sum(js_len(v) for v in sections.values() if isinstance(v, str) and v)
        if message.get("toolsAdded"):
            chars += js_len(stringify(message["toolsAdded"]))
    elif role in ("user", "custom", "toolResult"):
        chars = _content_chars(message.get("content"))
    elif role == "assistant":
        for b in _blocks(message.get("content")):
            if b.get("type") == "text":
                chars += js_len(_text(b.get("text")))
            elif b.get("type") == "thinking":
                chars += js_len(_text(b.get("thinking")))
            elif b.get("type") == "toolCall":
                chars += js_len(_text(b.get("name"))) + js_len(stringify(b.get("arguments")))
    elif role == "bashExecution":
        chars = js_len(_text(message.get("command"))) + js_len(_text(message.get("output")))
    elif role in ("branchSummary", "compactionSummary"):
        chars = js_len(_text(message.get("summary")))
    else:
        return 0
    return math.ceil(chars / 4)


def _blocks(content):
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


# -- preparing entries (pi's prepareBranchEntries) -----------------------------


def message_from_entry(entry, edit=None):
    """pi's getMessageFromEntry for branch summaries: tool results are left out; `edit`, the
    latest context_edit of the entry among those summarized, hides or replaces its content."""
    etype = entry.get("type")
    if etype == "message":
        message = entry.get("message")
        if not isinstance(message, dict) or message.get("role") == "toolResult":
            return None
        return _edited(entry, edit) if edit is not None else message
    if etype == "custom_message":
        return _edited(entry, edit) if edit is not None else custom_message(entry)
    if etype == "branch_summary":
        return branch_summary_message(entry)
    if etype == "compaction":
        return compaction_message(entry)
    return None


def edited_entries(loaded):
    """The entries with their context edits applied (hidden ones left out), for summarizers
    that read entries rather than the conversation text (extractive)."""
    edits = latest_edits(loaded)
    out = []
    for entry in loaded:
        edit = edits.get(entry.get("id"))
        if edit is not None and entry.get("type") in ("message", "custom_message"):
            messages = project_entry(entry, edit)
            if not messages:
                continue
            if entry["type"] == "message":
                entry = dict(entry, message=messages[0])
            else:
                entry = dict(entry, content=messages[0].get("content"))
        out.append(entry)
    return out


def _edited(entry, edit):
    messages = project_entry(entry, edit)
    return messages[0] if messages else None


@dataclass
class Prepared:
    messages: list  # pi AgentMessages, oldest first, within the budget
    read_files: list
    modified_files: list
    total_tokens: int
    loaded: list  # every entry, loaded, oldest first

    @property
    def conversation(self):
        return serialize_conversation(convert_to_llm(self.messages))


def prepare_branch_entries(tree, entries, token_budget=0):
    """Messages newest first until `token_budget` (0 = no limit) is spent; a summary entry
    still squeezes in while under 90% of it. File operations from every earlier pi-made
    summary, and from the tool calls of the messages walked. `entries`: Nodes or loaded
    entries, oldest first."""
    loaded = [e if isinstance(e, dict) else tree.load(e) for e in entries]
    ops = FileOps()
    for entry in loaded:
        ops.add_from_summary(entry)
    edits = latest_edits(loaded)  # pi 1.5: only the edits among the summarized entries
    messages = []
    total = 0
    for entry in reversed(loaded):
        message = message_from_entry(entry, edits.get(entry.get("id")))
        if message is None:
            continue
        ops.add_from_message(message)
        tokens = estimate_tokens(message)
        if token_budget > 0 and total + tokens > token_budget:
            if entry.get("type") in ("compaction", "branch_summary") and total < token_budget * 0.9:
                messages.append(message)
                total += tokens
            break
        messages.append(message)
        total += tokens
    messages.reverse()
    read_files, modified_files = ops.lists()
    return Prepared(messages, read_files, modified_files, total, loaded)


# -- serializing (pi's serializeConversation) ----------------------------------


def _joined_text(content, separator=""):
    """pi-ai's contentText: a string as it is, else the text blocks joined."""
    if isinstance(content, str):
        return content
    return separator.join(_text(b.get("text")) for b in _blocks(content) if b.get("type") == "text")


def serialize_conversation(messages):
    """`[User]: …`, `[Assistant]: …`, `[Assistant tool calls]: …` paragraphs, as pi 1.6.0
    writes them: thinking is left out (1.2.0); tool results, when present, cut at 2000
    characters."""
    parts = []
    for msg in messages:
        role = msg.get("role")
        if role == "user":
            text = _joined_text(msg.get("content"))
            if text:
                parts.append(f"[User]: {text}")
        elif role == "assistant":
            blocks = _blocks(msg.get("content"))
            calls = []
            for b in blocks:
                if b.get("type") == "toolCall":
                    args = b.get("arguments")
                    pairs = js_entries(args) if isinstance(args, dict) else []
                    calls.append(f"{_text(b.get('name'))}(" + ", ".join(f"{k}={stringify(v)}" for k, v in pairs) + ")")
            if any(b.get("type") == "text" for b in blocks):
                parts.append("[Assistant]: " + _joined_text(blocks, "\n"))
            if calls:
                parts.append("[Assistant tool calls]: " + "; ".join(calls))
        elif role == "toolResult":
            text = _joined_text(msg.get("content"))
            if text:
                parts.append(f"[Tool result]: {_truncate(text, TOOL_RESULT_MAX_CHARS)}")
    return "\n\n".join(parts)


def _truncate(text, limit):
    length = js_len(text)
    if length <= limit:
        return text
    return f"{_slice_head(text, limit)}\n\n[... {length - limit} more characters truncated]"


def _slice_head(text, units):
    """pi's sliceHead: the first `units` UTF-16 units, never half a surrogate pair."""
    if js_len(text) == len(text):
        return text[:units]
    out, used = [], 0
    for c in text:
        used += 2 if ord(c) > 0xFFFF else 1
        if used > units:
            break
        out.append(c)
    return "".join(out)


# -- the request and the stored text -------------------------------------------


def instructions(custom_instructions=None, replace_instructions=False):
    if replace_instructions and custom_instructions:
        return custom_instructions
    if custom_instructions:
        return f"{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: {custom_instructions}"
    return BRANCH_SUMMARY_PROMPT


def build_request(conversation, custom_instructions=None, replace_instructions=False, options=None):
    """The Request pi's generateBranchSummary sends: its system prompt, the user text, and
    (stree's) the token cap and the reasoning effort for a reasoning model."""
    user = f"<conversation>\n{conversation}\n</conversation>\n\n" + \
        instructions(custom_instructions, replace_instructions)
    options = options or Options()
    effort = reasoning_level(options)
    budget = THINKING_BUDGETS.get("high" if effort in ("xhigh", "max") else effort, 0)
    window = options.window()
    max_tokens = clamp_to_window(MAX_TOKENS + budget, window, input_tokens(SUMMARIZATION_SYSTEM_PROMPT, user))
    return Request(SUMMARIZATION_SYSTEM_PROMPT, user, max_tokens, reasoning=effort,
                   thinking_budget=min(budget, max(0, max_tokens - 1024)) if effort else None)


def input_tokens(*texts):
    """pi-ai's estimate of a request's input: ceil(length / 4) per message."""
    return sum(math.ceil(js_len(t) / 4) for t in texts)


def clamp_to_window(max_tokens, window, input_tokens):
    """pi-ai's clampMaxTokensToContext: leave the input and a safety margin room in the window."""
    margin = max(4096, math.ceil(input_tokens * 0.15))
    room = window - input_tokens - margin
    if room < 32768:
        room = min(32768, window - input_tokens - 4096)
    return min(max_tokens, max(1, room))


def stored_summary(model_text, read_files, modified_files):
    """What pi stores in the branch_summary entry."""
    return BRANCH_SUMMARY_PREAMBLE + model_text + format_file_operations(read_files, modified_files)


def token_budget(options):
    return options.window() - RESERVE_TOKENS


def summarize_branch(tree, entries, *, custom_instructions=None, replace_instructions=False, options=None):
    """Summarize `entries` (Nodes or loaded entries, oldest first) as pi's generateBranchSummary does.

    `options`: providers.Options, a dict of its fields, or None (resolved from the
    environment, the config file and the session's model). Returns {summary, readFiles,
    modifiedFiles, model, usage}; raises StreeError(code=5) when the model fails.
    """
    if options is None:
        options = resolve_options(session_model=tree.context_model(tree.leaf),
                                  session_thinking=session_thinking_level(tree))
    elif isinstance(options, dict):
        options = Options(**options)
    prepared = prepare_branch_entries(tree, entries, token_budget(options))
    if not prepared.messages:
        return {"summary": NO_CONTENT, "readFiles": [], "modifiedFiles": [], "model": None, "usage": None}
    request = build_request(prepared.conversation, custom_instructions, replace_instructions, options)
    request.entries = edited_entries(prepared.loaded)
    answer = complete(options, request)
    if not isinstance(answer.text, str) or not answer.text.strip():
        raise StreeError(f"{options.provider}: empty answer", code=MODEL)
    return {
        "summary": stored_summary(answer.text, prepared.read_files, prepared.modified_files),
        "readFiles": prepared.read_files,
        "modifiedFiles": prepared.modified_files,
        "model": answer.model,
        "usage": answer.usage,
    }


def session_thinking_level(tree):
    """The thinking level pi would run the session at: its last thinking_level_change on the
    path to the leaf, else pi's default (medium)."""
    types = tree.column("type")
    for r in reversed(tree.path_rows(tree.leaf) if tree.leaf is not None else []):
        if types[r] == "thinking_level_change":  # (a Node made for this entry only)
            node = tree.node(r)
            level = node.aux  # the index holds a str level (stree.format.entry); else decode it
            if level is None:
                level = tree.load(node).get("thinkingLevel")
            return level if isinstance(level, str) else None
    return "medium"
