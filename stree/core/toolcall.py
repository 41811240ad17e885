"""pi's formatToolCall: a tool call as its /tree row and export name it (`[read: ~/f.py:10-29]`).

Below the entry types' table (stree.core.entrytypes): a message's preview and its parts
(stree.core.entryparts) name the calls a message makes or answers."""

import math
import os

from ..format.jsvalue import number_text, to_number, truthy
from ..format.text import js_json, js_len, js_slice, js_string, js_trim


def shorten_path(p):
    """pi's shortenHomePath (1.5): `~` only for an absolute path inside $HOME, both normalised."""
    if not p.startswith("/"):
        return p  # (before the environment is asked: a first graph shortens every call's path)
    home = os.environ.get("HOME") or os.environ.get("USERPROFILE") or ""
    if not home:
        return p
    home = _RESOLVED.get(home) or _resolve(home)
    path = p if "//" not in p and "/." not in p and not p.endswith("/") else _resolve(p)  # (already normal)
    if path == home:
        return "~"
    inside = home if home.endswith("/") else home + "/"
    if not path.startswith(inside):
        return p
    return "~/" + path[len(inside):]


def _resolve(p):
    """node's path.posix.resolve: absolute, normalised, no trailing slash."""
    import posixpath

    absolute = p.startswith("/")
    given = p
    if not absolute:
        p = posixpath.join(os.getcwd(), p)
    p = posixpath.normpath(p)
    p = "/" + p.lstrip("/") if p.startswith("//") else p
    if absolute and len(_RESOLVED) < 16:
        _RESOLVED[given] = p  # (the same $HOME resolved once, not at every call)
    return p


_RESOLVED = {}  # absolute paths ($HOME among them) -> _resolve()'s answer


def _line_number(value):
    """pi's parseLineNumber: finite numbers and numeric strings, else None."""
    if isinstance(value, str) and js_trim(value):
        value = to_number(value)
        if value.__class__ is float and value.is_integer() and abs(value) <= 2 ** 53:
            value = int(value)
    if value.__class__ in (int, float) and math.isfinite(value):
        return value
    return None


def read_line_range(offset, limit):
    """pi's formatReadLineRange (1.3): `:10-29`, `:10`, or "" (null ignored, junk dropped)."""
    if offset is None and limit is None:
        return ""
    start = 1 if offset is None else _line_number(offset)
    if start is None:
        return ""
    if limit is None:
        return f":{number_text(start)}"
    count = _line_number(limit)
    if count is None:
        return ""
    end = start + count - 1
    if end.__class__ is int and abs(end) > 2 ** 53:
        end = float(start) + float(count) - 1  # JavaScript adds doubles
    return f":{number_text(start)}" + (f"-{number_text(end)}" if end else "")


def format_tool_call(name, args):
    """pi's formatToolCall: `[read: ~/f.py:10-29]`, `[bash: git status]`, ..."""
    if not isinstance(args, dict):
        args = {}
    if name == "read":
        return f"[read: {_path_arg(args)}{read_line_range(args.get('offset'), args.get('limit'))}]"
    if name in ("write", "edit"):
        return f"[{name}: {_path_arg(args)}]"
    if name == "bash":
        raw = js_string(args["command"]) if truthy(args.get("command")) else ""
        cmd = js_slice(js_trim(raw.replace("\n", " ").replace("\t", " ")), 50)
        return f"[bash: {cmd}{'...' if js_len(raw) > 50 else ''}]"
    if name == "grep":
        pattern = js_string(args["pattern"]) if truthy(args.get("pattern")) else ""
        path = shorten_path(js_string(args["path"])) if truthy(args.get("path")) else "."
        return f"[grep: /{pattern}/ in {path}]"
    if name == "find":
        pattern = js_string(args["pattern"]) if truthy(args.get("pattern")) else ""
        path = shorten_path(js_string(args["path"])) if truthy(args.get("path")) else "."
        return f"[find: {pattern} in {path}]"
    if name == "ls":
        path = shorten_path(js_string(args["path"])) if truthy(args.get("path")) else "."
        return f"[ls: {path}]"
    text = js_json(args)
    return f"[{name}: {js_slice(text, 40)}{'...' if js_len(text) > 40 else ''}]"


def _path_arg(args):
    """The path a read, write or edit call names (`path`, else `file_path`), shortened."""
    for k in ("path", "file_path"):
        if truthy(args.get(k)):
            return shorten_path(js_string(args[k]))
    return ""


def tool_calls(message):
    """(id, name, arguments) of each toolCall block in an assistant message."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [(b.get("id"), b.get("name"), b.get("arguments")) for b in content
            if isinstance(b, dict) and b.get("type") == "toolCall"]
