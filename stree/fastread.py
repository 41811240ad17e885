"""The common read commands answered without click (half of a warm command's time).

`log` (the path to one revision: -n, --date, --json, --format, -z), `rev-parse` (REV...,
--short, --json, --format, -z) and `label` (the list), with the global options -s,
--session-dir, --agent-dir, --color and --no-pager, in their plain spellings. Anything else
(another option or spelling, --help, a range for log, an error of any kind, a session with
warnings, STREE_DEBUG, STREE_NO_CACHE) returns None before a byte is
written, and click does the whole job: its output, errors and exit codes are the reference,
which tests/test_fastread.py compares this with. STREE_NO_FAST=1 turns this path off.
STREE_DEBUG_STATS prints its line here as stree.cli does (the bench times this path, not click's).
"""

import os
import sys

from .globalopts import fast_flags, fast_values

GLOBAL_VALUES = fast_values()  # -s, --session, --agent-dir, --session-dir, --color (stree.globalopts)
GLOBAL_FLAGS = fast_flags()  # --no-pager
OUTPUT_VALUES = {"--format": "fmt"}
OUTPUT_FLAGS = {"--json": "json", "-z": "nul"}
COMMANDS = {  # command: (options with a value, flags, how many operands)
    "log": (dict(OUTPUT_VALUES, **{"-n": "max_count", "--max-count": "max_count", "--date": "date"}),
            OUTPUT_FLAGS, 1),
    "rev-parse": (OUTPUT_VALUES, dict(OUTPUT_FLAGS, **{"--short": "short"}), None),
    "label": (OUTPUT_VALUES, OUTPUT_FLAGS, 0),
}
DATES = ("local", "iso", "relative", "unix", "utc")
ENV_OFF = ("STREE_NO_FAST", "STREE_DEBUG", "STREE_NO_CACHE")
LOADED = None  # the index state of a session loaded here before click took over (STREE_DEBUG_STATS)


def parse(argv, commands=COMMANDS):
    """(command, {option: value}, operands) of a plain command line, or None. `commands`:
    {command: (options with a value, flags, how many operands at most)}."""
    i = 0
    got = {}
    while i < len(argv) and argv[i] not in commands:
        i = _option(argv, i, GLOBAL_VALUES, GLOBAL_FLAGS, got)
        if i is None:
            return None
    if i >= len(argv):
        return None
    command = argv[i]
    values, flags, most = commands[command]
    values = dict(values, **GLOBAL_VALUES)
    flags = dict(flags, **GLOBAL_FLAGS)
    operands = []
    i += 1
    while i < len(argv):
        arg = argv[i]
        if arg.startswith("-") and arg not in ("-", ):
            i = _option(argv, i, values, flags, got)
            if i is None:
                return None
        else:
            operands.append(arg)
            i += 1
    if most is not None and len(operands) > most:
        return None
    return command, got, operands


def _option(argv, i, values, flags, got):
    arg = argv[i]
    name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
    if name in values:
        if not eq:
            if i + 1 >= len(argv):
                return None
            i += 1
            value = argv[i]
        if values[name] in got:
            return None  # (given twice: click's rules)
        got[values[name]] = value
        return i + 1
    if not eq and arg in flags:
        got[flags[arg]] = True
        return i + 1
    return None


def run(argv, session_path):
    """The exit code of a read command answered here, or None: click answers it.
    `session_path(got)` is the session file the options name, or None."""
    if any(os.environ.get(name) for name in ENV_OFF):
        return None
    parsed = parse(argv)
    if parsed is None:
        return None
    command, got, operands = parsed
    if got.get("color", "auto") not in ("auto", "always", "never") or got.get("date", "local") not in DATES:
        return None
    if "max_count" in got:
        if not (got["max_count"].isascii() and got["max_count"].isdigit()):
            return None
        got["max_count"] = int(got["max_count"])
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
    from .core.preview import Previewer
    from .core.revs import Resolver
    from .core.tree import Tree
    from .output import fields
    from .output.modes import Output
    from .storage import index

    global LOADED
    session, state = index.load(path, defer=True)
    LOADED = state
    if session.malformed or session.headerless or not len(session.nodes):
        return None  # (a warning, or "no entries yet": said by the command)
    tree = Tree(session.nodes, session.load, session.previews)
    resolver = Resolver(tree)
    record_fields = {"log": fields.GRAPH_FIELDS, "rev-parse": fields.REV_FIELDS, "label": fields.LABEL_FIELDS}
    out = Output(bool(got.get("json")), got.get("fmt"), bool(got.get("nul")), got.get("color", "auto"),
                 not got.get("no_pager"), record_fields[command])
    if command == "log":
        from .output.reads import path_log
        from .output.records import log_rows

        walk = log_rows(tree, operands[0] if operands else "@", max_count=got.get("max_count"))
        if walk.kind != "single":
            return None
        previewer = Previewer(tree)
        return session, state, out, lambda: path_log(out, tree, walk.rows, previewer, got.get("date", "local"),
                                                     walk.active)
    if command == "rev-parse":
        from .format.terminal import inert
        from .output.reads import shortest

        records = []
        for rev in operands or ("@",):
            kind, *parts = resolver.resolve_range(rev)
            if kind == "single":
                results = [("", parts[0])]
            elif kind == "range":
                results = [("", parts[1]), ("^", parts[0])]
            else:
                base = tree.merge_base(parts[0], parts[1])
                results = [("", parts[0]), ("", parts[1])] + ([("^", base)] if base else [])
            for mark, id in results:
                shown = shortest(id, tree.by_id) if got.get("short") else id
                records.append(({"rev": rev, "id": id, "negated": bool(mark)} if mark else {"rev": rev, "id": id},
                                mark + inert(shown, oneline=True)))

        def write_records():
            for rec, human in records:
                out.record(rec, human)
        return session, state, out, write_records
    from .output.reads import label_list

    return session, state, out, lambda: label_list(out, tree, Previewer(tree))


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
    and the STREE_DEBUG_STATS line (the index state of the first load: LOADED)."""
    if session is not None:
        try:
            from .storage import index

            index.save(session)
        except Exception:
            pass
    if os.environ.get("STREE_DEBUG_STATS"):
        from .output.stats import stats_line

        scan = sys.modules.get("stree.storage.scan")
        print(stats_line(scan.STATS["parsed"] if scan else 0, LOADED), file=sys.stderr)
