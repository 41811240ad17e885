"""pi-ai 1.6.0's openai-completions convertMessages and buildParams, with the defaults
detectCompat gives a server: messages added one at a time, the body taken at any point. The
same API one layer down, the body sent over HTTP: stree.providers.openai."""

import json

from ...format.jsjson import stringify
from .transform import blocks, sanitize, text_of

REASONING_FIELDS = ("reasoning", "reasoning_content", "reasoning_text")


def compat(target):
    """The parts of pi-ai's detectCompat a request of stree's depends on."""
    t = target
    deepseek = t.is_provider("deepseek") or t.host_has("deepseek.com")
    zai = t.is_provider("zai", "zai-coding-cn") or t.host_has("api.z.ai", "open.bigmodel.cn")
    together = t.is_provider("together") or t.host_has("api.together.ai", "api.together.xyz")
    moonshot = t.is_provider("moonshotai", "moonshotai-cn") or t.host_has("api.moonshot.")
    openrouter = t.is_provider("openrouter") or t.host_has("openrouter.ai")
    cf_workers = t.is_provider("cloudflare-workers-ai") or t.host_has("api.cloudflare.com")
    cf_gateway = t.is_provider("cloudflare-ai-gateway") or t.host_has("gateway.ai.cloudflare.com")
    nvidia = t.is_provider("nvidia") or t.host_has("integrate.api.nvidia.com")
    ant_ling = t.is_provider("ant-ling") or t.host_has("api.ant-ling.com")
    cerebras = t.is_provider("cerebras") or t.host_has("cerebras.ai")
    grok = t.is_provider("xai") or t.host_has("api.x.ai")
    non_standard = (nvidia or cerebras or grok or together or t.host_has("chutes.ai") or deepseek or zai or moonshot
                    or t.is_provider("opencode") or t.host_has("opencode.ai") or cf_workers or cf_gateway or ant_ling)
    max_tokens = t.host_has("chutes.ai") or deepseek or moonshot or cf_gateway or together or nvidia or ant_ling or zai
    return {
        "store": not non_standard,
        "reasoning_effort": not (grok or zai or moonshot or together or cf_gateway or nvidia or ant_ling),
        "max_tokens_field": "max_tokens" if max_tokens else "max_completion_tokens",
        "reasoning_content": deepseek,
        "thinking_format": "deepseek" if deepseek else "zai" if zai else "together" if together
        else "ant-ling" if ant_ling else "openrouter" if openrouter else "openai",
    }


def _reasoning_detail(d):
    if not isinstance(d, dict):
        return False
    if not (d.get("id") is None or isinstance(d.get("id"), str)) or \
            not ("format" not in d or isinstance(d["format"], str)) or \
            not ("index" not in d or (isinstance(d["index"], (int, float)) and not isinstance(d["index"], bool))):
        return False
    kind = d.get("type")
    if kind == "reasoning.summary":
        return isinstance(d.get("summary"), str)
    if kind == "reasoning.encrypted":
        return isinstance(d.get("data"), str)
    if kind == "reasoning.text":
        return isinstance(d.get("text"), str) and (d.get("signature") is None or isinstance(d["signature"], str))
    return False


def _parse(signature):
    if not signature or not isinstance(signature, str):
        return None
    try:
        return json.loads(signature)
    except ValueError:
        return None


def reasoning_details(signature):
    parsed = _parse(signature)
    return parsed if isinstance(parsed, list) and parsed and all(map(_reasoning_detail, parsed)) else None


def legacy_detail(signature):
    d = _parse(signature)
    ok = _reasoning_detail(d) and d.get("type") == "reasoning.encrypted" and isinstance(d.get("id"), str) \
        and d["id"] and d["data"]
    return d if ok else None


def _image_url(b):
    return {"type": "image_url", "image_url": {"url": f"data:{_js(b.get('mimeType'))};base64,{_js(b.get('data'))}"}}


def _js(value):
    return "undefined" if value is None else value if isinstance(value, str) else stringify(value)


class Messages:
    """convertMessages, incrementally: add(msg) for each transformed message after the
    system message, snapshot(tail) for the messages so far plus a tail of tool results."""

    def __init__(self, target, compat_):
        self.target = target
        self.compat = compat_
        self.done = []
        self.run_images = []  # images of the current run of tool results
        self.in_run = False

    def _end_run(self):
        if self.run_images:
            self.done.append(self._images_message(self.run_images))
        self.run_images, self.in_run = [], False

    @staticmethod
    def _images_message(images):
        return {"role": "user", "content": [{"type": "text", "text": "Attached image(s) from tool result:"}, *images]}

    def _tool(self, msg):
        content = blocks(msg.get("content"))
        text = "\n".join(text_of(b) for b in content if b.get("type") == "text")
        images = [b for b in content if b.get("type") == "image"]
        shown = text if text.strip() else "(see attached image)" if images else "(no tool output)"
        out = {"role": "tool", "content": sanitize(shown), "tool_call_id": msg.get("toolCallId")}
        return out, [_image_url(b) for b in images] if images and self.target.images else []

    def add(self, msg):
        role = msg.get("role")
        if role != "toolResult" and self.in_run:
            self._end_run()
        if role == "user":
            content = msg.get("content")
            if isinstance(content, str):
                self.done.append({"role": "user", "content": sanitize(content)})
                return
            parts = [{"type": "text", "text": sanitize(b["text"])} if b.get("type") == "text" else _image_url(b)
                     for b in blocks(content) if b.get("type") != "text" or text_of(b)]
            if parts:
                self.done.append({"role": "user", "content": parts})
        elif role == "assistant":
            out = self._assistant(msg)
            if out is not None:
                self.done.append(out)
        elif role == "toolResult":
            tool, images = self._tool(msg)
            self.done.append(tool)
            self.run_images.extend(images)
            self.in_run = True

    def _assistant(self, msg):
        content = blocks(msg.get("content"))
        out = {"role": "assistant", "content": None}
        text = "".join(sanitize(text_of(b)) for b in content if b.get("type") == "text" and text_of(b).strip())
        thinking = [b for b in content if b.get("type") == "thinking"]
        calls = [b for b in content if b.get("type") == "toolCall"]
        signed = next((d for d in (reasoning_details(b.get("thinkingSignature")) for b in thinking) if d is not None),
                      None)
        legacy = [d for d in (legacy_detail(c.get("thoughtSignature")) for c in calls) if d is not None]
        preserved = signed if signed is not None else legacy or None
        nonempty = [b for b in thinking if isinstance(b.get("thinking"), str) and b["thinking"].strip()]
        if text:
            out["content"] = text
        if nonempty and not preserved:
            signature = nonempty[0].get("thinkingSignature")
            if self.target.provider == "opencode-go" and signature == "reasoning":
                signature = "reasoning_content"
            if signature in REASONING_FIELDS:
                out[signature] = "\n".join(b["thinking"] for b in nonempty)
        if calls:
            out["tool_calls"] = [self._call(c) for c in calls]
        if preserved:
            out["reasoning_details"] = preserved
        if self.compat["reasoning_content"] and self.target.reasoning and "reasoning_content" not in out:
            out["reasoning_content"] = ""
        if not out["content"] and "tool_calls" not in out:
            return None
        return out

    @staticmethod
    def _call(c):
        function = {"name": c.get("name")}
        if "arguments" in c:
            function["arguments"] = stringify(c["arguments"])
        return {"id": c.get("id"), "type": "function", "function": function}

    def snapshot(self, tail):
        out = list(self.done)
        images = list(self.run_images)
        in_run = self.in_run
        for msg in tail:
            tool, more = self._tool(msg)
            out.append(tool)
            images.extend(more)
            in_run = True
        if in_run and images:
            out.append(self._images_message(images))
        return out


def convert_tools(tools):
    return [{"type": "function", "function": {"name": t.get("name"), "description": t.get("description"),
                                              "parameters": t.get("parameters")}}
            for t in tools if isinstance(t, dict)]


def body(target, c, system_text, tools, messages, max_tokens, level):
    """buildParams: the request body (without prompt_cache_key, pi's session id for OpenAI's
    own API: a cache hint stree leaves out)."""
    head = [{"role": target.instructions_role, "content": sanitize(system_text)}] if system_text else []
    params = {"model": target.id, "messages": head + messages, "stream": True}
    params["stream_options"] = {"include_usage": True}
    if c["store"]:
        params["store"] = False
    if max_tokens:
        params[c["max_tokens_field"]] = max_tokens
    if tools:
        params["tools"] = convert_tools(tools)
    if target.reasoning:
        effort = level if level != "off" else None
        fmt = c["thinking_format"]
        if fmt == "openrouter":
            params["reasoning"] = {"effort": effort or "none"}
        elif fmt == "deepseek":
            params["thinking"] = {"type": "enabled" if effort else "disabled"}
            if effort and c["reasoning_effort"]:
                params["reasoning_effort"] = effort
        elif fmt == "together":
            params["reasoning"] = {"enabled": bool(effort)}
        elif fmt == "zai":
            params["thinking"] = {"type": "enabled", "clear_thinking": False} if effort else {"type": "disabled"}
        elif fmt == "openai" and effort and c["reasoning_effort"]:
            params["reasoning_effort"] = effort
    return params
