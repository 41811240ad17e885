"""Strings as JavaScript sees them (UTF-16 lengths and slices, String(v), trim) and the
text of a content value."""

from .decode import JS_WHITESPACE


def js_trim(s):
    return s.strip(JS_WHITESPACE)


def js_len(s):
    """String length in UTF-16 code units, as JavaScript counts."""
    if s.isascii():
        return len(s)
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def js_slice(s, n):
    """s.slice(0, n) in UTF-16 code units."""
    if s.isascii() or js_len(s) == len(s):
        return s[:n]
    out = []
    units = 0
    for c in s:
        w = 2 if ord(c) > 0xFFFF else 1
        if units + w > n:
            if units < n:  # JS would keep half a surrogate pair; keep a replacement char
                out.append("\ufffd")
            break
        out.append(c)
        units += w
    return "".join(out)


def js_string(v):
    """String(v) for JSON values."""
    if v.__class__ is str:
        return v
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e21:
            return str(int(v))
        return repr(v)
    if isinstance(v, list):
        return ",".join("" if x is None else js_string(x) for x in v)
    if isinstance(v, dict):
        return "[object Object]"
    return str(v)


def js_json(v):
    return (_COMPACT[0] if _COMPACT else _compact())(v)


_COMPACT = []  # JSONEncoder(...).encode (json.dumps makes one a call), once used (json imports re)


def _compact():
    import json

    _COMPACT.append(json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode)
    return _COMPACT[0]


def normalize(s):
    return js_trim(s.replace("\n", " ").replace("\t", " "))


def extract_content(content, max_len=200):
    """pi's TreeList.extractContent: text blocks joined, cut at 200 chars."""
    if isinstance(content, str):
        return js_slice(content, max_len)
    if isinstance(content, list):
        result = ""
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                text = block.get("text")
                result += text if isinstance(text, str) else js_string(text)
                if js_len(result) >= max_len:
                    return js_slice(result, max_len)
        return result
    return ""


def full_text(content):
    """All text blocks of a content value, joined (no cut)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content
                       if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str))
    return ""
