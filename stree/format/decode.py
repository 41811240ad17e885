"""JSON as pi reads it: JSON.parse of one line (lossy UTF-8, no NaN, every number a double,
no depth limit), and JavaScript's whitespace."""

import sys

# JavaScript's String.prototype.trim() whitespace (Python's strip() differs on \x1c-\x1f, \x85)
JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008" \
                "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def reject_constant(name):
    raise ValueError(f"{name} is not JSON")  # JSON.parse refuses NaN/Infinity, so do we


def _parse_int(text):
    # JSON.parse reads every number as a double; Python refuses ints over 4300 digits
    return int(text) if len(text) < 4000 else float(text)


class _Decoding:
    """What Python's C JSON scanner reads of a json.JSONDecoder (its options), without importing
    the json package: that imports re (with enum), about a tenth of a patched `log --graph`
    (stree.output.keptgraph.patch), which decodes a line or two."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float

    def __init__(self, parse_int, parse_constant):
        self.parse_int = parse_int
        self.parse_constant = parse_constant


def make_scanner(exact=True):
    """scan(text, start) -> (value, end) as the scan_once of json.JSONDecoder(parse_constant=
    reject_constant, parse_int=_parse_int) (`exact`; else parse_int=int: Python's int(), at C
    speed, for a caller that limits its digits): Python's C scanner, or json's own where it has none.
    The C scanner raises its JSONDecodeError from json.decoder: before the json package is
    imported, a line it cannot read raises SystemError instead (the caller reads it again with
    decoder(), whose error is the one said)."""
    parse_int = _parse_int if exact else int
    try:
        from _json import make_scanner as c_scanner
    except ImportError:  # (a Python without the C accelerator)
        import json.scanner

        return json.scanner.make_scanner(json.JSONDecoder(parse_constant=reject_constant, parse_int=parse_int))
    return c_scanner(_Decoding(parse_int, reject_constant))


_SCAN = make_scanner()
_JSON_SPACE = " \t\n\r"
_DECODER = []


def decoder():
    """The stdlib decoder with JSON.parse's reading (its errors are the reference)."""
    if not _DECODER:
        import json

        _DECODER.append(json.JSONDecoder(parse_constant=reject_constant, parse_int=_parse_int))
    return _DECODER[0]


def loads(text):
    """decoder().decode(text), scanned by the C scanner without the json package; a line it
    cannot read is given to the json package's decoder, whose error is the one raised."""
    start = 0
    if text[:1] in _JSON_SPACE:
        start = len(text) - len(text.lstrip(_JSON_SPACE))
    try:
        obj, end = _SCAN(text, start)
    except (StopIteration, SystemError):  # (SystemError: an error the C scanner says through
        return decoder().decode(text)     #  json.decoder, which only the json package imports)
    if end != len(text) and text[end:].strip(_JSON_SPACE):
        return decoder().decode(text)  # (raises JSONDecodeError: "Extra data")
    return obj


# The fast decoder (stree.format.fastjson: msgspec, when installed) answers for a line only when
# it reads it as JSON.parse does, with int() limited to FAST_INT_DIGITS while it runs (it then
# refuses a longer integer, which the exact decoder reads as a double); whatever it refuses goes
# to the exact decoder. Its import costs about 11 ms: a process takes it once it has decoded
# FAST_AFTER lines, for a long scan (stree.storage.scan), or when msgspec is already imported.
FAST_INT_DIGITS = 3998
FAST_AFTER = 200
PICKED = []  # [(loads, errors) or None] once picked (the tests reset it)
_waited = [0]


def fast_decoder(now=False):
    """The fast decoder's (loads, errors), or None: not installed, turned off (STREE_JSON=pure),
    not worth its import yet, or no int limit to lean on (Python < 3.11). `now`: worth it."""
    if PICKED:
        return PICKED[0]
    if not now and "msgspec" not in sys.modules:
        if not _waited[0]:
            from . import fastjson

            now = fastjson.wanted() == "msgspec"  # the tests: always
        _waited[0] += 1
        if not now and _waited[0] < FAST_AFTER:
            return None
    from . import fastjson

    picked = fastjson.pick() if hasattr(sys, "get_int_max_str_digits") else None
    PICKED.append(picked[1:] if picked else None)
    return PICKED[0]


def decode_line(raw):
    """Parse one line as pi does (JSON.parse after a lossy UTF-8 decode): the fast decoder
    where it agrees, else the exact one."""
    fast = PICKED[0] if PICKED else fast_decoder()
    if fast is not None:
        digits = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(FAST_INT_DIGITS)
        try:
            obj = fast[0](raw)
        except fast[1]:
            obj = None
        finally:
            sys.set_int_max_str_digits(digits)
        if obj is not None:
            return obj
    return decode_exact(raw)


def decode_exact(raw):
    """Parse one line as pi does, with the stdlib decoder (the reference the fast one agrees with)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
    try:
        return loads(text)
    except RecursionError:
        return decode_deep(text)  # JSON.parse has no depth limit; neither may we


def decode_deep(text):
    """A JSON decoder without recursion, for lines nested deeper than Python's stack allows."""
    import re
    from json.decoder import scanstring

    _WS = re.compile(r"[ \t\n\r]*")
    _NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
    stack = []  # open containers: [container, pending key or None]
    pos = _WS.match(text, 0).end()
    value_done = False
    result = None
    while True:
        if value_done:
            pos = _WS.match(text, pos).end()
            if not stack:
                if pos != len(text):
                    raise ValueError(f"Extra data: line 1 column {pos + 1}")
                return result
            frame = stack[-1]
            c = text[pos:pos + 1]
            if c == ",":
                pos = _WS.match(text, pos + 1).end()
                if isinstance(frame[0], dict):
                    pos = _read_key(text, pos, frame, _WS, scanstring)
                value_done = False
                continue
            closer = "}" if isinstance(frame[0], dict) else "]"
            if c != closer:
                raise ValueError(f"Expecting ',' delimiter: line 1 column {pos + 1}")
            stack.pop()
            result = frame[0]
            pos += 1
            if stack:
                _attach(stack[-1], result)
            continue
        c = text[pos:pos + 1]
        if c in ("{", "["):
            frame = [{} if c == "{" else [], None]
            pos = _WS.match(text, pos + 1).end()
            if text[pos:pos + 1] == ("}" if c == "{" else "]"):
                pos += 1
                result = frame[0]
                if stack:
                    _attach(stack[-1], result)
                value_done = True
                continue
            stack.append(frame)
            if c == "{":
                pos = _read_key(text, pos, frame, _WS, scanstring)
            continue
        if c == '"':
            value, pos = scanstring(text, pos + 1)
        elif text.startswith("true", pos):
            value, pos = True, pos + 4
        elif text.startswith("false", pos):
            value, pos = False, pos + 5
        elif text.startswith("null", pos):
            value, pos = None, pos + 4
        else:
            m = _NUMBER.match(text, pos)
            if not m:
                raise ValueError(f"Expecting value: line 1 column {pos + 1}")
            value = float(m.group(0)) if m.group(1) or m.group(2) else _parse_int(m.group(0))
            pos = m.end()
        result = value
        if stack:
            _attach(stack[-1], value)
        value_done = True


def _read_key(text, pos, frame, ws, scanstring):
    if text[pos:pos + 1] != '"':
        raise ValueError(f"Expecting property name enclosed in double quotes: line 1 column {pos + 1}")
    key, pos = scanstring(text, pos + 1)
    pos = ws.match(text, pos).end()
    if text[pos:pos + 1] != ":":
        raise ValueError(f"Expecting ':' delimiter: line 1 column {pos + 1}")
    frame[1] = key
    return ws.match(text, pos + 1).end()


def _attach(frame, value):
    if isinstance(frame[0], dict):
        frame[0][frame[1]] = value
    else:
        frame[0].append(value)
