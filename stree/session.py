"""Reading session files: parse lines, migrate v1/v2 in memory, keep offsets.

The parse keeps only the *structure* of each entry (a Node); the content of an
entry is loaded again from its byte range when a command needs it.
"""

import hashlib
import json
import json.scanner
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
        # custom/custom_message -> customType; compaction -> firstKeptEntryId;
        # assistant message -> its toolCall ids (tuple) or None; toolResult -> toolCallId
        self.aux = aux
        # assistant message with no text that is not an error/abort: pi's /tree hides it
        self.hidden = hidden

    def __repr__(self):
        return f"Node({self.id!r}, parent={self.parent!r}, type={self.type!r})"


_OK_STOPS = ("stop", "toolUse")
_SCALARS = (str, int, float, bool)


def node_from_object(obj, offset, length, line, index):
    """Build a Node from a parsed entry, or return None if it is not one.

    Runs once per line of every file read, so it avoids helper calls."""
    get = obj.get
    etype = get("type")
    if etype.__class__ is not str:
        return None
    role = None
    aux = None
    hidden = False
    if etype == "message":
        msg = get("message")
        if msg.__class__ is dict:
            role = msg.get("role")
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
                                text = value.__class__ is str and bool(value.strip())
                    if calls is not None:
                        aux = tuple(calls)  # the toolCall ids: previews of tool results need them
                elif content.__class__ is str:
                    text = bool(content.strip())
                if not text:
                    stop = msg.get("stopReason")
                    hidden = not (stop and stop not in _OK_STOPS)
            elif role == "toolResult":
                aux = msg.get("toolCallId")  # which call it answers (for the index's preview cache)
    elif etype == "label":
        label = get("label")
        aux = (get("targetId"), label if label.__class__ is str else None)
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
    return Node(get("id"), get("parentId"), etype, role, ts if ts.__class__ is str else None,
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
        self.line = 0  # lines read so far (the parse continues from here)
        self.index = 0  # JSON values read so far, as pi counts them
        self.covered = 0  # bytes of complete lines parsed (what an index holds)
        self.previews = None  # cached previews (stree.index.PreviewCache), or None
        self._meta = None
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


def _open(path):
    try:
        return os.open(path, os.O_RDONLY)
    except IsADirectoryError:
        raise BadFile(f"{path}: is a directory, not a session file",
                      hint="pass the .jsonl file inside it with -s") from None
    except FileNotFoundError:
        raise BadFile(f"{path}: no such file") from None
    except PermissionError:
        raise BadFile(f"{path}: permission denied") from None
    except OSError as e:
        raise BadFile(f"{path}: cannot read: {e.strerror}") from None


def parse(path, data=None):
    """Parse a session file into a Session. Raises BadFile when it is not one.

    Lines are read in blocks (memory stays near the size of the structure, not
    of the file) and, for big files on a multi-core machine, in two processes.
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

BLOCK = 4 << 20  # bytes read at a time
PARALLEL_MIN = 16 << 20  # files at least this big are parsed by two processes
STATS = {"parsed": 0}  # lines handed to the JSON decoder in this process (STREE_DEBUG_STATS)
_scan_once = json.scanner.make_scanner(_decoder)
_SPACE = b" \t\n\r\x0b\x0c"


def scan_file(s, fd, start, end, parallel=True):
    """Parse the lines of bytes [start, end) of an open file into `s`, continuing its state."""
    if parallel and s.header is not None and end - start >= _parallel_min() and (os.cpu_count() or 1) > 1 \
            and hasattr(os, "fork"):
        mid = _line_start_after(fd, start + (end - start) // 2, end)
        if start < mid < end and _scan_parallel(s, fd, start, mid, end):
            return
    pos = start
    carry = b""
    while pos < end:
        block = os.pread(fd, min(BLOCK, end - pos), pos)
        if not block:
            break  # the file shrank under us: parse what we have
        pos += len(block)
        data = carry + block if carry else block
        cut = data.rfind(b"\n") + 1 if pos < end else len(data)
        scan(s, data[:cut] if cut < len(data) else data, pos - len(data), end, s.line)
        carry = data[cut:]


def _parallel_min():
    value = os.environ.get("STREE_PARALLEL_MIN")
    return int(value) if value and value.isdigit() else PARALLEL_MIN


def _line_start_after(fd, pos, end):
    while pos < end:
        chunk = os.pread(fd, min(65536, end - pos), pos)
        if not chunk:
            return end
        nl = chunk.find(b"\n")
        if nl >= 0:
            return pos + nl + 1
        pos += len(chunk)
    return end


def _scan_parallel(s, fd, start, mid, end):
    """Parse [mid, end) in a forked child while this process parses [start, mid)."""
    import marshal

    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: parse, send the structure back, never return
        code = 1
        try:
            os.close(rfd)
            part = Session(s.path)
            part.header, part.version = s.header, s.version
            STATS["parsed"] = 0
            scan_file(part, fd, mid, end, parallel=False)
            rows = [(n.id, n.parent, n.type, n.role, n.ts, n.offset, n.length, n.line, n.index, n.aux, n.hidden)
                    for n in part.nodes]
            payload = marshal.dumps((rows, part.malformed, part.line, part.index, part.ends_with_newline,
                                     STATS["parsed"]), 4)
            view = memoryview(payload)
            while view:
                view = view[os.write(wfd, view):]
            code = 0
        finally:
            os._exit(code)
    os.close(wfd)
    try:
        scan_file(s, fd, start, mid, parallel=False)
        chunks = []
        while True:
            chunk = os.read(rfd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(rfd)
        _, status = os.waitpid(pid, 0)
    if status != 0:
        scan_file(s, fd, mid, end, parallel=False)  # the child failed: do its half here
        return True
    rows, malformed, lines, count, ends_nl, parsed = marshal.loads(b"".join(chunks))
    base_line, base_index = s.line, s.index
    s.nodes.extend([Node(i, p, t, r, ts, off, ln, line + base_line, idx + base_index, aux, h)
                    for i, p, t, r, ts, off, ln, line, idx, aux, h in rows])
    s.malformed.extend((line + base_line, reason) for line, reason in malformed)
    s.line += lines
    s.index += count
    s.ends_with_newline = ends_nl
    STATS["parsed"] += parsed
    return True


def scan(s, data, base, size, line=None):
    """Parse the lines of `data` (file bytes from offset `base`; the file is `size`
    bytes long) into `s`, continuing its line and object counters."""
    line = s.line if line is None else line
    index = s.index
    nodes = s.nodes
    malformed = s.malformed
    scan_once = _scan_once
    v2 = s.version >= 2
    parsed = 0
    pos = 0
    end_all = len(data)
    if end_all:
        s.ends_with_newline = data.endswith(b"\n")
    while pos < end_all:
        end = data.find(b"\n", pos)
        if end < 0:
            end = end_all
        line += 1
        raw = data[pos:end]
        offset = base + pos
        length = end - pos
        pos = end + 1
        if not raw or raw[0] in _SPACE or raw[-1] in _SPACE:
            stripped = raw.strip()
            if not stripped:
                continue
            if line == 1 and stripped.startswith(b"\xef\xbb\xbf"):
                stripped = stripped[3:]
                offset += 3
            raw = stripped
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
                obj = decode_line(raw)
            except (ValueError, RecursionError) as e:
                reason = "torn last line" if end == end_all and base + end_all == size \
                    and not data.endswith(b"\n") else f"invalid JSON ({str(e).split(':')[0]})"
                malformed.append((line, reason))
                continue
        if obj.__class__ is not dict:
            malformed.append((line, "not a JSON object"))
            index += 1  # pi keeps any JSON value in its list, so v1 indexes count it
            continue
        etype = obj.get("type")
        if s.header is None:
            s.line, s.index = line, index
            index = _header(s, obj, line, index)
            v2 = s.version >= 2
            continue
        if etype == "session":
            malformed.append((line, "second session header"))
            index += 1
            continue
        node = node_from_object(obj, offset, length, line, index)
        index += 1
        if node is None:
            malformed.append((line, "entry without a type"))
            continue
        if v2:
            if node.id.__class__ is not str:
                malformed.append((line, "entry without an id"))
                continue
            if not (node.parent is None or node.parent.__class__ is str):
                node.parent = None
        nodes.append(node)
    s.line = line
    s.index = index
    STATS["parsed"] += parsed


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
