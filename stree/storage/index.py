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
appended lines" means a full parse (and a new index). A corrupt index is never trusted: its
metadata is checked by a CRC every time, its data area a block at a time where a command
reads it (stree.storage.area): damage found when it is opened is a miss, found later the
rows are parsed from the file again (a warm command reads only the pages it decodes).
Writes are a temp file and a rename, so concurrent stree processes never see a
half-written index; the last writer wins and both versions are valid.

Previews (pi's /tree row text) are cached in the same file once a command has
computed many of them (log --graph), keyed by line offset.
"""

import marshal
import os
from _weakref import ref  # (not the weakref module: stree.storage.session)
from zlib import crc32

from ..format.stdlib import array
from . import session as sessions
from .nodes import FIELDS, Nodes
from . import calltable
from .area import block_crcs, block_shift
from .cachedir import cache_dir, debug, write_file
from .columns import Area, Blobs, IndexColumns, Parts, decode_column, drop, encode_column
from .indexfile import frame, read_meta, with_previews
from .previews import PreviewCache
from .shape import reshape
from ..errors import BadFile, Stopped

FORMAT = 11  # bump when Node fields or their meaning change (4: columns, tree shape; 5: previews of
#            tool results whose call id repeats are no longer kept; 6: previews as pi 1.5.2 draws them;
#            7: a CRC of the metadata, the data CRC covers the previews too, ctime and the racy-write check;
#            8: the aux of thinking_level_change and model_change entries: their level and model;
#            9: the aux column split: the rows that are not messages apart, columns.encode_column;
#            10: Shape.ordered and Shape.setters; the label maps in the data area, read when used;
#            11: the toolCall ids' table, stree.storage.calltable; the path of the last row, Shape.last_path)
WINDOW = 4096  # bytes checked at the start of the file and before the indexed end
PREVIEW_WRITE_MIN = 1  # newly computed previews worth rewriting the index for
RACY_NS = 50_000_000  # a file changed this close to when its index was written may change again
#                       unseen: file timestamps are coarse (a kernel tick); see racy()
RACY_COARSE_NS = 2_000_000_000  # the same on a file system with whole-second timestamps (FAT: 2 s)


def enabled(no_cache=False):
    return not no_cache and not os.environ.get("STREE_NO_CACHE")


def index_path(st):
    return os.path.join(cache_dir(), f"{st.st_dev:x}-{st.st_ino:x}.idx")


def racy(st, now_ns=None):
    """True when `st` (a session file's stat) is too recent for its size, mtime and ctime to
    prove it unchanged later, as git's "racily clean" entries: a change in the same tick of
    the file system's clock leaves them all as they were. A cache written now must check more
    than the stat (stree.storage.index) or not be kept (stree.storage.keptgraph)."""
    import time

    now_ns = time.time_ns() if now_ns is None else now_ns
    changed = max(st.st_mtime_ns, st.st_ctime_ns)
    coarse = st.st_mtime_ns % 1_000_000_000 == 0 and st.st_ctime_ns % 1_000_000_000 == 0
    return now_ns - changed < (RACY_COARSE_NS if coarse else RACY_NS)


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


_LOADED = {}  # path -> (identity, Session): a second load in one process (a write after a read)
TAIL_LINES = 16  # appended lines left to parse by each command before the index is rewritten
TAIL_BYTES = 1 << 20


def load(path, defer=False, fd=None, keep=None):
    """Parse a session file through its index: (Session, state), state one of
    'fresh' (index used as is), 'updated' (appended lines parsed), 'built'.

    With `defer`, a new index is written by save() when the command ends (once,
    with the previews the command computed) instead of before it starts. `keep`: a list
    the decoded objects of the entries parsed here are appended to (Session.keep)."""
    import gc

    enabled = gc.isenabled()
    gc.disable()  # many objects, no cycles: collections would only cost time
    try:
        return _load(path, defer, fd, keep)
    finally:
        if enabled:
            gc.enable()


def _identity(fd, st):
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns,
            _crc(fd, st.st_size - WINDOW, st.st_size))


def _load(path, defer=False, own=None, keep=None):
    # `own`: a descriptor of the file to read through (a copy of it is kept) rather than opening
    # it again: the writer's, while it holds a lease that an open would break (stree.writing)
    s = fd = None
    try:  # (until a Session holds it, a stop or an error anywhere closes the descriptor here, once;
        #    opened inside: the line of the `try` itself is outside it, and a stop can come there)
        fd = os.dup(own) if own is not None else sessions.open_file(path)
        try:
            st = os.fstat(fd)
        except OSError as e:
            raise BadFile(f"{path}: cannot read: {e.strerror}") from None
        import stat

        if stat.S_ISDIR(st.st_mode):
            raise BadFile(f"{path}: is a directory, not a session file", hint="pass the .jsonl file inside it with -s")
        size = st.st_size
        same = _LOADED.get(path)
        if same is not None and same[0] == _identity(fd, st):
            s = same[1]
            if s.fd is None:
                s.fd = fd  # (closed meanwhile: stree.storage.session.close_files)
            else:
                spare, fd = fd, None  # (forgotten first: never closed twice)
                os.close(spare)
            return s, "fresh"
        covered = _covered(fd, size)
        target = index_path(st)
        s = _restore(target, path, fd, st, covered)
        state = "fresh"
        if s is None:
            s = sessions.Session(path)
            s.keep = keep
            state = "built"
        elif s.covered < covered:
            state = "updated"
        s.fd = fd
    except BaseException:  # (a cancellation: stree.errors.Stopped)
        if fd is not None and (s is None or s.fd != fd):
            os.close(fd)
        raise
    try:
        _bring_current(s, path, fd, st, covered, target, state, defer)
        _LOADED[path] = (_identity(fd, st), s)
    except BaseException:  # (a stop or an error before the session is handed out: nobody else holds it)
        s.close()
        raise
    return s, state


def _bring_current(s, path, fd, st, covered, target, state, defer):
    """The lines of the file `s` (loaded from its index, or new) does not cover yet, parsed
    into it; its index written again when they add up, its torn tail parsed every time."""
    size = st.st_size
    s.size = size
    if s.previews is None:
        s.previews = PreviewCache()
    s.seen = (size, st.st_mtime_ns)
    s.file_stat = st
    if s.covered < covered:
        known = len(s.nodes)
        tail = covered - s.covered
        sessions.scan_file(s, fd, s.covered, covered)
        s.covered = covered
        if s.header is not None:
            if s.version >= 2:
                reshape(s.nodes, known, len(s.nodes) - known > TAIL_LINES)
                if state == "updated" and calltable.redefines_calls(s.nodes, known):
                    s.previews.forget()
            # like git's commit-graph, a few appended lines are parsed again by each command
            # rather than rewriting the index for every one; it is rewritten once they add up
            if defer and state == "built" and s.version >= 2 and covered == size:
                s.pending = (target, st, len(s.nodes))
            elif state == "built" or s.version < 2 or len(s.nodes) - known > TAIL_LINES or tail > TAIL_BYTES:
                s.index_meta = _write(target, s, st, fd, path, known if state == "updated" else 0)
    elif s.index_meta is not None and ((s.index_meta["size"], s.index_meta["mtime_ns"], s.index_meta["ctime_ns"])
                                  != (size, st.st_mtime_ns, st.st_ctime_ns)
                                  or (s.index_meta["racy_crc"] is not None and not racy(st))):
        # a torn tail changed (new size and times), or a racy index proved right: written again
        s.index_meta = _write(target, s, st, fd, path, len(s.nodes))
    s.ends_with_newline = True
    if covered < size:
        known = len(s.nodes)
        sessions.scan_file(s, fd, covered, size)  # the torn tail: parsed every time, never indexed
        if s.nodes.shape is not None:
            reshape(s.nodes, known, len(s.nodes) - known > TAIL_LINES)
    s.size = size
    sessions.finish(s)
    if s.version < 2:
        s.nodes.shape = None  # v1 ids are made by finish(): the tree computes its shape itself


def _data_area(f, start, length):
    """The `length` bytes of an index file after its metadata (which end at `start`), or None
    when the file holds more or fewer. Mapped, not read: a warm command touches only what it
    decodes besides the CRC, and copies none of it (reading 10 MB at 100k entries cost a
    warm `log -n 20` about as much as the CRC). The mapping stays valid when the index is
    replaced or removed (stree writes by rename, drops by unlink). A mapping holds a
    descriptor as long as its Session lives (stree.storage.index keeps the Sessions it
    loaded): past MAP_MAX, in a command reading many sessions (ls --all), the rest are read."""
    global _mapped
    size = os.fstat(f.fileno()).st_size
    if size != start + length:
        return None
    if length == 0:
        return b""
    if _mapped < MAP_MAX:
        import mmap

        try:
            area = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # a file system that cannot map, no descriptor left: read it
            pass
        else:
            _mapped += 1
            return memoryview(area)[start:]
    f.seek(start)
    data = f.read(length + 1)
    return data if len(data) == length else None


MAP_MAX = 16  # index files mapped by one process; the others are read (_data_area)
_mapped = 0
def _restore(target, path, fd, st, covered):
    """The Session an index holds for this file, or None when there is none worth trusting."""
    from .shape import Shape

    try:
        f = open(target, "rb")
    except FileNotFoundError:
        return None
    except OSError as e:
        debug(f"ignoring index {target}: {e}")
        return None
    try:
        meta, start = read_meta(f)
        if meta is None or meta.get("format") != FORMAT or meta["dev"] != st.st_dev or meta["ino"] != st.st_ino:
            f.close()
            return None
        old = meta["covered"]
        if old > covered:
            f.close()
            return None  # truncated or rewritten
        if (meta["size"], meta["mtime_ns"], meta["ctime_ns"]) != (st.st_size, st.st_mtime_ns, st.st_ctime_ns) \
                and st.st_size <= meta["size"]:
            f.close()
            return None  # changed in place (ctime: even with the mtime put back, or a copy onto the inode)
        if meta["head"] != _crc(fd, 0, min(WINDOW, old)) or meta["window"] != _crc(fd, old - WINDOW, old):
            f.close()
            return None  # not the same bytes any more
        if old < covered and meta["version"] < 2:
            f.close()
            return None  # v1 ids depend on the whole file: no incremental update
        if meta["racy_crc"] is not None and _crc(fd, 0, old) != meta["racy_crc"]:
            f.close()
            return None  # written in the same tick as a change: the stat proves nothing, the bytes do
        # the data area (previews too) is checked a block at a time where it is read (stree.storage.area):
        # here what the tree's shape needs, later what a command reads (an edit with the modification
        # time put back included). Damage found here is a miss; found later, the rows are parsed again
        length = meta["data_len"] + (meta["previews"][1] if meta.get("previews") else 0)
        data = _data_area(f, start, length)
        f.close()
        shift, crcs = meta["blocks"]
        crcs = array("I", crcs)
        if data is None or not 12 <= shift <= 24 or len(crcs) != -(-length >> shift):
            return None
        blobs = Blobs(data, start, crcs, shift)
        if meta["version"] < 2:
            blobs.check(0, length)  # (v1: its ids are made from the whole file, every byte checked now)
        for _, segment in meta["segments"]:
            for kind, where in segment.values():
                if kind == "f":
                    blobs.get(where[1]), blobs.get(where[2])  # (a width and its missing rows: read as is)
        s = sessions.Session(path)
        (s.header, s.header_line, s.title, s.version, s.malformed, s.line, s.index) = meta["state"]
        n = meta["rows"]
        own = ref(s)  # (not s: a cycle would keep its descriptor, and a writer's lock, open until a gc)
        s.nodes = Nodes(IndexColumns(blobs, meta["segments"], target, lambda: _parse_again(own(), target, old, n)), n)
        if meta.get("shape") is not None:
            (prow, nkids, rest, setters, path), (name_row, ordered) = meta["shape"]
            if any(where[1] != 4 * n for where in (prow, nkids, *(setters or ()))) or (path and path[1] != n):
                return None
            # (decoded when read: a warm `context` walks a few rows of prow and decodes none of it)
            s.nodes.shape = Shape.stored(blobs.get(prow), blobs.get(nkids), blobs.get(rest), name_row, ordered,
                                         setters and (lambda: [blobs.get(where) for where in setters]),
                                         path and blobs.get(path))
        calltable.attach(s.nodes, meta, blobs)
        s.covered = old
        s.index_meta = meta
        s.index_blobs = blobs
        pv = meta.get("previews")
        # (not copied; checked when first read: damaged, it holds none)
        s.previews = PreviewCache(meta, blobs.view(pv) if pv else b"", checked=(lambda off, n: blobs.check(pv[0] + off, n))
                                  if pv else True,
                                  release=(lambda off, n: blobs.release((pv[0] + off, n))) if pv else None)
        return s
    except Exception as e:  # corrupt, damaged, truncated, from another version: a miss, never an error
        if not f.closed:
            f.close()
        if isinstance(e, Stopped):
            raise  # a cancellation or deadline meanwhile: no news about the index
        debug(f"ignoring index {target}: {type(e).__name__}: {e}")
        return None


def _parse_again(s, target, covered, rows):
    """{field: values} of an index's `rows` rows (bytes [0, covered) of the file), parsed from the
    file again: bytes of the index's data area were found damaged where a command read them
    (IndexColumns). The index is removed, and written anew when the command ends. None when the
    session is gone (its rows outlived it)."""
    if s is None:
        return None
    debug(f"ignoring index {target}: damaged")
    drop(target)
    if s.fd is None:
        s.fd = sessions.open_file(s.path)
    again = sessions.Session(s.path)
    sessions.scan_file(again, s.fd, 0, covered)
    if len(again.nodes) != rows:
        raise sessions.changed_while_reading(s.path)
    if s.pending is None and s.covered == s.size and s.version >= 2:
        s.pending = (target, s.file_stat, len(s.nodes))
    return {name: again.nodes.col(name) for name in FIELDS}


# -- writing ---------------------------------------------------------------------

SEGMENTS_MAX = 12  # appended segments before an update rewrites the index as one


def _write(target, s, st, fd, path, keep=0, previews=None):
    """Write the index of `s` (parsed up to s.covered) atomically, copying the stored
    segments of its first `keep` rows; failures are only reported with --debug."""
    try:
        nodes = s.nodes
        area = Area()
        put = area.put
        old = s.index_meta
        segments = []
        start = 0
        blobs = calls_old = None
        if keep and old is not None and keep == old["rows"] and len(old["segments"]) < SEGMENTS_MAX \
                and s.index_blobs is not None:
            blobs, stored = s.index_blobs, old["segments"]
            calls_old = old["calls"]
        elif not keep and s.ready is not None and s.ready[2] <= len(nodes):
            blobs, stored, keep = s.ready  # the segments parse workers encoded
        if blobs is not None:
            for rows, seg in stored:
                copy = {}
                for name, (kind, where) in seg.items():
                    copy[name] = (kind, tuple(put(blobs.get(w)) for w in where) if kind in ("s", "v", "f", "a")
                                  else put(blobs.get(where)))
                segments.append((rows, copy))
            start = keep
        n = len(nodes)
        if start < n:
            types = nodes.tail("type", start) if start else nodes.col("type")
            segments.append((n - start, {name: encode_column(name, nodes.tail(name, start) if start else nodes.col(name), put,
                                                             types) for name in FIELDS}))
        shape = nodes.shape
        shape_where = None
        if shape is not None and s.version >= 2:
            ordered = shape.ordered_rows()
            setters = shape.setters(nodes) if len(shape.parents()) == n else None
            setters = setters and tuple(put(a.tobytes()) for a in setters)
            last = shape.last_path() if len(shape.parents()) == n else None
            shape_where = ((put(array("i", shape.prow).tobytes()), put(array("i", shape.nkids).tobytes()),
                            put(marshal.dumps(shape.rest(), 4)), setters, last and put(last)), (shape.name_row, ordered))
        calls = calltable.section(nodes, start if calls_old is not None else 0, put, calls_old, blobs)
        data_len = area.size
        if previews is None:
            previews = s.previews.section(s) if s.previews is not None else b""
        shift = block_shift()
        blocks = (shift, block_crcs([*area.chunks, previews], shift).tobytes())
        pv = (data_len, len(previews)) if previews else None
        covered = s.covered
        meta = {
            "format": FORMAT, "dev": st.st_dev, "ino": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "ctime_ns": st.st_ctime_ns, "racy_crc": _crc_all(fd, covered) if racy(st) else None,
            "covered": covered, "head": _crc(fd, 0, min(WINDOW, covered)), "window": _crc(fd, covered - WINDOW, covered),
            "path": os.path.abspath(path), "version": s.version,
            "state": (s.header, s.header_line, s.title, s.version, s.malformed, s.line, s.index),
            "rows": n, "segments": segments, "shape": shape_where, "data_len": data_len, "blocks": blocks,
            "previews": pv, "calls": calls,
        }
        write_file(target, [*frame(meta), *area.chunks, previews])
        s.index_blobs = Parts(area.chunks)  # what the new meta's segments point into
        s.ready = None
        return meta
    except Stopped:
        raise  # a cancellation or deadline meanwhile (the temp file is gone: write_file)
    except Exception as e:
        debug(f"cannot write index {target}: {type(e).__name__}: {e}")
    return None


def _crc_all(fd, end):
    """The CRC of bytes [0, end) of a file, read a block at a time."""
    crc = 0
    pos = 0
    while pos < end:
        block = os.pread(fd, min(1 << 20, end - pos), pos)
        if not block:
            break
        crc = crc32(block, crc)
        pos += len(block)
    return crc


def save(s):
    """At the end of a command: write the index a load deferred, or rewrite the index
    with the previews this command computed."""
    pending = s.pending
    if pending is not None:
        s.pending = None
        target, st, rows = pending
        if len(s.nodes) == rows and s.fd is not None:  # the rows parsed then, nothing since
            s.index_meta = _write(target, s, st, s.fd, s.path)
        return
    cache = s.previews
    if cache is None or len(cache.new) < PREVIEW_WRITE_MIN or s.fd is None or s.index_meta is None \
            or s.version < 2 or s.covered != s.size:
        return  # (a torn last line is parsed, never indexed: the next command writes them)
    try:
        st = os.fstat(s.fd)
        meta = s.index_meta
        if (st.st_size, st.st_mtime_ns) != s.seen or st.st_ctime_ns != s.file_stat.st_ctime_ns:
            return  # the file moved on meanwhile: the next command reindexes
        target = index_path(st)
        with open(target, "rb") as f:
            current, start = read_meta(f)
            if current is None or current.get("covered") != meta["covered"]:
                return  # written again meanwhile, for more of the file
            if current == meta and len(s.nodes) == meta["rows"]:  # (no line parsed since: its data area copied)
                s.index_meta = with_previews(target, f, start, meta, cache.section(s))
                return
    except Stopped:
        raise  # (the temp file is gone: write_file)
    except Exception as e:
        debug(f"cannot write index previews: {type(e).__name__}: {e}")
        return
    s.index_meta = _write(target, s, st, s.fd, s.path, meta["rows"], cache.section(s))  # (the lines since added)
