"""The request pi-ai 1.6.0 would send at an entry, for the OpenAI chat-completions and
Anthropic messages APIs: pi's context (core.context), convertToLlm (core.convert), then
pi-ai's transformMessages and the provider's convertMessages and buildParams.

The session stores neither the system prompt nor the tool definitions: `system_prompt`
(text) and `tools` ([{name, description, parameters}]) give them; without `tools`, pi's
default tools (read, bash, edit, write, from stree/data/tools.json) are offered, unless the
context's own system messages declare tools, and every other tool the context calls is
added (pi's definition, or a permissive schema for a tool stree does not know). The
context's system messages (pi >= 1.5 and a compaction store them) join them as pi sends them.

    request_at(tree, entry_id, api="openai")       the body at an entry (None: empty context)
    requests_along(tree, leaf_id, api="anthropic")  (assistant id, body at its parent) for
                                                    each assistant message on the path, the
                                                    converted prefix built once and extended

Bodies share their message objects with each other: treat them as read-only.
"""

from ..context import build_context, entry_messages, entry_model
from ..convert import content_text, convert_to_llm, system_prompt as collapse_system
from . import anthropic, openai
from .model import (APIS, Estimate, Target, budget_for, clamp_max_tokens, clamp_thinking, estimate_tokens,
                    make_target, offered_tools)
from .transform import Transcript

__all__ = ["APIS", "Target", "make_target", "request_at", "requests_along", "session_tools", "Builder"]


def _system_text(msg):
    """pi-ai's getSystemMessageText of one system message."""
    parts = [content_text(msg.get("content"))]
    sections = msg.get("sections")
    if isinstance(sections, dict):
        parts += [v for v in sections.values() if isinstance(v, str)]
    return "\n\n".join(p for p in parts if p)


class Builder:
    """The converted context for one target, extended message by message (add), and the
    request body at any point (body)."""

    def __init__(self, target, system_prompt=None, tools=None):
        self.target = target
        self.system_prompt = system_prompt or ""
        self.tools = tools
        self.compat = openai.compat(target) if target.api == "openai" else None
        out = openai.Messages(target, self.compat) if target.api == "openai" else anthropic.Messages(target)
        self.transcript = Transcript(target, out)
        self.systems = []  # the context's own system messages
        self.called = []  # names of the tools the context calls, in order
        self._called = set()
        self.estimate = Estimate()
        self.estimate.latest = 0  # pi-ai's first system message (time 0) comes before all

    def add(self, msg):
        """Add one message of pi's context, after convertToLlm."""
        if not isinstance(msg, dict):
            return
        role = msg.get("role")
        if role == "system":
            self.systems.append(msg)
            self.estimate.add(msg, _system_text(msg))
            return
        if role == "assistant" and isinstance(msg.get("content"), list):
            for b in msg["content"]:
                if isinstance(b, dict) and b.get("type") == "toolCall":
                    name = b.get("name")
                    if isinstance(name, str) and name not in self._called:
                        self._called.add(name)
                        self.called.append(name)
        self.estimate.add(msg)
        self.transcript.add(msg)

    def body(self, thinking_level="off"):
        """The request body now: the context so far, for the session's thinking level."""
        t = self.target
        declared = {tool.get("name") for m in self.systems for tool in m.get("toolsAdded") or []
                    if isinstance(tool, dict)}
        # the context declares its tools (pi >= 1.5's system messages): pi's defaults are not added
        base = [] if self.tools is None and declared else self.tools
        tools = offered_tools(base, [name for name in self.called if name not in declared])
        initial = {"role": "system", "content": self.system_prompt, "toolsAdded": tools} \
            if self.system_prompt or tools else None
        text, request_tools = collapse_system(([initial] if initial else []) + self.systems)
        input_tokens = self.estimate.tokens()
        if initial and self.estimate.usage_at is None:
            input_tokens += estimate_tokens(initial, self.system_prompt)
        level = clamp_thinking(t, thinking_level)
        messages = self.transcript.snapshot()
        if t.api == "openai":
            max_tokens = clamp_max_tokens(t, input_tokens, t.max_tokens)
            body = openai.body(t, self.compat, text, request_tools, messages, max_tokens, level)
        else:
            budget = None
            max_tokens = clamp_max_tokens(t, input_tokens, t.max_tokens)
            if level != "off":  # pi-ai's adjustMaxTokensForThinking, then the clamp again
                budget = budget_for(level)
                adjusted = min(max_tokens + budget, t.max_tokens)
                if adjusted <= budget:
                    budget = min(budget, max(0, adjusted - 1024))
                max_tokens = clamp_max_tokens(t, input_tokens, adjusted)
                budget = min(budget, max(0, max_tokens - 1024))
            body = anthropic.body(t, text, request_tools, messages, max_tokens, level, budget)
        if body.get("model") is None:
            del body["model"]  # (JSON.stringify leaves out an undefined model id)
        return body


def _target(api, session_model, model, provider, base_url, max_tokens):
    return make_target(api, session_model, model=model, provider=provider, base_url=base_url, max_tokens=max_tokens)


def request_at(tree, entry_id, *, api, model=None, provider=None, base_url=None, system_prompt=None, tools=None,
               max_tokens=None):
    """The body pi-ai would send with the context at `entry_id` (None: the empty context).
    `api`: "openai" or "anthropic"; `model`, `provider` (pi's provider name), `base_url`:
    the model asked (default: the session's model at that entry, on the API's own server);
    `max_tokens`: the model's output limit (default 16384, pi's for a model it does not know)."""
    context = tree.build_context(entry_id) if entry_id is not None else \
        {"messages": [], "thinkingLevel": "off", "model": None}
    builder = Builder(_target(api, context["model"], model, provider, base_url, max_tokens), system_prompt, tools)
    for msg in convert_to_llm(context["messages"]):
        builder.add(msg)
    return builder.body(context["thinkingLevel"])


def session_tools(tree, leaf_id, tools=None):
    """The tools of every request on the path to `leaf_id`: `tools` (None: pi's defaults)
    plus every other tool an assistant message on the path calls (pi's definition, or a
    permissive schema), in order of first call. Without it a request offers only the tools
    called before it; `requests_along(..., tools=session_tools(tree, leaf))` offers at every
    turn what the agent had all along (a replayed turn may call a tool first called later)."""
    called = []
    for node in tree.path(leaf_id) if leaf_id is not None else []:
        if node.type != "message" or node.role != "assistant":
            continue
        content = (tree.load(node).get("message") or {}).get("content")
        for b in content if isinstance(content, list) else []:
            if isinstance(b, dict) and b.get("type") == "toolCall" and b.get("name") not in called:
                called.append(b.get("name"))
    return offered_tools(tools, called)


def requests_along(tree, leaf_id, *, api, model=None, provider=None, base_url=None, system_prompt=None, tools=None,
                   max_tokens=None):
    """(assistant entry id, request_at(its parent)) for each assistant message on the path
    from the root to `leaf_id`, in path order. The converted context is built once and
    extended entry by entry; it is rebuilt only where pi's context is not a plain extension
    (a compaction, a context edit) or the target model changes (no `model`: the session's)."""
    if leaf_id is None:
        return
    loaded, edited = [], set()
    thinking, session_model = "off", None
    builder, stale = None, True
    for node in tree.path(leaf_id):
        entry = tree.load(node)
        etype = entry.get("type")
        msg = entry.get("message")
        assistant = etype == "message" and msg.__class__ is dict and msg.get("role") == "assistant"
        if assistant:
            target = _target(api, session_model, model, provider, base_url, max_tokens)
            if stale or builder.target != target:
                builder = Builder(target, system_prompt, tools)
                for m in convert_to_llm(build_context(loaded)["messages"]):
                    builder.add(m)
                stale = False
            yield entry.get("id"), builder.body(thinking)
        loaded.append(entry)
        if etype == "thinking_level_change":
            thinking = entry.get("thinkingLevel")
        elif etype == "model_change":
            session_model = entry_model(entry)
        elif assistant:
            session_model = {k: msg[f] for k, f in (("provider", "provider"), ("modelId", "model")) if f in msg}
        if etype == "context_edit":
            edited.add(entry.get("targetId"))
            stale = True
        elif etype == "compaction" or entry.get("id") in edited:
            stale = True
        elif not stale:
            for m in convert_to_llm(entry_messages(entry)):
                builder.add(m)
