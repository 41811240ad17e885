"""Reading session files: parse lines, migrate v1/v2 in memory, keep offsets.

The parse keeps only the *structure* of each entry (a Node); the content of an
entry is loaded again from its byte range when a command needs it.
"""

import hashlib
import json
import os

from .errors import BadFile

CURRENT_VERSION = 3


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")  # JSON.parse refuses NaN/Infinity, so do we


_decoder = json.JSONDecoder(parse_constant=_reject_constant)


def decode_line(raw):
    """Parse one line as pi does (JSON.parse after a lossy UTF-8 decode)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
    return _decoder.decode(text)


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
        return bool(content.strip())
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                text = block.get("text")
                if isinstance(text, str) and text.strip():
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
    for line, offset, raw in iter_lines(data):
        stripped = raw.strip()
        if not stripped:
            continue
        if line == 1 and stripped.startswith(b"\xef\xbb\xbf"):
            stripped = stripped[3:]
            offset += 3
        try:
            obj = decode_line(raw if stripped is raw else stripped)
        except (ValueError, RecursionError) as e:
            reason = "torn last line" if offset + len(raw) == len(data) and not data.endswith(b"\n") \
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
