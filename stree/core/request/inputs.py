"""The system prompt and tool definitions of a request, from --system-prompt FILE and
--tools FILE, else the config's `system_prompt` and `tools` (paths), else none and pi's
default tools."""

import json
from pathlib import Path

from ...errors import UsageError


def read_system_prompt(path, where="--system-prompt"):
    try:
        return Path(path).expanduser().read_text(encoding="utf-8")
    except OSError as e:
        raise UsageError(f"{path}: cannot read the system prompt ({where}): {e.strerror}",
                         hint="give a text file with the instructions pi would send") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: the system prompt ({where}) is not UTF-8 text") from None


def read_tools(path, where="--tools"):
    """A JSON array of {name, description, parameters} (pi's tool definitions; `stree context
    --as ...` offers them exactly, plus any tool the session calls that is not among them)."""
    hint = 'give a JSON array like [{"name": "read", "description": "...", "parameters": {"type": "object", ...}}]'
    try:
        tools = json.loads(Path(path).expanduser().read_bytes())
    except OSError as e:
        raise UsageError(f"{path}: cannot read the tools ({where}): {e.strerror}", hint=hint) from None
    except ValueError as e:
        raise UsageError(f"{path}: the tools ({where}) are not valid JSON: {e}", hint=hint) from None
    if not isinstance(tools, list):
        raise UsageError(f"{path}: the tools ({where}) must be a JSON array", hint=hint)
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or \
                not isinstance(tool.get("parameters", {}), dict):
            raise UsageError(f"{path}: tool {i} ({where}) needs a string name and an object of parameters", hint=hint)
        tool.setdefault("description", "")
        tool.setdefault("parameters", {"type": "object", "properties": {}})
    return tools


def request_inputs(system_prompt_file=None, tools_file=None, config=None):
    """(system prompt text or None, tools or None) from the files given, else the config."""
    if config is None:
        from ...config import load_config

        config = load_config()
    system_prompt = tools = None
    if system_prompt_file is not None:
        system_prompt = read_system_prompt(system_prompt_file)
    elif config.get("system_prompt"):
        system_prompt = read_system_prompt(config["system_prompt"], "config: system_prompt")
    if tools_file is not None:
        tools = read_tools(tools_file)
    elif config.get("tools"):
        tools = read_tools(config["tools"], "config: tools")
    return system_prompt, tools
