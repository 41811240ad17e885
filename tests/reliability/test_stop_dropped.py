"""A stop (a client's cancellation, a deadline: stree.core.budget's timer tick) that lands in
code Python runs on the side, a finalizer (`__del__`) or a weakref callback the collector calls
wherever the work is, is not lost: Python prints what such code raises ("Exception ignored
in ...") and drops it, so the work would run on as if never stopped. A tick inside a `__del__`
waits for the next one; one raised in a weakref callback (importlib's module locks have them)
is kept and raised again by the next tick, where the work is. Both were seen in runs of
test_catalog_interrupt.py on a loaded machine: a cancelled catalogue update printed "Exception
ignored in: <function Session.__del__ ...>" or "<function _get_module_lock.<locals>.cb ...>"
and finished instead of stopping.

The tick is the budget's own: its timer signal raised at that moment (signal.raise_signal)."""

import signal
import threading
import time
import weakref

import pytest

from stree.core import budget
from stree.core.budget import Cancelled


class Thing:
    pass


class Finalized:
    def __init__(self, ticks):
        self.ticks = ticks

    def __del__(self):
        signal.raise_signal(signal.SIGALRM)  # (the tick, inside the finalizer)
        self.ticks.append("__del__ ran to its end")


def work_until_stopped(seconds=30):
    """The work under way: runs until a stop ends it (the budget's timer ticks every 50 ms)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sum(range(1000))
    return "never stopped"


@pytest.mark.parametrize("where", ["weakref callback", "__del__"])
def test_a_stop_landing_where_python_drops_exceptions_still_stops_the_work(where, capsys):
    cancelled = threading.Event()
    ticks = []
    outcome = None
    with budget.request("the test request", None, cancelled):
        cancelled.set()  # (the client cancels; the next tick raises)
        try:
            if where == "weakref callback":
                thing = Thing()
                ref = weakref.ref(thing, lambda _: signal.raise_signal(signal.SIGALRM))  # noqa: F841
                del thing  # (its callback runs now, the tick inside it)
            else:
                Finalized(ticks)  # (dropped at once: __del__ runs now, the tick inside it)
            outcome = work_until_stopped()
        except Cancelled:
            outcome = "stopped"
    assert outcome == "stopped"
    assert "Exception ignored" not in capsys.readouterr().err
    if where == "__del__":
        assert ticks == ["__del__ ran to its end"]  # (not cut short: a session's close() completes)
