"""Reading session files: parse lines, migrate v1/v2 in memory, keep offsets.

The parse keeps only the *structure* of each entry (a Node); the content of an
entry is loaded again from its byte range when a command needs it.
"""

import json
import json.scanner
import os
import re
import sys

from ..errors import BadFile

CURRENT_VERSION = 3

# JavaScript's String.prototype.trim() whitespace (Python's strip() differs on \x1c-\x1f, \x85)
JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008" \
                "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")  # JSON.parse refuses NaN/Infinity, so do we


def _parse_int(text):
    # JSON.parse reads every number as a double; Python refuses ints over 4300 digits
    return int(text) if len(text) < 4000 else float(text)


_decoder = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_parse_int)


def decode_line(raw):
    """Parse one line as pi does (JSON.parse after a lossy UTF-8 decode)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
    try:
        return _decoder.decode(text)
    except RecursionError:
        return decode_deep(text)  # JSON.parse has no depth limit; neither may we


_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def decode_deep(text):
    """A JSON decoder without recursion, for lines nested deeper than Python's stack allows."""
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
                    pos = _read_key(text, pos, frame)
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
                pos = _read_key(text, pos, frame)
            continue
        if c == '"':
            value, pos = json.decoder.scanstring(text, pos + 1)
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


def _read_key(text, pos, frame):
    if text[pos:pos + 1] != '"':
        raise ValueError(f"Expecting property name enclosed in double quotes: line 1 column {pos + 1}")
    key, pos = json.decoder.scanstring(text, pos + 1)
    pos = _WS.match(text, pos).end()
    if text[pos:pos + 1] != ":":
        raise ValueError(f"Expecting ':' delimiter: line 1 column {pos + 1}")
    frame[1] = key
    return _WS.match(text, pos + 1).end()


def _attach(frame, value):
    if isinstance(frame[0], dict):
        frame[0][frame[1]] = value
    else:
        frame[0].append(value)


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
        self.shape = None  # derived tree structure (stree.tree.Shape), when an index holds it

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
            if reads > VALUE_READS:  # a command that walks many rows: decode the column once
                return self.col(name)[row]
            return self._base.value(name, row)
        row -= self._nbase
        for p in self._parts:
            values = getattr(p, name)
            if row < len(values):
                return values[row]
            row -= len(values)
        raise IndexError("entry index out of range")

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


_OK_STOPS = ("stop", "toolUse")
_SCALARS = (str, int, float, bool)


def node_from_object(obj, offset, length, line, index):
    """A Node from a parsed entry, or None if it is not one."""
    f = entry_fields(obj)
    if f is None:
        return None
    id, parent, etype, role, ts, aux, hidden = f
    return Node(id, parent, etype, role, ts, offset, length, line, index, aux, hidden)


_NAMES = {}  # entry types and roles: one str object per name, so later passes over the columns
#             hash and compare a few hot objects, and rows share their memory


def _name(text):
    if len(_NAMES) < 256:
        _NAMES[text] = text
    return text


def entry_fields(obj):
    """(id, parentId, type, role, timestamp, aux, hidden) of a parsed entry, or None
    when it has no type. Runs once per line of every file read: no helper calls."""
    get = obj.get
    etype = get("type")
    if etype.__class__ is not str:
        return None
    etype = _NAMES.get(etype) or _name(etype)
    role = None
    aux = None
    hidden = False
    if etype == "message":
        msg = get("message")
        if msg.__class__ is dict:
            role = msg.get("role")
            if role.__class__ is str:
                role = _NAMES.get(role) or _name(role)
            if role == "assistant":
                content = msg.get("content")
                text = False
                if content.__class__ is list:
                    calls = None
                    for block in content:
                        if block.__class__ is dict:
                            kind = block.get("type")
                            if kind == "toolCall":
                                cid = block.get("id")
                                if cid is None or cid.__class__ in _SCALARS:  # usable as a map key
                                    if calls is None:
                                        calls = [cid]
                                    else:
                                        calls.append(cid)
                            elif kind == "text" and not text:
                                value = block.get("text")
                                text = value.__class__ is str and bool(value.strip(JS_WHITESPACE))
                    if calls is not None:
                        aux = tuple(calls)  # the toolCall ids: previews of tool results need them
                elif content.__class__ is str:
                    text = bool(content.strip(JS_WHITESPACE))
                if not text:
                    stop = msg.get("stopReason")
                    hidden = not (stop and stop not in _OK_STOPS)
            elif role == "toolResult":
                aux = msg.get("toolCallId")  # which call it answers (for the index's preview cache)
    elif etype == "label":
        label = get("label")
        target = get("targetId")
        if target is not None and target.__class__ not in _SCALARS:
            target = json.dumps(target)  # a list or object names no entry; keep it printable (fsck)
        aux = (target, label if label.__class__ is str else None)
    elif etype == "session_info":
        name = get("name")
        aux = name if name.__class__ is str else None
    elif etype == "custom" or etype == "custom_message":
        aux = get("customType")
    elif etype == "compaction":
        aux = get("firstKeptEntryId")
        if aux is None and isinstance(get("firstKeptEntryIndex"), int):
            aux = ("index", obj["firstKeptEntryIndex"])
    ts = get("timestamp")
    return (get("id"), get("parentId"), etype, role, ts if ts.__class__ is str else None, aux, hidden)


def deterministic_id(seed, index, taken):
    """An 8-hex id for a v1 entry: the same file always gets the same ids."""
    import hashlib

    n = 0
    while True:
        digest = hashlib.sha256(f"{seed}:{index}:{n}".encode()).hexdigest()
        candidate = digest[:8]
        if candidate not in taken:
            return candidate
        n += 1


def changed_while_reading(path):
    return BadFile(f"{path}: the session changed while reading (cut short or rewritten)",
                   hint="run the command again")


def close_files(path):
    """Close every descriptor this process holds on `path` through a Session (each reopens it
    when it next reads): a write lease (stree.writer) needs the file open nowhere else."""
    path = str(path)
    for s in list(_LIVE):
        if str(s.path) == path:
            s.close()


import weakref  # noqa: E402

_LIVE = weakref.WeakSet()  # every Session not yet collected (close_files)


class Session:
    """A parsed session file: header, entry nodes in file order, problems seen."""

    def __init__(self, path):
        _LIVE.add(self)
        self.path = path
        self.header = None
        self.header_line = None
        self.title = None  # oh-my-pi title slot (line 1), never rewritten
        self.version = CURRENT_VERSION
        self.nodes = Nodes()
        self.malformed = []  # (line number, reason)
        self.size = 0
        self.ends_with_newline = True
        self.line = 0  # lines read so far (the parse continues from here)
        self.index = 0  # JSON values read so far, as pi counts them
        self.covered = 0  # bytes of complete lines parsed (what an index holds)
        self.previews = None  # cached previews (stree.index.PreviewCache), or None
        self._meta = None
        self._index_blobs = None  # the data area of the index this session was read from
        self._seen = None  # (size, mtime) of the file when it was read
        self._stat = None  # its whole stat then (stree.index)
        self._pending = None  # an index write deferred to the end of the command (stree.index.save)
        self._ready = None  # (blobs, segments, rows): the first rows, encoded for an index by workers
        self._data = None
        self._fd = None

    # -- content -------------------------------------------------------

    def raw(self, node):
        """The bytes of an entry's line."""
        if self._data is not None:
            return self._data[node.offset:node.offset + node.length]
        if self._fd is None:
            self._fd = _open(self.path)
        try:
            data = os.pread(self._fd, node.length, node.offset)
        except OSError as e:
            raise BadFile(f"{self.path}: cannot read: {e.strerror}") from None
        if len(data) != node.length:
            raise changed_while_reading(self.path)  # cut short since it was parsed
        return data

    def load(self, node):
        """The entry as pi holds it in memory (migrated to v3)."""
        try:
            obj = decode_line(self.raw(node))
        except ValueError:  # it parsed when the file was read: the bytes have changed since
            raise changed_while_reading(self.path) from None
        if obj.__class__ is not dict:
            raise changed_while_reading(self.path)
        if self.version < CURRENT_VERSION:
            migrate_entry(obj, node, self.version)
        return obj

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self):  # a session dropped without close() (a library caller) does not keep its file open
        try:
            self.close()
        except Exception:  # (at interpreter exit, os may be gone already)
            pass

    @property
    def needs_migration(self):
        return self.version < CURRENT_VERSION


def migrate_entry(obj, node, version):
    """Apply pi's v1->v2->v3 migrations to one loaded entry, with our stable ids."""
    if version < 2:
        obj["id"] = node.id
        obj["parentId"] = node.parent
        if obj.get("type") == "compaction" and "firstKeptEntryIndex" in obj:
            del obj["firstKeptEntryIndex"]
            if isinstance(node.aux, str):
                obj["firstKeptEntryId"] = node.aux
    if obj.get("type") == "message":
        msg = obj.get("message")
        if isinstance(msg, dict) and msg.get("role") == "hookMessage":
            msg["role"] = "custom"


def iter_lines(data):
    """Yield (line number, offset, bytes) for every line, without copying the whole file."""
    pos = 0
    line = 0
    end_all = len(data)
    while pos < end_all:
        end = data.find(b"\n", pos)
        if end < 0:
            end = end_all
        line += 1
        yield line, pos, data[pos:end]
        pos = end + 1


def _open(path):
    """A read-only descriptor of a session file. Opened without blocking and checked
    before anything is read: a FIFO, a device or a socket is refused (exit 4) rather
    than hanging the command."""
    try:
        fd = open_nonblocking(path, os.O_RDONLY)
    except IsADirectoryError:
        raise BadFile(f"{path}: is a directory, not a session file",
                      hint="pass the .jsonl file inside it with -s") from None
    except FileNotFoundError:
        raise BadFile(f"{path}: no such file") from None
    except PermissionError:
        raise BadFile(f"{path}: permission denied") from None
    except OSError as e:
        raise BadFile(f"{path}: cannot read: {e.strerror}") from None
    try:
        require_regular(path, os.fstat(fd))
        if getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


LEASE_WAIT = 10.0  # seconds an open waits for another stree's write lease (held for a write)


def open_nonblocking(path, flags):
    """os.open without blocking on a FIFO. A regular file under another stree's write lease
    (stree.writer, held while it appends: milliseconds) answers EAGAIN: tried again."""
    import errno
    import time

    deadline = None
    delay = 0.001
    while True:
        try:
            return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EWOULDBLOCK):
                raise
            now = time.monotonic()
            deadline = deadline or now + LEASE_WAIT
            if now > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


def require_regular(path, st):
    """Refuse anything but a regular file (a directory, a FIFO, a device, a socket)."""
    import stat

    mode = st.st_mode
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise BadFile(f"{path}: is a directory, not a session file",
                      hint="pass the .jsonl file inside it with -s")
    kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
    raise BadFile(f"{path}: is {kind}, not a session file; only regular files are read",
                  hint="copy the session to a file first")


def parse(path, data=None):
    """Parse a session file into a Session. Raises BadFile when it is not one.

    Lines are read in blocks: memory stays near the size of the structure, not
    of the file.
    """
    s = Session(path)
    if data is not None:
        s._data = data
        s.size = len(data)
        scan(s, data, 0, len(data))
    else:
        fd = _open(path)
        s._fd = fd
        try:
            size = os.fstat(fd).st_size
        except OSError as e:
            raise BadFile(f"{path}: cannot read: {e.strerror}") from None
        if os.path.isdir(path):
            raise BadFile(f"{path}: is a directory, not a session file",
                          hint="pass the .jsonl file inside it with -s")
        s.size = size
        scan_file(s, fd, 0, size)
    finish(s)
    return s


def finish(s):
    """Checks and migrations once every line is read."""
    if s.header is None:
        path = s.path
        if s.malformed:
            raise BadFile(f"{path}: no valid session header (line {s.malformed[0][0]}: {s.malformed[0][1]})")
        raise BadFile(f"{path}: empty file, no session header")
    if s.version < 2:
        _migrate_v1_structure(s)


# -- line scanning ----------------------------------------------------------------

BLOCK = 1 << 20  # bytes read at a time
STATS = {"parsed": 0, "workers": 0}  # lines handed to the JSON decoder (by this process and its parse
#                                       workers), workers forked (STREE_DEBUG_STATS)
_scan_once = json.scanner.make_scanner(_decoder)
# the line scanner's fast path: Python's own int() (C speed), limited to 3998 digits while it
# runs so that it yields an int exactly where _parse_int would; longer numbers take the slow path
_fast_scan_once = json.scanner.make_scanner(json.JSONDecoder(parse_constant=_reject_constant))
_FAST_INT_DIGITS = 3998
_SPACE = b" \t\n\r\x0b\x0c"


def scan_file(s, fd, start, end):
    """Parse the lines of bytes [start, end) of an open file into `s`, continuing its state.

    A fresh parse of a long file is shared among several processes (one per core,
    see stree.parallel): decoding JSON is the whole cost of a cold read."""
    if not len(s.nodes) and s.header is None:
        from . import parallel

        n = parallel.jobs(end - start)
        if n > 1:
            start = parallel.scan_head(s, fd, start, end)
            if s.header is not None and not len(s.nodes) and parallel.scan(s, fd, start, end, n):
                return
    scan_range(s, fd, start, end, end)


LINE_MAX = 256 << 20  # bytes: a longer line is skipped with a warning (far above any real entry,
#                      images included; below the 512 MiB strings of JavaScript, which pi reads lines into)


def scan_range(s, fd, start, stop, end):
    """Parse bytes [start, stop) in this process; `end` is where the whole range ends
    (its last line may be torn, and is trimmed as pi trims the end of the file).

    Only the bytes of each new block are searched for a newline, and a line is joined
    once, when it ends: a huge line costs its length, not its length squared. A line
    longer than LINE_MAX is not kept at all; it is skipped and reported malformed."""
    pos = start
    carry = []  # the blocks of a line not ended yet
    carried = 0
    carry_at = start  # where that line starts
    skipping = False  # inside a line longer than LINE_MAX: read to its end, nothing kept
    while pos < stop:
        block = os.pread(fd, min(BLOCK, stop - pos), pos)
        if not block:
            break  # the file shrank under us: parse what we have
        base = pos
        pos += len(block)
        last = pos >= stop
        if skipping:
            nl = block.find(b"\n")
            if nl < 0 and not last:
                continue
            _too_long(s)
            skipping = False
            if nl < 0:
                break
            block = block[nl + 1:]
            base += nl + 1
            carry_at = base
            if not block:
                continue
        nl = block.rfind(b"\n")
        if nl < 0 and not last:
            carry.append(block)
            carried += len(block)
            if carried > LINE_MAX:
                carry, carried, skipping = [], 0, True
            continue
        cut = len(block) if last else nl + 1
        data = b"".join(carry) + block[:cut] if carry else (block[:cut] if cut < len(block) else block)
        scan(s, data, carry_at, end, s.line)
        carry = [block[cut:]] if cut < len(block) else []
        carried = len(block) - cut
        carry_at = base + cut
    if skipping:
        _too_long(s)


def _too_long(s):
    s.line += 1
    s.malformed.append((s.line, f"line longer than {LINE_MAX >> 20} MiB (not read)"))


def scan(s, data, base, size, line=None):
    """Parse the lines of `data` (file bytes from offset `base`; the file is `size`
    bytes long) into `s`, continuing its line and object counters."""
    line = s.line if line is None else line
    index = s.index
    part = Columns()
    scan_once = _fast_scan_once
    fields = entry_fields
    digits = getattr(sys, "get_int_max_str_digits", None)
    if digits is None:
        scan_once = _scan_once
    else:
        old_digits = digits()
        sys.set_int_max_str_digits(_FAST_INT_DIGITS)
    try:
        line, index, parsed = _scan(s, data, base, size, line, index, part, scan_once, fields,
                                    old_digits if digits is not None else None)
    finally:
        if digits is not None:
            sys.set_int_max_str_digits(old_digits)
    s.nodes.add(part)
    s.line = line
    s.index = index
    STATS["parsed"] += parsed


def _scan(s, data, base, size, line, index, part, scan_once, fields, outer_digits):
    ids, parents, types, roles, stamps = part.id, part.parent, part.type, part.role, part.ts
    offsets, lengths, lines, indexes, auxes, hiddens = part.offset, part.length, part.line, part.index, \
        part.aux, part.hidden
    malformed = s.malformed
    v2 = s.version >= 2
    parsed = 0
    pos = 0
    end_all = len(data)
    if end_all:
        s.ends_with_newline = data.endswith(b"\n")
    find = data.find
    # pi (1.5) splits the file on "\n" and JSON.parse's each line as it is: a BOM or other
    # Unicode space around a line (even the first or the last) makes it malformed
    last = base + end_all == size
    while pos < end_all:
        end = find(b"\n", pos)
        if end < 0:
            end = end_all
        line += 1
        start = pos
        pos = end + 1
        raw = data[start:end]
        offset = base + start
        length = end - start
        if not raw or raw[0] in _SPACE or raw[-1] in _SPACE:
            if not raw.strip():
                continue
        parsed += 1
        obj = None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None:
            try:
                obj, stop = scan_once(text, 0)
                if stop != len(text):
                    obj = None
            except (StopIteration, ValueError, RecursionError):
                obj = None
        if obj is None:  # the slow path decides, with pi's error
            try:
                if outer_digits is None:
                    obj = decode_line(raw)
                else:  # with the caller's int limit, not the fast path's
                    sys.set_int_max_str_digits(outer_digits)
                    try:
                        obj = decode_line(raw)
                    finally:
                        sys.set_int_max_str_digits(_FAST_INT_DIGITS)
            except ValueError as e:
                if not raw.decode("utf-8", errors="replace").strip(JS_WHITESPACE):
                    continue  # only Unicode spaces: pi's line.trim() skips the line too
                reason = "torn last line" if end == end_all and last \
                    and not data.endswith(b"\n") else f"invalid JSON ({str(e).split(':')[0]})"
                malformed.append((line, reason))
                continue
        if obj.__class__ is not dict:
            if obj is None or obj is False or obj == "" or (obj.__class__ in (int, float) and obj == 0):
                malformed.append((line, "not a JSON object"))
                continue  # pi (1.5) drops a falsy value: it is not counted
            if s.header is None:
                raise BadFile(f"{s.path}: line {line} is not a session header; this is not a pi session file",
                              hint="a session file starts with {\"type\":\"session\",...}")
            malformed.append((line, "not a JSON object"))
            index += 1  # pi keeps any other JSON value in its list, so v1 indexes count it
            continue
        if s.header is None:
            s.line, s.index = line, index
            index = _header(s, obj, line, index)
            v2 = s.version >= 2
            continue
        f = fields(obj)
        if f is None:
            index += 1
            malformed.append((line, "entry without a type"))
            continue
        id, parent, etype, role, ts, aux, hidden = f
        if etype == "session":
            malformed.append((line, "second session header"))
            index += 1
            continue
        if v2:
            if id.__class__ is not str:
                index += 1
                malformed.append((line, "entry without an id"))
                continue
            if not (parent is None or parent.__class__ is str):
                parent = None
        ids.append(id)
        parents.append(parent)
        types.append(etype)
        roles.append(role)
        stamps.append(ts)
        offsets.append(offset)
        lengths.append(length)
        lines.append(line)
        indexes.append(index)
        auxes.append(aux)
        hiddens.append(hidden)
        index += 1
    return line, index, parsed


def _header(s, obj, line, index):
    """The title slot or header line; returns the object counter after it."""
    if obj.get("type") == "title" and index == 0 and s.title is None:
        s.title = obj  # oh-my-pi's title slot: the header follows
        return index + 1
    if obj.get("type") != "session" or not isinstance(obj.get("id"), str):
        raise BadFile(f"{s.path}: line {line} is not a session header; this is not a pi session file",
                      hint="a session file starts with {\"type\":\"session\",...}")
    s.header = obj
    s.header_line = line
    version = obj.get("version")
    s.version = version if isinstance(version, int) else 1
    return index + 1


def _migrate_v1_structure(s):
    """v1 entries have no ids: give each a deterministic id and the previous entry as parent."""
    seed = s.header.get("id", "")
    nodes = s.nodes
    ids, parents, auxes, types = nodes.col("id"), nodes.col("parent"), nodes.col("aux"), nodes.col("type")
    taken = set()
    by_index = {}
    prev = None
    for row, index in enumerate(nodes.col("index")):
        ids[row] = id = deterministic_id(seed, index, taken)
        taken.add(id)
        parents[row] = prev
        prev = id
        by_index[index] = id
    for row, etype in enumerate(types):
        if etype == "compaction" and isinstance(auxes[row], tuple):
            auxes[row] = by_index.get(auxes[row][1])


def as_v3(session):
    """The bytes of a v1/v2 session rewritten as v3, as pi's migration writes it, with
    stree's deterministic ids. Line 1 of oh-my-pi files (the title slot) and lines pi
    cannot parse are kept byte for byte; nothing is dropped."""
    from ..writing.append import js_dumps

    data = session._data
    header = dict(session.header)
    header["version"] = CURRENT_VERSION
    by_line = {node.line: node for node in session.nodes}
    out = []
    for line, offset, raw in iter_lines(data):
        if not raw.strip():
            continue
        node = by_line.get(line)
        if line == session.header_line:
            out.append(js_dumps(header).encode("utf-8"))
        elif node is not None:
            out.append(js_dumps(session.load(node)).encode("utf-8"))
        else:
            out.append(raw)  # title slot, malformed or foreign lines: kept as they are
    return b"\n".join(out) + b"\n"
