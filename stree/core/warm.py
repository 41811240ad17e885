"""Sessions a server keeps read between requests (serve, serve --mcp): each file's Session and
Tree, read again only when the file changed (through the index: only the appended lines are
parsed), and the entries decoded for a request, kept for the next ones. An append keeps them:
an entry is kept by its byte range and id, which an append does not move. A file replaced or
cut short starts afresh."""

import os
import threading

from ..errors import StreeError


class Kept:
    """path -> (Session, Tree) as the file is now, the newest `keep` read besides `pinned()`."""

    def __init__(self, no_cache=False, keep=4, pinned=None, parse=None):
        self.no_cache = no_cache
        self.keep = keep
        self.pinned = pinned or (lambda: None)
        self.parse = parse or self._parse
        self._read = {}  # path -> (identity, Session, Tree, entries), newest last
        self._lock = threading.Lock()

    def load(self, path):
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise StreeError(f"{path}: no such session file", code=3) from None
        except OSError as e:
            raise StreeError(f"{path}: cannot read: {e.strerror}") from None
        identity = file_identity(st)
        with self._lock:
            kept = self._read.get(path)
            if kept is not None and kept[0] == identity:
                self._read[path] = self._read.pop(path)  # (the newest last)
                return kept[1], kept[2]
            # what is kept stays until the new read is whole: a stop meanwhile (a request cancelled,
            # past its deadline) leaves it for the next request, which reads the append again
            session, tree = self.parse(path)
            entries = kept[3] if kept is not None and _appended(kept, identity, session) else None
            tree.load = Entries(tree.load, entries)
            self._read.pop(path, None)
            self._read[path] = (identity, session, tree, tree.load)
            if kept is not None and kept[1] is not session:
                kept[1].close()
            pinned = self.pinned()
            others = [p for p in self._read if p != pinned]
            for old in others[:max(0, len(others) - self.keep)]:
                self._read.pop(old)[1].close()
            return session, tree

    def identity(self, path, tree):
        """The file identity (file_identity) `tree` was read at, if it is still the one kept
        for `path`; else None."""
        with self._lock:
            kept = self._read.get(path)
            return kept[0] if kept is not None and kept[2] is tree else None

    def _parse(self, path):
        from .loading import open_session

        session, tree, _ = open_session(path, self.no_cache)
        return session, tree

    def close(self):
        with self._lock:
            for kept in self._read.values():
                kept[1].close()
            self._read.clear()


def file_identity(st):
    """What tells a file read before from the same file changed since (an os.stat_result): an
    append changes its size, a rewrite its inode or times."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _appended(kept, identity, session):
    """Whether the file read again is the one kept, grown (its entries are where they were)."""
    old, old_session = kept[0], kept[1]
    if identity[:2] != old[:2] or identity[2] < old[2]:
        return False
    header, old_header = session.header or {}, old_session.header or {}
    return header.get("id") == old_header.get("id") and session.version == old_session.version


KEEP_BYTES = 256 << 20  # entries kept decoded between requests, counted by their size in the file
# (past it the newest are kept: a client asks for the entries appended since it last asked). A 100k
# session (88 MB) is kept whole: its get_entries 0.28x pi 1.6.0's, the server's peak RSS 0.39x pi's
# (bench/results.md, the server rows); with 64 MiB, 0.91x and 0.36x.


def keep_budget():
    """How many bytes of entries (as the file holds them) a server keeps decoded between requests:
    STREE_SERVE_KEEP (bytes), default KEEP_BYTES. A decoded entry and its JSON text take several
    times its size in memory; past the budget, entries are decoded again at each request."""
    try:
        return max(0, int(os.environ.get("STREE_SERVE_KEEP", KEEP_BYTES)))
    except ValueError:
        return KEEP_BYTES


class Entries:
    """A Tree's `load` (node -> entry) keeping each entry it decodes, by byte range and id, and
    the JSON text of those a request sent whole (text()), up to keep_budget() bytes of the file:
    past it, a newer entry takes the place of the oldest kept, and an older one is decoded at
    each request. The entries are shared between requests: their callers copy what they change
    (core.context does). `before`: the Entries of the file before lines were appended to it."""

    def __init__(self, load, before=None):
        import heapq

        self.decode = load
        self.budget = keep_budget()
        if before is None:
            self.entries = {}  # offset -> [length, id, entry, text]
            self.kept = 0  # bytes of the file they stand for
            self.offsets = []  # a heap of the kept entries' offsets (the oldest first)
        else:
            self.entries, self.kept, self.offsets = before.entries, before.kept, before.offsets
        self._push, self._pop = heapq.heappush, heapq.heappop

    def __call__(self, node):
        hit = self.entries.get(node.offset)
        if hit is not None and hit[0] == node.length and hit[1] == node.id:
            return hit[2]
        entry = self.decode(node)
        if hit is None and not self._room(node):
            return entry  # past the budget and older than what is kept: decoded each time
        # (the entry first, then its place in the heap: a stop between the two leaves an entry never
        # let go, not an offset without its entry for a later eviction to fail on)
        self.entries[node.offset] = [node.length, node.id, entry, None]
        if hit is not None:  # (the same place, another entry: a file rewritten in place)
            self.kept += node.length - hit[0]
        else:
            self.kept += node.length
            self._push(self.offsets, node.offset)
        return entry

    def _room(self, node):
        """Whether `node`'s entry can be kept, the oldest kept let go to make room for it."""
        offsets, entries = self.offsets, self.entries
        if self.kept + node.length > self.budget:
            if node.length > self.budget or not offsets or offsets[0] > node.offset:
                return False
            while self.kept + node.length > self.budget and offsets and offsets[0] < node.offset:
                self.kept -= entries.pop(self._pop(offsets))[0]
        return self.kept + node.length <= self.budget

    def texts(self, nodes, start, encode):
        """text() of the entries of rows `start`... of `nodes` (read from their columns: no Node
        made for an entry whose text is kept)."""
        if not hasattr(nodes, "col"):
            return [self.text(nodes[row], encode) for row in range(start, len(nodes))]
        offsets, lengths, ids = nodes.col("offset"), nodes.col("length"), nodes.col("id")
        get = self.entries.get
        out = []
        for row in range(start, len(nodes)):
            hit = get(offsets[row])
            if hit is None or hit[3] is None or hit[0] != lengths[row] or hit[1] != ids[row]:
                out.append(self.text(nodes[row], encode))
            else:
                out.append(hit[3])
        return out

    def text(self, node, encode):
        """encode(entry) of `node`'s entry, made once."""
        hit = self.entries.get(node.offset)
        if hit is None or hit[0] != node.length or hit[1] != node.id:
            entry = self(node)
            hit = self.entries.get(node.offset)
            if hit is None or hit[2] is not entry:  # not kept (the budget is spent)
                return encode(entry)
        if hit[3] is None:
            hit[3] = encode(hit[2])
        return hit[3]


class Counted:
    """With STREE_DEBUG_STATS set, a line on stderr after each request: the entries it decoded
    and the lines parsed meanwhile (the watcher's included), as `stree: stats: KIND: ...`; with
    a note (`, kept answer`: answered from a kept answer, service.kept; `, kept drawing`: a page
    of the drawing the tree tool made for an earlier page). A count whose `shown`
    is set false prints nothing (a kept answer looked for and not found: the handler counts)."""

    def __init__(self):
        self.on = bool(os.environ.get("STREE_DEBUG_STATS"))

    def __call__(self, kind):
        return _Count(kind) if self.on else _NOTHING


class _Count:
    def __init__(self, kind):
        self.kind = kind
        self.shown = True
        self.note = ""

    def __enter__(self):
        from ..storage import scan

        self.before = scan.STATS["decoded"], scan.STATS["parsed"]
        return self

    def __exit__(self, *exc):
        import sys

        from ..storage import scan

        if not self.shown:
            return
        decoded, parsed = scan.STATS["decoded"] - self.before[0], scan.STATS["parsed"] - self.before[1]
        print(f"stree: stats: {self.kind}: decoded {decoded} entries, parsed {parsed} lines{self.note}",
              file=sys.stderr, flush=True)


class _Nothing:
    shown = True
    note = ""

    def __setattr__(self, name, value):
        pass  # (nothing counted: nothing to show)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


_NOTHING = _Nothing()
