"""`stree serve`: requests on stdin, responses and events on stdout, JSON Lines as pi's RPC mode.

The main thread reads and answers requests in order; a navigate_tree with a summary answers
from a worker thread (so abort_branch_summary can be read meanwhile); a watcher thread sends
an `entries_appended` event when lines are appended to the served session. One lock keeps
their lines whole on stdout.

End of input: a summary under way is waited for (its answer is sent), then exit 0. Ctrl-C
(SIGINT) or SIGTERM: a summary under way is aborted (nothing written), a write under way is
finished, then exit 130 (SIGINT) or 143 (SIGTERM)."""

import signal
import sys
import threading

from ..errors import INTERRUPTED
from .handlers import handle
from .protocol import UNSET, RequestError, encode, failure, parse_line
from .watch import Watcher

TERMINATED = 143


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
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    out_lock = threading.Lock()
    gone = threading.Event()

    def emit(record):
        data = encode(record)
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
    code = 0
    try:
        watcher.watch(served.path)
        while not gone.is_set():
            line = stdin.readline()  # a binary stream splits on LF only (U+2028 stays inside a line)
            if not line:
                break
            line = line[:-1] if line.endswith(b"\n") else line
            try:
                request = parse_line(line)
            except RequestError as e:
                emit(failure(UNSET, "parse", str(e), e.code))
                continue
            if request.get("type") == "extension_ui_response":
                continue  # (pi: answers to its dialogs; stree asks none)
            record = handle(served, request, emit)
            if record is not None:
                emit(record)
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
