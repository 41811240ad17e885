"""Run stree in this process, as `python -m stree ARGS` would run in a fresh one.

`run(args, input, cwd, env)` calls stree's real entry point, stree.entrypoint.main (the function
the `stree` script runs, fast paths included), with sys.argv, os.environ, the working
directory and standard input set as a child process would have them, and returns
(exit status, stdout bytes, stderr bytes). Standard input, output and error are files
(file descriptors 0, 1 and 2 are pointed at them for the run), so nothing is a terminal,
as under `subprocess.run(capture_output=True)`.

A fresh process shares nothing with the one before. To come close, each run:
- imports stree anew: the stree modules the test process had loaded are set aside and
  put back after, and those the run loaded are dropped (module globals, caches, the load
  statistics stree reads back from sys.modules all start empty);
- restores what a command may change for the whole process: os.environ, the working
  directory, the umask, signal handlers and the interval timer, the garbage collector
  (gc.disable, gc.freeze), sys.argv, sys.stdin/stdout/stderr and file descriptors 0-2,
  the time zone (time.tzset, after TZ changes), warning filters (Python's defaults, so
  a warning is printed to stderr as a fresh process would);
- waits for the threads the command started (a server's watcher) before it puts the
  standard streams back, as a process's output ends only with the process.

`needs_process(...)` says when this cannot stand in for a process, and the caller then
starts one: environment variables Python reads only at startup (PYTHON*, the locale),
a test that gives a timeout (it tests that the command ends), stree's crash simulations
($STREE_TEST_CRASH_BEFORE_RENAME: os._exit in the middle of a write), parallel parsing
($STREE_JOBS) while this process runs threads (stree forks workers only when it has no
other thread), or STREE_TEST_SUBPROCESS=1 in the test run's environment (every command
a process, to check that both ways agree).
"""

import gc
import importlib
import importlib.util
import io
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
import warnings

# the `stree` script pip makes, as `python -c` code: a process started as a user's install starts it
# (`python -m stree` loads runpy's importlib, and with it collections and functools, before stree)
SCRIPT = "import sys; from stree.entrypoint import main; sys.exit(main())"
THREAD_GRACE = 30  # seconds a thread the command started may take to end after it returned
STARTUP_ONLY = ("PYTHON", "LC_", "LANG")  # read by Python when a process starts, not later


# read when the test run starts (the tests' own environment has no STREE_* variable: conftest)
SUBPROCESS_ONLY = os.environ.get("STREE_TEST_SUBPROCESS") == "1"


def needs_process(env, timeout, input):
    """Why these arguments need a real process (a short reason), or None."""
    if SUBPROCESS_ONLY:
        return "STREE_TEST_SUBPROCESS=1"
    if timeout is not None:
        return "a timeout"
    if input is not None and not isinstance(input, (bytes, bytearray)):
        return "input that is not bytes"
    for name in env or {}:
        if name.startswith(STARTUP_ONLY):
            return f"${name}"
        if name.startswith("STREE_TEST_"):  # stree's own crash simulations end the process (os._exit)
            return f"${name}"
    if threading.active_count() > 1 and ("STREE_JOBS" in (env or {}) or "STREE_JOBS" in os.environ):
        return "STREE_JOBS with threads running"
    return None


def _is_stree(name):
    return name == "stree" or name.startswith("stree.")


def _file(data=b""):
    f = tempfile.TemporaryFile()
    if data:
        f.write(data)
        f.seek(0)
    return f


def _default_warnings():
    """Python's default warning filters (a process started without -W or PYTHONWARNINGS)."""
    warnings.resetwarnings()
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.filterwarnings("ignore", category=category)


_CODE = {}  # (path, mtime_ns, size) -> the module's code object, compiled once for all runs


def _cached_get_code(original):
    """SourceFileLoader.get_code reusing a code object compiled for an earlier run (code is
    immutable: each run still executes every module body into fresh globals). Without it,
    each run would compile stree again when bytecode files are not written (./run-tests)."""

    def get_code(self, fullname):
        if not _is_stree(fullname):
            return original(self, fullname)
        path = self.get_filename(fullname)
        try:
            st = os.stat(path)
        except OSError:
            return original(self, fullname)
        key = (path, st.st_mtime_ns, st.st_size)
        code = _CODE.get(key)
        if code is None:
            code = _CODE[key] = original(self, fullname)
        return code

    return get_code


def _test_runner_hook(finder):
    """An import hook of the test runner's own (pytest's assertion rewriting), which a process
    running stree would not have: it looks at every module imported, stree's too."""
    return type(finder).__module__.startswith("_pytest.")


def _past_the_session_files_tick(args, cwd):
    """Wait until the session file named by -s/--session is past its last change's tick of the
    clock (tests/lib/clock.py), as a process's start would have let it be: a command run just
    after a test wrote the file would read it in that tick, and rightly neither keep its graph
    nor trust its index's stat, which a test of what is kept does not expect of a command."""
    from clock import tick_left

    args = [str(a) for a in args]
    for i, arg in enumerate(args):
        value = None
        if arg in ("-s", "--session") and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith("--session="):
            value = arg.split("=", 1)[1]
        if value:
            path = os.path.join(cwd or os.getcwd(), os.path.expanduser(value))
            try:
                left = tick_left(path) if os.path.isfile(path) else None
            except OSError:
                left = None
            if left:  # (None: changed in the future, as a test may set it; racy for ever)
                threading.Event().wait(left + 0.001)


def run(args, input=None, cwd=None, env=None):
    """(exit status, stdout bytes, stderr bytes) of `stree ARGS` run in this process."""
    from importlib.machinery import SourceFileLoader

    _past_the_session_files_tick(args, cwd)
    full_env = dict(os.environ)
    full_env.update(env or {})
    files = [_file(bytes(input or b"")), _file(), _file()]
    saved_fds = [os.dup(fd) for fd in (0, 1, 2)]
    saved_std = (sys.stdin, sys.stdout, sys.stderr)
    saved_argv = sys.argv
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_umask = os.umask(0o022)
    os.umask(saved_umask)
    saved_signals = {}
    for sig in signal.valid_signals():
        try:
            saved_signals[sig] = signal.getsignal(sig)
        except (OSError, ValueError):
            pass
    saved_timer = signal.getitimer(signal.ITIMER_REAL)
    gc_enabled = gc.isenabled()
    froze = []  # stree's gc.freeze calls, counted (gc.get_freeze_count walks every frozen object)
    freeze = gc.freeze
    threads = set(threading.enumerate())
    saved_modules = {name: mod for name, mod in sys.modules.items() if _is_stree(name)}
    for name in saved_modules:
        del sys.modules[name]
    encoding, errors = sys.__stdout__.encoding if sys.__stdout__ else "utf-8", "strict"
    if sys.__stdout__ is not None:
        errors = sys.__stdout__.errors
    code = 0
    original = SourceFileLoader.get_code
    meta_path = list(sys.meta_path)
    try:
        for fd, f in enumerate(files):
            os.dup2(f.fileno(), fd)
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding, errors)
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding, errors)
        sys.stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)), encoding,
                                      "backslashreplace", line_buffering=True)
        sys.argv = [_main_path(), *args]
        os.environ.clear()
        os.environ.update(full_env)
        time.tzset()
        if cwd is not None:
            os.chdir(cwd)
        SourceFileLoader.get_code = _cached_get_code(original)
        sys.meta_path[:] = [f for f in meta_path if not _test_runner_hook(f)]

        def counted_freeze():
            froze.append(1)
            freeze()

        gc.freeze = counted_freeze
        with warnings.catch_warnings():
            _default_warnings()
            try:
                importlib.import_module("stree.entrypoint").main(hard_exit=False)
            except SystemExit as e:
                code = _exit_status(e.code)
            except BaseException:  # as Python's own top level: the traceback, status 1
                traceback.print_exc()
                code = 1
            for thread in set(threading.enumerate()) - threads:  # (a process would end with them)
                thread.join(THREAD_GRACE)
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
    finally:
        SourceFileLoader.get_code = original
        sys.meta_path[:] = meta_path
        for fd, saved in enumerate(saved_fds):
            os.dup2(saved, fd)
            os.close(saved)
        sys.stdin, sys.stdout, sys.stderr = saved_std
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_env)
        time.tzset()
        os.chdir(saved_cwd)
        os.umask(saved_umask)
        signal.setitimer(signal.ITIMER_REAL, *saved_timer)
        for sig, handler in saved_signals.items():
            if handler is not None and signal.getsignal(sig) is not handler:
                try:
                    signal.signal(sig, handler)
                except (OSError, ValueError):
                    pass
        gc.freeze = freeze
        if froze:  # stree's gc.freeze (what was frozen before is thawed too: a permanent
            gc.unfreeze()  # generation cannot be cut back to its old size, only emptied)
        (gc.enable if gc_enabled else gc.disable)()
        for name in [name for name in sys.modules if _is_stree(name)]:
            del sys.modules[name]
        sys.modules.update(saved_modules)
    out, err = (_read(f) for f in files[1:])
    files[0].close()
    return code, out, err


def _main_path(found=[]):
    """sys.argv[0] of `python -m stree`: the path of stree/__main__.py."""
    if not found:
        found.append(os.path.join(os.path.dirname(importlib.util.find_spec("stree").origin), "__main__.py"))
    return found[0]


def _read(f):
    f.seek(0)
    data = f.read()
    f.close()
    return data


def _exit_status(value):
    """The exit status `sys.exit(value)` gives a process."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1
