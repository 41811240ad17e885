"""stree's entry point: what can be answered before click loads, then stree.cli.

`log --graph` into a pipe, when stree.storage.keptgraph kept its output for the file as
it is, is printed without loading click (half of stree's startup); when the file only
had entries appended under its leaf since, the kept output is patched
(stree.output.keptgraph.patch), also without click. Only the plain
spellings of the options that command takes are read here; anything else (-C,
--debug, --help, a value this does not know, a cache miss, an error) goes to
click, which reads the command line again and does the whole job.
"""

import os
import sys

_DONE = []  # a path that leaves nothing to tear down answered (the plain grep, a kept graph): the process just ends
LOG_GRAPH = {"as_graph", "filter_", "search", "max_count", "reverse", "no_ids", "json_mode", "fmt", "nul"}


def main(hard_exit=True):
    """Run stree with the command line in sys.argv; the process's one exit, with the status of
    whichever path answered (None: 0). An error before a command's own boundary (Ctrl-C while
    click loads, a bug here) is said by stree's one boundary (stree.errors.guarded), as every
    error is. `hard_exit=False`: never end the process without the interpreter's finalization
    (a caller running stree inside its own process: the tests' in-process fixture)."""
    try:
        from .errors import guarded

        debug = "--debug" in sys.argv[1:] or bool(os.environ.get("STREE_DEBUG"))
        status = []  # what the path that answered returned, or gave sys.exit (None: 0)

        def work():
            try:
                status.append(_main())
            except SystemExit as e:  # (click's path exits with the command's status: stree.cli.run)
                status.append(e.code)

        code = guarded(work, _inert, debug=debug)
        code = code if code is not None else status[0] if status else None
        if hard_exit:
            _leave_threads(code)
    except KeyboardInterrupt:  # (Ctrl-C just outside the boundary: said as it says it)
        sys.stderr.write("stree: interrupted\n")
        code = 130
    sys.exit(code or 0)


def _leave_threads(code):
    """End the process here when a daemon thread is still alive in it (a replay's request in
    flight at Ctrl-C, a server's reader blocked on its input): such a thread, woken while the
    interpreter is finalized, can crash it (seen: `free(): invalid pointer`, SIGABRT, after
    `stree replay` was interrupted). Likewise once psycopg was loaded (a shared catalogue's
    grep, ls, push): tearing down its ~200 modules (asyncio, ssl, logging, email, ...) took
    longer than a grep of the catalogue itself (about 35 ms of CPU, a fifth of the process),
    and its connections are closed by now. Likewise after a plain grep (stree.fastgrep): its
    output is written and its catalogue closed, and tearing down the interpreter (its modules,
    the rows and text it read) took a sixth of a warm grep's time; likewise after a kept `log
    --graph` printed again or patched (its kept file written or added to; what the teardown
    would free, a patch's index, modules and rows' state, the process's end frees). Everything stree writes is
    already on disk by now (appends flushed under the lock, rewrites fsynced and renamed);
    only the streams are flushed here."""
    threading = sys.modules.get("threading")
    threads = threading is not None and any(t.daemon and t.is_alive() for t in threading.enumerate()
                                            if t is not threading.current_thread())
    if not threads and "psycopg" not in sys.modules and not _DONE:
        return
    if isinstance(code, str):  # sys.exit("message"): said on stderr, status 1, as Python does
        sys.stderr.write(code + "\n")
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # (a reader gone, a closed stream: nothing more to say)
            pass
    os._exit(code or 0)


def _main():
    if sys.stdout is None:  # started with stdout closed: treated as a reader that went away
        sys.stdout = _ClosedOutput()
    if sys.argv[1:2] == ["__complete"]:  # tab completion: no click parsing, no rich
        from .complete import main as complete

        return complete(sys.argv[2:])
    if sys.argv[1:2] == ["__grep-server"]:  # the grep server, started by a grep (stree.grepserver)
        from .grepserver import serve

        _DONE.append("grep-server")
        return serve(sys.argv[2:])
    if "--graph" in sys.argv:
        status = _kept_graph(sys.argv[1:])
        if status is not None:
            return status
    if "grep" in sys.argv[1:8] and (sys.argv[1] == "grep" or sys.argv[1].startswith(("--catalog", "--agent-dir",
                                                                                        "--session-dir"))):
        # a plain grep into a pipe (stree.fastgrep), of a shared catalogue too; by the grep server when asked for
        from .config import grep_server

        code = None
        if grep_server():
            from .grepserver import ask

            code = ask(sys.argv[1:])
        if code is None:
            import gc

            from .fastgrep import run as grep

            gc.disable()  # (no collection at all: the process ends once the lines are written, _leave_threads)
            code = grep(sys.argv[1:])
            if code is None:
                gc.enable()  # (click answers)
        if code is not None:
            _DONE.append("grep")
            return code
    if sys.argv[-2:] == ["catalog", "push"]:  # a plain push into a pipe (stree.fastpush)
        from .fastpush import run as push

        code = push(sys.argv[1:])
        if code is not None:
            return code
    from .fastwrite import GRAMMAR

    if GRAMMAR.keys() & sys.argv[1:]:  # log, rev-parse, label, checkout: answered here when plain
        from .fastwrite import run as answer  # (stree.fastwrite, stree.fastread)

        code = answer(sys.argv[1:], _session_path)
        if code is not None:
            return code
    from .cli import run

    return run()


def parse_log_graph(argv):
    """{dest: value} of `[global options] log --graph ...` in plain spellings (stree.argv), the
    revision as "revision", or None."""
    from .argv import parse

    parsed = parse(argv, {"log": LOG_GRAPH})
    if parsed is None or not parsed[1].get("as_graph"):
        return None
    _, got, operands = parsed
    if operands:
        got["revision"] = operands[0]
    return got


def _kept_graph(argv):
    """Print a kept `log --graph` output for this command line: the exit status, or None when
    click must run."""
    import gc

    gc.disable()  # many objects (stree's modules, the kept rows' state), no cycles: collections only cost time
    status = _kept_graph_status(argv)
    if status is None:
        gc.enable()  # (click draws it)
    return status


def _kept_graph_status(argv):
    from .storage import keptgraph as kept_store

    if not kept_store.applies():
        return None
    got = parse_log_graph(argv)
    if got is None or got.get("reverse") or (got.get("json_mode") and "fmt" in got):
        return None  # (--graph --reverse is refused: click says so)
    path = _session_path(got)
    if path is None:
        return None
    max_count = got.get("max_count")
    options = kept_store.options(got.get("revision", "@"), got.get("filter_", "default"), got.get("search"),
                                 max_count, bool(got.get("reverse")), bool(got.get("no_ids")),
                                 bool(got.get("json_mode")), got.get("fmt"), bool(got.get("nul")),
                                 got.get("color", "auto"))
    from .output.keptgraph import consult

    found = consult(path, options)
    if found is None:
        return None
    report = None  # (the load report of a patch; printed again, nothing is read)
    patched = None
    if found[0] == "same":
        found = found[1]
    else:
        patched = _appended(found[1], options, got, max_count, path)
        if patched is None:
            return None
        report = patched[-1]
    def work():
        if patched is None:
            kept_store.write(found)
        else:
            pieces, blob, kept, session, _ = patched
            capture = kept_store.Capture(session, options, kept)  # (added to the kept file)
            try:
                kept_store.emit(pieces, kept, capture)
                kept_store.store(session, options, capture, blob)
            finally:
                capture.close()
                kept.close()

    from .errors import guarded

    code = guarded(work, _inert)  # (part of the output may be out: no retry in click)
    if code:
        return code
    if os.environ.get("STREE_DEBUG_STATS"):
        from .core.loading import LoadReport
        from .output.debug_stats import stats_line

        print(stats_line(report or LoadReport("graph-cache")), file=sys.stderr)
    _DONE.append("graph")
    return 0


def _appended(patch, options, got, max_count, path):
    """(pieces, state blob, kept file, session, load report) of `log --graph` patched from a
    kept output (stree.output.keptgraph.Patch) after entries were appended under the leaf, or
    None (click does the whole job, errors included). Nothing is printed yet."""
    try:
        from .core.loading import open_session
        from .core.preview import Previewer
        from .output.keptgraph.patch import chain

        session, tree, report = open_session(path)
        if session.malformed or session.headerless or session.version < 2:
            raise LookupError  # (warnings, migrations: click's)
        out = _graph_output(got)
        done = chain(tree, out, patch, got.get("filter_", "default"), got.get("search"), bool(got.get("no_ids")),
                     max_count, Previewer(tree))
        if done is None:
            raise LookupError
        found, patch = (*done, patch.kept, session, report), None
        return found
    except Exception:  # anything unexpected: click does it all, and says what is wrong
        return None
    finally:
        if patch is not None:
            patch.kept.close()


def _graph_output(got):
    """The Output a patched `log --graph` writes through: for human rows without colour into a
    pipe that takes UTF-8 (the common case), a stand-in that draws them as bytes
    (stree.output.keptgraph.pipe.Plain: stree.output.modes is not loaded)."""
    from .output.keptgraph import pipe
    from .storage.keptgraph import takes_utf8_bytes

    color = got.get("color", "auto")
    if not got.get("json_mode") and got.get("fmt") is None and color != "always" and not sys.stdout.isatty() \
            and takes_utf8_bytes(sys.stdout):
        return pipe.Plain(bool(got.get("nul")))
    from .output.fields import GRAPH_FIELDS
    from .output.modes import Output

    return Output(bool(got.get("json_mode")), got.get("fmt"), bool(got.get("nul")), color, not got.get("no_pager"),
                  GRAPH_FIELDS)


def _inert(text, oneline=False):
    from .format.terminal import inert  # (only when there is an error to say)

    return inert(text, oneline)


def _session_path(got):
    """The session file -s (or $STREE_SESSION, or the current directory) names, or None
    when only the full resolution can say (its errors are click's to report)."""
    if got.get("session") == "":
        return None
    value = got.get("session") or os.environ.get("STREE_SESSION") or None
    if value is not None and value != "demo":
        path = os.path.expanduser(value)
        if os.path.isfile(path):
            return path
    from .errors import StreeError
    from .core.store import resolve_session

    try:
        return str(resolve_session(value, os.getcwd(), got.get("agent_dir"), got.get("session_dir")))
    except (StreeError, OSError):
        return None


class _ClosedOutput:
    """sys.stdout when file descriptor 1 was closed: writing is an error, nothing else is."""

    encoding = "utf-8"
    errors = "strict"

    def isatty(self):
        return False

    def write(self, text):
        import errno

        raise BrokenPipeError(errno.EPIPE, "standard output is closed")  # as a reader gone: exit 0

    def flush(self):
        pass
