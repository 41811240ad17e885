"""stree's config file: TOML in the platform config dir (e.g. ~/.config/stree/config.toml).

    provider = "openai"                 # openai | anthropic | extractive
    model = "llama3.1"
    base_url = "http://localhost:11434/v1"
    timeout = 120                       # seconds of server silence before giving up
    max_time = 600                      # seconds a whole request may take (retries, streaming)
    context_window = 128000
    stream = true
    system_prompt = "~/prompts/pi.md"   # context --as: the instructions (the session has none)
    tools = "~/prompts/tools.json"      # context --as: tool definitions (default: pi's built-in)
    catalog = "postgresql://me@db.example/stree"   # a team's shared catalogue (stree catalog)
    grep_server = true                  # a resident process answers plain greps (stree.grepserver)
    hook_env = ["EDITOR"]               # variables hooks see besides PATH, HOME, locale, TERM

    [anthropic]                         # used when that provider is chosen
    model = "claude-haiku-4-5"
"""

import sys

from .errors import UsageError

KEYS = {
    "provider": str, "model": str, "base_url": str, "api_key_env": str, "timeout": (int, float), "max_time": (int, float),
    "context_window": int, "stream": bool, "max_retries": int, "retry_max_time": (int, float),
    "max_tokens_field": str, "reasoning": bool, "thinking_level": str, "system_prompt": str, "tools": str,
    "catalog": str, "grep_server": bool,
    "hook_env": list,  # names of the variables passed on to hooks besides the basics (core.hooks)
}
SECTIONS = ("openai", "anthropic", "extractive")


def config_path():
    from pathlib import Path

    return Path(_config_file())


def _config_file():
    """config_path() as a str: a plain grep reads the config, and pathlib's import would cost it
    more than the reading."""
    import os

    if sys.platform.startswith("linux"):  # platformdirs' rule where it is plain, without importing it
        base, home = os.environ.get("XDG_CONFIG_HOME", ""), os.environ.get("HOME", "")  # (as core.hooks)
        if os.path.isabs(base):
            return os.path.join(base, "stree", "config.toml")
        if not base and os.path.isabs(home):
            return os.path.join(home, ".config", "stree", "config.toml")
    from platformdirs import user_config_dir

    return os.path.join(user_config_dir("stree"), "config.toml")


def _named(path):
    """The config file as a message names it: as pathlib writes it (imported only to say an error)."""
    from pathlib import Path

    return Path(path)


def _toml():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10 only
        import tomli as tomllib
    return tomllib


def load_config(path=None):
    """The config as a dict ({} when the file does not exist). Raises UsageError when invalid."""
    path = path or _config_file()
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise UsageError(f"{_named(path)}: cannot read the config file: {e.strerror}") from None
    tomllib = _toml()
    try:
        config = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise UsageError(f"{_named(path)}: invalid TOML: {e}", hint="fix or remove the config file") from None
    _check(config, path, "")
    for name in SECTIONS:
        if name in config:
            if not isinstance(config[name], dict):
                raise UsageError(f"{_named(path)}: [{name}] must be a table")
            _check(config[name], path, f"{name}.")
    return config


def grep_server():
    """Whether a plain grep asks the grep server (stree.grepserver): STREE_GREP_SERVER
    (1/true/yes/on: asked for; any other value: not), else the config's `grep_server`. A config
    that cannot be read is the grep's to say: not here. Read here, beside the config, so that a
    grep without the server loads none of its code."""
    import os

    value = os.environ.get("STREE_GREP_SERVER")
    if value is not None:
        return value.strip().lower() in ("1", "true", "yes", "on")
    try:
        return load_config().get("grep_server") is True
    except UsageError:
        return False


def _check(table, path, prefix):
    for key, value in table.items():
        if not prefix and key in SECTIONS:
            continue
        kind = KEYS.get(key)
        if kind is None:
            known = ", ".join(list(KEYS) + [f"[{s}]" for s in SECTIONS])
            raise UsageError(f"{_named(path)}: unknown setting {prefix}{key}", hint=f"known settings: {known}")
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise UsageError(f"{_named(path)}: {prefix}{key} has the wrong type ({type(value).__name__})")
        if kind is list and (prefix or not all(isinstance(v, str) for v in value)):
            raise UsageError(f"{_named(path)}: {prefix}{key} must be a top-level list of variable names")
