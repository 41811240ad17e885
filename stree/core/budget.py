r"""Time budgets for work that might not end: a regular expression that backtracks for ever on
one line (`(a+)+$`), and a server request past its deadline or cancelled by its client.

How: while a budget is watched, a timer signal (ITIMER_REAL) ticks on the main thread every
TICK seconds and its handler raises in the work under way when a limit is passed. Python's
regex engine checks for signals while it backtracks, so even a match stuck in C code stops
at the next tick. The semantics of `re` are untouched (no second engine that might answer
otherwise), it costs nothing while nothing is watched, and nothing is started per pattern
(a worker process per grep would cost a fork and a copy of the candidates for every search).
RE2 (google-re2 1.1.20251105) was weighed: linear, but of 2,177 valid Python patterns built
from the grep fuzz pieces it refused 602 (\N{...}, \u, \U, lookaround, backreferences) and
answered 101 differently on the fuzz texts (\w, \d, \s, \b ASCII-only; [[:alpha:]]; a{,2}),
so a second engine would change answers and still need this budget for the rest.

Only the main thread gets signals: off it, watch() is a no-op and work runs unbounded.
CLI commands, serve's requests and MCP's tool calls all run on the main thread."""

import os
import sys
import time

from ..errors import USAGE, Stopped

TICK = 0.05  # seconds between checks while something is watched
REGEX_TIMEOUT = 5.0  # seconds one regular expression may spend on one line (STREE_REGEX_TIMEOUT)
REQUEST_TIMEOUT = 300.0  # seconds a server request may run (STREE_REQUEST_TIMEOUT)


class RegexTimeout(Stopped):
    """A regular expression that took longer than its budget on one line (exit 2, a usage error)."""

    code = USAGE


class Cancelled(Stopped):
    """The client cancelled the request under way."""


class DeadlineExceeded(Stopped):
    """A request that ran past its deadline."""


class _State:
    def __init__(self):
        self.depth = 0  # nested watch()es
        self.previous = None  # the SIGALRM handler before the outermost watch
        self.regex = None  # (pattern text, monotonic start) of the match under way
        self.regex_limit = REGEX_TIMEOUT
        self.deadline = None  # monotonic time the request must be done by
        self.deadline_what = None
        self.cancelled = None  # a threading.Event set by the client's cancellation
        self.shield = 0  # inside shielded(): a cancellation or deadline waits for its end
        self.lost = None  # a stop Python dropped where it came (_unraisable): raised again at the next tick
        self.hook = None  # sys.unraisablehook before the outermost watch


_state = _State()


def request_timeout():
    from ..errors import env_seconds

    return env_seconds("STREE_REQUEST_TIMEOUT", REQUEST_TIMEOUT)


def regex_limit():
    from ..errors import env_seconds

    return env_seconds("STREE_REGEX_TIMEOUT", REGEX_TIMEOUT)


def _finalizing(frame):
    """True when the tick came inside a finalizer (a `__del__` the collector ran in the middle
    of the work): what is raised there is printed and dropped by Python, the stop lost."""
    for _ in range(8):
        if frame is None:
            return False
        if frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


def _unraisable(info):
    """sys.unraisablehook while something is watched: a stop raised inside a finalizer or a
    weakref callback (the collector runs them wherever the work is; seen: importlib's module
    locks) is printed and dropped by Python, the work going on as if never stopped; it is kept
    instead, and raised again by the next tick."""
    if isinstance(info.exc_value, Stopped) and _state.depth:
        _state.lost = info.exc_value
        return
    (_state.hook or sys.__unraisablehook__)(info)


def _tick(signum, frame):
    s = _state
    lost = s.lost
    if lost is not None and (not s.shield or isinstance(lost, RegexTimeout)) and not _finalizing(frame):
        s.lost = None
        raise lost
    now = time.monotonic()
    regex = s.regex is not None and now - s.regex[1] > s.regex_limit
    cancelled = not s.shield and s.cancelled is not None and s.cancelled.is_set()
    late = not s.shield and s.deadline is not None and now > s.deadline
    # (under shield: a write to a shared file under way, stopped after it, at the next tick)
    if not (regex or cancelled or late) or _finalizing(frame):
        return  # (nothing to stop; or stopped at the next tick, once the finalizer is done)
    if regex:
        text = s.regex[0]
        s.regex = None
        raise RegexTimeout(f"grep -E {text!r}: the pattern ran for more than {s.regex_limit:g} s on one line "
                           "(it backtracks without end: nested repetition like (a+)+)",
                           hint="simplify the pattern (no repetition inside a repetition), or raise "
                                "STREE_REGEX_TIMEOUT")
    if cancelled:
        s.cancelled = None
        raise Cancelled("the request was cancelled by the client")
    what, s.deadline = s.deadline_what, None
    raise DeadlineExceeded(f"{what} ran past its deadline and was stopped",
                           hint="ask for less (maxCount, a narrower revision or pattern), or raise "
                                "STREE_REQUEST_TIMEOUT")


class watch:
    """`with watch():` the limits set meanwhile are enforced (nestable; a no-op off the main
    thread or where there is no interval timer)."""

    def __enter__(self):
        import signal
        import threading  # (here: a command that watches nothing, a plain grep, does not import them)

        self.active = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
        if not self.active:
            return self
        s = _state
        if s.depth == 0:
            s.hook, sys.unraisablehook = sys.unraisablehook, _unraisable
            s.previous = signal.signal(signal.SIGALRM, _tick)
            signal.siginterrupt(signal.SIGALRM, False)  # (system calls under way restart: SQLite's too)
            signal.setitimer(signal.ITIMER_REAL, TICK, TICK)
        s.depth += 1
        return self

    def __exit__(self, *exc):
        if not self.active:
            return False
        import signal

        s = _state
        s.depth -= 1
        if s.depth == 0:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, s.previous or signal.SIG_DFL)
            s.previous = None
            _unhook(s)
        return False


def _unhook(s):
    s.lost = None
    if s.hook is not None:
        sys.unraisablehook, s.hook = s.hook, None


class regex:
    """`with regex(text):` one match of a user's pattern, stopped past STREE_REGEX_TIMEOUT."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __enter__(self):
        _state.regex = (self.text, time.monotonic())

    def __exit__(self, *exc):
        _state.regex = None
        return False


class request:
    """`with request(what, seconds, cancelled):` a request's deadline and cancellation (an Event)
    enforced while it runs (watch() is entered too)."""

    def __init__(self, what, seconds=None, cancelled=None):
        self.what = what
        self.seconds = seconds
        self.cancelled = cancelled
        self.watch = watch()

    def __enter__(self):
        s = _state
        s.deadline = time.monotonic() + self.seconds if self.seconds else None
        s.deadline_what = self.what
        s.cancelled = self.cancelled
        s.regex_limit = regex_limit()
        self.watch.__enter__()
        return self

    def __exit__(self, *exc):
        s = _state
        s.deadline = s.cancelled = s.regex = s.lost = None  # (from here on no tick raises)
        self.watch.__exit__(*exc)
        return False


class shielded:
    """`with shielded():` work that must not stop half-way (an update of the catalogue, a
    cache write): a cancellation or deadline that comes meanwhile takes effect after it."""

    def __enter__(self):
        _state.shield += 1

    def __exit__(self, *exc):
        _state.shield -= 1
        return False


def settle():
    """Between two requests: nothing watched any more, whatever a tick that fired as the last
    one ended cut short (its conditions cleared first: no tick raises after that)."""
    s = _state
    s.deadline = s.cancelled = s.regex = s.lost = None
    s.shield = 0
    import signal
    import threading

    if s.depth and threading.current_thread() is threading.main_thread():
        s.depth = 0
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, s.previous or signal.SIG_DFL)
        s.previous = None
        _unhook(s)


def configure_regex():
    """Read STREE_REGEX_TIMEOUT now (a bad value is a UsageError before any work)."""
    _state.regex_limit = regex_limit()
