"""A recorded pi assistant message as an OpenAI chat-completions or Anthropic messages
answer: one JSON body, or the server-sent events those APIs stream (the shapes pi-ai parses).

Text and thinking are sent in pieces, tool calls with their arguments as one JSON string;
the usage is the recorded one. Thinking goes to OpenAI clients as `reasoning_content`, to
Anthropic clients as a thinking block with its recorded signature.
"""

import json

PIECE = 64  # characters of text per streamed delta

OPENAI_FINISH = {"toolUse": "tool_calls", "length": "length", "stop": "stop"}
ANTHROPIC_STOP = {"toolUse": "tool_use", "length": "max_tokens", "stop": "end_turn"}


def _blocks(message):
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _pieces(text):
    return [text[i:i + PIECE] for i in range(0, len(text), PIECE)] or [""]


def _usage(message):
    usage = message.get("usage") if isinstance(message.get("usage"), dict) else {}

    def count(name):
        value = usage.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    return count("input"), count("output"), count("cacheRead"), count("cacheWrite")


def _arguments(block):
    args = block.get("arguments")
    return json.dumps(args if isinstance(args, dict) else {}, ensure_ascii=False, separators=(",", ":"))


def _stop(message, table):
    stop = message.get("stopReason")
    if stop == "toolUse" or any(b.get("type") == "toolCall" for b in _blocks(message)):
        return table["toolUse"]
    return table.get(stop, table["stop"])


def _model(message, model):
    return model or message.get("model") or "recorded"


# -- OpenAI chat completions ---------------------------------------------------------------

def openai_usage(message):
    input_, output, cache_read, cache_write = _usage(message)
    prompt = input_ + cache_read + cache_write
    return {"prompt_tokens": prompt, "completion_tokens": output, "total_tokens": prompt + output,
            "prompt_tokens_details": {"cached_tokens": cache_read}}


def openai_json(message, answer_id, model=None):
    blocks = _blocks(message)
    text = "".join(b.get("text") or "" for b in blocks if b.get("type") == "text")
    thinking = "".join(b.get("thinking") or "" for b in blocks if b.get("type") == "thinking")
    out = {"role": "assistant", "content": text or None}
    if thinking:
        out["reasoning_content"] = thinking
    calls = [{"id": b.get("id"), "type": "function", "function": {"name": b.get("name"), "arguments": _arguments(b)}}
             for b in blocks if b.get("type") == "toolCall"]
    if calls:
        out["tool_calls"] = calls
    return {"id": answer_id, "object": "chat.completion", "created": 0, "model": _model(message, model),
            "choices": [{"index": 0, "message": out, "finish_reason": _stop(message, OPENAI_FINISH)}],
            "usage": openai_usage(message)}


def openai_events(message, answer_id, model=None):
    """[(event name or None, data)], the last data "[DONE]"."""
    base = {"id": answer_id, "object": "chat.completion.chunk", "created": 0, "model": _model(message, model)}

    def chunk(delta, finish=None):
        return None, dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])

    events = [chunk({"role": "assistant", "content": ""})]
    calls = 0
    for block in _blocks(message):
        kind = block.get("type")
        if kind == "thinking" and block.get("thinking"):
            events += [chunk({"reasoning_content": piece}) for piece in _pieces(block["thinking"])]
        elif kind == "text" and block.get("text"):
            events += [chunk({"content": piece}) for piece in _pieces(block["text"])]
        elif kind == "toolCall":
            events.append(chunk({"tool_calls": [{"index": calls, "id": block.get("id"), "type": "function",
                                                 "function": {"name": block.get("name"), "arguments": ""}}]}))
            events.append(chunk({"tool_calls": [{"index": calls, "function": {"arguments": _arguments(block)}}]}))
            calls += 1
    events.append(chunk({}, _stop(message, OPENAI_FINISH)))
    events.append((None, dict(base, choices=[], usage=openai_usage(message))))
    return events + [(None, "[DONE]")]


def openai_error(message, kind="invalid_request_error"):
    return {"error": {"message": message, "type": kind, "code": "stree_replay"}}


# -- Anthropic messages ----------------------------------------------------------------------

def anthropic_usage(message):
    input_, output, cache_read, cache_write = _usage(message)
    return {"input_tokens": input_, "output_tokens": output, "cache_read_input_tokens": cache_read,
            "cache_creation_input_tokens": cache_write}


def _anthropic_block(block):
    kind = block.get("type")
    if kind == "text" and block.get("text"):
        return {"type": "text", "text": block["text"]}
    if kind == "thinking" and block.get("thinking"):
        return {"type": "thinking", "thinking": block["thinking"], "signature": block.get("thinkingSignature") or ""}
    if kind == "toolCall":
        args = block.get("arguments")
        return {"type": "tool_use", "id": block.get("id"), "name": block.get("name"),
                "input": args if isinstance(args, dict) else {}}
    return None


def anthropic_json(message, answer_id, model=None):
    content = [b for b in map(_anthropic_block, _blocks(message)) if b]
    return {"id": answer_id, "type": "message", "role": "assistant", "model": _model(message, model),
            "content": content, "stop_reason": _stop(message, ANTHROPIC_STOP), "stop_sequence": None,
            "usage": anthropic_usage(message)}


def anthropic_events(message, answer_id, model=None):
    usage = anthropic_usage(message)
    start = {"id": answer_id, "type": "message", "role": "assistant", "model": _model(message, model),
             "content": [], "stop_reason": None, "stop_sequence": None, "usage": dict(usage, output_tokens=0)}
    events = [("message_start", {"type": "message_start", "message": start})]
    index = 0
    for block in filter(None, map(_anthropic_block, _blocks(message))):
        kind = block["type"]
        if kind == "text":
            first, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in
                                                           _pieces(block["text"])]
        elif kind == "thinking":
            first = {"type": "thinking", "thinking": ""}
            deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(block["thinking"])]
            if block["signature"]:
                deltas.append({"type": "signature_delta", "signature": block["signature"]})
        else:
            first = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta",
                       "partial_json": json.dumps(block["input"], ensure_ascii=False, separators=(",", ":"))}]
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": first}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
                   for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": _stop(message, ANTHROPIC_STOP), "stop_sequence": None},
                                     "usage": {"output_tokens": usage["output_tokens"]}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def anthropic_error(message, kind="invalid_request_error"):
    return {"type": "error", "error": {"type": kind, "message": message}}


def sse(events):
    """The bytes of server-sent events."""
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)}\n\n")
    return "".join(out).encode("utf-8")
