"""Which model summarizes, and how to call it.

Selection precedence: flags > STREE_PROVIDER/STREE_MODEL/STREE_BASE_URL > the config
file > the session's own model (when its provider is one stree reaches and its key is
set). Provider modules are imported only when a request is sent (httpx lives there).
"""

import importlib
import os
import re
from dataclasses import dataclass, field

from ..errors import UsageError, seconds

PROVIDERS = ("openai", "anthropic", "extractive")
DEFAULT_BASE_URL = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
# the only host a provider's own key variable (KEY_ENV) is ever sent to, over https; a key for
# any other server comes from the variable the config names for it (api_key_env)
KEY_HOST = {"openai": "api.openai.com", "anthropic": "api.anthropic.com"}
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
BASE_URL_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
# pi provider names whose API stree speaks with the same key variable
SESSION_PROVIDERS = {"openai": "openai", "anthropic": "anthropic"}

DEFAULT_TIMEOUT = 120.0
DEFAULT_MAX_TIME = 600.0  # seconds a whole request may take, retries and streaming included

# How big a model's answer may be, from the max tokens the request asked for (the one place
# these are set). A token is a few bytes of text; 64 bytes each leaves room for any tokenizer
# and still keeps a 4096-token summary under 256 KiB, far below what pi can read back (one
# JSONL line is one JavaScript string, at most 2**29 - 24 UTF-16 units in V8). A bigger answer
# is refused (exit 5), never written.
BYTES_PER_TOKEN = 64
# The HTTP body of that answer carries JSON and, streamed, an SSE event of ~200 bytes per
# piece of text: it may be 16 times the text, plus 1 MiB. Error bodies: 64 KiB are read.
FRAMING_FACTOR = 16
ERROR_BODY_LIMIT = 64 << 10


def answer_limit(max_tokens):
    """The most UTF-8 bytes a summary asked for with `max_tokens` may have."""
    return max(1, int(max_tokens or 0)) * BYTES_PER_TOKEN


def response_limit(max_tokens):
    """The most bytes an HTTP response to that request may have."""
    return answer_limit(max_tokens) * FRAMING_FACTOR + (1 << 20)
RESERVE_TOKENS = 16384  # pi's branchSummary.reserveTokens default
DEFAULT_CONTEXT_WINDOW = 128000  # pi: model.contextWindow || 128000

# context windows of common models (prefix match, longest first); pi reads them from its registry
CONTEXT_WINDOWS = [
    ("gpt-4.1", 1047576), ("gpt-4o", 128000), ("gpt-5", 400000), ("o1", 200000), ("o3", 200000),
    ("o4-mini", 200000), ("gpt-4-turbo", 128000), ("gpt-3.5-turbo", 16385),
    ("claude-", 200000), ("llama3.1", 131072), ("llama3.2", 131072), ("qwen2.5", 32768),
]


@dataclass
class Options:
    """Everything a summary request needs to know about the model and the transport."""

    provider: str = None
    model: str = None
    base_url: str = None
    api_key: str = field(default=None, repr=False)
    timeout: float = DEFAULT_TIMEOUT
    max_time: float = DEFAULT_MAX_TIME  # the whole request, retries included
    response_limit: int = None  # bytes of one HTTP response (set by complete() from max tokens)
    context_window: int = None
    stream: bool = True
    max_retries: int = 3
    retry_max_time: float = 60.0  # total seconds spent waiting between retries
    max_tokens_field: str = "max_completion_tokens"  # OpenAI: pi's default; some servers want max_tokens
    reasoning: bool = None  # a reasoning model? None: known model names (pi's registry flag)
    thinking_level: str = None  # the session's (pi's) thinking level, sent as the reasoning effort
    debug: bool = False
    withheld_key: str = None  # the key variable that was set but not sent (another host)
    source: str = ""  # where the provider choice came from, for messages

    def __post_init__(self):
        if self.provider is not None and self.provider not in PROVIDERS:
            raise UsageError(f"unknown provider {self.provider!r}", hint="choose one of " + ", ".join(PROVIDERS))

    @property
    def label(self):
        return f"{self.provider}/{self.model}" if self.model else str(self.provider)

    def window(self):
        if self.context_window:
            return self.context_window
        name = (self.model or "").rpartition("/")[2].lower()
        for prefix, size in sorted(CONTEXT_WINDOWS, key=lambda p: -len(p[0])):
            if name.startswith(prefix):
                return size
        return DEFAULT_CONTEXT_WINDOW


    def reasons(self):
        if self.reasoning is not None:
            return bool(self.reasoning)
        return is_reasoning_model(self.model)


# models pi's registry marks as reasoning (OpenAI o-series and GPT-5; Claude 3.7 and 4 on)
REASONING_MODELS = re.compile(r"(o[134]|gpt-[5-9]|claude-(3-7|(sonnet|opus|haiku|fable)-[4-9]|[4-9]))")


def is_reasoning_model(model):
    """Whether pi's registry marks the model id as a reasoning model (known names only)."""
    name = (model or "").rpartition("/")[2].lower() if isinstance(model, str) else ""
    return bool(REASONING_MODELS.match(name)) and not name.startswith("gpt-5-chat")


def instructions_role(reasoning, provider=None, base_url=None):
    """The role of the instructions (system prompt) in an OpenAI chat-completions request, by
    pi-ai 1.6.0's rule (detectCompat's supportsDeveloperRole): "developer" for a reasoning
    model of OpenAI itself, that is pi's provider "openai" or a base URL on api.openai.com;
    "system" for every other OpenAI-compatible server (Groq, vLLM, Ollama, proxies...).
    The one rule `summarize`, `checkout --summarize`, serve's navigate_tree and the
    requests of `context --as openai` follow."""
    is_openai = provider == "openai" or "api.openai.com" in (base_url or "")
    return "developer" if reasoning and is_openai else "system"
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


def reasoning_level(options):
    """The reasoning effort a summary request carries (pi: the session's thinking level, for
    a reasoning model, unless off), or None."""
    level = options.thinking_level
    if not options.reasons() or level in (None, "off") or level not in THINKING_LEVELS:
        return None
    return level


@dataclass
class Request:
    system: str
    user: str
    max_tokens: int
    entries: list = field(default_factory=list, repr=False)  # loaded entries, for extractive
    reasoning: str = None  # the reasoning effort (thinking level), for a reasoning model
    thinking_budget: int = None  # Anthropic: budget_tokens with reasoning


@dataclass
class Answer:
    text: str
    model: str = None
    usage: dict = None
    stop_reason: str = None


def zero_cost():
    """pi-ai's usage.cost: stree knows no prices, so every figure is 0 (as pi's for an unpriced model)."""
    return {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0, "totalFromProvider": False}


def nothing_usable(config_file):
    return UsageError(
        "no model to summarize with: none given and the session's model is not reachable",
        hint="pass --provider openai|anthropic --model ID (keys from OPENAI_API_KEY / ANTHROPIC_API_KEY), "
             "set STREE_PROVIDER and STREE_MODEL, write provider/model in "
             f"{config_file}, or use --provider extractive (offline, no model)")


def resolve_options(flags=None, session_model=None, config=None, config_file=None, environ=None,
                    session_thinking=None):
    """Options from flags (a dict: provider, model, base_url, timeout, context_window, stream),
    the environment, the config file and the session's model (pi's {provider, modelId})."""
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    env = os.environ if environ is None else environ
    if config is None:
        from ..config import config_path, load_config

        config_file = config_file or config_path()
        config = load_config(config_file)
    config_file = config_file or "the config file"

    provider, source = None, ""
    for value, where in ((flags.get("provider"), "--provider"), (env.get("STREE_PROVIDER"), "STREE_PROVIDER"),
                         (config.get("provider"), str(config_file))):
        if value:
            provider, source = value, where
            break
    session = session_model or {}
    session_provider = SESSION_PROVIDERS.get(session.get("provider"))
    if provider is None and session_provider and env.get(KEY_ENV[session_provider]) and session.get("modelId"):
        provider, source = session_provider, "the session's model"
    if provider is None:
        raise nothing_usable(config_file)
    if provider not in PROVIDERS:
        raise UsageError(f"unknown provider {provider!r} (from {source})",
                         hint="choose one of " + ", ".join(PROVIDERS))

    # config: top-level settings belong to the configured provider; [provider] tables to theirs
    settings = {}
    if config.get("provider") in (None, provider):
        settings.update({k: v for k, v in config.items() if k not in PROVIDERS})
    settings.update(config.get(provider, {}))
    settings.pop("provider", None)

    def pick(name, env_name=None):
        if name in flags:
            return flags[name]
        if env_name and env.get(env_name):
            return env[env_name]
        return settings.get(name)

    model = pick("model", "STREE_MODEL")
    if model is None and session_provider == provider:
        model = session.get("modelId")
    base_url = pick("base_url", "STREE_BASE_URL")
    url_from = "--base-url" if "base_url" in flags else "STREE_BASE_URL" if env.get("STREE_BASE_URL") \
        else f"{config_file}: base_url"
    if base_url is None and provider in BASE_URL_ENV:
        url_from = BASE_URL_ENV[provider]
        base_url = env.get(url_from) or DEFAULT_BASE_URL[provider]
    if base_url is not None and provider != "extractive":
        check_base_url(base_url, url_from)
    options = Options(provider=provider, model=model, base_url=base_url, source=source,
                      debug=bool(flags.get("debug")))
    for name, env_name in (("timeout", "STREE_TIMEOUT"), ("max_time", "STREE_MAX_TIME")):
        value = pick(name, env_name)
        if value is not None:
            where = "--timeout" if name in flags else env_name if env.get(env_name) else f"{config_file}: {name}"
            setattr(options, name, seconds(value, where))
    options.thinking_level = session_thinking if session_thinking in THINKING_LEVELS else None
    for name in ("context_window", "stream", "max_retries", "retry_max_time", "max_tokens_field", "reasoning",
                 "thinking_level"):
        value = pick(name)
        if value is not None:
            setattr(options, name, value)
    if options.reasoning is not None and not isinstance(options.reasoning, bool):
        raise UsageError("reasoning must be true or false")
    if options.thinking_level not in (None, *THINKING_LEVELS):
        raise UsageError(f"thinking_level must be one of {', '.join(THINKING_LEVELS)}")
    if options.context_window is not None and options.context_window <= RESERVE_TOKENS:
        raise UsageError(f"context_window must be more than {RESERVE_TOKENS} tokens (pi reserves that many)")
    if options.max_retries < 0 or not 0 <= options.retry_max_time < float("inf"):  # (nan fails both)
        raise UsageError("max_retries and retry_max_time cannot be negative (nor retry_max_time inf or nan)")
    if options.max_tokens_field not in ("max_completion_tokens", "max_tokens"):
        raise UsageError("max_tokens_field must be max_completion_tokens or max_tokens")

    if provider == "extractive":
        return options
    if not model:
        raise UsageError(f"no model for provider {provider}",
                         hint="pass --model ID, set STREE_MODEL, or set model in " + str(config_file))
    key_env = settings.get("api_key_env")
    if key_env:  # the config names the key for its server: sent wherever base_url points
        options.api_key = env.get(key_env) or None
    else:
        key_env = KEY_ENV[provider]
        if own_host(provider, base_url):
            options.api_key = env.get(key_env) or None
        elif env.get(key_env):
            options.withheld_key = key_env  # e.g. OPENAI_API_KEY never goes to a local Ollama
    if options.api_key is None and base_url.rstrip("/") == DEFAULT_BASE_URL[provider]:
        raise UsageError(f"{key_env} is not set: {provider} needs an API key",
                         hint="export the key, point --base-url at a server that needs none, "
                              "or use --provider extractive (offline)")
    return options


def own_host(provider, url):
    """Whether `url` is the provider's own API host, over https (where its key may go)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        return parts.scheme == "https" and parts.hostname == KEY_HOST.get(provider) and parts.port in (None, 443)
    except ValueError:
        return False


def check_base_url(url, where):
    """An http(s) URL with a host and a valid port, and no whitespace or control character
    (a newline would split the request line); else a UsageError naming where it came from."""
    from urllib.parse import urlsplit

    problem = None
    if not isinstance(url, str) or any(c.isspace() or ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 for c in url):
        problem = "contains whitespace or a control character"
    else:
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError on a bad port
            if parts.scheme not in ("http", "https"):
                problem = "is not an http:// or https:// URL"
            elif not parts.hostname:
                problem = "has no host"
        except ValueError as e:
            problem = f"is not a valid URL ({e})"
    if problem:
        raise UsageError(f"{where}: the base URL {url!r} {problem}",
                         hint="e.g. https://api.openai.com/v1 or http://localhost:11434/v1")


def complete(options, request):
    """Send the request to the chosen provider; returns an Answer or raises StreeError(code=5).
    An answer bigger than answer_limit(request.max_tokens) is refused: nothing gets written."""
    from dataclasses import replace

    from ..errors import MODEL, StreeError

    module = importlib.import_module(f"{__name__}.{options.provider}")
    options = replace(options, response_limit=response_limit(request.max_tokens))
    answer = module.complete(options, request)
    limit = answer_limit(request.max_tokens)
    if isinstance(answer.text, str) and len(answer.text) > limit // 4 and \
            len(answer.text.encode("utf-8", "surrogatepass")) > limit:
        raise StreeError(f"{options.provider}: the answer is {len(answer.text.encode('utf-8', 'surrogatepass'))} "
                         f"bytes, more than a summary of {request.max_tokens} tokens can be ({limit} bytes); "
                         "nothing written", code=MODEL, hint="the server ignored the max tokens asked for: "
                         "check --base-url and --model")
    return answer
