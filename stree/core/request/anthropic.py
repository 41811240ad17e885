"""pi-ai 1.6.0's anthropic-messages convertMessages and buildParams (an API key, not an
OAuth token; cache retention "short"): messages added one at a time, the body taken at any
point. The same API one layer down, the body sent over HTTP: stree.providers.anthropic."""

from .transform import blocks, sanitize, text_of

CACHE = {"type": "ephemeral"}
ERROR_IMAGE_PLACEHOLDER = "(image attached after the tool results)"


def _image(b):
    return {"type": "image", "source": {"type": "base64", "media_type": b.get("mimeType"), "data": b.get("data")}}


def _content(content):
    """convertContentBlocks: text joined when there is no image, else blocks."""
    if not any(b.get("type") == "image" for b in content):
        return sanitize("\n".join(text_of(b) for b in content))
    out = [{"type": "text", "text": sanitize(text_of(b))} if b.get("type") == "text" else _image(b) for b in content]
    if not any(b["type"] == "text" for b in out):
        out.insert(0, {"type": "text", "text": "(see attached image)"})
    return out


def _tool_result(msg):
    content = blocks(msg.get("content"))
    images = [b for b in content if b.get("type") == "image"]
    extra = []
    if msg.get("isError") and images:
        kept, after = [], False
        for b in content:
            if b.get("type") == "image":
                if not after:
                    kept.append({"type": "text", "text": ERROR_IMAGE_PLACEHOLDER})
                after = True
                continue
            kept.append(b)
            after = b.get("text") == ERROR_IMAGE_PLACEHOLDER
        content = kept
        extra = [{"type": "text", "text": f"Images from the error result of tool call {msg.get('toolCallId')} "
                                          f"({msg.get('toolName')}):"}] + [_image(b) for b in images]
    out = {"type": "tool_result", "tool_use_id": msg.get("toolCallId"), "content": _content(content)}
    if "isError" in msg:
        out["is_error"] = msg["isError"]
    return out, extra


class Messages:
    """convertMessages, incrementally (see openai.Messages)."""

    def __init__(self, target):
        self.target = target
        self.done = []
        self.results, self.extra = [], []  # the current run of tool results
        self.in_run = False

    def _end_run(self):
        self.done.append({"role": "user", "content": [*self.results, *self.extra]})
        self.results, self.extra, self.in_run = [], [], False

    def add(self, msg):
        role = msg.get("role")
        if role != "toolResult" and self.in_run:
            self._end_run()
        if role == "user":
            content = msg.get("content")
            if isinstance(content, str):
                if content.strip():
                    self.done.append({"role": "user", "content": sanitize(content)})
                return
            out = [{"type": "text", "text": sanitize(b.get("text"))} if b.get("type") == "text" else _image(b)
                   for b in blocks(content)]
            out = [b for b in out if b["type"] != "text" or b["text"].strip()]
            if out:
                self.done.append({"role": "user", "content": out})
        elif role == "assistant":
            out = self._assistant(msg)
            if out:
                self.done.append({"role": "assistant", "content": out})
        elif role == "toolResult":
            result, extra = _tool_result(msg)
            self.results.append(result)
            self.extra.extend(extra)
            self.in_run = True

    @staticmethod
    def _assistant(msg):
        out = []
        for b in blocks(msg.get("content")):
            kind = b.get("type")
            if kind == "text":
                if text_of(b).strip():
                    out.append({"type": "text", "text": sanitize(b["text"])})
            elif kind == "thinking":
                signature = b.get("thinkingSignature")
                if b.get("redacted"):
                    out.append({"type": "redacted_thinking", "data": signature})
                    continue
                thinking = b.get("thinking") if isinstance(b.get("thinking"), str) else ""
                signed = isinstance(signature, str) and bool(signature.strip())
                if not thinking.strip() and not signed:
                    continue
                out.append({"type": "thinking", "thinking": sanitize(thinking), "signature": signature} if signed
                           else {"type": "text", "text": sanitize(thinking)})
            elif kind == "toolCall":
                args = b.get("arguments")
                out.append({"type": "tool_use", "id": b.get("id"), "name": b.get("name"),
                            "input": args if args is not None else {}})
        return out

    def snapshot(self, tail):
        out = list(self.done)
        results, extra = list(self.results), list(self.extra)
        for msg in tail:
            result, more = _tool_result(msg)
            results.append(result)
            extra.extend(more)
        if results:
            out.append({"role": "user", "content": [*results, *extra]})
        if out and out[-1]["role"] == "user":  # the cache breakpoint: on a copy of the last message
            last = out[-1]
            content = last["content"]
            if isinstance(content, list) and content and content[-1].get("type") in ("text", "image", "tool_result"):
                out[-1] = dict(last, content=content[:-1] + [dict(content[-1], cache_control=CACHE)])
            elif isinstance(content, str):
                out[-1] = dict(last, content=[{"type": "text", "text": content, "cache_control": CACHE}])
        return out


def convert_tools(tools):
    out = []
    for t in tools:
        if not isinstance(t, dict):
            continue
        schema = t.get("parameters") if isinstance(t.get("parameters"), dict) else {}
        input_schema = {"type": "object", "properties": schema.get("properties") or {},
                        "required": schema.get("required") or []}
        for key in ("additionalProperties", "$defs", "definitions"):
            if key in schema:
                input_schema[key] = schema[key]
        out.append({"name": t.get("name"), "description": t.get("description"), "eager_input_streaming": True,
                    "input_schema": input_schema})
    if out:
        out[-1]["cache_control"] = CACHE
    return out


def body(target, system_text, tools, messages, max_tokens, level, budget=None):
    """buildParams: the request body. `level`: the thinking level (off: none)."""
    params = {"model": target.id, "messages": messages, "max_tokens": max_tokens, "stream": True}
    if system_text:
        params["system"] = [{"type": "text", "text": sanitize(system_text), "cache_control": CACHE}]
    if tools:
        params["tools"] = convert_tools(tools)
    if target.reasoning:
        if level == "off":
            params["thinking"] = {"type": "disabled"}
        else:
            params["thinking"] = {"type": "enabled", "budget_tokens": budget or 1024, "display": "summarized"}
    return params
