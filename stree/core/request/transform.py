"""pi-ai 1.6.0's transformMessages, one message at a time: each assistant message is kept,
stripped or re-identified for the model the request goes to, and every tool call left without
a result gets pi-ai's error result "No result provided"."""

import re

from .ids import openai_tool_call_id

IMAGE_PLACEHOLDER_USER = "(image omitted: model does not support images)"
IMAGE_PLACEHOLDER_TOOL = "(tool image omitted: model does not support images)"
NO_RESULT = "No result provided"

_SURROGATE = re.compile("[\ud800-\udfff]")


def sanitize(text):
    """pi-ai's sanitizeSurrogates: lone surrogates removed (a pair is one character here)."""
    if not isinstance(text, str):
        return "" if text is None else str(text)
    return _SURROGATE.sub("", text) if not text.isascii() else text


def blocks(content):
    """A content array's blocks (objects only); a string is not an array."""
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def text_of(block):
    text = block.get("text")
    return text if isinstance(text, str) else ""


def _replace_images(content, placeholder):
    out, after = [], False
    for b in content:
        if isinstance(b, dict) and b.get("type") == "image":
            if not after:
                out.append({"type": "text", "text": placeholder})
            after = True
            continue
        out.append(b)
        after = isinstance(b, dict) and b.get("text") == placeholder
    return out


def _tool_id_anthropic(id, target):
    return re.sub(r"[^a-zA-Z0-9_-]", "_", id)[:64]


class Transform:
    """The first pass of transformMessages for one target: per message."""

    def __init__(self, target):
        self.target = target
        self.ids = {}  # original tool-call id -> the id sent
        self.normalize = openai_tool_call_id if target.api == "openai" else _tool_id_anthropic

    def message(self, msg):
        if msg.get("content") is None:
            msg = dict(msg, content=[])
        role = msg.get("role")
        if not self.target.images and isinstance(msg.get("content"), list):
            if role == "user":
                msg = dict(msg, content=_replace_images(msg["content"], IMAGE_PLACEHOLDER_USER))
            elif role == "toolResult":
                msg = dict(msg, content=_replace_images(msg["content"], IMAGE_PLACEHOLDER_TOOL))
        if role == "toolResult":
            new = self.ids.get(msg.get("toolCallId"))
            return dict(msg, toolCallId=new) if new and new != msg.get("toolCallId") else msg
        if role != "assistant":
            return msg
        t = self.target
        same = msg.get("provider") == t.provider and msg.get("api") == t.pi_api and msg.get("model") == t.id
        content = []
        for b in msg["content"] if isinstance(msg["content"], list) else []:
            if not isinstance(b, dict):
                content.append(b)
                continue
            kind = b.get("type")
            if kind == "thinking":
                if same and (b.get("redacted") or b.get("thinkingSignature")
                             or (isinstance(b.get("thinking"), str) and b["thinking"].strip())):
                    content.append(b)
            elif kind == "text":
                content.append(b if same else {"type": "text", "text": b.get("text")})
            elif kind == "toolCall":
                call = b
                if not same and call.get("thoughtSignature"):
                    call = {k: v for k, v in call.items() if k != "thoughtSignature"}
                if not same and isinstance(call.get("id"), str):
                    new = self.normalize(call["id"], t)
                    if new != call["id"]:
                        self.ids[call["id"]] = new
                        call = dict(call, id=new)
                content.append(call)
            else:
                content.append(b)
        return dict(msg, content=content)


def no_result(call):
    return {"role": "toolResult", "toolCallId": call.get("id"), "toolName": call.get("name"),
            "content": [{"type": "text", "text": NO_RESULT}], "isError": True}


class Transcript:
    """The second pass of transformMessages, fed one message at a time into a converter
    (`out`: add(msg), snapshot(tail) -> the API's messages): error and aborted assistant
    messages are left out; tool calls without results get "No result provided" before
    the next assistant or user message, or at the end (the snapshot's tail)."""

    def __init__(self, target, out):
        self.transform = Transform(target)
        self.out = out
        self.pending = []
        self.seen = set()

    def _missing(self):
        return [no_result(c) for c in self.pending if c.get("id") not in self.seen]

    def _close(self):
        for r in self._missing():
            self.out.add(r)
        self.pending, self.seen = [], set()

    def add(self, msg):
        msg = self.transform.message(msg)
        role = msg.get("role")
        if role == "assistant":
            self._close()
            if msg.get("stopReason") in ("error", "aborted"):
                return
            calls = [b for b in msg["content"] if isinstance(b, dict) and b.get("type") == "toolCall"]
            if calls:
                self.pending, self.seen = calls, set()
            self.out.add(msg)
        elif role == "toolResult":
            self.seen.add(msg.get("toolCallId"))
            self.out.add(msg)
        else:
            if role == "user":
                self._close()
            self.out.add(msg)

    def snapshot(self):
        return self.out.snapshot(self._missing())
