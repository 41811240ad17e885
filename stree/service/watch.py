"""The served session's watcher: an `entries_appended` event when lines are appended to it (by
pi, by this server, by anyone), with the new entries' ids and the new leafId, so a client
can ask get_entries with `since`.

It waits as `stree log --follow` does, with storage.follow's Follower: a stat of the file
every 0.2 s, nothing opened or read while it is unchanged, only the appended bytes read when
it grows (no inotify: no dependency, and it works the same on every filesystem, NFS
included). A file replaced or truncated ends the watch with a `watch_stopped` event. Appended
bytes are read a block at a time; a line longer than the reader's limit is skipped with a
warning on stderr, and the entries after it are announced."""

import threading

from ..errors import StreeError
from ..storage.follow import Follower


class _Stop(Exception):
    pass


class _Locked(Follower):
    """A Follower whose reads of the file hold the server's io lock: the read closes every
    descriptor of the file, which must not happen under a request's read."""

    def __init__(self, s, lock, warn):
        self.lock = lock
        super().__init__(s, warn=warn)

    def _read(self):
        with self.lock:
            return super()._read()


class Watcher:
    def __init__(self, served, emit):
        self.served = served
        self.emit = emit
        self.thread = None
        self.stopping = None

    def watch(self, path):
        """Watch `path` from now on (instead of the session watched before, whose thread ends at
        its next poll: not waited for, as a request that switched sessions holds the io lock)."""
        if self.thread is not None:
            self.stopping.set()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(path, self.stopping), name="stree-watch",
                                       daemon=True)
        self.thread.start()

    def stop(self):
        if self.thread is not None:
            self.stopping.set()
            if self.thread is not threading.current_thread():
                self.thread.join()
            self.thread = None

    def _run(self, path, stopping):
        from ..core.loading import open_session

        def idle():
            if stopping.is_set():
                raise _Stop()

        session = None
        try:
            with self.served.io:
                session = open_session(path, no_cache=True).session  # its own copy: the Follower appends to it
                follower = _Locked(session, self.served.io, self.served.warn)
            while True:
                first = follower.wait(idle)
                if stopping.is_set():
                    break
                nodes = session.nodes
                ids = [nodes[row].id for row in range(first, len(nodes))]
                self.emit({"type": "entries_appended", "sessionFile": path, "ids": ids,
                           "leafId": nodes[len(nodes) - 1].id})
        except _Stop:
            pass
        except StreeError as e:
            if not stopping.is_set():
                self.emit({"type": "watch_stopped", "sessionFile": path, "error": str(e)})
        finally:
            if session is not None:
                session.close()
