"""The column encoding of an index: each field of the Nodes stored as a typed column
(arrays, fixed-width or offset-indexed text, byte codes, marshal) in segments of rows,
written through an Area (stree.storage.column_encode) and read back, field by field, from a
data area, each value checked where it is read (stree.storage.area)."""

import marshal
import os
from bisect import bisect_left, bisect_right
from itertools import accumulate

from ..format.stdlib import array
from ..errors import BadFile
from . import register_counters
from .area import Area, Blobs, Damaged, Parts  # noqa: F401 (Area, Blobs, Parts: where index and parallel find them)
from .column_encode import encode_column  # noqa: F401 (the writing side: where index and parallel find it)

# values made from index columns (STREE_DEBUG_STATS): of text columns decoded whole or in chunks, of marshal parts
STATS = register_counters("columns", {"values": 0})


def _no_check(off, length):
    pass


class _Strings:
    """A column of str/None values as one NUL-separated UTF-8 text plus the byte
    offset of every value: one value is read without decoding the others. `check(off, n)`:
    raises stree.storage.area.Damaged unless bytes [off, off + n) of the text are as written."""

    def __init__(self, text, offsets, nones, check=_no_check):
        self.text = text
        self.offsets = offsets
        self.nones = nones
        self.check = check

    def value(self, i):
        if self.nones and i in self.nones:
            return None
        o = self.offsets
        self.check(o[i], o[i + 1] - o[i])
        return bytes(self.text[o[i]:o[i + 1] - 1]).decode("utf-8", "surrogatepass")

    def find(self, value, lo=0):
        """The last row >= lo holding `value`, or None."""
        needle = value.encode("utf-8", "surrogatepass") + b"\0"
        self.check(0, len(self.text))
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
            self.check(o[i], o[j] - o[i])
            out = bytes(self.text[o[i]:o[j]]).decode("utf-8", "surrogatepass").split("\0")
            out.pop()
            for r in self.nones:
                if i <= r < j:
                    out[r - i] = None
            STATS["values"] += len(out)
            yield out

    def values(self):
        self.check(0, len(self.text))
        out = bytes(self.text).decode("utf-8", "surrogatepass").split("\0")
        out.pop()
        STATS["values"] += len(out)
        for i in self.nones:
            out[i] = None
        return out


class _Fixed:
    """A column of ASCII values of one length: value i is bytes [i*w, (i+1)*w)."""

    def __init__(self, text, width, nones, check=_no_check):
        self.text = text
        self.width = width
        self.nones = nones
        self.check = check  # (as _Strings')

    def value(self, i):
        if self.nones and i in self.nones:
            return None
        w = self.width
        self.check(i * w, w)
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
            self.check(lo, len(text) - lo)
            pos = _rfind_row(bytes(text[lo:]), needle, w)
            if pos is not None:
                return (lo + pos) // w
            self.check(0, lo)
            text = self.text = bytes(text)  # further back: the whole text, kept for the next search
        pos = _rfind_row(text, needle, w)
        return None if pos is None else pos // w

    def chunks(self, size):
        w = self.width
        n = len(self.text) // w
        for i in range(0, n, size):
            j = min(n, i + size)
            self.check(i * w, (j - i) * w)
            text = str(self.text[i * w:j * w], "ascii")
            out = [text[k:k + w] for k in range(0, len(text), w)]
            for r in self.nones:
                if i <= r < j:
                    out[r - i] = None
            STATS["values"] += len(out)
            yield out

    def values(self):
        w = self.width
        self.check(0, len(self.text))
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
        self._other = other  # ((blobs, where) of their marshal data until first read) their values
        self._messages = messages  # every row's value, None for the rows above

    def _others(self):
        if self._other.__class__ is tuple:
            blobs, where = self._other
            self._other = marshal.loads(blobs.get(where))
            STATS["values"] += len(self._other)
        return self._other

    def _all_messages(self):
        if self._messages.__class__ is tuple:
            blobs, where = self._messages
            self._messages = marshal.loads(blobs.get(where))
            STATS["values"] += len(self._messages)
        return self._messages

    def value(self, i):
        rows = self.rows
        k = bisect_left(rows, i)
        if k < len(rows) and rows[k] == i:
            return self._others()[k]
        return self._all_messages()[i]

    def values(self, keep=True):  # (keep=False: the messages' values not kept decoded, for a walk: chunks())
        out = list(self._all_messages()) if keep or self._messages.__class__ is list \
            else marshal.loads(self._messages[0].get(self._messages[1]))
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
    if kind == "f":  # (the text read in place: what is read of it checked, stree.storage.area)
        text, width, nones = where
        return _Fixed(blobs.view(text), int.from_bytes(blobs.get(width), "little"),
                      set(marshal.loads(blobs.get(nones))), _checker(blobs, text))
    if kind == "a":
        rows = array("I")
        rows.frombytes(blobs.get(where[0]))
        blobs.release(where[0])
        return _SplitAux(rows, (blobs, where[1]), (blobs, where[2]))
    if kind == "s":
        text, offsets, nones = where
        o = array("I")
        o.frombytes(blobs.get(offsets))
        blobs.release(offsets)
        return _Strings(blobs.view(text), o, set(marshal.loads(blobs.get(nones))), _checker(blobs, text))
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


def _checker(blobs, where):
    base = where[0]
    check = blobs.check
    return lambda off, length: check(base + off, length)


class IndexColumns:
    """The columns of an index, decoded field by field on first use; one value of a
    text column (ids, parents, timestamps, ...) can be read without the others. Bytes found
    damaged where they are read (stree.storage.area.Damaged): every column is then taken
    from `again()` ({field: the values of the index's rows}, parsed from the file again)."""

    def __init__(self, blobs, segments, path, again=None):
        self.blobs = blobs
        self.segments = segments  # [(rows, {name: (kind, where)})]
        self.path = path
        self.starts = list(accumulate((rows for rows, _ in segments[:-1]), initial=0)) if segments else []
        self._raw = {}
        self._views = {}  # (name, segment) -> an integer column read in place (value()), and where it is
        self._again = again
        self._parsed = None

    def _part(self, name, k):
        key = (name, k)
        got = self._raw.get(key)
        if got is None:
            kind, where = self.segments[k][1][name]
            got = self._raw[key] = decode_column(kind, self.blobs, where)
        return got

    def _damaged(self, e):
        """The columns parsed again (or the error of a damaged index when they cannot be)."""
        parsed = self._again() if self._again is not None else None
        if parsed is None:
            self._broken(e)
        self._parsed = parsed

    def _broken(self, e):
        drop(self.path)  # the next command parses the file again
        raise BadFile(f"{self.path}: the index of this session is damaged ({type(e).__name__}); it was "
                      "removed: run the command again", hint="or pass --no-cache") from None

    def _whole(self, name):
        values = self._parsed[name]
        kinds = {segment[name][0] for _, segment in self.segments}
        return array(kinds.pop(), values) if len(kinds) == 1 and kinds <= {"q", "I", "i"} else list(values)

    def __call__(self, name):
        if self._parsed is not None:
            return self._whole(name)
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
        except Damaged as e:
            self._damaged(e)
            return self._whole(name)
        except Exception as e:
            self._broken(e)

    def chunks(self, name, size=1 << 16):
        """The whole column as lists of at most about `size` values, made one after the other
        (a walk over every row that keeps none: fsck)."""
        done = 0
        if self._parsed is None:
            try:
                for part in self._chunks(name, size):
                    done += len(part)
                    yield part
                return
            except Damaged as e:
                self._damaged(e)
            except Exception as e:
                self._broken(e)
        rest = self._parsed[name][done:]
        STATS["values"] += len(rest)
        yield rest

    def _chunks(self, name, size):
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

    def value(self, name, row):
        if self._parsed is None:
            try:
                return self._value(name, row)
            except Damaged as e:
                self._damaged(e)
        return self._parsed[name][row]

    def _value(self, name, row):
        k = bisect_right(self.starts, row) - 1
        i = row - self.starts[k]
        view = self._views.get((name, k))
        if view is None and (name, k) not in self._raw and self.segments[k][1][name][0] in ("q", "I", "i"):
            kind, where = self.segments[k][1][name]  # an integer read in place: the column is not copied
            view = self._views[name, k] = (self.blobs.view(where).cast(kind), where[0])
        if view is not None:
            values, start = view
            size = values.itemsize
            self.blobs.check(start + i * size, size)
            return values[i]
        part = self._part(name, k)
        if part.__class__ in _VALUE_KINDS:
            return part.value(i)
        if part.__class__ is bytes:
            return part[i] == 1
        return part[i]

    def find(self, name, value):
        """The last row holding `value` in a text column, or None (not decoded)."""
        if self._parsed is None:
            try:
                return self._find(name, value)
            except Damaged as e:
                self._damaged(e)
        values = self._parsed[name]
        try:
            return len(values) - 1 - values[::-1].index(value)
        except ValueError:
            return None

    def _find(self, name, value):
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


def drop(target):
    """Remove a damaged index (the next load parses the file and writes a new one)."""
    try:
        os.unlink(target)
    except OSError:
        pass
