"""The toolCall ids of an index's assistant messages, found without reading the others.

A tool result's preview names its call (pi's /tree row: `[read: ~/f.py]`). pi builds its map of
calls while it walks the whole tree, so the call an id names is the one it walks last; when no
id repeats, every order gives the same map, and the row holding the id is the answer. Proving
that no id repeats means reading every row's ids: at 1M entries, most of the first screen.

So the index proves it once, when it is written (stree.storage.index), and keeps:
- whether every call id of its rows is a str and none repeats (`unique`);
- per part of its rows (one part per update that appended rows), a sorted table of a stable
  64-bit hash of each id beside the row holding it, searched by bisection in the mapped index.

A hash names candidate rows; the caller confirms a candidate by the message's own calls (two
ids may share a hash), so the answer is the map's exactly. An index whose ids repeat, or are
not all str, keeps `unique` false: its reader walks the tree as before (stree.core.preview).

    meta["calls"] = (unique, ((keys, rows), ...))   keys: array "Q" sorted, rows: array "I"
"""

from itertools import compress, repeat
from operator import and_, eq, lshift, methodcaller, or_, rshift
from zlib import adler32, crc32

from ..format.stdlib import array


def keys(ids):
    """The 64-bit hash of each str id, the same in every process (unlike hash(): PYTHONHASHSEED),
    made at C speed (map: a cold index of a million entries has half a million ids)."""
    raws = list(map(methodcaller("encode", "utf-8", "surrogatepass"), ids))
    return map(or_, map(lshift, map(crc32, raws), repeat(32)), map(adler32, raws))


def ids_of(types, roles, auxes, start=0):
    """(call id, row) of each toolCall of the assistant messages among these rows (numbered
    from `start`), in file order."""
    for r in compress(range(len(roles)), map(eq, roles, repeat("assistant"))):
        aux = auxes[r]
        if aux and types[r] == "message":
            for cid in aux:
                yield cid, start + r


def _encode(ids, rows, put):
    """The table of str `ids` at `rows`: their keys sorted, each beside its row."""
    both = sorted(map(or_, map(lshift, keys(ids), repeat(32)), rows))  # (key, row) as one int: one sort, no tuples
    return (put(array("Q", map(rshift, both, repeat(32))).tobytes()),
            put(array("I", map(and_, both, repeat(0xFFFFFFFF))).tobytes()))


def section(nodes, start, put, old=None, blobs=None):
    """meta["calls"] for the rows of `nodes`, its tables written through put(). With `old` (the
    meta["calls"] of an index holding the first `start` rows, its data area `blobs`), its parts
    are copied and only the rows after them read; else every row is (start is then 0)."""
    n = len(nodes)
    if n >= 1 << 32:
        return (False, ())
    if start:
        types, roles, auxes = nodes.tail("type", start), nodes.tail("role", start), nodes.tail("aux", start)
    else:
        types, roles, auxes = nodes.col("type"), nodes.col("role"), nodes.col("aux")
    ids, rows = [], []
    add_id, add_row = ids.append, rows.append
    for r in compress(range(len(roles)), map(eq, roles, repeat("assistant"))):  # (ids_of, inlined: a pass over
        aux = auxes[r]  #                                                             every row of a cold index)
        if aux and types[r] == "message":
            for cid in aux:
                add_id(cid)
                add_row(start + r)
    unique = set(map(type, ids)) <= {str} and len(set(ids)) == len(ids)
    parts = []
    if old is not None:
        was_unique, old_parts = old
        if unique and was_unique:
            found = Table(old_parts, blobs, start)
            found.check()
            unique = not any(map(found.candidates, ids))  # (a hash met: not proven, not unique)
        else:
            unique = False
        parts = [(put(bytes(blobs.get(k))), put(bytes(blobs.get(r)))) for k, r in old_parts] if unique else []
    if not unique:
        return (False, ())  # (the tables would never be read)
    if ids or not parts:
        parts.append(_encode(ids, rows, put))
    return (True, tuple(parts))


class Table:
    """The tables of an index whose call ids are unique, read in place (mapped), each entry read
    checked (stree.storage.area.Damaged when its bytes are not those written)."""

    def __init__(self, parts, blobs, rows):
        self.rows = rows  # the index's rows: those after them are not in the tables
        self._blobs = blobs
        self._where = parts
        self._parts = []
        for k, r in parts:
            hashes, found = blobs.view(k).cast("Q"), blobs.view(r).cast("I")
            if len(hashes) != len(found):
                raise ValueError("a call table's keys and rows differ in length")
            self._parts.append((hashes, found))

    def check(self):
        """Check every entry (a writer copying the tables)."""
        for k, r in self._where:
            self._blobs.get(k), self._blobs.get(r)

    def candidates(self, cid):
        """The rows, in file order, whose calls may include `cid` (a str): those whose id has its
        hash. Every row whose calls include it is among them."""
        h, = keys((cid,))
        check = self._blobs.check
        out = []
        for (hashes, rows), (at_key, at_row) in zip(self._parts, self._where):
            lo, hi = 0, len(hashes)
            while lo < hi:  # (bisect_left, each key read checked: a lookup checks a few blocks, not all)
                mid = (lo + hi) >> 1
                check(at_key[0] + 8 * mid, 8)
                if hashes[mid] < h:
                    lo = mid + 1
                else:
                    hi = mid
            while lo < len(hashes):
                check(at_key[0] + 8 * lo, 8)
                if hashes[lo] != h:
                    break
                check(at_row[0] + 4 * lo, 4)
                out.append(rows[lo])
                lo += 1
        if len(out) > 1:
            out.sort()
        return out


def attach(nodes, meta, blobs):
    """Give `nodes` (an index's rows) the Table of its call ids, when the index proved them unique."""
    calls = meta.get("calls")
    nodes.calls = Table(calls[1], blobs, len(nodes)) if calls is not None and calls[0] else None


def redefines_calls(nodes, known):
    """True when an appended assistant message reuses a toolCall id seen before:
    the cached previews of earlier tool results may then be wrong."""
    new = set()
    roles = nodes.tail("role", known)
    if "assistant" not in roles:
        return False
    for role, aux in zip(roles, nodes.tail("aux", known)):
        if role == "assistant" and aux:
            new.update(aux)
    if not new or not nodes.may_hold("aux", new, known):
        return False  # (no row before holds one: the index's column searched, not read)
    types, roles, auxes = nodes.col("type"), nodes.col("role"), nodes.col("aux")
    for r in range(known):
        aux = auxes[r]
        if aux is not None and types[r] == "message":
            if roles[r] == "assistant" and not new.isdisjoint(aux):
                return True
            if roles[r] == "toolResult" and aux.__class__ is str and aux in new:
                return True
    return False
