"""Waiting for the file system's clock, not for a process: a cache written in the same tick
of the clock as a session file's last change cannot prove the file unchanged later, so stree
checks such a file again, or does not keep what it drew from it (stree.storage.index.racy).
A test that counts the work of the next command first lets that tick end."""

import os
import threading
import time


def past_the_tick(*paths):
    """Wait until every file in `paths` is past its last change's tick of the clock (the end
    of it computed from the file's stat, by storage.index.racy's rule), then check it is."""
    from stree.storage.index import RACY_COARSE_NS, RACY_NS, racy

    for path in paths:
        st = os.stat(path)
        coarse = st.st_mtime_ns % 10**9 == 0 and st.st_ctime_ns % 10**9 == 0
        left = max(st.st_mtime_ns, st.st_ctime_ns) + (RACY_COARSE_NS if coarse else RACY_NS) - time.time_ns()
        if left > 0:
            threading.Event().wait(left / 1e9 + 0.001)
        assert not racy(os.stat(path)), path


def settle(root):
    """Wait until every file under `root` is past its last change's tick (past_the_tick)."""
    newest = None
    for d, _, files in os.walk(root):
        for name in files:
            path = os.path.join(d, name)
            try:
                st = os.lstat(path)
            except OSError:  # (gone since the walk saw it)
                continue
            changed = max(st.st_mtime_ns, st.st_ctime_ns)
            if newest is None or changed > newest[0]:
                newest = (changed, path)
    if newest is not None:
        try:
            past_the_tick(newest[1])
        except FileNotFoundError:
            pass


def each_command_past_the_tick(monkeypatch, root):
    """Start every in-process command (tests/lib/inprocess.py) only once each file under `root`
    is past its last change's tick, as a process's start would have let it be: for tests that
    count the work a command does after files were just written (by the test, or by stree)."""
    import inprocess

    run = inprocess.run

    def settled(*args, **kwargs):
        settle(root)
        return run(*args, **kwargs)

    monkeypatch.setattr(inprocess, "run", settled)
