"""A client's cancellation that arrives while a session's index is read or written stops the
work (serve, serve --mcp: stree.core.budget raises it from a timer, wherever the work is). The
index treats its own failures as a miss (a damaged index is parsed around), but a cancellation
is no news about the index: before, it was swallowed there and the request ran on, parsing the
whole file again. After it, the next read is right and uses the index.

The cancellation is the budget's own: its timer signal, with the client's cancellation set,
sent at the moment the index code reaches the named function (what its tick does when it
fires there)."""

import signal
import sys
import threading

import pytest

from builders import branchy, dumps
from stree.core import budget
from stree.core.budget import Cancelled
from stree.storage import index


class cancel_in:
    """`with cancel_in(module, function):` a request under way whose client cancels it when
    `function` of `module` is first called."""

    def __init__(self, module, function):
        self.where = (module, function)
        self.cancelled = threading.Event()
        self.request = budget.request("the test request", cancelled=self.cancelled)
        self.fired = False

    def _trace(self, frame, event, arg):
        if event == "call" and not self.fired and \
                (frame.f_globals.get("__name__"), frame.f_code.co_name) == self.where:
            self.fired = True
            self.cancelled.set()
            signal.raise_signal(signal.SIGALRM)  # the budget's tick, now
        return None

    def __enter__(self):
        self.request.__enter__()
        sys.settrace(self._trace)
        return self

    def __exit__(self, *exc):
        sys.settrace(None)
        self.request.__exit__(*exc)
        budget.settle()
        return False


def cache_files(home):
    d = home / ".cache" / "stree" / "index"
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def ids(session):
    return list(session.nodes.col("id"))


def test_cancelled_while_the_index_is_read(tmp_path, isolated_home):
    b = branchy()
    path = str(b.write(tmp_path / "s.jsonl"))
    first, state = index.load(path)
    assert state == "built" and cache_files(isolated_home)
    with open(path, "a") as f:  # pi appends: the next load reads the index, then the new line
        b.user("one more")
        f.write(dumps(b.entries[-1]) + "\n")
    with pytest.raises(Cancelled), cancel_in("stree.storage.index", "_data_area") as c:
        index.load(path)  # (the index's data is mapped, and checked, inside the index reader)
    assert c.fired
    again, state = index.load(path)  # the next request: the index is used, one line parsed
    assert state == "updated" and ids(again) == ids(first) + [b.entries[-1]["id"]]


def test_cancelled_while_the_index_is_written(tmp_path, isolated_home):
    path = str(branchy().write(tmp_path / "s.jsonl"))
    with pytest.raises(Cancelled), cancel_in("stree.storage.cachedir", "write_file") as c:
        index.load(path)  # a first read writes the index
    assert c.fired
    assert not [n for n in cache_files(isolated_home) if n.endswith((".idx", ".tmp"))]  # nothing half-written
    session, state = index.load(path)
    assert state == "built" and len(ids(session)) == len(branchy().entries)


def test_cancelled_while_a_deferred_index_is_saved(tmp_path, isolated_home):
    path = str(branchy().write(tmp_path / "s.jsonl"))
    session, state = index.load(path, defer=True)  # written when the work ends (index.save)
    assert state == "built" and not cache_files(isolated_home)
    with pytest.raises(Cancelled), cancel_in("stree.storage.cachedir", "write_file") as c:
        index.save(session)
    assert c.fired
    assert not [n for n in cache_files(isolated_home) if n.endswith((".idx", ".tmp"))]


def test_a_damaged_index_is_still_a_miss(tmp_path, isolated_home):
    """What the index's catch is for stays: a damaged index is parsed around, without an error."""
    b = branchy()
    path = str(b.write(tmp_path / "s.jsonl"))
    index.load(path)
    (idx,) = [isolated_home / ".cache" / "stree" / "index" / n for n in cache_files(isolated_home)
              if n.endswith(".idx")]
    data = bytearray(idx.read_bytes())
    data[-10] ^= 0xFF
    idx.write_bytes(bytes(data))
    with open(path, "a") as f:
        b.user("one more")
        f.write(dumps(b.entries[-1]) + "\n")
    session, state = index.load(path)
    assert state == "built" and ids(session)[-1] == b.entries[-1]["id"]
