"""The structural fingerprint of a conversation, for answering an agent from a recording.

A conversation (the messages of a request, or pi's context at an entry) becomes a list of
atoms, compared one by one:

    ("user", TEXT)          the text of consecutive user messages: whitespace runs become one
                            space, an image is "[image]"; consecutive user messages join; a
                            user's `!command` is "Ran `command`" (its output left out)
    ("assistant", CALLS)    an assistant message: its tool calls as ((call id, tool name), ...)
                            (its text, thinking and signatures are not compared)
    ("result", CALL_ID)     a tool result for that call

System prompts, tool definitions, the model, sampling settings and the contents of tool
results are left out: they carry times, paths and versions that change from run to run.
Call ids are compared as their first 24 characters after those other than letters, digits,
"_" and "-" became "_" (pi-ai rewrites ids so for some APIs, and shortens long ones).
An assistant message pi-ai leaves out of a request (stopped by an error or aborted, or
empty) is left out of the recording's side too, and a tool call without a result gets one,
as pi-ai inserts "No result provided". The user message pi-ai adds to carry a tool result's
images ("Attached image(s) from tool result:", "Images from the error result of tool call")
belongs to the tool results: it is left out.

Calling sequence: `recorded_turns(tree, leaf)` gives the Turns of a path (the fingerprint of
the context before each assistant message); `from_openai(body)` / `from_anthropic(body)`
give a request's; `Cassette(turns).find(atoms)` answers with the Turn whose context equals
the request's (the next of several recorded for one context: an error and its retry), or
None; `Cassette.nearest(atoms)` and `differences(...)` explain a miss. `user_inputs(tree,
leaf)` lists what the user typed on the path, for driving an agent through it again.
"""

import re
from dataclasses import dataclass, field

from .convert import convert_to_llm

_SPACE = re.compile(r"\s+")
_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]")
ID_LENGTH = 24


# pi's text for a user's `!command` (core.convert.bash_execution_text): its output changes from
# run to run, so only the command is compared
_BASH_RUN = re.compile(r"Ran `(.*?)`\n(?:```\n|\(no output\))", re.S)


def norm_text(text):
    ran = _BASH_RUN.match(text)
    if ran:
        return f"Ran `{_SPACE.sub(' ', ran.group(1)).strip()}`"
    return _SPACE.sub(" ", text).strip()


def norm_id(call_id):
    return _ID_CHARS.sub("_", str(call_id))[:ID_LENGTH]


class _Builder:
    """Atoms in order; user text pieces joined until another kind of atom comes."""

    def __init__(self):
        self.atoms = []
        self.text = None
        self.open_calls = []  # ids of the last assistant's calls still without a result

    def user(self, piece):
        self.close_calls()
        piece = norm_text(piece)
        if self.text is None:
            self.text = piece
        elif piece:
            self.text = f"{self.text} {piece}".strip()

    def flush(self):
        if self.text is not None:
            self.atoms.append(("user", self.text))
            self.text = None

    def assistant(self, calls):
        self.close_calls()
        self.flush()
        calls = tuple((norm_id(i), str(name)) for i, name in calls)
        self.atoms.append(("assistant", calls))
        self.open_calls = [i for i, _ in calls]

    def result(self, call_id):
        self.flush()
        call_id = norm_id(call_id)
        if call_id in self.open_calls:
            self.open_calls.remove(call_id)
        self.atoms.append(("result", call_id))

    def close_calls(self):
        """pi-ai's "No result provided" for each call left without a result."""
        for call_id in self.open_calls:
            self.flush()
            self.atoms.append(("result", call_id))
        self.open_calls = []

    def done(self, synthesize=True):
        if synthesize:
            self.close_calls()
        self.flush()
        return self.atoms


def _text_pieces(content):
    """User content as text pieces: text blocks, images as "[image]"."""
    if isinstance(content, str):
        return [content]
    out = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            out.append(block["text"])
        elif kind in ("image", "image_url", "input_image"):
            out.append("[image]")
    return out


def skipped_assistant(message):
    """An assistant message pi-ai does not send: an error or an abort, or nothing in it."""
    if message.get("stopReason") in ("error", "aborted"):
        return True
    content = message.get("content")
    if not isinstance(content, list):
        return not (isinstance(content, str) and content.strip())
    return not any(isinstance(b, dict) and (b.get("type") == "toolCall" or
                                            (b.get("type") in ("text", "thinking") and
                                             str(b.get("text") or b.get("thinking") or "").strip()))
                   for b in content)


def tool_calls(message):
    """[(id, name)] of a pi assistant message's toolCall blocks."""
    content = message.get("content")
    return [(b.get("id"), b.get("name")) for b in content if isinstance(b, dict) and b.get("type") == "toolCall"] \
        if isinstance(content, list) else []


def from_messages(messages):
    """The fingerprint of pi's context messages (AgentMessages, before convertToLlm)."""
    out = _Builder()
    for m in convert_to_llm(messages):
        role = m.get("role")
        if role == "user":
            for piece in _text_pieces(m.get("content")):
                out.user(piece)
        elif role == "assistant":
            if not skipped_assistant(m):
                out.assistant(tool_calls(m))
        elif role == "toolResult":
            out.result(m.get("toolCallId"))
    return out.done()


TOOL_IMAGE_TEXTS = ("Attached image(s) from tool result:", "Images from the error result of tool call ")


def _tool_images(content):
    """Whether a request's user message is the one pi-ai adds for a tool result's images."""
    first = content[0] if isinstance(content, list) and content else None
    return isinstance(first, dict) and first.get("type") == "text" and \
        str(first.get("text") or "").startswith(TOOL_IMAGE_TEXTS)


def from_openai(body):
    """The fingerprint of a chat-completions request body."""
    out = _Builder()
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        role = m.get("role")
        if role == "user":
            if _tool_images(m.get("content")):
                continue
            for piece in _text_pieces(m.get("content")):
                out.user(piece)
        elif role == "assistant":
            calls = [(c.get("id"), (c.get("function") or {}).get("name")) for c in m.get("tool_calls") or []
                     if isinstance(c, dict)]
            out.assistant(calls)
        elif role == "tool":
            out.result(m.get("tool_call_id"))
    return out.done(synthesize=False)


def from_anthropic(body):
    """The fingerprint of a messages request body (tool results ride in user turns)."""
    out = _Builder()
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        if m.get("role") == "assistant":
            out.assistant([(b.get("id"), b.get("name")) for b in blocks
                           if isinstance(b, dict) and b.get("type") == "tool_use"])
            continue
        if _tool_images(blocks):
            continue
        images_of_a_result = False  # the images pi-ai moves out of an error result, after its text
        for b in blocks:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "image" and images_of_a_result:
                continue
            images_of_a_result = _tool_images([b])
            if images_of_a_result:
                continue
            if b.get("type") == "tool_result":
                out.result(b.get("tool_use_id"))
            else:
                for piece in _text_pieces([b]):
                    out.user(piece)
    return out.done(synthesize=False)


@dataclass
class Turn:
    """One recorded assistant message and the fingerprint of the context pi sent for it."""

    index: int  # 1-based, among the path's assistant messages
    entry_id: str
    parent_id: str
    message: dict = field(repr=False)
    atoms: list = field(repr=False)


def recorded_turns(tree, leaf):
    """The Turns of the path root..leaf, oldest first."""
    from .context import build_context

    path = [tree.load(node) for node in tree.path(leaf)] if leaf else []
    turns = []
    for i, entry in enumerate(path):
        message = entry.get("message")
        if entry.get("type") != "message" or not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        atoms = from_messages(build_context(path[:i])["messages"])
        turns.append(Turn(len(turns) + 1, entry.get("id"), entry.get("parentId"), message, atoms))
    return turns


def user_inputs(tree, leaf):
    """What the user typed on the path root..leaf, oldest first, as pi's RPC commands take
    it: [(entry id, kind, text, images)], kind "prompt" for a user message (text and images),
    "bash" or "bash-excluded" for a `!command` (`!!command`: kept out of the context)."""
    out = []
    for node in tree.path(leaf) if leaf else []:
        entry = tree.load(node)
        message = entry.get("message")
        if entry.get("type") != "message" or not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "bashExecution" and isinstance(message.get("command"), str):
            kind = "bash-excluded" if message.get("excludeFromContext") else "bash"
            out.append((entry.get("id"), kind, message["command"], []))
        if role != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            out.append((entry.get("id"), "prompt", content, []))
            continue
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        text = "".join(b.get("text") or "" for b in blocks if b.get("type") == "text")
        images = [{"type": "image", "data": b.get("data"), "mimeType": b.get("mimeType")}
                  for b in blocks if b.get("type") == "image"]
        out.append((entry.get("id"), "prompt", text, images))
    return out


def describe(atom):
    kind = atom[0]
    if kind == "user":
        text = atom[1]
        return f"user text {text[:60]!r}" + ("..." if len(text) > 60 else "")
    if kind == "assistant":
        calls = ", ".join(f"{name} ({call_id})" for call_id, name in atom[1])
        return f"assistant message calling {calls}" if calls else "assistant message without tool calls"
    return f"tool result for {atom[1]}"


def common_prefix(a, b):
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def differences(recorded, request):
    """What differs between a recorded turn's context and a request's, in words."""
    at = common_prefix(recorded, request)
    if at < len(recorded) and at < len(request):
        return [f"message {at + 1}: recorded {describe(recorded[at])}, request has {describe(request[at])}"]
    if at < len(recorded):
        return [f"the request ends after message {at}; the recording goes on with {describe(recorded[at])}"]
    if at < len(request):
        extra = len(request) - at
        return [f"the request has {extra} message(s) more than the recording after message {at}, "
                f"starting with {describe(request[at])}"]
    return []


class Cassette:
    """The recorded turns of a path, found by the fingerprint of the conversation so far."""

    def __init__(self, turns):
        self.turns = turns
        self.by_key = {}  # context -> the turns recorded for it (more than one: retries)
        self.asked = {}  # context -> how many times a request asked for it
        for turn in turns:
            self.by_key.setdefault(_key(turn.atoms), []).append(turn)

    def find(self, atoms):
        """The turn recorded for this context: the first time the first, then the next (the
        last once all were served), or None."""
        key = _key(atoms)
        turns = self.by_key.get(key)
        if not turns:
            return None
        n = self.asked.get(key, 0)
        self.asked[key] = n + 1
        return turns[min(n, len(turns) - 1)]

    def nearest(self, atoms):
        """The turn whose context shares the longest start with the request's (on a tie,
        the one whose context is closest in length), or None for an empty recording."""
        best, best_score = None, None
        for turn in self.turns:
            score = (common_prefix(turn.atoms, atoms), -abs(len(turn.atoms) - len(atoms)))
            if best_score is None or score > best_score:
                best, best_score = turn, score
        return best


def _key(atoms):
    return tuple(atoms)
