"""What a running server keeps between requests: the session it serves, the sessions it has
read (kept warm: read again only when their file changed, and then through the index, which
parses only the appended lines; the entries decoded for a request are kept for the next ones,
through an append too: core.warm), and one write lock per session file."""

import os
import threading
from contextlib import contextmanager

from ..core.workspace import Workspace
from .protocol import RequestError

KEPT = 4  # sessions kept read besides the served one


class IoLock:
    """A reentrant lock that knows whether the main thread holds it (a signal arriving then is
    acted on once the request is answered: a write is never cut in the middle)."""

    def __init__(self):
        self._lock = threading.RLock()
        self.main_depth = 0

    def __enter__(self):
        self._lock.acquire()
        if threading.current_thread() is threading.main_thread():
            self.main_depth += 1
        return self

    def __exit__(self, *exc):
        if threading.current_thread() is threading.main_thread():
            self.main_depth -= 1
        self._lock.release()


class Served(Workspace):
    """What `stree serve` was started with (stree.core.workspace: the global options), the
    session it serves (`path`) and what it keeps between requests."""

    def __init__(self, path, model_flags=None, warn=None, debug=False, **where):
        super().__init__(**where)
        self.path = os.path.abspath(str(path))
        self.model_flags = model_flags or {}
        self.warn = warn or (lambda message: None)
        self.debug = debug
        from ..core.budget import request_timeout

        self.request_timeout = request_timeout()  # (a bad STREE_REQUEST_TIMEOUT fails serve at start)
        self.context_counts = None  # (Tree, thinkingLevel, messageCount) of get_state's last answer
        from .kept import Answers

        self.answers = Answers()  # answers kept made, sent by the reader thread while current
        self.summary = None  # the navigate_tree summary under way (navigate.Job), if any
        self.on_switch = None  # called with the new path when the served session changes (the watcher)
        # held while a session file is read or written: a write (and the watcher's read) closes
        # every descriptor of the file, which must not happen under another thread's read
        self.io = IoLock()
        from ..core.warm import Kept

        self._kept = Kept(self.no_cache, KEPT, pinned=lambda: self.path, parse=self._parse)
        self._writes = {}  # path -> threading.Lock
        self._writes_lock = threading.Lock()

    # -- reading -------------------------------------------------------------

    def load(self, path=None):
        """(Session, Tree) of `path` (default: the served session) as the file is now; the
        entries it decodes are kept for the next requests (core.warm)."""
        path = os.path.abspath(str(path)) if path is not None else self.path
        return self._kept.load(path)

    def identity(self, tree, path=None):
        """The identity of the file `tree` was read from (core.warm.file_identity), if it is the
        tree kept for `path` (default: the served session); else None."""
        return self._kept.identity(os.path.abspath(str(path)) if path is not None else self.path, tree)

    def _parse(self, path):
        from ..core.budget import shielded
        from ..core.loading import finish

        session, tree, _ = self.open(path)
        with shielded():  # (a cache write is not cut short by a cancellation)
            finish(session)
        return session, tree

    def switch(self, path):
        """Serve `path` from now on (it was read: it is a session)."""
        self.path = os.path.abspath(str(path))
        if self.on_switch is not None:
            self.on_switch(self.path)

    # -- writing -------------------------------------------------------------

    def claim(self, path=None):
        """Take the write lock of `path`'s file and return it (its holder releases it, from any
        thread): one write at a time per session file. A second write while one is under way
        (a navigate_tree waiting for its summary) is refused at once (errorCode busy), never
        queued behind a model."""
        path = os.path.abspath(str(path)) if path is not None else self.path
        with self._writes_lock:
            lock = self._writes.setdefault(path, threading.Lock())
        if not lock.acquire(blocking=False):
            raise RequestError(f"{path}: another write to this session is under way (a navigate_tree "
                               "summary); try again when it has answered", "busy",
                               hint="abort_branch_summary cancels the summary")
        return lock

    @contextmanager
    def writing(self, path=None):
        """With the write lock of `path`'s file held (see claim)."""
        path = os.path.abspath(str(path)) if path is not None else self.path
        lock = self.claim(path)
        try:
            yield path
        finally:
            lock.release()

    def wait_for_writes(self):
        """Block until no write is under way (at shutdown: nothing is left half-written)."""
        with self._writes_lock:
            locks = list(self._writes.values())
        for lock in locks:
            lock.acquire()
            lock.release()

    def close(self):
        self._kept.close()
