"""The column encoding of an index: each field of the Nodes stored as a typed column
(arrays, fixed-width or offset-indexed text, byte codes, marshal) in segments of rows,
written through an Area and read back, field by field, from a data area."""

import marshal
import os
from array import array
from bisect import bisect_left, bisect_right
from itertools import accumulate, repeat
from operator import add

from ..errors import BadFile
from . import register_counters
from .shape import positions

INT_FIELDS = ("offset", "length", "line", "index")
# values made from index columns (STREE_DEBUG_STATS): of text columns decoded whole or in chunks, of marshal parts
STATS = register_counters("columns", {"values": 0})


class Blobs:
    """The data area of one index file (checked whole when read, or stamped: stree.storage.index)."""

    def __init__(self, data, base=0):
        self.data = memoryview(data)
        self.base = base  # where the data area starts in the mapped file (index._data_area)

    def get(self, where):
        off, length = where
        return self.data[off:off + length]

    def release(self, where):
        """Give back the pages of a blob that was copied (decoded into an array, a list): mapped, they
        would stay in the command's memory (RSS) though never read again (MADV_DONTNEED: refaulted)."""
        area = self.data.obj
        advise = getattr(area, "madvise", None)
        if advise is None or where[1] < 1 << 16:
            return
        import mmap

        start = self.base + where[0]
        lo = start - start % mmap.PAGESIZE
        try:
            advise(mmap.MADV_DONTNEED, lo, start + where[1] - lo)
        except (OSError, ValueError, AttributeError):
            pass

    def raw(self, off, length):
        return bytes(self.data[off:off + length])


class Area:
    """A data area being built: put(blob) -> where it is, (offset, length)."""

    def __init__(self):
        self.chunks = []
        self.size = 0

    def put(self, data):
        where = (self.size, len(data))
        self.chunks.append(data)
        self.size += len(data)
        return where


class Parts(Blobs):
    """A data area kept as the parts it was written from (no joined copy); a blob spans one."""

    def __init__(self, parts):
        self.parts = [memoryview(p) for p in parts]
        self.starts = list(accumulate((len(p) for p in self.parts[:-1]), initial=0))

    def get(self, where):
        off, length = where
        k = bisect_right(self.starts, off) - 1
        rel = off - self.starts[k]
        return self.parts[k][rel:rel + length]

    def raw(self, off, length):
        return bytes(self.get((off, length)))

    def release(self, where):
        pass  # (not mapped)


STR_FIELDS = ("id", "parent", "ts")  # one value read without the others
CODE_FIELDS = ("type", "role")  # few distinct values: a byte per row
ARRAY_TYPES = {"offset": "q", "length": "I", "line": "I", "index": "I"}


class _Strings:
    """A column of str/None values as one NUL-separated UTF-8 text plus the byte
    offset of every value: one value is read without decoding the others."""

    def __init__(self, text, offsets, nones):
        self.text = text
        self.offsets = offsets
        self.nones = nones

    def value(self, i):
        if self.nones and i in self.nones:
            return None
        o = self.offsets
        return bytes(self.text[o[i]:o[i + 1] - 1]).decode("utf-8", "surrogatepass")

    def find(self, value, lo=0):
        """The last row >= lo holding `value`, or None."""
        needle = value.encode("utf-8", "surrogatepass") + b"\0"
        text = bytes(self.text) if self.text.__class__ is memoryview else self.text
        self.text = text
        o = self.offsets
        end = len(text)
        start = o[lo]
        while True:
            pos = text.rfind(needle, start, end)
            if pos < 0:
                return None
            if pos == 0 or text[pos - 1] == 0:  # a whole value, not the end of a longer one
                i = bisect_left(o, pos)
                if i < len(o) - 1 and o[i] == pos and not (self.nones and i in self.nones):
                    return i
            end = pos + len(needle) - 1

    def chunks(self, size):
        o = self.offsets
        n = len(o) - 1
        for i in range(0, n, size):
            j = min(n, i + size)
            out = bytes(self.text[o[i]:o[j]]).decode("utf-8", "surrogatepass").split("\0")
            out.pop()
            for r in self.nones:
                if i <= r < j:
                    out[r - i] = None
            STATS["values"] += len(out)
            yield out

    def values(self):
        out = bytes(self.text).decode("utf-8", "surrogatepass").split("\0")
        out.pop()
        STATS["values"] += len(out)
        for i in self.nones:
            out[i] = None
        return out


class _Fixed:
    """A column of ASCII values of one length: value i is bytes [i*w, (i+1)*w)."""

    def __init__(self, text, width, nones):
        self.text = text
        self.width = width
        self.nones = nones

    def value(self, i):
        if self.nones and i in self.nones:
            return None
        w = self.width
        return str(self.text[i * w:(i + 1) * w], "ascii")

    def find(self, value):
        """The last row holding `value`, or None (a mapped text: its last RECENT_ROWS first)."""
        w = self.width
        if len(value) != w or not value.isascii():
            return None
        needle = value.encode("ascii")
        text = self.text
        if text.__class__ is memoryview:  # the ids looked up are mostly recent: the others not copied
            lo = max(0, len(text) - w * RECENT_ROWS)  # (a multiple of w: the text holds whole values)
            pos = _rfind_row(bytes(text[lo:]), needle, w)
            if pos is not None:
                return (lo + pos) // w
            text = self.text = bytes(text)  # further back: the whole text, kept for the next search
        pos = _rfind_row(text, needle, w)
        return None if pos is None else pos // w

    def chunks(self, size):
        w = self.width
        n = len(self.text) // w
        for i in range(0, n, size):
            j = min(n, i + size)
            text = str(self.text[i * w:j * w], "ascii")
            out = [text[k:k + w] for k in range(0, len(text), w)]
            for r in self.nones:
                if i <= r < j:
                    out[r - i] = None
            STATS["values"] += len(out)
            yield out

    def values(self):
        w = self.width
        text = str(self.text, "ascii")
        out = [text[i:i + w] for i in range(0, len(text), w)]
        STATS["values"] += len(out)
        for i in self.nones:
            out[i] = None
        return out


RECENT_ROWS = 16384  # rows of a mapped fixed-width text searched before the whole (_Fixed.find)


def _rfind_row(text, needle, w):
    """The position of the last whole value `needle` (at a multiple of w) in `text`, or None."""
    pos = text.rfind(needle)
    while pos > 0 and pos % w:
        pos = text.rfind(needle, 0, pos + w - 1)
    return pos if pos >= 0 else None


class _Codes:
    """A column of few distinct values: one byte per row, an index into `vocab`."""

    def __init__(self, vocab, codes):
        self.vocab = vocab
        self.codes = codes

    def value(self, i):
        return self.vocab[self.codes[i]]

    def values(self):
        vocab = self.vocab
        return [vocab[c] for c in self.codes]

    def find(self, value):
        return None


class _SplitAux:
    """The aux column split in two (kind "a"): the values of the rows that are not messages
    (a label's target and name, a session name, a customType, ...: few rows, read often)
    apart from those of the messages (a toolCall id for nearly every row). A command that
    reads a label, the session name or a marker decodes the small part only."""

    def __init__(self, rows, other, messages):
        self.rows = rows  # the rows that are not messages, in order
        self._other = other  # (marshal data until first read) their values
        self._messages = messages  # every row's value, None for the rows above

    def _others(self):
        if self._other.__class__ is not list:
            self._other = marshal.loads(self._other)
            STATS["values"] += len(self._other)
        return self._other

    def _all_messages(self):
        if self._messages.__class__ is not list:
            self._messages = marshal.loads(self._messages)
            STATS["values"] += len(self._messages)
        return self._messages

    def value(self, i):
        rows = self.rows
        k = bisect_left(rows, i)
        if k < len(rows) and rows[k] == i:
            return self._others()[k]
        return self._all_messages()[i]

    def values(self, keep=True):  # (keep=False: the messages' values not kept decoded, for a walk: chunks())
        out = list(self._all_messages()) if keep or self._messages.__class__ is list else marshal.loads(self._messages)
        for r, v in zip(self.rows, self._others()):
            out[r] = v
        return out

    def find(self, value):
        return None


_VALUE_KINDS = (_Strings, _Codes, _Fixed, _SplitAux)


def decode_column(kind, blobs, where):
    if kind == "v":
        codes = _Codes(marshal.loads(blobs.get(where[0])), bytes(blobs.get(where[1])))
        blobs.release(where[1])
        return codes
    if kind == "f":
        text, width, nones = where
        return _Fixed(blobs.get(text), int.from_bytes(blobs.get(width), "little"),
                      set(marshal.loads(blobs.get(nones))))
    if kind == "a":
        rows = array("I")
        rows.frombytes(blobs.get(where[0]))
        blobs.release(where[0])
        return _SplitAux(rows, blobs.get(where[1]), blobs.get(where[2]))
    if kind == "s":
        text, offsets, nones = where
        o = array("I")
        o.frombytes(blobs.get(offsets))
        blobs.release(offsets)
        return _Strings(blobs.get(text), o, set(marshal.loads(blobs.get(nones))))
    data = blobs.get(where)
    if kind in ("q", "I", "i"):
        a = array(kind)
        a.frombytes(data)
        blobs.release(where)
        return a
    if kind == "b":
        data = bytes(data)
        blobs.release(where)
        return data
    values = marshal.loads(data)
    blobs.release(where)
    STATS["values"] += len(values) if values.__class__ is list else 1
    return values


class IndexColumns:
    """The columns of an index, decoded field by field on first use; one value of a
    text column (ids, parents, timestamps, ...) can be read without the others."""

    def __init__(self, blobs, segments, path):
        self.blobs = blobs
        self.segments = segments  # [(rows, {name: (kind, where)})]
        self.path = path
        self.starts = list(accumulate((rows for rows, _ in segments[:-1]), initial=0)) if segments else []
        self._raw = {}
        self._views = {}  # (name, segment) -> an integer column read in place (value())

    def _part(self, name, k):
        key = (name, k)
        got = self._raw.get(key)
        if got is None:
            kind, where = self.segments[k][1][name]
            got = self._raw[key] = decode_column(kind, self.blobs, where)
        return got

    def __call__(self, name):
        try:
            out = None
            kinds = {segment[name][0] for _, segment in self.segments}
            if len(self.segments) > 1 and len(kinds) == 1 and kinds <= {"q", "I", "i"}:  # one array, not int objects
                return array(kinds.pop(), b"".join(self._part(name, k).tobytes() for k in range(len(self.segments))))
            for k in range(len(self.segments)):
                part = self._part(name, k)
                if part.__class__ in _VALUE_KINDS:
                    part = part.values()
                elif part.__class__ is bytes:
                    part = [b == 1 for b in part]
                elif out is None and (part.__class__ is list or len(self.segments) > 1):
                    part = list(part)  # a copy: the caller may extend it, and value() reads the original
                if out is None:
                    out = part
                else:
                    out.extend(part)
            return out if out is not None else []
        except Exception as e:
            drop(self.path)  # the next command parses the file again
            raise BadFile(f"{self.path}: the index of this session is damaged ({type(e).__name__}); it was "
                          "removed: run the command again", hint="or pass --no-cache") from None

    def chunks(self, name, size=1 << 16):
        """The whole column as lists of at most about `size` values, made one after the other
        (a walk over every row that keeps none: fsck)."""
        try:
            for k in range(len(self.segments)):
                part = self._part(name, k)
                cls = part.__class__
                if cls is _Fixed or cls is _Strings:
                    yield from part.chunks(size)
                    continue
                if cls in _VALUE_KINDS:
                    part = part.values(keep=False) if cls is _SplitAux else part.values()
                elif cls is bytes:
                    part = [b == 1 for b in part]
                STATS["values"] += len(part)
                yield part
        except Exception as e:
            drop(self.path)
            raise BadFile(f"{self.path}: the index of this session is damaged ({type(e).__name__}); it was "
                          "removed: run the command again", hint="or pass --no-cache") from None

    def value(self, name, row):
        k = bisect_right(self.starts, row) - 1
        i = row - self.starts[k]
        view = self._views.get((name, k))
        if view is None and (name, k) not in self._raw and self.segments[k][1][name][0] in ("q", "I", "i"):
            kind, where = self.segments[k][1][name]  # an integer read in place: the column is not copied
            view = self._views[name, k] = self.blobs.get(where).cast(kind)
        if view is not None:
            return view[i]
        part = self._part(name, k)
        if part.__class__ in _VALUE_KINDS:
            return part.value(i)
        if part.__class__ is bytes:
            return part[i] == 1
        return part[i]

    def find(self, name, value):
        """The last row holding `value` in a text column, or None (not decoded)."""
        for k in range(len(self.segments) - 1, -1, -1):
            part = self._part(name, k)
            if part.__class__ is _Strings or part.__class__ is _Fixed:
                i = part.find(value)
            else:
                try:
                    i = len(part) - 1 - part[::-1].index(value)
                except ValueError:
                    i = None
            if i is not None:
                return self.starts[k] + i
        return None


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


def drop(target):
    """Remove a damaged index (the next load parses the file and writes a new one)."""
    try:
        os.unlink(target)
    except OSError:
        pass
