"""The common read commands answered without click (half of a warm command's time).

`log` (the path to one revision: -n, --date, --json, --format, -z), `rev-parse` (REV...,
--short, --json, --format, -z) and `label` (the list), with the global options -s,
--session-dir, --agent-dir, --color and --no-pager, in their plain spellings. Anything else
(another option or spelling, --help, a range for log, an error of any kind, a session with
warnings, STREE_DEBUG, STREE_NO_CACHE) returns None before a byte is
written, and click does the whole job: its output, errors and exit codes are the reference,
which tests/cli/test_fastread.py compares this with. STREE_NO_FAST=1 turns this path off.
STREE_DEBUG_STATS prints its line here as stree.cli does (the bench times this path, not click's).
"""

import os
import sys

OUTPUT = {"json_mode", "fmt", "nul"}
GRAMMAR = {  # command: the dests of the options answered here (their spellings: stree.argv's table)
    "log": OUTPUT | {"max_count", "date_style"},
    "rev-parse": OUTPUT | {"short"},
    "label": OUTPUT,
}
ENV_OFF = ("STREE_NO_FAST", "STREE_DEBUG", "STREE_NO_CACHE")


def run(argv, session_path):
    """The exit code of a read command answered here, or None: click answers it.
    `session_path(got)` is the session file the options name, or None."""
    if any(os.environ.get(name) for name in ENV_OFF):
        return None
    from .argv import parse

    parsed = parse(argv, GRAMMAR)
    if parsed is None:
        return None
    command, got, operands = parsed
    if command == "label" and operands:
        return None  # (a write: stree.fastwrite's, else click's)
    path = session_path(got)
    if path is None:
        return None
    try:
        ready = _prepare(command, got, operands, path)
    except Exception:  # an error, a warning, anything unusual: click says it
        return None
    if ready is None:
        return None
    return _write(*ready)


def _prepare(command, got, operands, path):
    """(session, index state, output, what writes the records) with everything resolved, or None."""
    from .core.loading import COMMAND, open_session
    from .core.preview import Previewer
    from .output import fields
    from .output.modes import Output

    session, tree, report = open_session(path, defer=True, report=COMMAND)  # (click's, if it takes over)
    state = report.index
    if session.malformed or session.headerless or not len(session.nodes):
        return None  # (a warning, or "no entries yet": said by the command)
    record_fields = {"log": fields.GRAPH_FIELDS, "rev-parse": fields.REV_FIELDS, "label": fields.LABEL_FIELDS}
    out = Output(bool(got.get("json_mode")), got.get("fmt"), bool(got.get("nul")), got.get("color", "auto"),
                 not got.get("no_pager"), record_fields[command])
    if command == "log":
        from .output.reads import path_log
        from .output.records import log_rows

        walk = log_rows(tree, operands[0] if operands else "@", max_count=got.get("max_count"))
        if walk.kind != "single":
            return None
        previewer = Previewer(tree)
        return session, state, out, lambda: path_log(out, tree, walk.rows, previewer, got.get("date_style", "local"),
                                                     walk.active)
    if command == "rev-parse":
        from .output.reads import rev_line
        from .questions.base import Loaded
        from .questions.answers import rev_parse

        records = list(rev_parse(Loaded(session, tree), operands))  # (resolved before a byte is written)

        def write_records():
            for rec in records:
                out.record(rec, None if out.machine else rev_line(rec, tree, got.get("short")))
        return session, state, out, write_records
    from .output.reads import label_list
    from .questions.base import Loaded
    from .questions.answers import labels

    return session, state, out, lambda: label_list(out, labels(Loaded(session, tree)))


def _write(session, state, out, write_records):
    """Write the records as the command would, with stree.cli's handling of the errors that
    can still come (a reader gone, an I/O error, Ctrl-C)."""
    def work():
        write_records()
        out.close()
        sys.stdout.flush()
    code = guarded(work)
    if code is not None:
        return code
    finish(session)
    return 0


def guarded(work):
    """Run `work()` through stree's one error boundary (stree.errors.guarded): None when it went
    through, else the exit code, the error said as every stree command says it."""
    from .errors import guarded as boundary
    from .format.terminal import inert

    return boundary(work, inert)


def finish(session):
    """What a command does when it ends: the index a load deferred (or new previews) written,
    and the STREE_DEBUG_STATS line (the command's load report: its first read)."""
    from .core import loading

    if session is not None:
        try:
            loading.finish(session)
        except Exception:
            pass
    if os.environ.get("STREE_DEBUG_STATS"):
        from .output.debug_stats import stats_line

        print(stats_line(loading.COMMAND), file=sys.stderr)
