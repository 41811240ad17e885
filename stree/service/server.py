"""`stree serve`: requests on stdin, responses and events on stdout, JSON Lines as pi's RPC mode.

A reader thread reads stdin (a line longer than REQUEST_MAX is refused, not held) and queues
the requests; the main thread answers them in order. `abort` is answered by the reader at
once: it cancels the request under way (which fails with errorCode cancelled) and the
navigate_tree summary under way. A read request also has a deadline (STREE_REQUEST_TIMEOUT):
see handlers. A navigate_tree with a summary answers from a worker thread (so
abort_branch_summary can be read meanwhile); a watcher thread sends an `entries_appended`
event when lines are appended to the served session. One lock keeps their lines whole on
stdout.

End of input: a summary under way is waited for (its answer is sent), then exit 0. Ctrl-C
(SIGINT) or SIGTERM: a summary under way is aborted (nothing written), a write under way is
finished, then exit 130 (SIGINT) or 143 (SIGTERM)."""

import queue
import signal
import sys
import threading

from ..errors import INTERRUPTED, Stopped
from .handlers import handle
from ..core.budget import settle
from ..core.warm import Counted
from .protocol import UNSET, RequestError, encode, error_code, failure, parse_line, success
from .kept import KEPT
from .watch import Watcher

TERMINATED = 143
def _request_max():
    from ..storage.scan import LINE_MAX

    return min(64 << 20, LINE_MAX)  # (STREE_LINE_MAX lowers it, as for a session's lines)


REQUEST_MAX = _request_max()  # bytes in one request line; a longer one is skipped to its end and refused


class Terminated(Exception):
    pass


class _Signals:
    """SIGINT and SIGTERM: raised at once while the server waits for input, deferred while the
    main thread answers a request (it may be writing) and raised when the answer is out."""

    def __init__(self, served):
        self.served = served
        self.pending = None

    def __call__(self, signum, frame):
        self.pending = signum
        if self.served.io.main_depth == 0:
            self.check()

    def check(self):
        if self.pending == signal.SIGINT:
            raise KeyboardInterrupt()
        if self.pending is not None:
            raise Terminated()


def serve(served, stdin=None, stdout=None):
    """Serve until end of input or a signal; returns the exit code."""
    stdin = _Lines(stdin.fileno() if stdin is not None else sys.stdin.fileno())
    stdout = stdout or sys.stdout.buffer
    out_lock = threading.Lock()
    gone = threading.Event()

    def emit(record):
        data = record if record.__class__ is bytes else encode(record)
        with out_lock:
            if gone.is_set():
                return
            try:
                stdout.write(data)
                stdout.flush()
            except (BrokenPipeError, ValueError, OSError):
                gone.set()  # the client went away: the main loop ends at the end of its input

    watcher = Watcher(served, emit)
    served.on_switch = watcher.watch
    signals = _Signals(served)
    previous = signal.signal(signal.SIGTERM, signals)
    previous_int = signal.signal(signal.SIGINT, signals)
    inbox = queue.Queue()
    under_way = [None]  # the cancellation Event of the request the main thread answers
    counted = Counted()
    turns = _Turns()
    reader = threading.Thread(target=_read, args=(stdin, inbox, emit, served, under_way, gone, turns, counted),
                              name="stree-read", daemon=True)
    code = 0
    try:
        watcher.watch(served.path)
        reader.start()
        while not gone.is_set():
            item = inbox.get()
            if item is None:
                break
            if not isinstance(item, dict):  # a response made by the reader (a parse error), in its turn
                turns.answered(emit, item[0])
                continue
            cancelled = under_way[0] = threading.Event()
            try:
                with counted(item.get("type")):
                    record = handle(served, item, emit, cancelled)
            except Stopped as e:  # (a tick that fired as the request ended)
                record = failure(item.get("id", UNSET), item.get("type", UNSET), str(e), error_code(e))
            finally:
                under_way[0] = None
                settle()
            turns.answered(emit, record)
            signals.check()
        job = served.summary
        if job is not None and job.thread is not None:
            job.thread.join()  # as pi at the end of its input: pending work finishes and answers
    except KeyboardInterrupt:
        code = INTERRUPTED
    except Terminated:
        code = TERMINATED
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # (a second Ctrl-C must not cut the cleanup short)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        job = served.summary
        if job is not None:
            job.abort()  # nothing is written for it now, unless it was writing already
        served.wait_for_writes()
        watcher.stop()
        served.close()
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)
    return code


class _Lines:
    """Lines of a descriptor, read with os.read: no buffered file object whose lock the reader
    thread would hold while it waits (the interpreter's shutdown would wait for it)."""

    def __init__(self, fd):
        self.fd = fd
        self.buffer = bytearray()
        self.scanned = 0  # bytes of the buffer known to hold no LF
        self.eof = False

    def readline(self, limit):
        """Up to `limit` bytes: one line with its LF, or less at the end of the input."""
        import os

        while True:
            nl = self.buffer.find(b"\n", self.scanned, limit)
            if nl >= 0 or len(self.buffer) >= limit or self.eof:
                cut = nl + 1 if nl >= 0 else min(limit, len(self.buffer))
                line = bytes(self.buffer[:cut])
                del self.buffer[:cut]
                self.scanned = 0
                return line
            self.scanned = len(self.buffer)
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.eof = True
            self.buffer += chunk


class _Turns:
    """Requests queued by the reader and answered by the main thread: none waits nor is under
    way when they are equal. An answer is sent and counted under the lock, so the reader
    answers a request itself (under it too) only after every answer before it is out."""

    def __init__(self):
        self.lock = threading.Lock()
        self.queued = 0  # (written by the reader only)
        self.done = 0  # (by the main thread only)

    def answered(self, emit, record):
        with self.lock:
            if record is not None:  # (None: answered later, from a worker thread)
                emit(record)
            self.done += 1


def _read(stdin, inbox, emit, served, under_way, gone, turns, counted):
    """The reader thread: each request line to the inbox (None at the end of input); `abort`
    acted on and answered here, at once; a request whose answer is kept current (kept.py)
    answered here when nothing is ahead of it."""
    try:
        while not gone.is_set():
            line = stdin.readline(REQUEST_MAX + 1)  # a binary stream splits on LF only (U+2028 stays inside)
            if not line:
                break
            if len(line) > REQUEST_MAX and not line.endswith(b"\n"):
                while line and not line.endswith(b"\n"):
                    line = stdin.readline(1 << 20)
                turns.queued += 1
                inbox.put((failure(UNSET, "parse", f"Failed to parse command: a request line longer than "
                                                   f"{REQUEST_MAX} bytes (not read)", "parse"),))
                continue
            line = line[:-1] if line.endswith(b"\n") else line
            try:
                request = parse_line(line)
            except RequestError as e:
                turns.queued += 1
                inbox.put((failure(UNSET, "parse", str(e), e.code),))
                continue
            kind = request.get("type")
            if kind == "extension_ui_response":
                continue  # (pi: answers to its dialogs; stree asks none)
            if kind == "abort":
                cancelled = under_way[0]
                if cancelled is not None:
                    cancelled.set()
                job = served.summary
                if job is not None and job.abort():
                    served.summary = None
                emit(success(request.get("id", UNSET), "abort"))
                continue
            if kind in KEPT:
                with turns.lock:
                    answer = None
                    if turns.done == turns.queued:  # (in order: nothing is ahead of it)
                        count = counted(kind)
                        with count:
                            answer = served.answers.answer(request, served.path)
                            count.shown, count.note = answer is not None, ", kept answer"
                    if answer is not None:
                        emit(answer)
                if answer is not None:
                    continue
            turns.queued += 1
            inbox.put(request)
    except (OSError, ValueError):
        pass  # (stdin closed under us: the end of input)
    finally:
        inbox.put(None)
