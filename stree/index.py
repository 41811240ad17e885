"""An on-disk index of a session's structure layer, in the spirit of git's commit-graph.

Parsing a 100,000-entry session means decoding every line. The index keeps what
the parse produced (every Node, the header, the malformed lines, the counters to
continue from) in stree's cache directory, so the next command reads the index
and parses only what was appended since. Entry content is still read from the
session file, by offset, when a command needs it.

    <cache>/index/<dev>-<inode>.idx     one file per session file

An index is never trusted blindly. It belongs to a file by device and inode and
remembers the size, mtime and CRCs of the file's first bytes and of the bytes
just before where it stopped; anything else than "same file" or "same file plus
appended lines" means a full parse (and a new index). A corrupt index is a miss.
Writes are a temp file and a rename, so concurrent stree processes never see a
half-written index; the last writer wins and both versions are valid.

Previews (pi's /tree row text) are cached in the same file once a command has
computed many of them (log --graph), keyed by line offset.
"""

import marshal
import os
import sys
from array import array
from bisect import bisect_left
from binascii import crc32

from . import session as sessions
from .errors import BadFile

FORMAT = 3  # bump when Node fields or their meaning change (3: JavaScript trims, label targets)
MAGIC = b"stree-index\n"
WINDOW = 4096  # bytes checked at the start of the file and before the indexed end
PREVIEW_WRITE_MIN = 64  # newly computed previews worth rewriting the index for


def cache_dir():
    override = os.environ.get("STREE_CACHE_DIR")
    if override:
        return override
    from platformdirs import user_cache_dir

    return os.path.join(user_cache_dir("stree"), "index")


def enabled(no_cache=False):
    return not no_cache and not os.environ.get("STREE_NO_CACHE")


def index_path(st):
    return os.path.join(cache_dir(), f"{st.st_dev:x}-{st.st_ino:x}.idx")


def _crc(fd, start, end):
    start = max(0, start)
    return crc32(os.pread(fd, end - start, start)) if end > start else 0


def _covered(fd, size):
    """The end of the last complete line: a torn last line is never indexed."""
    pos = size
    while pos > 0:
        n = min(65536, pos)
        chunk = os.pread(fd, n, pos - n)
        i = chunk.rfind(b"\n")
        if i >= 0:
            return pos - n + i + 1
        pos -= n
    return 0


# -- loading ---------------------------------------------------------------------


def load(path):
    """Parse a session file through its index: (Session, state), state one of
    'fresh' (index used as is), 'updated' (appended lines parsed), 'built'."""
    fd = sessions._open(path)
    try:
        st = os.fstat(fd)
    except OSError as e:
        os.close(fd)
        raise BadFile(f"{path}: cannot read: {e.strerror}") from None
    import stat

    if stat.S_ISDIR(st.st_mode):
        os.close(fd)
        raise BadFile(f"{path}: is a directory, not a session file", hint="pass the .jsonl file inside it with -s")
    size = st.st_size
    covered = _covered(fd, size)
    target = index_path(st)
    s = _restore(target, path, fd, st, covered)
    state = "fresh"
    if s is None:
        s = sessions.Session(path)
        state = "built"
    elif s.covered < covered:
        state = "updated"
    s._fd = fd
    s.size = size
    if s.previews is None:
        s.previews = PreviewCache()
    if s.covered < covered:
        known = len(s.nodes)
        sessions.scan_file(s, fd, s.covered, covered)
        s.covered = covered
        if state == "updated" and _redefines_calls(s.nodes, known):
            s.previews.forget()
        if s.header is not None:
            s._meta = _write(target, s, st, fd, path)
    elif s._meta is not None and (s._meta["size"], s._meta["mtime_ns"]) != (size, st.st_mtime_ns):
        s._meta = _write(target, s, st, fd, path)  # only a torn tail changed: remember the new size and mtime
    s.ends_with_newline = True
    if covered < size:
        sessions.scan_file(s, fd, covered, size)  # the torn tail: parsed every time, never indexed
    s.size = size
    sessions.finish(s)
    return s, state


def _redefines_calls(nodes, known):
    """True when an appended assistant message reuses a toolCall id seen before:
    the cached previews of earlier tool results may then be wrong."""
    new = set()
    for node in nodes[known:]:
        if node.role == "assistant" and node.aux:
            new.update(node.aux)
    if not new:
        return False
    for node in nodes[:known]:
        if node.type == "message" and node.aux is not None:
            if node.role == "assistant" and not new.isdisjoint(node.aux):
                return True
            if node.role == "toolResult" and node.aux.__class__ is str and node.aux in new:
                return True
    return False


def _read(target):
    with open(target, "rb") as f:
        data = f.read()
    if not data.startswith(MAGIC):
        return None, None
    view = memoryview(data)
    head = len(MAGIC)
    meta_len = int.from_bytes(view[head:head + 4], "little")
    meta = marshal.loads(view[head + 4:head + 4 + meta_len])
    return meta, view[head + 4 + meta_len:]


def _restore(target, path, fd, st, covered):
    """The Session an index holds for this file, or None when there is none worth trusting."""
    try:
        meta, body = _read(target)
        if meta is None or meta.get("format") != FORMAT or meta["dev"] != st.st_dev or meta["ino"] != st.st_ino:
            return None
        old = meta["covered"]
        if old > covered:
            return None  # truncated or rewritten
        if (meta["size"], meta["mtime_ns"]) != (st.st_size, st.st_mtime_ns) and st.st_size <= meta["size"]:
            return None  # changed in place
        if meta["head"] != _crc(fd, 0, min(WINDOW, old)) or meta["window"] != _crc(fd, old - WINDOW, old):
            return None  # not the same bytes any more
        if old < covered and meta["version"] < 2:
            return None  # v1 ids depend on the whole file: no incremental update
        nodes_len = meta["nodes_len"]
        if crc32(body[:nodes_len]) != meta["nodes_crc"]:
            return None
        cols = marshal.loads(body[:nodes_len])
        if len(cols) != 11 or any(len(c) != len(cols[0]) for c in cols):
            return None
        s = sessions.Session(path)
        (s.header, s.header_line, s.title, s.version, s.malformed, s.line, s.index) = meta["state"]
        s.nodes = list(map(sessions.Node, *cols))
        s.covered = old
        s._meta = meta
        s.previews = PreviewCache(meta, bytes(body[nodes_len:]))
        return s
    except FileNotFoundError:
        return None
    except Exception as e:  # corrupt, truncated, from another version: a miss, never an error
        _debug(f"ignoring index {target}: {type(e).__name__}: {e}")
        return None


# -- writing ---------------------------------------------------------------------


def _write(target, s, st, fd, path, previews=None):
    """Write the index of `s` (parsed up to s.covered) atomically; failures are only reported with --debug."""
    try:
        nodes = s.nodes
        ids = {n.id: n.id for n in nodes if n.id.__class__ is str}
        cols = (
            [n.id for n in nodes],
            # parents as the id objects themselves: marshal stores them as references
            [ids.get(n.parent, n.parent) if n.parent.__class__ is str else n.parent for n in nodes],
            [sys.intern(n.type) for n in nodes],
            [n.role if n.role.__class__ is not str else sys.intern(n.role) for n in nodes],
            [n.ts for n in nodes], [n.offset for n in nodes], [n.length for n in nodes],
            [n.line for n in nodes], [n.index for n in nodes], [n.aux for n in nodes], [n.hidden for n in nodes],
        )
        body = marshal.dumps(cols, 4)
        covered = s.covered
        if previews is None:
            previews = s.previews.section(s) if s.previews is not None else b""
        meta = {
            "format": FORMAT, "dev": st.st_dev, "ino": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "covered": covered, "head": _crc(fd, 0, min(WINDOW, covered)), "window": _crc(fd, covered - WINDOW, covered),
            "path": os.path.abspath(path), "version": s.version,
            "state": (s.header, s.header_line, s.title, s.version, s.malformed, s.line, s.index),
            "nodes_len": len(body), "nodes_crc": crc32(body),
        }
        head = marshal.dumps(meta, 4)
        directory = os.path.dirname(target)
        os.makedirs(directory, mode=0o700, exist_ok=True)
        tmp = f"{target}.{os.getpid()}.tmp"
        fdw = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fdw, "wb") as f:
                f.write(MAGIC + len(head).to_bytes(4, "little") + head)
                f.write(body)
                f.write(previews)
            os.replace(tmp, target)
            return meta
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except Exception as e:
        _debug(f"cannot write index {target}: {type(e).__name__}: {e}")
    return None


def save_previews(s):
    """Rewrite the index with the previews computed by this command, when there are enough."""
    cache = s.previews
    if cache is None or len(cache.new) < PREVIEW_WRITE_MIN or s._fd is None or s._meta is None \
            or s.version < 2:
        return
    try:
        st = os.fstat(s._fd)
        meta = s._meta
        if (st.st_size, st.st_mtime_ns) != (meta["size"], meta["mtime_ns"]):
            return  # the file moved on meanwhile: the next command reindexes
        target = index_path(st)
        current, _ = _read(target)
        if current is None or current.get("covered") != meta["covered"]:
            return
    except Exception:
        return
    _write(target, s, st, s._fd, s.path, cache.section(s))


# -- previews ----------------------------------------------------------------------


class PreviewCache:
    """Preview segments by line offset: read lazily from the index, new ones kept for writing."""

    def __init__(self, meta=None, section=b""):
        self.new = {}
        self._section = section
        self._loaded = None
        self.home = os.environ.get("HOME") or os.environ.get("USERPROFILE") or ""

    def _load(self):
        if self._loaded is None:
            self._loaded = ((), (), b"")
            sec = self._section
            if len(sec) >= 12:
                try:
                    count = int.from_bytes(sec[:4], "little")
                    home_len = int.from_bytes(sec[4:8], "little")
                    home = bytes(sec[12:12 + home_len]).decode("utf-8", "surrogateescape")
                    if home == self.home:  # previews shorten paths under $HOME
                        pos = 12 + home_len
                        offsets = array("q")
                        offsets.frombytes(sec[pos:pos + 8 * count])
                        pos += 8 * count
                        starts = array("q")
                        starts.frombytes(sec[pos:pos + 8 * (count + 1)])
                        pos += 8 * (count + 1)
                        if crc32(sec[pos:]) == int.from_bytes(sec[8:12], "little"):
                            self._loaded = (offsets, starts, sec[pos:])
                except Exception as e:
                    _debug(f"ignoring cached previews: {type(e).__name__}: {e}")
        return self._loaded

    def get(self, node):
        seg = self.new.get(node.offset)
        if seg is not None:
            return seg
        offsets, starts, blob = self._load()
        i = bisect_left(offsets, node.offset)
        if i < len(offsets) and offsets[i] == node.offset:
            try:
                return marshal.loads(blob[starts[i]:starts[i + 1]])
            except Exception:
                return None
        return None

    def put(self, node, segments):
        self.new[node.offset] = tuple(segments)

    def section(self, s):
        """The preview section for an index of `s`: old previews of lines still indexed, plus new ones."""
        offsets, starts, blob = self._load()
        chunks = {}
        limit = s.covered
        for i, off in enumerate(offsets):
            if off < limit:
                chunks[off] = bytes(blob[starts[i]:starts[i + 1]])
        for off, seg in self.new.items():
            if off < limit:
                chunks[off] = marshal.dumps(seg, 4)
        if not chunks:
            return b""
        keys = sorted(chunks)
        out_offsets = array("q", keys)
        out_starts = array("q", [0])
        parts = []
        pos = 0
        for k in keys:
            parts.append(chunks[k])
            pos += len(chunks[k])
            out_starts.append(pos)
        blob = b"".join(parts)
        home = self.home.encode("utf-8", "surrogateescape")
        return (len(keys).to_bytes(4, "little") + len(home).to_bytes(4, "little")
                + crc32(blob).to_bytes(4, "little") + home + out_offsets.tobytes() + out_starts.tobytes() + blob)

    def forget(self):
        """Drop every cached preview (a tool call id was redefined: old previews may be wrong)."""
        self._loaded = ((), (), b"")


# -- maintenance -------------------------------------------------------------------


def entries():
    """(index path, meta or None) for every index file in the cache."""
    directory = cache_dir()
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    out = []
    for name in names:
        full = os.path.join(directory, name)
        meta = None
        if name.endswith(".idx"):
            try:
                meta, _ = _read(full)
            except Exception:
                meta = None
        out.append((full, meta))
    return out


def is_stale(full, meta):
    """True when an index file no longer belongs to a session file as it is."""
    if not full.endswith(".idx") or meta is None or meta.get("format") != FORMAT:
        return True
    try:
        st = os.stat(meta["path"])
    except OSError:
        return True
    if (st.st_dev, st.st_ino) != (meta["dev"], meta["ino"]) or st.st_size < meta["covered"]:
        return True
    return False


def _debug(message):
    if os.environ.get("STREE_DEBUG") or os.environ.get("STREE_DEBUG_STATS"):
        print(f"stree: debug: {message}", file=sys.stderr)
