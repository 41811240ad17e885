"""The session header, pi's version migrations (v1 -> v2 -> v3) and the v3 rewrite."""

from ..errors import BadFile
from .agents import title_slots
from .jsjson import stringify

CURRENT_VERSION = 3


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


def read_header(s, obj, line, index):
    """The title slot or header line; returns the object counter after it."""
    if obj.get("type") == "title" and index == 0 and s.title is None and title_slots():
        s.title = obj  # oh-my-pi's title slot (its agent record: title_slot): the header follows
        return index + 1
    if obj.get("type") != "session" or not isinstance(obj.get("id"), str):
        if getattr(s, "allow_headerless", False):
            return headerless(s, obj, index)
        raise BadFile(f"{s.path}: line {line} is not a session header; this is not a pi session file",
                      hint="a session file starts with {\"type\":\"session\",...}")
    s.header = obj
    s.header_line = line
    version = obj.get("version")
    s.version = version if isinstance(version, int) else 1
    return index + 1


def headerless(s, obj, index):
    """A file without a header (OpenClaw keeps some), read read-only: a header is made up
    (the id is the file name's stem, no line of its own: header_line stays None) and the
    object, the first entry, is read as one. Returns the object counter (not advanced)."""
    import os

    stem = os.path.basename(str(s.path)).split(".", 1)[0]
    stamp = obj.get("timestamp")
    s.header = {"type": "session", "version": CURRENT_VERSION, "id": stem,
                "timestamp": stamp if isinstance(stamp, str) else None, "cwd": None}
    s.version = CURRENT_VERSION
    return index


def migrate_v1_structure(s):
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
    data = session.data
    header = dict(session.header)
    header["version"] = CURRENT_VERSION
    by_line = {node.line: node for node in session.nodes}
    out = []
    for line, offset, raw in iter_lines(data):
        if not raw.strip():
            continue
        node = by_line.get(line)
        if line == session.header_line:
            out.append(stringify(header).encode("utf-8"))
        elif node is not None:
            out.append(stringify(session.load(node)).encode("utf-8"))
        else:
            out.append(raw)  # title slot, malformed or foreign lines: kept as they are
    return b"\n".join(out) + b"\n"
