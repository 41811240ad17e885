"""Following a session file as pi appends to it (`stree log --follow`).

A cheap stat poll: nothing is opened or read while the file is unchanged, and no descriptor
is held between reads (a writer's lease needs the file open nowhere else). When it grows,
only the appended bytes are read, and only complete lines (ending with a newline) are
parsed, by the same line scanner as a full read: pi writes a line in pieces at times.

Reads are bounded: the appended bytes are read BLOCK at a time, complete lines parsed as each
block arrives, and a line not ended is kept only up to scan.LINE_MAX (the normal reader's
rule, STREE_LINE_MAX): past it the line is skipped to its end, reported through `warn` and
counted malformed, and the entries after it are read. A crash's gigabyte tail without a
newline costs a block of memory, not the tail."""

import os
import time

from ..errors import BadFile
from . import scan as scanner
from .session import close_files, open_file

BLOCK = 1 << 20  # bytes read at a time

INTERVAL = 0.2  # seconds between two stats of the file
WINDOW = 4096  # bytes before the end seen last, compared again to notice a rewrite


def complete_end(fd, size):
    """The end of the last complete line among the first `size` bytes."""
    pos = size
    while pos > 0:
        n = min(65536, pos)
        i = os.pread(fd, n, pos - n).rfind(b"\n")
        if i >= 0:
            return pos - n + i + 1
        pos -= n
    return 0


class Follower:
    """Appends the entries of lines pi adds to `s` (a Session read to s.size), batch by batch."""

    def __init__(self, s, interval=INTERVAL, warn=None):
        self.s = s
        self.path = str(s.path)
        self.interval = interval
        self.warn = warn or (lambda message: None)
        self.skip = False
        self.skipping = False  # inside a line longer than LINE_MAX: read to its end, nothing kept
        if s.version < 2:
            raise BadFile(f"{self.path}: a version {s.version} session cannot be followed (pi migrates it when it "
                          "opens it)", hint="run 'stree migrate' first")
        fd = open_file(self.path)
        try:
            st = os.fstat(fd)
            self.identity = (st.st_dev, st.st_ino)
            self.size = s.size
            self.pos = complete_end(fd, s.size)
            if self.pos < s.size:  # a torn last line: parsed again once it ends
                nodes = s.nodes
                if len(nodes) and nodes[len(nodes) - 1].offset >= self.pos:
                    self.pos = s.size  # (it held a whole entry already: only its newline is to come)
                    self.skip = True
                else:
                    s.line -= 1
            self.window = self._window(fd, self.size)
        finally:
            os.close(fd)
        self.scanned = self.pos  # bytes from self.pos to here hold no newline
        self.seen = None  # the first poll reads: lines may have come since the session was read
        close_files(self.path)

    def _window(self, fd, end):
        start = max(0, end - WINDOW)
        return os.pread(fd, end - start, start)

    def _gone(self, what):
        return BadFile(f"{self.path}: {what}; stopped following",
                       hint="run 'stree log --follow' again to follow the file as it is now")

    def wait(self, idle=None):
        """Block until complete lines were appended and parsed: the first new row. `idle` is
        called at every poll (to notice that stdout's reader went away)."""
        while True:
            if idle is not None:
                idle()
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                raise self._gone("the file was removed (or renamed)") from None
            if (st.st_dev, st.st_ino) != self.identity:
                raise self._gone("the file was replaced (a new file at its path)")
            if (st.st_size, st.st_mtime_ns, st.st_ctime_ns) != self.seen:
                first = self._read()
                if first is not None:
                    return first
            time.sleep(self.interval)

    def _read(self):
        fd = open_file(self.path)
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != self.identity:
                raise self._gone("the file was replaced (a new file at its path)")
            size = st.st_size
            if size < self.size:
                raise self._gone(f"the file was truncated ({self.size} bytes, now {size})")
            start = self.size - len(self.window)
            if os.pread(fd, len(self.window), start) != self.window:
                raise self._gone("the file was rewritten (bytes before its old end changed)")
            self.seen = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            if size == self.size:
                return None
            first = len(self.s.nodes)
            try:
                self._blocks(fd, size)
            finally:
                self.size = self.scanned
                self.window = self._window(fd, self.size)
        finally:
            os.close(fd)
        s = self.s
        s.nodes.shape = None  # (an index's shape knows the old rows only: the tree computes it anew)
        close_files(self.path)  # (previews read entries through the session: not kept open)
        return first if len(s.nodes) > first else None

    def _blocks(self, fd, size):
        """Parse the complete lines among bytes [self.scanned, size), a block at a time."""
        limit = scanner.LINE_MAX
        while self.scanned < size:
            block = os.pread(fd, min(BLOCK, size - self.scanned), self.scanned)
            if not block:
                break  # (shrunk under us: the next poll says so)
            at = self.scanned
            self.scanned += len(block)
            if self.skipping:
                nl = block.find(b"\n")
                if nl < 0:
                    continue
                self.skipping = False
                self.pos = at + nl + 1
                self._too_long()
                self.scanned = self.pos  # (the rest of the block is read again, as lines)
                continue
            nl = block.rfind(b"\n")
            if nl < 0:
                if self.scanned - self.pos > limit:
                    self.skipping = True  # (what was read of it is dropped: nothing of it is kept)
                    if self.skip:  # the line whose entry was read already: it ends where it should have
                        self.skip = False
                continue
            end = at + nl + 1  # (what is parsed: at most LINE_MAX carried + a block, as a full read)
            self._parse(os.pread(fd, end - self.pos, self.pos) if self.pos < at else block[:end - at])
            self.scanned = end

    def _parse(self, data):
        base = self.pos
        self.pos += len(data)
        if self.skip:  # the rest of a line whose entry was read before it ended
            self.skip = False
            cut = data.find(b"\n") + 1
            data, base = data[cut:], base + cut
        scanner.scan(self.s, data, base, self.pos)

    def _too_long(self):
        s = self.s
        s.line += 1
        reason = f"line longer than {scanner.LINE_MAX >> 20} MiB (not read)" if scanner.LINE_MAX >= 1 << 20 \
            else f"line longer than {scanner.LINE_MAX} bytes (not read)"
        s.malformed.append((s.line, reason))
        self.warn(f"{self.path}: skipped line {s.line}: {reason}")
