"""`stree grep` answered without click (its import is half of a warm grep's time).

Only `grep [-i] [-w] [-E] [-l] [-c] PATTERN` (those flags apart, in any order, before or after
PATTERN), with no global option but --catalog URL, --agent-dir DIR and --session-dir DIR (each
once, before or after `grep`, as click takes them; --session-dir only names where -s looks, so
a grep of every session reads nothing of it), into a pipe or a file (a terminal has colour and
a pager: click's). A shared catalogue (--catalog, STREE_CATALOG, the config) is asked as
the command asks it; its server failing or refusing is said here (exit 5), not asked twice.
The search is the command's (stree.core.grep_sessions.Grep) and so is each line
(stree.output.grepline); nothing is written until it is done. Anything unusual (another
option or spelling, a PATTERN starting with '-', an error or a warning of any kind,
STREE_NO_FAST/STREE_DEBUG/STREE_NO_CACHE) returns None before a byte is
written, and click does the whole job; tests/cli/test_grep_work.py compares the two.
"""

import os
import sys

from .format.terminal import inert

FLAGS = {"-i": "ignore_case", "-w": "word", "-E": "regex", "-l": "files_only", "-c": "count"}
GLOBAL = {"--catalog": "catalog", "--agent-dir": "agent_dir", "--session-dir": "session_dir"}  # (values)
ENV_OFF = ("STREE_NO_FAST", "STREE_DEBUG", "STREE_NO_CACHE")


def catalog_option(argv):
    """(the URL of a leading `--catalog URL` or `--catalog=URL`, the rest of `argv`), else
    (None, argv)."""
    if argv[:1] == ["--catalog"] and len(argv) > 1:
        return argv[1], argv[2:]
    if argv[:1] and argv[0].startswith("--catalog="):
        return argv[0][len("--catalog="):], argv[1:]
    return None, argv


def global_options(argv):
    """({dest: value} of the GLOBAL options in `argv`, `--opt VALUE` or `--opt=VALUE`, each
    once; the rest of argv), or None."""
    got, rest, i = {}, [], 0
    while i < len(argv):
        name, eq, value = argv[i].partition("=")
        if name not in GLOBAL:
            rest.append(argv[i])
        elif GLOBAL[name] in got or (not eq and i + 1 == len(argv)):
            return None
        else:
            if not eq:
                i += 1
                value = argv[i]
            got[GLOBAL[name]] = value
        i += 1
    return got, rest


def parse(argv):
    """({flag: True}, PATTERN) of a plain `grep` command line, or None."""
    if argv[:1] != ["grep"]:
        return None
    got, operands = {}, []
    for arg in argv[1:]:
        if arg in FLAGS:
            got[FLAGS[arg]] = True
        elif arg.startswith("-") or operands:
            return None
        else:
            operands.append(arg)
    if len(operands) != 1 or (got.get("files_only") and got.get("count")):
        return None
    return got, operands[0]


def run(argv):
    """The exit code of a grep answered here, or None: click answers it."""
    if any(os.environ.get(name) for name in ENV_OFF) or sys.stdout.isatty():
        return None
    options = global_options(argv)
    parsed = parse(options[1]) if options is not None else None
    if parsed is None or options[0].get("catalog") == "":
        return None
    url = options[0].get("catalog")
    if url is not None:  # (as click's --catalog sets it, for every layer)
        os.environ["STREE_CATALOG"] = url
    got, pattern = parsed
    got["agent_dir"] = options[0].get("agent_dir")
    from .errors import StreeError

    try:
        text, found = _search(got, pattern)
    except KeyboardInterrupt:  # (nothing written)
        sys.stderr.write("stree: interrupted\n")
        from .errors import INTERRUPTED

        return INTERRUPTED
    except StreeError as e:
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
    from .errors import NEGATIVE, OK, guarded
    from .format.terminal import write

    def out():
        write(text)
        sys.stdout.flush()  # (here, not at exit: the process ends without finalization, stree.entrypoint)

    code = guarded(out, inert)  # (stree's one error boundary: a reader gone is not an error)
    if code is not None:
        return code
    if os.environ.get("STREE_DEBUG_STATS"):
        from .core.loading import COMMAND
        from .output.debug_stats import stats_line

        print(stats_line(COMMAND), file=sys.stderr)
    return OK if found else NEGATIVE


def _search(got, pattern):
    """(what grep prints, whether it found a line), or (None, 0) when a warning was said
    (on stderr: click would say it again); debug lines are said as they came."""
    import gc
    import io

    from .core.grep_sessions import Grep
    from .errors import StreeError
    from .output.grepline import grep_line

    enabled = gc.isenabled()
    gc.disable()  # (thousands of candidates, matches and lines, no cycle: collections would only cost time)
    err, sys.stderr = sys.stderr, io.StringIO()  # (a warning: click's to say, once)
    try:
        try:
            grep = Grep(pattern, **got)
        except StreeError as e:
            e.said = sys.stderr.getvalue()
            raise
        count = bool(got.get("count"))
        lines = [grep_line(grep, rec, m, None, count) for rec, m in grep.records(machine=False)]  # (inert text)
        said = sys.stderr.getvalue()
    finally:
        sys.stderr = err
        if enabled:
            gc.enable()
    if any(not line.startswith("stree: debug: ") for line in said.splitlines()):
        return None, 0
    sys.stderr.write(said)  # (STREE_DEBUG_STATS's lines of the catalogue's work, as click's path says them)
    return "".join(line + "\n" for line in lines), grep.found

