"""Anthropic Messages API."""

from . import Answer, zero_cost
from .http import post_completion

ANTHROPIC_VERSION = "2023-06-01"


def request_body(options, request):
    """The body pi's anthropic-messages provider sends for a summary; with reasoning, the
    thinking budget for the session's thinking level (pi-ai's streamSimple)."""
    body = {
        "model": options.model,
        "messages": [{"role": "user", "content": [{"type": "text", "text": request.user}]}],
        "max_tokens": request.max_tokens,
        "stream": bool(options.stream),
        "system": [{"type": "text", "text": request.system}],
    }
    if request.reasoning:
        body["thinking"] = {"type": "enabled", "budget_tokens": request.thinking_budget or 1024,
                            "display": "summarized"}
    return body


def complete(options, request):
    headers = {"anthropic-version": ANTHROPIC_VERSION}
    if options.api_key:
        headers["x-api-key"] = options.api_key
    return post_completion("anthropic", options, "/v1/messages", headers, request_body(options, request),
                           _read_stream, _read_json)


def _usage(usage):
    """pi-ai's anthropic usage, as pi stores it with a summary (key order included)."""
    if not isinstance(usage, dict):
        return None
    out = {"input": _count(usage.get("input_tokens")), "output": _count(usage.get("output_tokens")),
           "cacheRead": _count(usage.get("cache_read_input_tokens")),
           "cacheWrite": _count(usage.get("cache_creation_input_tokens"))}
    out["totalTokens"] = sum(out.values())
    out["cost"] = zero_cost()
    creation = usage.get("cache_creation") if isinstance(usage.get("cache_creation"), dict) else {}
    out["cacheWrite1h"] = _count(creation.get("ephemeral_1h_input_tokens"))
    details = usage.get("output_tokens_details")
    if isinstance(details, dict) and details.get("thinking_tokens") is not None:
        out["reasoning"] = _count(details["thinking_tokens"])
    return out


def _count(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) and value else 0


def _read_json(call, response):
    data = call.json(response)
    if not isinstance(data, dict):
        raise call.fail("the answer is not a JSON object")
    if data.get("type") == "error":
        error = data.get("error") or {}
        raise call.fail(f"the server answered with an error: {error.get('message') or error}")
    content = data.get("content")
    if not isinstance(content, list):
        raise call.fail("the answer has no content")
    texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    text = "\n".join(t for t in texts if isinstance(t, str))
    check(call, text, data.get("stop_reason"),
          any(isinstance(b, dict) and b.get("type") in TOOL_BLOCKS for b in content))
    return Answer(text, data.get("model"), _usage(data.get("usage")), data.get("stop_reason"))


def _read_stream(call, response):
    blocks = {}  # index -> text, for text blocks
    model, usage, stop, done, tool_call = None, {}, None, False, False
    for name, event in call.events(response):
        if not isinstance(event, dict):
            continue
        kind = event.get("type") or name
        if kind == "error":
            error = event.get("error") or {}
            message = error.get("message") if isinstance(error, dict) else error
            raise call.fail(f"the server sent an error in the stream: {message}")
        if kind == "message_start":
            message = event.get("message") or {}
            model = message.get("model") or model
            usage.update(message.get("usage") or {})
        elif kind == "content_block_start":
            block = event.get("content_block") or {}
            tool_call = tool_call or block.get("type") in TOOL_BLOCKS
            if block.get("type") == "text":
                blocks[event.get("index", 0)] = [block.get("text") or ""]
        elif kind == "content_block_delta":
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
                blocks.setdefault(event.get("index", 0), []).append(delta["text"])
        elif kind == "message_delta":
            stop = (event.get("delta") or {}).get("stop_reason") or stop
            usage.update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
        elif kind == "message_stop":
            done = True
    if not done:
        raise call.fail("the stream ended before the answer was complete")
    text = "\n".join("".join(blocks[i]) for i in sorted(blocks))
    check(call, text, stop, tool_call)
    return Answer(text, model, _usage(usage) if usage else None, stop)


TOOL_BLOCKS = ("tool_use",)
OK_STOP = (None, "end_turn", "tool_use", "pause_turn", "stop_sequence")  # pi-ai's mapStopReason


def check(call, text, stop, tool_call=False):
    """pi 1.6.0's rules for a summary answer: a refusal, an unknown stop, an answer cut at
    the token cap (`max_tokens`) or one that calls a tool is an error."""
    if stop == "refusal":
        raise call.fail("the model refused to summarize (stop_reason refusal)")
    if stop == "max_tokens":
        raise call.fail("the answer hit the token cap and the summary is incomplete (stop_reason max_tokens)")
    if stop not in OK_STOP:
        raise call.fail(f"the answer ended with stop_reason {stop}")
    if tool_call:
        raise call.fail("the model tried to call a tool instead of summarizing")
    if not text.strip():
        raise call.fail(f"empty answer (stop_reason {stop})", hint="try another --model")
