"""pi-ai 1.6.0's tool-call id normalization for OpenAI chat completions (an id from the
Responses API, "call|item", becomes "call_item", at most 40 characters)."""

import re

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_M32 = 0xFFFFFFFF


def _imul(a, b):
    r = (a * b) & _M32
    return r


def _base36(n):
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if n == 0:
        return "0"
    out = []
    while n:
        n, r = divmod(n, 36)
        out.append(digits[r])
    return "".join(reversed(out))


def short_hash(text):
    """pi-ai's shortHash (over UTF-16 code units)."""
    h1, h2 = 3735928559, 1103547991
    units = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(units), 2):
        ch = units[i] | units[i + 1] << 8
        h1 = _imul(h1 ^ ch, 2654435761)
        h2 = _imul(h2 ^ ch, 1597334677)
    h1 = _imul(h1 ^ (h1 >> 16), 2246822507) ^ _imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = _imul(h2 ^ (h2 >> 16), 2246822507) ^ _imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2 & _M32) + _base36(h1 & _M32)


def openai_tool_call_id(id, target):
    if "|" in id:
        call, _, item = id.partition("|")
        call, item = _UNSAFE.sub("_", call), _UNSAFE.sub("_", item)
        combined = f"{call}_{item}" if item else call
        if len(combined) <= 40:
            return combined
        h = short_hash(id)[:8]
        return f"{call[:max(1, 40 - len(h) - 1)]}_{h}"
    return id[:40] if target.provider == "openai" and len(id) > 40 else id
