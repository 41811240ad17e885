"""A cold parse shared among processes, one per core.

Decoding every line's JSON is the whole cost of reading a session without its
index, and it is CPU-bound: Python runs it on one core. So a long file is cut at
line boundaries into shares; forked workers take the first shares and this
process the last. Each worker parses its share exactly as the serial parser does
and leaves its rows already encoded as an index segment (stree.index) in an
anonymous in-memory file. Those segments become the first rows of the Session
(decoded lazily, like an index read from disk) and, unchanged, the first
segments of the index written for the file. The result is row for row what one
process makes: tests compare the two on the whole corpus.

A worker that fails (killed, out of memory) costs only time: its share is
parsed again here. STREE_JOBS=1 keeps everything in this process.
"""

import marshal
import os
import signal
import sys

from . import session as sessions

PER_JOB = 4 << 20  # bytes of lines each process gets at least, when STREE_JOBS is not set
HEAD_BYTES = 64 << 10  # lines read first, in this process, looking for the header
ENCODE_COST = 0.25  # encoding rows for the index, as a share of parsing them: workers do it during
#                     the parse, this process at the end, so its share is that much larger
WORKER_FIELDS = tuple(f for f in sessions.FIELDS if f not in ("line", "index"))  # those two are made
#                     absolute here, once the lines before each share are counted


def jobs(nbytes):
    """How many processes parse `nbytes` of lines: $STREE_JOBS if set (1: this process
    only), else one per core this process may use, each with PER_JOB bytes or more."""
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
    if nbytes < 2 * PER_JOB:
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
        sessions.scan_range(s, fd, start, stop, end)
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


def scan(s, fd, start, end, n):
    """Parse [start, end) into `s` (which has its header and no rows yet) with `n`
    processes. False when the range is too short to share: nothing was done."""
    weights = [1.0] * (n - 1) + [1.0 + ENCODE_COST]
    total = sum(weights)
    bounds = [start]
    acc = 0.0
    for w in weights[:-1]:
        acc += w
        cut = line_end(fd, start + int((end - start) * acc / total), end)
        if bounds[-1] < cut < end:
            bounds.append(cut)
    bounds.append(end)
    if len(bounds) < 3:
        return False
    workers = []
    try:
        for a, b in zip(bounds[:-2], bounds[1:-1]):
            workers.append(_fork(s, fd, a, b, end))
        own = _share(s)
        sessions.scan_range(own, fd, bounds[-2], end, end)
        results = [_collect(w) for w in workers]
    finally:
        for w in workers:
            if w[0]:
                _reap(w, kill=True)
    if None in results:  # a worker failed: its share (all of them, to keep the order simple) here
        sessions.scan_range(s, fd, bounds[0], bounds[-2], end)
    else:
        _adopt(s, results)
    _append(s, own)
    return True


def _share(s):
    """An empty Session that continues after the header of `s`, counting lines from 0."""
    part = sessions.Session(s.path)
    part.header, part.title, part.version = s.header, s.title, s.version
    return part


# -- workers -----------------------------------------------------------------------


def _fork(s, fd, start, stop, end):
    """Start a worker parsing [start, stop): [pid, fd of its output, start, stop]."""
    out = _scratch()
    pid = os.fork()
    if pid == 0:  # the worker: parse, write, exit without any of the parent's cleanup
        code = 1
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends it at once (the parent reaps it)
            data = memoryview(_work(s, fd, start, stop, end))
            while data:
                data = data[os.write(out, data):]
            code = 0
        except BaseException:
            pass
        finally:
            os._exit(code)
    sessions.STATS["workers"] += 1
    return [pid, out, start, stop]


def _work(s, fd, start, stop, end):
    """A worker's output: its rows as an index segment, and its counters."""
    from .index import _encode

    part = _share(s)
    sessions.STATS["parsed"] = 0
    sessions.scan_range(part, fd, start, stop, end)
    nodes = part.nodes
    chunks = []
    pos = 0

    def put(data):
        nonlocal pos
        where = (pos, len(data))
        chunks.append(data)
        pos += len(data)
        return where

    segment = {name: _encode(name, nodes.col(name), put) for name in WORKER_FIELDS}
    # marshal version 2: no back-references, which cost more to find than they save here
    return marshal.dumps((b"".join(chunks), segment, len(nodes), nodes.col("line"), nodes.col("index"),
                          part.malformed, part.line, part.index, part.ends_with_newline,
                          sessions.STATS["parsed"]), 2)


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


def _adopt(s, results):
    """Make the workers' segments the first rows of `s`, numbered after its header."""
    from .index import _Blobs, _Columns, _encode

    chunks = []
    pos = 0

    def put(data):
        nonlocal pos
        where = (pos, len(data))
        chunks.append(data)
        pos += len(data)
        return where

    segments = []
    rows_total = 0
    for data, segment, rows, lines, indexes, malformed, nlines, count, ends_with_newline, parsed in results:
        line0, index0 = s.line, s.index
        s.malformed.extend((line0 + line, reason) for line, reason in malformed)
        s.line = line0 + nlines
        s.index = index0 + count
        if nlines:
            s.ends_with_newline = ends_with_newline
        sessions.STATS["parsed"] += parsed
        if not rows:
            continue
        base = pos
        chunks.append(data)
        pos += len(data)
        segment = {name: (kind, _shift(where, base)) for name, (kind, where) in segment.items()}
        segment["line"] = _encode("line", [line0 + v for v in lines], put)
        segment["index"] = _encode("index", [index0 + v for v in indexes], put)
        segments.append((rows, segment))
        rows_total += rows
    blobs = _Blobs(b"".join(chunks))
    s.nodes = sessions.Nodes(_Columns(blobs, segments, s.path), rows_total)
    s._ready = (blobs, segments, rows_total)


def _append(s, part):
    """Append the rows of a Session parsed from line 0 after the rows of `s`."""
    line0, index0 = s.line, s.index
    rows = sessions.Columns()
    nodes = part.nodes
    for name in sessions.FIELDS:
        setattr(rows, name, nodes.col(name))
    rows.line = [line0 + v for v in rows.line]
    rows.index = [index0 + v for v in rows.index]
    s.nodes.add(rows)
    s.malformed.extend((line0 + line, reason) for line, reason in part.malformed)
    s.line = line0 + part.line
    s.index = index0 + part.index
    if part.line:
        s.ends_with_newline = part.ends_with_newline
