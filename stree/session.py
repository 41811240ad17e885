"""Reading session files: parse lines, migrate v1/v2 in memory, keep offsets.

The parse keeps only the *structure* of each entry (a Node); the content of an
entry is loaded again from its byte range when a command needs it.
"""

import hashlib
import json
import os
import re

from .errors import BadFile

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
        "aux", "hidden",
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
        # custom/custom_message -> customType; compaction -> firstKeptEntryId
        self.aux = aux
        # assistant message with no text that is not an error/abort: pi's /tree hides it
        self.hidden = hidden

    def __repr__(self):
        return f"Node({self.id!r}, parent={self.parent!r}, type={self.type!r})"


def _has_text(content):
    if isinstance(content, str):
        return bool(content.strip(JS_WHITESPACE))
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                text = block.get("text")
                if isinstance(text, str) and text.strip(JS_WHITESPACE):
                    return True
    return False


def node_from_object(obj, offset, length, line, index):
    """Build a Node from a parsed entry, or return None if it is not one."""
    etype = obj.get("type")
    if not isinstance(etype, str):
        return None
    role = None
    aux = None
    hidden = False
    if etype == "message":
        msg = obj.get("message")
        if isinstance(msg, dict):
            role = msg.get("role")
            if role == "assistant":
                stop = msg.get("stopReason")
                failed = bool(stop) and stop not in ("stop", "toolUse")
                hidden = not _has_text(msg.get("content")) and not failed
    elif etype == "label":
        target = obj.get("targetId")
        label = obj.get("label")
        aux = (target, label if isinstance(label, str) else None)
    elif etype == "session_info":
        name = obj.get("name")
        aux = name if isinstance(name, str) else None
    elif etype in ("custom", "custom_message"):
        aux = obj.get("customType")
    elif etype == "compaction":
        aux = obj.get("firstKeptEntryId")
        if aux is None and isinstance(obj.get("firstKeptEntryIndex"), int):
            aux = ("index", obj["firstKeptEntryIndex"])
    ts = obj.get("timestamp")
    return Node(obj.get("id"), obj.get("parentId"), etype, role, ts if isinstance(ts, str) else None,
                offset, length, line, index, aux, hidden)


def deterministic_id(seed, index, taken):
    """An 8-hex id for a v1 entry: the same file always gets the same ids."""
    n = 0
    while True:
        digest = hashlib.sha256(f"{seed}:{index}:{n}".encode()).hexdigest()
        candidate = digest[:8]
        if candidate not in taken:
            return candidate
        n += 1


class Session:
    """A parsed session file: header, entry nodes in file order, problems seen."""

    def __init__(self, path):
        self.path = path
        self.header = None
        self.header_line = None
        self.title = None  # oh-my-pi title slot (line 1), never rewritten
        self.version = CURRENT_VERSION
        self.nodes = []
        self.malformed = []  # (line number, reason)
        self.size = 0
        self.ends_with_newline = True
        self._data = None
        self._fd = None

    # -- content -------------------------------------------------------

    def raw(self, node):
        """The bytes of an entry's line."""
        if self._data is not None:
            return self._data[node.offset:node.offset + node.length]
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        return os.pread(self._fd, node.length, node.offset)

    def load(self, node):
        """The entry as pi holds it in memory (migrated to v3)."""
        obj = decode_line(self.raw(node))
        if self.version < CURRENT_VERSION:
            migrate_entry(obj, node, self.version)
        return obj

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

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


_JS_SPACE_BYTES = tuple(c.encode() for c in JS_WHITESPACE)


def _js_lstrip(data):
    """Offset of the first byte that JavaScript's trim() keeps."""
    pos = 0
    while pos < len(data):
        for ws in _JS_SPACE_BYTES:
            if data.startswith(ws, pos):
                pos += len(ws)
                break
        else:
            break
    return pos


def _js_rstrip(data):
    """Offset just past the last byte that JavaScript's trim() keeps."""
    end = len(data)
    while end > 0:
        for ws in _JS_SPACE_BYTES:
            if data.endswith(ws, 0, end):
                end -= len(ws)
                break
        else:
            break
    return end


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


def parse(path, data=None):
    """Parse a session file into a Session. Raises BadFile when it is not one."""
    if data is None:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except IsADirectoryError:
            raise BadFile(f"{path}: is a directory, not a session file",
                          hint="pass the .jsonl file inside it with -s")
        except FileNotFoundError:
            raise BadFile(f"{path}: no such file") from None
        except PermissionError:
            raise BadFile(f"{path}: permission denied") from None
        except OSError as e:
            raise BadFile(f"{path}: cannot read: {e.strerror}") from None
    s = Session(path)
    s._data = data
    s.size = len(data)
    s.ends_with_newline = data.endswith(b"\n") or not data
    index = 0
    nodes = s.nodes
    # pi reads content.trim().split("\n"): JavaScript whitespace (a BOM too) goes
    # from the start and end of the file, then each line is JSON.parse'd as it is
    start = _js_lstrip(data)
    end = _js_rstrip(data)
    for line, offset, raw in iter_lines(data):
        if offset >= end or offset + len(raw) <= start:
            continue
        if offset < start:
            raw = raw[start - offset:]
            offset = start
        if offset + len(raw) > end:
            raw = raw[:end - offset]
        if not raw.strip():
            continue
        try:
            obj = decode_line(raw)
        except ValueError as e:
            if not raw.decode("utf-8", errors="replace").strip(JS_WHITESPACE):
                continue  # only Unicode spaces: pi's line.trim() skips it too
            reason = "torn last line" if offset + len(raw) == end and not data.endswith(b"\n") \
                else f"invalid JSON ({str(e).split(':')[0]})"
            s.malformed.append((line, reason))
            continue
        if not isinstance(obj, dict):
            s.malformed.append((line, "not a JSON object"))
            index += 1  # pi keeps any JSON value in its list, so v1 indexes count it
            continue
        if s.header is None:
            if obj.get("type") == "title" and index == 0 and s.title is None:
                s.title = obj  # oh-my-pi's title slot: the header follows
                index += 1
                continue
            if obj.get("type") != "session" or not isinstance(obj.get("id"), str):
                raise BadFile(f"{path}: line {line} is not a session header; this is not a pi session file",
                              hint="a session file starts with {\"type\":\"session\",...}")
            s.header = obj
            s.header_line = line
            version = obj.get("version")
            s.version = version if isinstance(version, int) else 1
            index += 1
            continue
        if obj.get("type") == "session":
            s.malformed.append((line, "second session header"))
            index += 1
            continue
        node = node_from_object(obj, offset, len(raw), line, index)
        index += 1
        if node is None:
            s.malformed.append((line, "entry without a type"))
            continue
        if s.version >= 2 and not isinstance(node.id, str):
            s.malformed.append((line, "entry without an id"))
            continue
        if s.version >= 2 and not (node.parent is None or isinstance(node.parent, str)):
            node.parent = None
        nodes.append(node)
    if s.header is None:
        if s.malformed:
            raise BadFile(f"{path}: no valid session header (line {s.malformed[0][0]}: {s.malformed[0][1]})")
        raise BadFile(f"{path}: empty file, no session header")
    if s.version < 2:
        _migrate_v1_structure(s)
    return s


def _migrate_v1_structure(s):
    """v1 entries have no ids: give each a deterministic id and the previous entry as parent."""
    seed = s.header.get("id", "")
    taken = set()
    by_index = {}
    prev = None
    for node in s.nodes:
        node.id = deterministic_id(seed, node.index, taken)
        taken.add(node.id)
        node.parent = prev
        prev = node.id
        by_index[node.index] = node.id
    for node in s.nodes:
        if node.type == "compaction" and isinstance(node.aux, tuple):
            node.aux = by_index.get(node.aux[1])


def as_v3(session):
    """The bytes of a v1/v2 session rewritten as v3, as pi's migration writes it, with
    stree's deterministic ids. Line 1 of oh-my-pi files (the title slot) and lines pi
    cannot parse are kept byte for byte; nothing is dropped."""
    from .writer import js_dumps

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
