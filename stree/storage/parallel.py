"""A cold parse shared among processes, one per core.

Decoding every line's JSON is the whole cost of reading a session without its
index, and it is CPU-bound: Python runs it on one core. So a long file is cut at
line boundaries into shares; forked workers take the first shares and this
process the last. Each share is parsed exactly as the serial parser parses, then
encoded as an index segment (stree.storage.index), and its rows are linked to the
parents found among them; a worker leaves that in an anonymous in-memory file.
The segments become the Session's rows (decoded lazily, like an index read from
disk) and, unchanged, the index written for the file; the links make the tree's
shape, finished here for the few parents in another share (shape.compute_shape
runs instead when an id repeats). The result is row for row what one process
makes: tests compare the two on the whole corpus.

A worker that fails (killed, out of memory) costs only time: the file is parsed
again here. STREE_JOBS=1 keeps everything in this process.
"""

import marshal
import os
import signal
import sys
from itertools import repeat
from operator import eq

from ..format.stdlib import array
from . import scan as scanner
from .columns import Area, IndexColumns, Parts, encode_column
from .nodes import FIELDS, Nodes

PER_JOB = 4 << 20  # bytes of lines each process gets at least, when STREE_JOBS is not set
HEAD_BYTES = 64 << 10  # lines read first, in this process, looking for the header
PIECE_MIN = 12 << 20  # bytes of lines parsed before their rows are encoded: the rows' Python objects
#                      (about half as many bytes as their lines) are held for one piece at a time
SEGMENTS = 6  # pieces at most in all, each a segment of the index (an update that finds more than
#              stree.storage.index.SEGMENTS_MAX rewrites it whole)
WORKER_COST = 0.1  # what a worker does besides parsing its share (a fresh process, sending its rows),
#                   as a share of parsing: this process takes that much more
SHARE_FIELDS = tuple(f for f in FIELDS if f not in ("line", "index"))  # those two are made
#                   absolute here, once the lines before each share are counted


_alone = False  # this command parses in this process only, unless STREE_JOBS says otherwise (alone())


def alone():
    """Parse in this process only from now on: for a command whose own work after the parse
    outweighs it (the first `log --graph`: the drawing), where a worker would gain little time
    and add a second process's memory to the peak."""
    global _alone
    _alone = True


def jobs(nbytes):
    """How many processes parse `nbytes` of lines: $STREE_JOBS if set (1: this process
    only), else one per core this process may use, each with PER_JOB bytes or more
    (1 after alone())."""
    if not hasattr(os, "fork"):
        return 1
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return 1  # forking a process with threads is not safe
    wanted = os.environ.get("STREE_JOBS", "").strip()
    if wanted:
        try:
            return max(1, min(int(wanted), 64))
        except ValueError:
            return 1
    if nbytes < 2 * PER_JOB or _alone:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, nbytes // PER_JOB, 8))


def scan_head(s, fd, start, end):
    """Parse line by line until the header is found (within HEAD_BYTES); where it stopped."""
    limit = min(end, start + HEAD_BYTES)
    while s.header is None and start < limit:
        stop = line_end(fd, start, end)
        scanner.scan_range(s, fd, start, stop, end)
        start = stop
    return start


def line_end(fd, pos, end):
    """The offset just after the first newline at or after `pos` (or `end`)."""
    while pos < end:
        chunk = os.pread(fd, min(1 << 16, end - pos), pos)
        if not chunk:
            return end
        i = chunk.find(b"\n")
        if i >= 0:
            return pos + i + 1
        pos += len(chunk)
    return end


def pieces(nbytes, n):
    """How many pieces each of `n` processes encodes its share of `nbytes` in: as few as make
    every piece at most about PIECE_MIN bytes, and SEGMENTS pieces in all at most."""
    return max(1, min(SEGMENTS // n, nbytes // n // PIECE_MIN))


def scan(s, fd, start, end, n):
    """Parse [start, end) into `s` (which has its header and no rows yet) with `n`
    processes, each share encoded in pieces (pieces()). False when the range is too short to
    share, or (n == 1) to cut in pieces: nothing was done."""
    weights = [1.0] * (n - 1) + [1.0 + WORKER_COST]
    total = sum(weights)
    bounds = [start]
    acc = 0.0
    for w in weights[:-1]:
        acc += w
        cut = line_end(fd, start + int((end - start) * acc / total), end)
        if bounds[-1] < cut < end:
            bounds.append(cut)
    bounds.append(end)
    per = pieces(end - start, n)
    if len(bounds) < (3 if n > 1 else 2) or (n == 1 and per < 2) or (n > 1 and s.keep is not None):
        return False  # (keep: every entry decoded handed over in order, here: not shared)
    workers = []
    try:
        for a, b in zip(bounds[:-2], bounds[1:-1]):
            workers.append(_fork(s, fd, a, b, end, per))
        own = _encode_pieces(s, fd, bounds[-2], end, end, per, own=True)  # as the workers do theirs
        results = [_collect(w) for w in workers]
    finally:
        for w in workers:
            if w[0]:
                _reap(w, kill=True)
    if None in results:  # a worker failed: every share here, in order (rare: keep it simple)
        scanner.scan_range(s, fd, bounds[0], end, end)
    else:
        _adopt(s, [share for shares in results for share in shares] + own)
    return True


def _encode_pieces(s, fd, start, stop, end, per, own=False):
    """[start, stop) parsed and encoded as `per` shares one after the other (_encode_share): the
    Python objects of one piece's rows are dropped before the next is parsed. `own`: the last
    piece is this process's last share (it keeps its ids' map)."""
    cuts = [start]
    for k in range(1, per):
        cut = line_end(fd, start + (stop - start) * k // per, stop)
        if cuts[-1] < cut < stop:
            cuts.append(cut)
    cuts.append(stop)
    last = len(cuts) - 2
    return [_encode_share(s, fd, a, b, end, own=own and k == last)
            for k, (a, b) in enumerate(zip(cuts, cuts[1:]))]


def _share(s):
    """An empty Session that continues after the header of `s`, counting lines from 0."""
    part = type(s)(s.path)  # a Session of its own (the caller's class: no import of it)
    part.header, part.title, part.version = s.header, s.title, s.version
    return part


# -- workers -----------------------------------------------------------------------


def _fork(s, fd, start, stop, end, per=1):
    """Start a worker parsing [start, stop) in `per` pieces: [pid, fd of its output, start, stop]."""
    out = _scratch()
    pid = os.fork()
    if pid == 0:  # the worker: parse, write, exit without any of the parent's cleanup
        code = 1
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends it at once (the parent reaps it)
            data = memoryview(_work(s, fd, start, stop, end, per))
            while data:
                data = data[os.write(out, data):]
            code = 0
        except BaseException:
            pass
        finally:
            os._exit(code)
    scanner.STATS["workers"] += 1
    return [pid, out, start, stop]


def _work(s, fd, start, stop, end, per=1):
    """A worker's output: its share, encoded in `per` pieces (a list of shares)."""
    # marshal version 2: no back-references, which cost more to find than they save here
    return marshal.dumps(_encode_pieces(s, fd, start, stop, end, per), 2)


def _encode_share(s, fd, start, stop, end, own=False):
    """Parse [start, stop) and encode its rows as an index segment. Line and object
    numbers count from the share's start. `links`: each row's parent as a row of the
    share (-2: not in it), when the share's ids are distinct (else None); `ids` the
    ids (a worker's), or `map` id -> row (this process's own share). The rows' Python
    objects are dropped: only the encoded columns are kept."""
    from collections import Counter  # (here: a warm command loads no collections)

    parsed = scanner.STATS["parsed"]
    part = _share(s)
    part.keep = s.keep  # (pieces in this process: in order)
    scanner.scan_range(part, fd, start, stop, end)
    nodes = part.nodes
    area = Area()
    types = nodes.col("type")
    segment = {name: encode_column(name, nodes.col(name), area.put, types) for name in SHARE_FIELDS}
    share = {"data": b"".join(area.chunks), "segment": segment, "rows": len(nodes), "lines": _packed(nodes.col("line")),
             "indexes": _packed(nodes.col("index")), "malformed": part.malformed, "nlines": part.line,
             "count": part.index, "newline": part.ends_with_newline,
             "parsed": scanner.STATS["parsed"] - parsed, "links": None, "kids": None, "ids": None}
    scanner.STATS["parsed"] = parsed  # counted when the share is adopted
    if s.version >= 2:  # (v1 ids are made once the whole file is read)
        ids = nodes.col("id")
        n = len(ids)
        row_of = dict(zip(ids, range(n)))
        if len(row_of) == n:
            links = list(map(row_of.get, nodes.col("parent"), repeat(-2)))
            counts = Counter(links)
            kids = list(map(counts.get, range(n), repeat(0)))
            for r in _own_parents(links):
                kids[r] -= 1
            share["links"], share["kids"] = _packed(links), _packed(kids)
            if own:
                share["map"] = row_of
            else:
                share["ids"] = _joined(ids)
    return share


# What a share keeps of its rows besides their segment, while the next pieces are parsed, is
# packed: a few large objects rather than small ones spread among the freed rows (whose memory
# could then not be given back), and marshalled by a worker without a value at a time.

def _packed(ints):
    return array("q", ints).tobytes()


def _ints(packed):
    out = array("q")
    out.frombytes(packed)
    return out


def _joined(ids):
    """The ids as one text (a list when one holds the separator)."""
    text = "\0".join(ids)
    return text if text.count("\0") == len(ids) - 1 and ids else ids


def _ids(share):
    ids = share["ids"]
    return ids.split("\0") if ids.__class__ is str else ids


def _own_parents(links):
    """The rows that name themselves as parent (pi makes them roots)."""
    from .shape import positions

    return positions(list(map(eq, links, range(len(links)))), True)


def _scratch():
    """An anonymous file in memory: a worker writes there without waiting for a reader."""
    if hasattr(os, "memfd_create"):
        try:
            return os.memfd_create("stree-parse", os.MFD_CLOEXEC)
        except OSError:
            pass
    import tempfile

    with tempfile.TemporaryFile() as f:
        return os.dup(f.fileno())


def _collect(worker):
    """A worker's output, or None if it failed."""
    ok = _reap(worker)
    out = worker[1]
    try:
        if not ok:
            return None
        size = os.fstat(out).st_size
        data = os.pread(out, size, 0)
        return marshal.loads(data) if len(data) == size else None
    except (OSError, ValueError, EOFError, TypeError):
        return None
    finally:
        os.close(out)


def _reap(worker, kill=False):
    """Wait for a worker (killed first if `kill`); True if it exited with status 0."""
    pid = worker[0]
    worker[0] = 0
    if kill:
        try:
            os.close(worker[1])
        except OSError:
            pass
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        except InterruptedError:
            continue
        except ChildProcessError:
            return False


# -- putting the shares together -------------------------------------------------------


def _shift(where, delta):
    if where[0].__class__ is tuple:
        return tuple((off + delta, length) for off, length in where)
    return (where[0] + delta, where[1])


def _adopt(s, shares):
    """Make the shares' segments the rows of `s`, numbered after its header."""
    area = Area()
    segments = []
    rows_total = 0
    for share in shares:
        line0, index0 = s.line, s.index
        s.malformed.extend((line0 + line, reason) for line, reason in share["malformed"])
        s.line = line0 + share["nlines"]
        s.index = index0 + share["count"]
        if share["nlines"]:
            s.ends_with_newline = share["newline"]
        scanner.STATS["parsed"] += share["parsed"]
        rows = share["rows"]
        if not rows:
            continue
        base, _ = area.put(share["data"])
        segment = {name: (kind, _shift(where, base)) for name, (kind, where) in share["segment"].items()}
        segment["line"] = encode_column("line", list(map(line0.__add__, _ints(share["lines"]))), area.put)
        segment["index"] = encode_column("index", list(map(index0.__add__, _ints(share["indexes"]))), area.put)
        segments.append((rows, segment))
        rows_total += rows
    blobs = Parts(area.chunks)
    s.nodes = Nodes(IndexColumns(blobs, segments, s.path), rows_total)
    s.ready = (blobs, segments, rows_total)
    if s.version >= 2:
        s.nodes.shape = _shape(s.nodes, shares)


CROSS_MAX = 256  # parents found in another share, one by one; more: compute_shape() does it all


def _shape(nodes, shares):
    """The tree's Shape (stree.core.tree) from the links each share found among its own rows,
    exactly as compute_shape() makes it; None (compute_shape() then runs) when an id is
    repeated anywhere, or when many parents are in another share than their child."""
    from .shape import Shape, positions, scan_labels

    if any(share["links"] is None for share in shares):
        return None
    own = shares[-1]["map"]
    others = ids = set()
    for k, share in enumerate(shares[:-1]):  # ids repeated across shares: pi's byId picks the last
        ids = _ids(share)
        if not own.keys().isdisjoint(ids) or not others.isdisjoint(ids):
            return None
        if k < len(shares) - 2:
            others.update(ids)
    del others, ids
    bases = []
    n = 0
    for share in shares:
        bases.append(n)
        n += share["rows"]
    maps = {len(shares) - 1: own}

    def locate(id):  # the row of an id anywhere (ids are unique now)
        for k in range(len(shares) - 1, -1, -1):
            row_of = maps.get(k)
            if row_of is None:
                row_of = maps[k] = dict(zip(_ids(shares[k]), range(shares[k]["rows"])))
            row = row_of.get(id)
            if row is not None:
                return bases[k] + row
        return None

    prow = []
    nkids = []
    across = []  # parents in another share than their child
    dangling = {}
    for share, base in zip(shares, bases):
        links = list(_ints(share["links"]))
        rows = list(map(base.__add__, links)) if base else list(links)
        for i in _own_parents(links):
            rows[i] = -1  # a root
        misses = positions(links, -2)  # no parent, or one in another share, or one nobody has
        if len(misses) > CROSS_MAX:
            return None
        for i in misses:
            p = nodes.value("parent", base + i)
            j = None if p is None else locate(p)
            rows[i] = -1 if j is None else j
            if j is not None:
                across.append(j)
            elif p is not None:
                dangling.setdefault(p, []).append(base + i)
        prow.extend(rows)
        nkids.extend(_ints(share["kids"]))
    for j in across:
        nkids[j] += 1
    shape = Shape(prow, nkids, set(), dangling, {}, {}, -1, {})
    scan_labels(shape, nodes, 0, locate)
    return shape
