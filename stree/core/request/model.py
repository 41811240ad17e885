"""The model a request is for (pi-ai's Model, as far as the request needs it), the tools it
offers, and pi-ai 1.6.0's token arithmetic: the context estimate, max_tokens, reasoning."""

import json
import math
from dataclasses import dataclass
from pathlib import Path

from ...format.jsjson import stringify
from ...providers import DEFAULT_BASE_URL, instructions_role, is_reasoning_model

APIS = {"openai": "openai-completions", "anthropic": "anthropic-messages"}
DEFAULT_MAX_TOKENS = 16384  # pi's models.json default (maxTokens ?? 16384)
DEFAULT_CONTEXT_WINDOW = 128000  # (contextWindow ?? 128e3)
DEFAULT_TOOLS = ("read", "bash", "edit", "write")  # pi's active tools unless told otherwise
LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}  # pi-ai's thinking budgets


@dataclass(frozen=True)
class Target:
    """The model a request goes to. `api`: "openai" or "anthropic"; `provider`: pi's provider
    name (None: a server of no known provider); `reasoning`: pi's registry flag (None: guessed
    from the model id, as `summarize` does); `images`: whether the model reads images."""

    api: str
    id: str = None
    provider: str = None
    base_url: str = None
    reasoning: bool = False
    images: bool = True
    max_tokens: int = DEFAULT_MAX_TOKENS
    context_window: int = DEFAULT_CONTEXT_WINDOW

    @property
    def pi_api(self):
        return APIS[self.api]

    def host_has(self, *parts):
        url = (self.base_url or "").lower()
        return any(p in url for p in parts)

    def is_provider(self, *names):
        return self.provider in names

    @property
    def instructions_role(self):
        return instructions_role(self.reasoning, self.provider, self.base_url)


def make_target(api, session_model=None, model=None, provider=None, base_url=None, max_tokens=None,
                reasoning=None, images=True, context_window=None):
    """The Target of a request: `model`/`provider`/`base_url` as given, else the session's
    model ({provider, modelId}) with its provider, on the API's own server by default."""
    if api not in APIS:
        raise ValueError(f"api must be one of {', '.join(APIS)}, not {api!r}")
    session_model = session_model or {}
    if model is None:
        model = session_model.get("modelId")
        if provider is None and model is not None:
            provider = session_model.get("provider")
    if base_url is None:
        base_url = DEFAULT_BASE_URL[api]
        if provider is None:
            provider = api  # the API's own server is its provider's
    if reasoning is None:
        reasoning = is_reasoning_model(model)
    return Target(api=api, id=model, provider=provider, base_url=base_url, reasoning=bool(reasoning),
                  images=images, max_tokens=int(max_tokens or DEFAULT_MAX_TOKENS),
                  context_window=int(context_window or DEFAULT_CONTEXT_WINDOW))


def clamp_thinking(target, level):
    """pi-ai's clampThinkingLevel for a model without a thinkingLevelMap: a reasoning model
    has off..high (xhigh and max need a map), any other only off."""
    available = LEVELS[:5] if target.reasoning else ("off",)
    if level in available:
        return level
    if level not in LEVELS:
        return available[0]
    i = LEVELS.index(level)
    for candidate in LEVELS[i:]:
        if candidate in available:
            return candidate
    for candidate in reversed(LEVELS[:i]):
        if candidate in available:
            return candidate
    return "off"


def budget_for(level):
    return BUDGETS["high" if level in ("xhigh", "max") else level]


# -- tools ---------------------------------------------------------------------

_BUILTIN = None


def builtin_tools():
    """pi 1.6.0's built-in tool definitions ({name, description, parameters}), by name."""
    global _BUILTIN
    if _BUILTIN is None:
        path = Path(__file__).resolve().parent.parent.parent / "data" / "tools.json"
        _BUILTIN = {t["name"]: t for t in json.loads(path.read_text(encoding="utf-8"))}
    return _BUILTIN


def permissive_tool(name):
    """A tool the session calls that stree does not know: any arguments are accepted."""
    return {"name": name, "description": f"The {name} tool.",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": True}}


def offered_tools(tools, called):
    """The tools a request offers: `tools` (None: pi's default read, bash, edit, write), then
    every tool named in `called` (in order) that is not among them, from pi's built-in
    definitions or else with a permissive schema."""
    known = builtin_tools()
    out = [known[n] for n in DEFAULT_TOOLS] if tools is None else list(tools)
    names = {t.get("name") for t in out if isinstance(t, dict)}
    for name in called:
        if isinstance(name, str) and name not in names:
            names.add(name)
            out.append(known.get(name) or permissive_tool(name))
    return out


# -- pi-ai's context estimate and max_tokens -----------------------------------

CHARS_PER_TOKEN = 3.5
IMAGE_CHARS = 4800


def js_len(text):
    """A JavaScript string's length (UTF-16 code units)."""
    if not isinstance(text, str):
        return 0
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def _tokens(chars):
    return math.ceil(chars / CHARS_PER_TOKEN)


def _content_chars(content):
    if isinstance(content, str):
        return js_len(content)
    chars = 0
    for b in content if isinstance(content, list) else []:
        chars += js_len(b.get("text")) if isinstance(b, dict) and b.get("type") == "text" else IMAGE_CHARS
    return chars


def _tools_tokens(tools):
    return _tokens(js_len(stringify(tools))) if tools else 0


def estimate_tokens(msg, system_text=None):
    """pi-ai's estimateMessageTokens of one context message."""
    role = msg.get("role")
    if role == "system":
        text = system_text if system_text is not None else ""
        return _tokens(js_len(text)) + _tools_tokens(msg.get("toolsAdded")) + _tools_tokens(msg.get("toolsRemoved"))
    if role in ("user", "toolResult"):
        return _tokens(_content_chars(msg.get("content")))
    chars = 0
    for b in msg.get("content") if isinstance(msg.get("content"), list) else []:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text":
            chars += js_len(b.get("text"))
        elif b.get("type") == "thinking":
            chars += js_len(b.get("thinking"))
        else:
            chars += js_len(b.get("name")) + js_len(stringify(b.get("arguments")) if "arguments" in b else "undefined")
    return _tokens(chars)


def _number(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else float("nan")


def _usage_tokens(usage):
    if not isinstance(usage, dict):
        return 0
    total = _number(usage.get("totalTokens"))
    if total == total and total:
        return total
    parts = [_number(usage.get(k)) for k in ("input", "output", "cacheRead", "cacheWrite")]
    s = sum(parts)
    return s if s == s else 0


class Estimate:
    """pi-ai's estimateContextTokens, kept as messages are added: the last usable assistant
    usage plus the estimates of the messages after it."""

    def __init__(self):
        self.sums = [0]  # prefix sums of the message estimates
        self.latest = float("-inf")  # the newest timestamp so far (NaN once one is not a number)
        self.usage_at = None  # (index, tokens) of the last usable assistant usage

    def add(self, msg, system_text=None):
        i = len(self.sums) - 1
        if msg.get("role") == "assistant":
            ts = _number(msg.get("timestamp"))
            tokens = _usage_tokens(msg.get("usage"))
            if ts >= self.latest and msg.get("stopReason") not in ("aborted", "error") and tokens > 0:
                self.usage_at = (i, tokens)
        ts = _number(msg.get("timestamp"))
        self.latest = ts if ts != ts or self.latest != self.latest else max(self.latest, ts)
        self.sums.append(self.sums[-1] + estimate_tokens(msg, system_text))

    def tokens(self):
        if self.usage_at is None:
            return self.sums[-1]
        i, usage = self.usage_at
        return usage + self.sums[-1] - self.sums[i + 1]


def clamp_max_tokens(target, input_tokens, max_tokens):
    """pi-ai's clampMaxTokensToContext."""
    window = target.context_window
    if window <= 0:
        return max(1, max_tokens)
    margin = max(4096, math.ceil(input_tokens * 0.15))
    room = window - input_tokens - margin
    if room < 32768:
        room = min(32768, window - input_tokens - 4096)
    return min(max_tokens, max(1, room))
