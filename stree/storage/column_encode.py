"""The writing side of an index's columns (stree.storage.columns reads them): each field of the
Nodes encoded as a typed column (arrays, fixed-width or offset-indexed text, byte codes, marshal)."""

import marshal
from itertools import accumulate, repeat
from operator import add

from ..format.stdlib import array
from .shape import positions

INT_FIELDS = ("offset", "length", "line", "index")
STR_FIELDS = ("id", "parent", "ts")  # one value read without the others
CODE_FIELDS = ("type", "role")  # few distinct values: a byte per row
ARRAY_TYPES = {"offset": "q", "length": "I", "line": "I", "index": "I"}


def _fixed(strings, nones, put):
    """The "f" encoding when every value is as long as the others (ids, timestamps): no
    offsets needed; a missing value is a run of NULs, which no value holds."""
    width = 0
    for v in strings[:len(nones) + 1]:
        if v:
            width = len(v)
            break
    n = len(strings)
    if not width or n * width >= 1 << 31:
        return None
    if nones:
        strings = list(strings)
        for i in nones:
            strings[i] = "\0" * width
    # one pass over the values (the join); the checks run on the joined text: a separator
    # exactly every width + 1 characters and nowhere else means every value has that width
    text = "\1".join(strings)
    if len(text) != n * (width + 1) - 1 or text.count("\1") != n - 1 or text[width::width + 1] != "\1" * (n - 1):
        return None
    text = text.replace("\1", "")
    if text.count("\0") != len(nones) * width:
        return None
    return "f", (put(text.encode("ascii")), put(width.to_bytes(4, "little")), put(marshal.dumps(nones, 4)))


def encode_column(name, values, put, types=None):
    """(kind, where) of one column of a segment, its blobs written through put(); `types`, the
    segment's type column, splits the aux column (_SplitAux)."""
    if name == "aux" and types is not None and len(types) == len(values) and len(values) < 1 << 32:
        from itertools import compress
        from operator import ne

        rows = array("I", compress(range(len(types)), map(ne, types, repeat("message"))))
        messages = list(values)
        other = []
        for r in rows:
            other.append(messages[r])
            messages[r] = None
        try:
            return "a", (put(rows.tobytes()), put(marshal.dumps(other, 4)), put(marshal.dumps(messages, 4)))
        except ValueError:  # not marshallable: the error of the plain encoding below
            pass
    if name in INT_FIELDS:
        kind = ARRAY_TYPES[name]
        if kind == "I" and values and max(values) >= 1 << 32:
            kind = "q"
        return kind, put(array(kind, values).tobytes())
    if name == "hidden":
        return "b", put(bytes(map(bool, values)))
    if values.__class__ is not list:
        values = list(values)
    if name in CODE_FIELDS:
        try:
            vocab = list(dict.fromkeys(values))
        except TypeError:  # a role that is not a str (any JSON value): marshal below
            vocab = [{}]
        if len(vocab) <= 255 and all(v is None or v.__class__ is str for v in vocab):
            code = {v: i for i, v in enumerate(vocab)}
            return "v", (put(marshal.dumps(vocab, 4)), put(bytes(map(code.__getitem__, values))))
    if name in STR_FIELDS:
        nones = positions(values, None)
        try:
            fixed = _fixed(values, nones, put)
        except (TypeError, UnicodeEncodeError):  # not all str, or not ASCII
            fixed = None
        if fixed is not None:
            return fixed
        strings = values
        if nones:
            strings = list(values)
            for i in nones:
                strings[i] = ""
        try:
            joined = "\0".join(strings) + "\0"  # (a value that is not a str: TypeError, marshal below)
        except TypeError:
            joined = None
        if joined is not None:
            if joined.count("\0") == len(strings) and len(joined) < 1 << 30:  # no NUL in a value; 32-bit offsets
                if joined.isascii():
                    text = joined.encode("ascii")
                    sizes = map(len, strings)
                else:
                    text = joined.encode("utf-8", "surrogatepass")
                    sizes = (len(v.encode("utf-8", "surrogatepass")) for v in strings)
                offsets = array("I", [0])
                offsets.extend(accumulate(map(add, sizes, repeat(1))))
                return "s", (put(text), put(offsets.tobytes()), put(marshal.dumps(nones, 4)))
    return "m", put(marshal.dumps(values, 4))
