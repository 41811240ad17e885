"""`stree grep` answered without click (its import is half of a warm grep's time).

Only `grep [-i] [-w] [-E] [-l] [-c] PATTERN` (those flags, in their short or long spellings,
in any order, before or after PATTERN), with no global option but --catalog URL, --agent-dir
DIR and --session-dir DIR (each once, before or after `grep`, as click takes them;
--session-dir only names where -s looks, so a grep of every session reads nothing of it),
read by stree.argv with the grammar generated from click, into a pipe or a file (a terminal
has colour and a pager: click's). A shared catalogue (--catalog, STREE_CATALOG, the config)
is asked as the command asks it (through libpq by ctypes, not psycopg:
stree.storage.catalog.libpq); its server failing or refusing is said here (exit 5), not
asked twice. The search is the command's (stree.core.grep_sessions.Grep) and so is each line
(stree.output.grepline); nothing is written until it is done. Anything unusual (another
option or spelling, a PATTERN starting with '-', an error or a warning of any kind,
STREE_NO_FAST/STREE_DEBUG/STREE_NO_CACHE) returns None before a byte is
written, and click does the whole job; tests/cli/test_grep_work.py compares the two.
"""

import os
import sys

from .format.terminal import inert

OPTIONS = {"ignore_case", "word", "regex", "files_only", "count"}  # grep's, answered here (-i -w -E -l -c and
#   their long spellings: stree.argv's table, generated from click)
GLOBAL = {"catalog", "agent_dir", "session_dir"}  # the global options answered here
ENV_OFF = ("STREE_NO_FAST", "STREE_DEBUG", "STREE_NO_CACHE")


def parse(argv):
    """({dest: value}, PATTERN) of a plain grep command line (stree.argv), or None."""
    from .argv import parse as plain

    parsed = plain(argv, {"grep": OPTIONS}, GLOBAL)
    if parsed is None:
        return None
    _, got, operands = parsed
    if len(operands) != 1 or (got.get("files_only") and got.get("count")) or got.get("catalog") == "":
        return None  # (click's to say)
    return got, operands[0]


def run(argv):
    """The exit code of a grep answered here, or None: click answers it."""
    if any(os.environ.get(name) for name in ENV_OFF) or sys.stdout.isatty():
        return None
    parsed = parse(argv)
    if parsed is None:
        return None
    got, pattern = parsed
    url = got.pop("catalog", None)
    if url is not None:  # (as click's --catalog sets it, for every layer)
        os.environ["STREE_CATALOG"] = url
    got.pop("session_dir", None)  # (it only names where -s looks: a grep of every session reads nothing of it)
    from .errors import REPORTED

    try:
        text, found = _search(got, pattern)
    except KeyboardInterrupt:  # (nothing written)
        sys.stderr.write("stree: interrupted\n")
        from .errors import INTERRUPTED

        return INTERRUPTED
    except REPORTED as e:
        from .core.catalog_shared import EXIT

        said = getattr(e, "said", "")
        if e.code != EXIT or any(not line.startswith("stree: debug: ") for line in said.splitlines()):
            return None
        sys.stderr.write(said)
        from .errors import guarded

        def fail():  # (the shared catalogue's server failed or refused: said as click's path says it)
            raise e

        return guarded(fail, inert)
    except Exception:  # an error, anything unusual: click says it
        return None
    if text is None:
        return None
    from .errors import NEGATIVE, OK

    code = printed(text)
    if code is not None:
        return code
    if os.environ.get("STREE_DEBUG_STATS"):
        from .core.loading import COMMAND
        from .output.debug_stats import stats_line

        print(stats_line(COMMAND), file=sys.stderr)
    return OK if found else NEGATIVE


def printed(text):
    """Write grep's output: None once it is out, else the exit code (stree's one error
    boundary: a reader gone is not an error). Also the grep server's answers (stree.grepserver),
    as the bytes this stdout would write."""
    from .errors import guarded
    from .format.terminal import write

    def out():
        if text.__class__ is bytes:
            sys.stdout.flush()
            sys.stdout.buffer.write(text)
            sys.stdout.buffer.flush()
            return
        write(text)
        sys.stdout.flush()  # (here, not at exit: the process ends without finalization, stree.entrypoint)

    return guarded(out, inert)


def _search(got, pattern):
    """(what grep prints, whether it found a line), or (None, 0) when a warning was said
    (on stderr: click would say it again); debug lines are said as they came."""
    import gc
    import io

    from .core.grep_sessions import Grep
    from .errors import StreeError
    from .output.grepline import grep_lines

    enabled = gc.isenabled()
    gc.disable()  # (thousands of candidates, matches and lines, no cycle: collections would only cost time)
    err, sys.stderr = sys.stderr, io.StringIO()  # (a warning: click's to say, once)
    try:
        try:
            grep = Grep(pattern, **got)
        except StreeError as e:
            e.said = sys.stderr.getvalue()
            raise
        lines = []
        for batch in grep_lines(grep):  # (inert text, a list per session)
            lines += batch
        said = sys.stderr.getvalue()
    finally:
        sys.stderr = err
        if enabled:
            gc.enable()
    if any(not line.startswith("stree: debug: ") for line in said.splitlines()):
        return None, 0
    sys.stderr.write(said)  # (STREE_DEBUG_STATS's lines of the catalogue's work, as click's path says them)
    if lines:
        lines.append("")  # (the last line's end, without copying the whole text once more)
    return "\n".join(lines), grep.found

