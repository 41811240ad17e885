"""OpenAI-compatible chat completions (OpenAI, OpenRouter, Ollama, llama.cpp, vLLM, LM Studio)."""

import json

from . import Answer, instructions_role, zero_cost
from .http import post_completion, server_message


def request_body(options, request):
    """The body pi's openai-completions provider sends for a summary, minus `store`
    (OpenAI-only) and with plain-string message contents (what every server accepts).
    A reasoning model gets the session's thinking level as reasoning_effort, and its
    instructions as a "developer" message on OpenAI's own API only (pi-ai 1.6.0's rule,
    providers.instructions_role: the base URL decides, as stree's provider is the API)."""
    role = instructions_role(options.reasons(), None, options.base_url)
    body = {
        "model": options.model,
        "messages": [
            {"role": role, "content": request.system},
            {"role": "user", "content": request.user},
        ],
        "stream": bool(options.stream),
    }
    if options.stream:
        body["stream_options"] = {"include_usage": True}
    body[options.max_tokens_field or "max_completion_tokens"] = request.max_tokens
    if request.reasoning:
        body["reasoning_effort"] = "high" if request.reasoning in ("xhigh", "max") else request.reasoning
    return body


def complete(options, request):
    headers = {}
    if options.api_key:
        headers["authorization"] = f"Bearer {options.api_key}"
    return post_completion("openai", options, "/chat/completions", headers, request_body(options, request),
                           _read_stream, _read_json)


def _usage(usage):
    """pi-ai's parseChunkUsage: the usage pi stores with a summary, key order included."""
    if not isinstance(usage, dict):
        return None
    details = usage.get("prompt_tokens_details") if isinstance(usage.get("prompt_tokens_details"), dict) else {}
    cache_read = _first(details.get("cached_tokens"), usage.get("prompt_cache_hit_tokens"), usage.get("cached_tokens"))
    cache_write = _count(details.get("cache_write_tokens"))
    done = usage.get("completion_tokens_details") if isinstance(usage.get("completion_tokens_details"), dict) else {}
    prompt, output = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
    input_ = max(0, prompt - cache_read - cache_write)
    return {"input": input_, "output": output, "cacheRead": cache_read, "cacheWrite": cache_write,
            "reasoning": _count(done.get("reasoning_tokens")),
            "totalTokens": input_ + output + cache_read + cache_write, "cost": zero_cost()}


def _count(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) and value else 0


def _first(*values):
    """JavaScript's a ?? b ?? c ?? 0 over token counts."""
    for value in values:
        if value is not None:
            return _count(value)
    return 0


def _read_json(call, response):
    data = call.json(response)
    if not isinstance(data, dict):
        raise call.fail("the answer is not a JSON object")
    if data.get("error"):
        raise call.fail(f"the server answered with an error: {server_message(json.dumps(data).encode(), call.redact)}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise call.fail("the answer has no choices")
    message = choices[0].get("message") or {}
    check(call, message.get("content"), message.get("refusal"), choices[0].get("finish_reason"),
          bool(message.get("tool_calls") or message.get("function_call")))
    return Answer(message["content"], data.get("model"), _usage(data.get("usage")), choices[0].get("finish_reason"))


def _read_stream(call, response):
    text, refusal, finish, model, usage, done, tool_call = [], [], None, None, None, False, False
    for _, event in call.events(response):
        if not isinstance(event, dict):
            continue
        if event.get("error"):
            error = event["error"]
            message = error.get("message") if isinstance(error, dict) else error
            raise call.fail(f"the server sent an error in the stream: {message}")
        model = event.get("model") or model
        if event.get("usage"):
            usage = _usage(event["usage"])
        for choice in event.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            if isinstance(delta.get("refusal"), str):
                refusal.append(delta["refusal"])
            tool_call = tool_call or bool(delta.get("tool_calls") or delta.get("function_call"))
            if choice.get("finish_reason"):
                finish = choice["finish_reason"]
                done = True
    if not done:
        raise call.fail("the stream ended before the answer was complete")
    content = "".join(text)
    check(call, content, "".join(refusal) or None, finish, tool_call)
    return Answer(content, model, usage, finish)


OK_FINISH = (None, "stop", "end", "tool_calls", "function_call")  # pi-ai's mapStopReason: not an error


def check(call, content, refusal, finish, tool_call=False):
    """pi 1.6.0's rules for a summary answer: a refusal, a filtered or unknown finish, an
    answer cut at the token cap (`length`) or one that calls a tool is an error."""
    if refusal:
        raise call.fail(f"the model refused: {refusal}")
    if finish == "content_filter":
        raise call.fail("the answer was withheld by the content filter")
    if finish == "length":
        raise call.fail("the answer hit the token cap and the summary is incomplete (finish_reason length)")
    if finish not in OK_FINISH:
        raise call.fail(f"the answer ended with finish_reason {finish}")
    if tool_call:
        raise call.fail("the model tried to call a tool instead of summarizing")
    if not isinstance(content, str) or not content.strip():
        raise call.fail(f"empty answer (finish_reason {finish})", hint="try another --model")
