"""Send a prepared request body to a model and read the whole answer as a pi assistant
message (text, thinking, tool calls, stop reason, usage), for `stree replay`.

The transport is stree.providers.http (retries, timeouts, the deadline, SSE, errors without
secrets); only the reading of the answer is here, since a summary's readers refuse tool calls.
"""

import json

API = {"openai": "openai-completions", "anthropic": "anthropic-messages"}
OPENAI_STOP = {"stop": "stop", "end": "stop", "length": "length", "tool_calls": "toolUse", "function_call": "toolUse"}
ANTHROPIC_STOP = {"end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop", "max_tokens": "length",
                  "tool_use": "toolUse"}


def send(options, body):
    """POST `body` (the request at an entry; its model, stream and key set from `options`)
    and return the answer as a pi assistant message (a dict)."""
    from ..providers.http import post_completion

    body = dict(body)
    body["model"] = options.model
    body["stream"] = bool(options.stream)
    if options.provider == "openai":
        if options.stream:
            body["stream_options"] = {"include_usage": True}
        else:
            body.pop("stream_options", None)
        headers = {"authorization": f"Bearer {options.api_key}"} if options.api_key else {}
        answer = post_completion("openai", options, "/chat/completions", headers, body, _openai_stream, _openai_json)
    else:
        headers = {"anthropic-version": "2023-06-01"}
        if options.api_key:
            headers["x-api-key"] = options.api_key
        answer = post_completion("anthropic", options, "/v1/messages", headers, body, _anthropic_stream,
                                 _anthropic_json)
    return answer.message(options)


class Reply:
    """What post_completion returns: an Answer-like object with the message parts."""

    def __init__(self):
        self.blocks = []  # pi content blocks, in order
        self.stop = None
        self.usage = {}
        self.model = None
        self.error = None

    @property
    def text(self):  # (post_completion reads .model; providers.complete checks .text)
        return "".join(b.get("text", "") for b in self.blocks if b["type"] == "text")

    def message(self, options):
        usage = {"input": self.usage.get("input", 0), "output": self.usage.get("output", 0),
                 "cacheRead": self.usage.get("cacheRead", 0), "cacheWrite": self.usage.get("cacheWrite", 0)}
        usage["totalTokens"] = sum(usage.values())
        usage["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
        out = {"role": "assistant", "content": self.blocks, "api": API[options.provider],
               "provider": options.provider, "model": self.model or options.model, "usage": usage,
               "stopReason": self.stop or "stop"}
        if self.error:
            out["errorMessage"] = self.error
        return out


def _message(error):
    return error.get("message") if isinstance(error, dict) else error


def _count(value):
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _arguments(text):
    """Tool-call arguments from their JSON text ({} for none; the raw text kept if broken)."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {"_raw": text}
    return value if isinstance(value, dict) else {"_value": value}


# -- OpenAI ----------------------------------------------------------------------------------

def _openai_usage(reply, usage):
    if not isinstance(usage, dict):
        return
    details = usage.get("prompt_tokens_details") if isinstance(usage.get("prompt_tokens_details"), dict) else {}
    cached = _count(details.get("cached_tokens"))
    reply.usage = {"input": max(0, _count(usage.get("prompt_tokens")) - cached),
                   "output": _count(usage.get("completion_tokens")), "cacheRead": cached}


def _openai_finish(reply, finish):
    reply.stop = OPENAI_STOP.get(finish, "error")
    if reply.stop == "error":
        reply.error = f"finish_reason {finish}"


def _openai_json(call, response):
    data = call.json(response)
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list) or not data["choices"]:
        raise call.fail("the answer has no choices")
    reply = Reply()
    reply.model = data.get("model")
    choice = data["choices"][0] if isinstance(data["choices"][0], dict) else {}
    message = choice.get("message") or {}
    thinking = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(thinking, str) and thinking:
        reply.blocks.append({"type": "thinking", "thinking": thinking})
    if isinstance(message.get("content"), str) and message["content"]:
        reply.blocks.append({"type": "text", "text": message["content"]})
    for c in message.get("tool_calls") or []:
        function = c.get("function") or {} if isinstance(c, dict) else {}
        reply.blocks.append({"type": "toolCall", "id": c.get("id"), "name": function.get("name"),
                             "arguments": _arguments(function.get("arguments"))})
    _openai_finish(reply, choice.get("finish_reason"))
    _openai_usage(reply, data.get("usage"))
    return reply


def _openai_stream(call, response):
    reply = Reply()
    thinking, text, calls, done = [], [], {}, False
    for _, event in call.events(response):
        if not isinstance(event, dict):
            continue
        if event.get("error"):
            error = event["error"]
            raise call.fail(f"the server sent an error in the stream: {_message(error)}")
        reply.model = event.get("model") or reply.model
        if event.get("usage"):
            _openai_usage(reply, event["usage"])
        for choice in event.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            for name in ("reasoning_content", "reasoning", "reasoning_text"):
                if isinstance(delta.get(name), str):
                    thinking.append(delta[name])
                    break
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            for c in delta.get("tool_calls") or []:
                if not isinstance(c, dict):
                    continue
                slot = calls.setdefault(c.get("index", len(calls)), {"id": None, "name": "", "arguments": []})
                function = c.get("function") or {}
                slot["id"] = c.get("id") or slot["id"]
                slot["name"] = function.get("name") or slot["name"]
                if isinstance(function.get("arguments"), str):
                    slot["arguments"].append(function["arguments"])
            if choice.get("finish_reason"):
                _openai_finish(reply, choice["finish_reason"])
                done = True
    if not done:
        raise call.fail("the stream ended before the answer was complete")
    if "".join(thinking):
        reply.blocks.append({"type": "thinking", "thinking": "".join(thinking)})
    if "".join(text):
        reply.blocks.append({"type": "text", "text": "".join(text)})
    for index in sorted(calls):
        slot = calls[index]
        reply.blocks.append({"type": "toolCall", "id": slot["id"], "name": slot["name"],
                             "arguments": _arguments("".join(slot["arguments"]))})
    return reply


# -- Anthropic -----------------------------------------------------------------------------

def _anthropic_usage(reply, usage):
    if isinstance(usage, dict):
        for name, key in (("input", "input_tokens"), ("output", "output_tokens"),
                          ("cacheRead", "cache_read_input_tokens"), ("cacheWrite", "cache_creation_input_tokens")):
            if usage.get(key) is not None:
                reply.usage[name] = _count(usage[key])


def _anthropic_stop(reply, stop):
    reply.stop = ANTHROPIC_STOP.get(stop, "error")
    if reply.stop == "error":
        reply.error = f"stop_reason {stop}"


def _anthropic_block(block):
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": block.get("text") or ""}
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.get("thinking") or "",
                "thinkingSignature": block.get("signature") or ""}
    if kind == "tool_use":
        return {"type": "toolCall", "id": block.get("id"), "name": block.get("name"),
                "arguments": block.get("input") if isinstance(block.get("input"), dict) else {}}
    return None


def _anthropic_json(call, response):
    data = call.json(response)
    if not isinstance(data, dict) or data.get("type") == "error" or not isinstance(data.get("content"), list):
        raise call.fail("the answer has no content")
    reply = Reply()
    reply.model = data.get("model")
    reply.blocks = [b for b in (_anthropic_block(x) for x in data["content"] if isinstance(x, dict)) if b]
    _anthropic_stop(reply, data.get("stop_reason"))
    _anthropic_usage(reply, data.get("usage"))
    return reply


def _anthropic_stream(call, response):
    reply = Reply()
    blocks, partial, done = {}, {}, False
    for name, event in call.events(response):
        if not isinstance(event, dict):
            continue
        kind = event.get("type") or name
        index = event.get("index", 0)
        if kind == "error":
            error = event.get("error") or {}
            raise call.fail(f"the server sent an error in the stream: {_message(error)}")
        if kind == "message_start":
            message = event.get("message") or {}
            reply.model = message.get("model") or reply.model
            _anthropic_usage(reply, message.get("usage"))
        elif kind == "content_block_start":
            block = _anthropic_block(event.get("content_block") or {})
            if block is not None:
                blocks[index] = block
                partial[index] = []
        elif kind == "content_block_delta" and index in blocks:
            delta = event.get("delta") or {}
            block = blocks[index]
            if delta.get("type") == "text_delta":
                block["text"] += delta.get("text") or ""
            elif delta.get("type") == "thinking_delta":
                block["thinking"] += delta.get("thinking") or ""
            elif delta.get("type") == "signature_delta":
                block["thinkingSignature"] = block.get("thinkingSignature", "") + (delta.get("signature") or "")
            elif delta.get("type") == "input_json_delta":
                partial[index].append(delta.get("partial_json") or "")
        elif kind == "message_delta":
            stop = (event.get("delta") or {}).get("stop_reason")
            if stop:
                _anthropic_stop(reply, stop)
            _anthropic_usage(reply, event.get("usage"))
        elif kind == "message_stop":
            done = True
    if not done:
        raise call.fail("the stream ended before the answer was complete")
    for index in sorted(blocks):
        block = blocks[index]
        if block["type"] == "toolCall" and partial[index]:
            block["arguments"] = _arguments("".join(partial[index]))
        reply.blocks.append(block)
    return reply
