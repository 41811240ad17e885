"""JavaScript's view of a JSON value where pi's text depends on it: truthiness, Number(value),
a number as a template string shows it, `${value}` and Array.prototype.join."""

import math

from .jsjson import number
from .patterns import pattern
from .text import js_string, js_trim

_RADIX = pattern(r"0([xXoObB])([0-9a-fA-F]+)")
_DECIMAL = pattern(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|Infinity)")


def truthy(v):
    return v not in (None, "", 0, False) and not (isinstance(v, float) and math.isnan(v))


def to_number(text):
    """JavaScript's Number(string): NaN when it is not a number literal."""
    t = js_trim(text)
    if not t:
        return 0.0
    m = _RADIX().fullmatch(t)
    if m:
        return float(int(m.group(2), {"x": 16, "o": 8, "b": 2}[m.group(1).lower()]))
    if not _DECIMAL().fullmatch(t):
        return math.nan
    if t.lstrip("+-") == "Infinity":
        return -math.inf if t.startswith("-") else math.inf
    return float(t)


def number_of(value, present=True):
    """JavaScript's Number(value) for a JSON value (arithmetic on a field): a float."""
    if not present:
        return math.nan
    if value is None or value is False:
        return 0.0
    if value is True:
        return 1.0
    if value.__class__ in (int, float):
        return float(value)
    if isinstance(value, str):
        return to_number(value)
    if isinstance(value, list):  # via its string: [] -> 0, [5] -> 5
        return to_number(js_string(value))
    return math.nan


def number_text(x):
    """A number as JavaScript prints it (Infinity included)."""
    if x.__class__ is float and math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return number(x)


def template(value, present=True):
    """`${value}` in a template string: a missing field reads `undefined`."""
    return js_string(value) if present else "undefined"


def joined(value):
    """A value as Array.prototype.join shows it: null and undefined become ""."""
    return "" if value is None else js_string(value)
