"""The structure of a session's entries in columns: Node, Nodes and their rows.

The parse keeps only the *structure* of each entry (a Node); the content of an
entry is loaded again from its byte range when a command needs it.
"""

import marshal

from ..format.entry import entry_fields


class Node:
    """The structure of one entry: what the tree needs, without its content."""

    __slots__ = (
        "id", "parent", "type", "role", "ts", "offset", "length", "line", "index",
        "aux", "hidden", "_r",  # _r: the row, when a Nodes sequence made it
    )

    def __init__(self, id, parent, type, role, ts, offset, length, line, index, aux=None, hidden=False):
        self.id = id
        self.parent = parent
        self.type = type
        self.role = role
        self.ts = ts
        self.offset = offset
        self.length = length
        self.line = line  # 1-based line number in the file
        self.index = index  # position among parsed objects (header included), as pi counts
        # type-specific: label -> (targetId, label); session_info -> name;
        # custom/custom_message -> customType; compaction -> firstKeptEntryId;
        # thinking_level_change -> thinkingLevel (a str, else None); model_change -> (provider, modelId)
        # (both str, else None);
        # assistant message -> its toolCall ids (tuple) or None; toolResult -> toolCallId
        self.aux = aux
        # assistant message with no text that is not an error/abort: pi's /tree hides it
        self.hidden = hidden

    def __repr__(self):
        return f"Node({self.id!r}, parent={self.parent!r}, type={self.type!r})"


FIELDS = ("id", "parent", "type", "role", "ts", "offset", "length", "line", "index", "aux", "hidden")


class Columns:
    """Rows of entry structure as one list per Node field (what the parser appends to)."""

    __slots__ = FIELDS

    def __init__(self):
        for name in FIELDS:
            setattr(self, name, [])

    def __len__(self):
        return len(self.id)


def _field(name):
    def get(self):
        return self._s.value(name, self._r)
    return property(get)


class RowNode:
    """A Node view of one row of a Nodes sequence: fields are read from its columns."""

    __slots__ = ("_s", "_r")

    def __init__(self, store, row):
        self._s = store
        self._r = row

    for _name in FIELDS:
        locals()[_name] = _field(_name)
    del _name

    def __repr__(self):
        return f"Node({self.id!r}, parent={self.parent!r}, type={self.type!r})"


VALUE_READS = 4096  # single values read from an index column before it is decoded whole


class Nodes:
    """The entries of a session in file order, as a read-only sequence of Nodes.

    Held as columns: those of an index (loaded field by field, on first use) and
    those the parser filled (appended lines). A Node object is made only for the
    rows a command looks at, and the same row always gives the same object."""

    def __init__(self, base=None, nbase=0):
        self._base = base  # field name -> list of the indexed rows, or None
        self._nbase = nbase
        self._parts = []
        self._n = nbase
        self._cols = {}
        self._views = {}
        self._reads = {}
        self._whole = None
        self.shape = None  # derived tree structure (stree.storage.shape.Shape), when an index holds it

    def col(self, name):
        """The whole column of one field (a list; arrays for the integer fields of an index)."""
        c = self._cols.get(name)
        if c is None:
            c = self._base(name) if self._base is not None else None
            parts = self._parts
            if c is None:
                if len(parts) == 1:
                    c = getattr(parts[0], name)
                else:
                    c = []
                    for p in parts:
                        c.extend(getattr(p, name))
            elif parts:
                c = list(c)
                for p in parts:
                    c.extend(getattr(p, name))
            self._cols[name] = c
        return c

    def value(self, name, row):
        """One field of one row, without decoding the whole column when an index holds it."""
        c = self._cols.get(name)
        if c is not None:
            return c[row]
        if row < self._nbase:
            reads = self._reads[name] = self._reads.get(name, 0) + 1
            if reads > VALUE_READS and reads > self._nbase >> 4:  # a command that walks many rows:
                #                        decode the column once (not for a few thousand rows of a million)
                return self.col(name)[row]
            return self._base.value(name, row)
        row -= self._nbase
        for p in self._parts:
            values = getattr(p, name)
            if row < len(values):
                return values[row]
            row -= len(values)
        raise IndexError("entry index out of range")

    def may_hold(self, name, needles, below):
        """False when no row before `below` holds one of the str `needles` in column `name`, as its
        value or in its list of values; True when one may. An index's column is searched in its
        bytes, not decoded (marshal writes every str it holds whole: a value not among them is no
        row's). For an append's toolCall ids, a question over every row (stree.storage.calltable)."""
        if any(n.__class__ is not str for n in needles):
            return True
        if self._nbase and below > 0:
            base = self._base  # (an index's columns, stree.storage.columns.IndexColumns: kinds "a", "m")
            raws = [n.encode("utf-8", "surrogatepass") for n in needles]
            try:
                for _, segment in base.segments:
                    kind, where = segment[name]
                    if kind not in ("a", "m"):
                        return True
                    for blob in (where[1], where[2]) if kind == "a" else (where,):
                        data = bytes(base.blobs.get(blob))  # (checked: a damaged one says "may")
                        if any(map(data.__contains__, raws)):
                            return True
            except (AttributeError, KeyError, TypeError, ValueError):
                return True
        start = self._nbase
        for p in self._parts:
            if start >= below:
                break
            for v in getattr(p, name)[:below - start]:
                if v is None:
                    continue
                for x in (v,) if v.__class__ is str else v if v.__class__ in (list, tuple) else (None,):
                    if x.__class__ is not str or x in needles:
                        return True
            start += len(getattr(p, name))
        return False

    def fixed_width(self, name):
        """The length of every value of a text column when all have one and none is missing,
        known without decoding the column (an index stores such a column as one text), else None."""
        width = None
        if self._nbase:
            base = self._base  # (an index's columns, stree.storage.columns.IndexColumns: its "f" kind)
            try:
                for _, segment in base.segments:
                    kind, where = segment[name]
                    if kind != "f" or marshal.loads(base.blobs.get(where[2])):
                        return None
                    found = int.from_bytes(base.blobs.get(where[1]), "little")
                    if width is not None and found != width:
                        return None
                    width = found
            except (AttributeError, KeyError, TypeError, ValueError):
                return None
        for p in self._parts:
            values = getattr(p, name)
            if width is None and values:
                width = len(values[0]) if values[0].__class__ is str else -1
            if any(v.__class__ is not str or len(v) != width for v in values):
                return None
        return width

    def column_chunks(self, name):
        """The column of one field as consecutive lists (an index's decoded a block at a time and
        not kept): for a walk over every row that needs none of them afterwards."""
        c = self._cols.get(name)
        if c is not None:
            yield c
            return
        if self._base is not None:
            yield from self._base.chunks(name)
        for p in self._parts:
            yield getattr(p, name)

    def find(self, id):
        """The last row with this id (pi's byId), or None."""
        ids = self._cols.get("id")
        if ids is None:
            for k in range(len(self._parts) - 1, -1, -1):
                values = self._parts[k].id
                if id in values:
                    start = self._n - sum(len(p) for p in self._parts[k:])
                    return start + len(values) - 1 - values[::-1].index(id)
            if self._base is not None:
                return self._base.find("id", id)
            return None
        try:
            r = ids.index(id)
        except ValueError:
            return None
        while True:
            try:
                r = ids.index(id, r + 1)
            except ValueError:
                return r

    def find_base(self, id):
        """find() among the rows of the index only."""
        if self._base is None or id.__class__ is not str:
            return None
        return self._base.find("id", id)

    def tail(self, name, start):
        """The column of one field from row `start` on (cheap for appended rows)."""
        c = self._cols.get(name)
        if c is not None or start < self._nbase:
            return self.col(name)[start:]
        skip = start - self._nbase
        out = []
        for p in self._parts:
            values = getattr(p, name)
            if skip >= len(values):
                skip -= len(values)
                continue
            out.extend(values[skip:] if skip else values)
            skip = 0
        return out

    def add(self, part):
        """Append the rows the parser put in `part` (a Columns)."""
        if not len(part):
            return
        for name, c in self._cols.items():
            if c.__class__ is not list:
                c = self._cols[name] = list(c)
            c.extend(getattr(part, name))
        if self._whole is not None:
            self._whole = [self._cols[name] for name in FIELDS]
        self._parts.append(part)
        self._n += len(part)

    @property
    def nbase(self):
        return self._nbase

    def __len__(self):
        return self._n

    def __bool__(self):
        return self._n > 0

    def _view(self, row):
        node = self._views.get(row)
        if node is None:
            cols = self._whole
            if cols is not None:  # every column is decoded: a plain Node reads faster
                node = Node(*[c[row] for c in cols])
                node._r = row
            else:
                node = RowNode(self, row)
            self._views[row] = node
        return node

    def peek(self, row):
        """self[row] (0 <= row < len), not kept for the next read when it was not made before:
        for a walk that reads each row once (the graph's rows, drawn as they are written)."""
        node = self._views.get(row)
        if node is None:
            cols = self._whole
            if cols is None:
                return RowNode(self, row)
            node = Node(*[c[row] for c in cols])
            node._r = row
        return node

    def materialize(self):
        """Decode every column: for commands that go through most rows."""
        if self._whole is None:
            self._whole = [self.col(name) for name in FIELDS]

    def __getitem__(self, i):
        if i.__class__ is slice:
            return [self._view(r) for r in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("entry index out of range")
        return self._view(i)

    def __iter__(self):
        view = self._view
        for r in range(self._n):
            yield view(r)

    def __reversed__(self):
        view = self._view
        for r in range(self._n - 1, -1, -1):
            yield view(r)

    def row(self, node):
        """The row of a Node this sequence made."""
        return node._r

    def __repr__(self):
        return f"<Nodes: {self._n} entries>"



def node_from_object(obj, offset, length, line, index):
    """A Node from a parsed entry, or None if it is not one."""
    f = entry_fields(obj)
    if f is None:
        return None
    id, parent, etype, role, ts, aux, hidden = f
    return Node(id, parent, etype, role, ts, offset, length, line, index, aux, hidden)
