"""Waiting for a sign that only a poll can see (a server's view of its own sessions and locks,
a server back after its crash recovery): asked again and again, the wait ends as soon as the
sign is there, however slow or loaded the machine, and fails only after a generous deadline.
Where a process can say it is ready (a line printed, a file appearing), wait for that instead."""

import threading

DEADLINE = 60.0  # seconds: a failure, not a slow machine


def until(check, what, deadline=DEADLINE, every=0.01):
    """The first truthy value check() gives, asked every `every` seconds; AssertionError naming
    `what` when none came within `deadline` seconds."""
    import time

    end = time.monotonic() + deadline
    pause = threading.Event()  # (never set: its wait is the pause between two looks)
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > end:
            raise AssertionError(f"waited {deadline:.0f} s for {what}")
        pause.wait(every)
