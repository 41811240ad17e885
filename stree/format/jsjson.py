"""JavaScript's JSON.stringify and Object.entries for values from JSON.parse.

pi builds summary text with JSON.stringify; Python's json.dumps differs on numbers
(1.0, 1e-7, 1e21), on key order (JS lists integer-like keys first) and on lone surrogates.
"""

from .patterns import pattern

_INDEX_KEY = pattern(r"0|[1-9][0-9]*")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_PAIR = pattern("[\ud800-\udbff][\udc00-\udfff]")
_NEEDS_ESCAPE = pattern('["\\\\\x00-\x1f\ud800-\udfff]')


def _is_index(key):
    return bool(_INDEX_KEY().fullmatch(key)) and int(key) < 4294967295


def entries(obj):
    """Object.entries(obj): array-index keys ascending, then the rest in insertion order."""
    items = list(obj.items())
    if not any(_is_index(k) for k, _ in items):
        return items
    indexed = sorted(((k, v) for k, v in items if _is_index(k)), key=lambda kv: int(kv[0]))
    return indexed + [(k, v) for k, v in items if not _is_index(k)]


def number(x):
    """Number.prototype.toString for a JSON number (ints beyond 2**53 become doubles, as in JS)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int) and abs(x) <= 2 ** 53:
        return str(x)
    x = float(x)
    if x != x or x in (float("inf"), float("-inf")):
        return "null"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mantissa, _, exp = repr(abs(x)).partition("e")
    int_part, _, frac = mantissa.partition(".")
    digits = (int_part + frac).lstrip("0")
    # n: position of the decimal point relative to the digits (JS spec's n)
    n = len(int_part.lstrip("0")) if int_part.strip("0") else -(len(frac) - len(frac.lstrip("0")))
    n += int(exp) if exp else 0
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    exp_text = ("+" if e >= 0 else "-") + str(abs(e))
    if k == 1:
        return sign + digits + "e" + exp_text
    return sign + digits[0] + "." + digits[1:] + "e" + exp_text


def _string(s):
    if not _NEEDS_ESCAPE().search(s):
        return '"' + s + '"'

    def esc(m):
        c = m.group(0)
        return _ESCAPES.get(c) or f"\\u{ord(c):04x}"
    return '"' + _NEEDS_ESCAPE().sub(esc, _pair_surrogates(s)) + '"'


def _pair_surrogates(s):
    # a well-formed surrogate pair in a Python str is two code points; JS prints it as one character
    return _PAIR().sub(lambda m: (m.group(0).encode("utf-16", "surrogatepass").decode("utf-16")), s)


def stringify(value):
    """JSON.stringify(value) for JSON-parsed data (compact)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (int, float)):
        return number(value)
    if isinstance(value, list):
        return "[" + ",".join(stringify(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(_string(str(k)) + ":" + stringify(v) for k, v in entries(value)) + "}"
    import json

    return json.dumps(value)
