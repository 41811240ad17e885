"""A drawing that is kept prints its rows from the kept file (stree.output.keptgraph.pipe._put,
stree.storage.keptgraph.file.copy_range): each batch of rows goes to the kept file, and the kernel
hands that file's pages to stdout (sendfile) instead of stree copying the rows once more. What
stdout gets is what a drawing that keeps nothing prints: into a pipe, into a file, into a file
opened for appending (where the kernel cannot send: the rows are written), and to a reader that
reads only after the kept copy was dropped in the middle of the drawing."""

import fcntl
import os
import subprocess
import sys

import pytest

from clock import past_the_tick
from test_log_graph_draw import comb

STATS = {"STREE_DEBUG_STATS": "1"}


def stree_into(path, stdout, env=None):
    """`stree -s PATH log --graph` with its stdout on `stdout` (a file object or PIPE)."""
    return subprocess.Popen([sys.executable, "-m", "stree", "-s", str(path), "log", "--graph"], stdout=stdout,
                            stderr=subprocess.PIPE, env={**os.environ, "NO_COLOR": "1", **(env or {})})


@pytest.fixture
def deep(tmp_path):
    """A comb whose drawing is 4 MB (rows as long as the tree is deep): several batches of rows."""
    path = comb(900).write(tmp_path / "comb.jsonl")
    past_the_tick(path)  # (what is drawn now is kept: stree.storage.index.racy)
    return path


def unkept(stree, path):
    return stree("-s", path, "log", "--graph", env={"STREE_NO_CACHE": "1"}).raw


@pytest.mark.parametrize("into", ["pipe", "file", "appended file"])
def test_a_kept_drawing_prints_what_a_drawing_that_keeps_nothing_prints(stree, deep, tmp_path, into):
    expected = unkept(stree, deep)
    assert len(expected) > 3 << 20
    before = b"already here\n" if into == "appended file" else b""
    if into == "pipe":
        proc = stree_into(deep, subprocess.PIPE, STATS)
        got, err = proc.communicate(timeout=120)
    else:
        target = tmp_path / "out.txt"
        target.write_bytes(before)
        with open(target, "ab" if before else "wb") as f:
            proc = stree_into(deep, f, STATS)
            _, err = proc.communicate(timeout=120)
        got = target.read_bytes()
    assert proc.returncode == 0, err
    assert b"index built" in err and b"(drawn)" in err, err  # (drawn, not printed from a kept output)
    assert got == before + expected
    again = stree("-s", deep, "log", "--graph", env=STATS)
    assert "index graph-cache" in again.err, again.err  # kept whole, byte for byte
    assert again.raw == expected


def test_rows_sent_before_the_kept_copy_is_dropped_reach_a_reader_that_reads_later(stree, deep, isolated_home):
    """The kept copy is dropped when the output outgrows its limit (here after the first batch
    of rows): its temp file is closed and removed while the rows sent from it still wait in the
    pipe. They are the rows, read after it is gone."""
    expected = unkept(stree, deep)
    cache = isolated_home / ".cache" / "stree" / "index"
    proc = stree_into(deep, subprocess.PIPE, {"STREE_GRAPH_MAX": str(3 << 19)})  # (1.5 MiB: one batch)
    # the first rows came from the kept file (its temp file made for them): reading them lets the rest
    # of the first batch in (a batch is a little over what the pipe holds); the second outgrows the limit
    first = proc.stdout.read(65536)
    if fcntl.fcntl(proc.stdout.fileno(), getattr(fcntl, "F_GETPIPE_SZ", 1032)) < 1 << 20:
        proc.kill()
        proc.communicate()
        pytest.skip("this system's pipes may not hold 1 MiB (stree.storage.keptgraph.file.widen_pipe)")
    assert wait_until(lambda: not list(cache.glob("*.tmp")))  # dropped: the rows sent from it still in the pipe
    rest, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert first + rest == expected
    assert not list(cache.glob("*.graph"))  # (nothing kept)


def wait_until(done, most=60):
    """Whether done() came true within `most` seconds (polled)."""
    import threading
    import time

    end = time.monotonic() + most
    while not done():
        if time.monotonic() > end:
            return False
        threading.Event().wait(0.005)
    return True


def test_bytes_kept_are_printed_to_a_pipe_from_the_kept_file(tmp_path, isolated_home):
    """The storage side, as `log --graph` uses it: a Capture of a session read from its file
    writes the bytes to the kept file's temp file and prints them from there into the pipe it
    is given (Capture.add says so: True); without a descriptor it prints nothing (False: the
    caller writes them). Nothing stays behind once it is closed unstored."""
    from stree.core.loading import open_session
    from stree.storage import keptgraph as kept_store

    path = comb(3).write(tmp_path / "small.jsonl")
    session, _, _ = open_session(path)
    options = kept_store.options("@", "default", None, None, False, False, False, None, False, "auto")
    capture = kept_store.Capture(session, options)
    cache = isolated_home / ".cache" / "stree" / "index"
    read, write = os.pipe()
    os.set_blocking(read, False)  # (nothing printed: an error, not a hang)
    try:
        assert capture.add(b"row one\n", write) is True
        assert capture.add(b"row two\n") is False
        assert os.read(read, 100) == b"row one\n"
        assert len(list(cache.glob("*.tmp"))) == 1  # (both kept, in the temp file)
    finally:
        capture.close()
        session.close()
        os.close(read)
        os.close(write)
    assert not list(cache.glob("*.tmp"))
