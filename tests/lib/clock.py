"""Waiting for the file system's clock, not for a process: a cache written in the same tick
of the clock as a session file's last change cannot prove the file unchanged later, so stree
checks such a file again, or does not keep what it drew from it (stree.storage.index.racy).
A test that counts the work of the next command first lets that tick end."""

import os
import threading
import time


def tick_left(path):
    """Seconds until `path` is past its last change's tick of the clock (0 when it already is),
    by storage.index.racy's rule; None for a file changed in the future (a test's utime into
    next year): its tick ends only when the clock gets there, which no test waits for."""
    from stree.storage.index import RACY_COARSE_NS, RACY_NS

    st = os.stat(path)
    coarse = st.st_mtime_ns % 10**9 == 0 and st.st_ctime_ns % 10**9 == 0
    tick = RACY_COARSE_NS if coarse else RACY_NS
    left = max(st.st_mtime_ns, st.st_ctime_ns) + tick - time.time_ns()
    if left > tick:
        return None
    return max(left, 0) / 1e9


def past_the_tick(*paths):
    """Wait until every file in `paths` is past its last change's tick of the clock (the end
    of it computed from the file's stat, by storage.index.racy's rule), then check it is."""
    from stree.storage.index import racy

    for path in paths:
        left = tick_left(path)
        assert left is not None, f"{path} was changed in the future: its tick of the clock never ends here"
        if left > 0:
            threading.Event().wait(left + 0.001)
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
            left = tick_left(newest[1])
        except FileNotFoundError:
            return
        if left:  # (a file from the future is left to be what it is: racy for ever)
            threading.Event().wait(left + 0.001)


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
