"""Errors for the user, each with the exit code documented in stree(1)."""

OK = 0
NEGATIVE = 1  # a question answered "no": merge-base --is-ancestor, fsck found problems
USAGE = 2  # bad command line (click uses 2 as well)
NOT_FOUND = 3  # revision, label, session or entry not found / ambiguous
BAD_FILE = 4  # unreadable file, not a session, invalid content, cycle
MODEL = 5  # model or network failure
CONFLICT = 6  # refused to write: file changed, locked or read-only
INTERRUPTED = 130
INTERNAL = 70

EXIT_CODES = [
    (OK, "success (also when the reader of stdout goes away: stree log | head -1)"),
    (NEGATIVE, "negative answer (merge-base --is-ancestor false, fsck found problems, a search found nothing, "
               "diff --exit-code: the paths differ)"),
    (USAGE, "usage error (bad option, bad revision syntax)"),
    (NOT_FOUND, "not found or ambiguous (revision, label, session)"),
    (BAD_FILE, "unreadable or invalid session file"),
    (MODEL, "model or network failure"),
    (CONFLICT, "write refused (read-only file, lock, cancelled by a hook)"),
    (INTERNAL, "internal error: a bug in stree (rerun with --debug and report it)"),
    (INTERRUPTED, "interrupted (Ctrl-C)"),
]


class _Said:
    """What stree's error boundaries print: one line on stderr (a hint below it), then exit with
    `code`."""

    code = BAD_FILE
    traceback = True  # --debug shows where it was raised

    def __init__(self, message, code=None, hint=None):
        super().__init__(message)
        if code is not None:
            self.code = code
        self.hint = hint


class StreeError(_Said, Exception):
    """An error to print as one line on stderr and exit with `code`."""


class Stopped(_Said, BaseException):
    """Work stopped from outside while under way: a client's cancellation, a request's deadline,
    a regular expression past its time (stree.core.budget raises them from a timer, wherever the
    work is). Never news about a file, so a BaseException, as KeyboardInterrupt is: code that
    treats a failure as "not there" (`except Exception`, `except StreeError`: a damaged cache is
    a miss, an unreadable file is listed as such) cannot take one for that. The error
    boundaries catch REPORTED."""


REPORTED = (StreeError, Stopped)  # what an error boundary says as stree's one line (and exit code)


class NotFound(StreeError):
    code = NOT_FOUND


class Ambiguous(NotFound):
    """A revision that names more than one entry (exit 3, as not found)."""


class BadFile(StreeError):
    code = BAD_FILE


class UsageError(StreeError):
    code = USAGE


class CycleError(BadFile):
    def __init__(self, ids):
        self.ids = ids
        super().__init__(
            "parent chain loops: " + " -> ".join(ids[:8]) + (" ..." if len(ids) > 8 else ""),
            hint="run 'stree fsck' to list the broken entries",
        )


def seconds(value, where):
    """`value` as a positive, finite number of seconds, or a UsageError naming `where` it
    came from (an environment variable, an option, a config setting): inf, nan, abc, 0
    and negative numbers are refused."""
    import math

    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number) or number <= 0:
        raise UsageError(f"{where}={str(value)!r} is not a number of seconds (more than 0, finite)")
    return number


def env_seconds(name, default):
    """Seconds from environment variable `name` (unset or empty: `default`)."""
    import os

    value = os.environ.get(name)
    return default if value is None or value == "" else seconds(value, name)


# -- the error boundary: every front door (stree.cli.run, the fast paths) says errors through it

def guarded(work, clean, debug=False):
    """Run `work()`: None when it went through, else the exit code, with the error said on stderr
    as stree says every error: `stree: error: ...` and `hint:` lines, one line for an I/O
    error, `stree: internal error: ...` for a bug (its traceback with `debug`), nothing when
    the reader of stdout went away (exit 0). `clean(text, oneline=False)` makes text from the
    session or the system inert on a terminal (stree.format.terminal.inert)."""
    import os
    import sys

    def say(line):
        print(line, file=sys.stderr)

    try:
        work()
    except BrokenPipeError:  # the reader went away (stree log | head -1): not an error
        try:  # (nothing left to flush into the broken pipe at exit)
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, 1)
            os.close(fd)
        except OSError:
            pass
        return OK
    except KeyboardInterrupt:
        say("stree: interrupted")
        return INTERRUPTED
    except REPORTED as e:
        if debug and e.traceback:
            import traceback

            traceback.print_exc()
        say(f"stree: error: {clean(str(e))}")
        for line in str(e.hint).split("\n") if e.hint else ():
            say(f"hint: {clean(line)}")
        return e.code
    except RecursionError:  # JSON nested thousands deep reads fine (as in pi) but cannot be printed whole
        say("stree: error: an entry is nested too deeply (thousands of levels of JSON) to print")
        say("hint: --format with plain fields, or 'stree log', still work on this session")
        return BAD_FILE
    except OSError as e:  # an I/O error after the session was read (content, cache, stdout): one line
        if debug:
            raise
        where = f"{e.filename}: " if e.filename else ""
        say(f"stree: error: {clean(where, oneline=True)}I/O error: {e.strerror}")
        return BAD_FILE
    except Exception as e:  # a bug in stree: one line, the traceback only with --debug
        if debug:
            raise
        say(clean(f"stree: internal error: {type(e).__name__}: {e} (run with --debug for details)"))
        return INTERNAL
    return None
