"""Progress on stderr for long work: on a terminal only, never in pipes or with --json.

    with Progress("reading sessions", total=len(paths), enabled=not out.machine) as progress:
        for path in paths:
            ...
            progress.advance()

    with Waiting("asking openai gpt-5", enabled=not json_mode):  # while a model answers
        reply = client.post(...)

Nothing is drawn during the first DELAY seconds, so quick commands stay quiet, and
the line is cleared when the work ends, so what follows starts on a clean line.
"""

import os
import sys
import threading
import time

DELAY = 0.5  # seconds; STREE_PROGRESS_DELAY overrides
INTERVAL = 0.1  # between redraws


def visible(enabled=True):
    """Whether progress may be drawn: asked for, and stdout and stderr are a terminal."""
    if not enabled or os.environ.get("TERM") == "dumb":
        return False
    try:
        return sys.stderr.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):  # closed or replaced streams
        return False


def _delay():
    try:
        return float(os.environ.get("STREE_PROGRESS_DELAY", DELAY))
    except ValueError:
        return DELAY


class Progress:
    """A counter: `label: 42% (420/1000)`, or `label: 420` without a total."""

    def __init__(self, label, total=None, enabled=True):
        self.label = label
        self.total = total
        self.done = 0
        self.on = visible(enabled)
        self._start = time.monotonic()
        self._delay = _delay()
        self._last = None
        self._drawn = False

    def advance(self, n=1):
        self.done += n
        self._tick()

    def update(self, done):
        self.done = done
        self._tick()

    def _tick(self):
        if not self.on:
            return
        now = time.monotonic()
        if now - self._start < self._delay or (self._last is not None and now - self._last < INTERVAL):
            return
        self._last = now
        if self.total:
            text = f"{self.label}: {100 * self.done // self.total}% ({self.done}/{self.total})"
        else:
            text = f"{self.label}: {self.done}"
        _draw(text)
        self._drawn = True

    def close(self):
        if self._drawn:
            _clear()
            self._drawn = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class Waiting:
    """A spinner with the seconds waited, drawn by a thread while the caller blocks."""

    FRAMES = "|/-\\"

    def __init__(self, label, enabled=True):
        self.label = label
        self.on = visible(enabled)
        self._stop = threading.Event()
        self._thread = None

    def _run(self):
        start = time.monotonic()
        if self._stop.wait(_delay()):
            return
        frame = 0
        while not self._stop.is_set():
            _draw(f"{self.label} {self.FRAMES[frame % 4]} {int(time.monotonic() - start)}s")
            frame += 1
            self._stop.wait(INTERVAL)
        _clear()

    def __enter__(self):
        if self.on:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
        return False


def _draw(text):
    from ..format.terminal import inert

    try:  # (a label may hold a session's model id: its bytes are text, never sequences)
        sys.stderr.write("\r" + inert(text, oneline=True) + "\x1b[K")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _clear():
    _draw("")
