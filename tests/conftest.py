import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent
AREAS = ("unit", "cli", "interop", "reliability")  # tests/AREA/test_*.py (see README, "Development")
# the areas' modules import fixtures and helpers from one another (from test_catalog import corpus)
for _area in AREAS:
    sys.path.insert(0, str(TESTS / _area))
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(TESTS / "lib"))  # the helpers: builders, pi_harness, inprocess, ...

import inprocess  # noqa: E402  (reads STREE_TEST_SUBPROCESS before isolated_home clears STREE_*)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    """No test may touch a real home, agent dir, config or cache."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("PAGER", "cat")
    for var in list(os.environ):
        if var.startswith(("STREE_", "PI_CODING_AGENT", "OPENAI_", "ANTHROPIC_")) or var in ("NO_COLOR",):
            monkeypatch.delenv(var, raising=False)
    return home


class Result:
    """What a run of stree gave: from a finished subprocess (its returncode, stdout, stderr),
    or from (code, stdout bytes, stderr bytes) of a run in this process."""

    def __init__(self, proc=None, code=None, out=b"", err=b""):
        if proc is not None:
            code, out, err = proc.returncode, proc.stdout, proc.stderr
        self.code = code
        self.out = out.decode("utf-8", errors="replace")
        self.err = err.decode("utf-8", errors="replace")
        self.raw = out

    def __repr__(self):
        return f"Result(code={self.code}, out={self.out[:500]!r}, err={self.err[:500]!r})"


def run_stree(*args, input=None, cwd=None, env=None, timeout=None):
    """`stree ARGS` as `python -m stree ARGS` would run it: in this process (stree's real entry
    point, state restored after: tests/lib/inprocess.py), or in a child process where this
    one cannot stand in for it (inprocess.needs_process: startup-only variables, a timeout)."""
    args = [str(a) for a in args]
    if inprocess.needs_process(env, timeout, input) is None:
        return Result(None, *inprocess.run(args, input=input, cwd=cwd, env=env))
    return run_process(*args, input=input, cwd=cwd, env=env, timeout=timeout or 60)


def run_process(*args, input=None, cwd=None, env=None, timeout=60):
    """`python -m stree ARGS` in a child process (for tests whose subject is the process)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run([sys.executable, "-m", "stree", *map(str, args)], input=input,
                          capture_output=True, cwd=cwd, env=full_env, timeout=timeout)
    return Result(proc)


@pytest.fixture
def stree():
    return run_stree


@pytest.fixture
def demo(tmp_path):
    """A writable copy of the bundled demo session."""
    path = tmp_path / "demo.jsonl"
    shutil.copyfile(ROOT / "stree" / "data" / "demo.jsonl", path)
    path.chmod(0o600)
    return path


@pytest.fixture
def branchy_file(tmp_path):
    from builders import branchy

    return branchy().write(tmp_path / "branchy.jsonl")


def interruptible():
    """preexec_fn: Ctrl-C acts on the child even when this test run ignores SIGINT
    (a background job of a non-interactive shell does, and children inherit it)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def read_pty(master, proc=None, timeout=30):
    """Everything written to a pseudo-terminal until the child closes it. With `proc`, a child
    that stays silent for `timeout` seconds is killed and the test fails (no hang)."""
    import select

    out = b""
    while True:
        if proc is not None:
            ready, _, _ = select.select([master], [], [], timeout)
            if not ready:
                proc.kill()
                pytest.fail(f"{proc.args} hung on a terminal")
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    return out


def on_pty(args, columns, lines, env):
    """(exit status, output bytes) of `python -m stree ARGS` on a pseudo-terminal of `columns`
    x `lines`, with `env` as its environment (stdin, stdout and stderr all the terminal)."""
    import fcntl
    import pty
    import struct
    import subprocess
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "stree", *map(str, args)], stdin=slave, stdout=slave,
                            stderr=slave, env=env)
    os.close(slave)
    try:
        out = read_pty(master, proc, timeout=120)
    finally:
        os.close(master)
    return proc.wait(timeout=60), out


# -- markers, applied by what a test uses (so a new test is marked without thought) -----------
#
#   pi       needs Node and the real pi: reaches tests/lib/pi_harness.py (or the corpus pi writes)
#   browser  needs Chromium: reaches tests/lib/browser.py
#   shell    runs bash, zsh, man or groff (looked up with shutil.which)
#   slow     property/fuzz runs (hypothesis, tests/lib/fuzzkit.py), fault injection; by hand
#            (@pytest.mark.slow) a test of big inputs, too long for `make check`
#   soak     the long runs, marked by hand (@pytest.mark.soak), left out unless -m soak
#
#   cli      runs stree commands through the `stree` fixture (in this process: tests/lib/inprocess.py)
#   process  starts a program itself: a server, a script, `python -m stree` where the process is
#            the subject (signals, Ctrl-C, startup, locks across processes, follow/serve)
#
# and by directory (tests/AREA/, see AREAS):
#   tests/interop/      pi (and interop): every test there needs Node and the real pi
#   tests/reliability/  reliability: faults, fuzz, races, hostile input
#   (tests/unit/ and tests/cli/ are selected by path: pytest tests/cli)
#
# `make check` runs tests/unit and tests/cli without pi, browser, shell, slow, soak and process:
# the tests that call stree in this process; `make test` runs everything but soak.

PI_MODULES = {"pi_harness", "corpus_pi15"}
BROWSER_MODULES = {"browser"}
SLOW_MODULES = {"fuzzkit", "cli_batch", "faulty_stree", "kill_runner", "hypothesis"}
SHELL_PROGRAMS = {"bash", "zsh", "man", "groff"}
PROCESS_NAMES = {"subprocess", "Popen", "with_forks", "with_note", "stdio_client"}  # (the MCP SDK starts one)
DOORS = {"run_stree", "stree"}  # the `stree` fixture's way in: `cli` (and `process`)
PROCESS_MODULES = {"subprocess", "serve_kit", "mcp_kit", "cli_batch", "fuzzkit"}  # (or imported in the test)


@functools.lru_cache(maxsize=None)
def _ours(module_name):
    """True for a module of this test suite (tests/AREA/test_*.py, tests/lib/*, conftest): its
    functions are followed too, wherever a test imported them from."""
    module = sys.modules.get(module_name or "")
    path = getattr(module, "__file__", None)
    return path is not None and Path(path).resolve().is_relative_to(TESTS)


def _reach(item):
    """(modules, names, string constants) the test reaches: through its own code, the functions
    of its module (and conftest's) that code calls, and its fixtures, transitively."""
    import inspect

    modules, names, consts = set(), set(), set()
    todo = [item.function]
    info = getattr(item, "_fixtureinfo", None)
    for name in item.fixturenames:
        defs = info.name2fixturedefs.get(name) if info is not None else None
        if defs:
            todo.append(defs[-1].func)
            modules.add(getattr(defs[-1].func, "__module__", None))
    seen = set()
    while todo:
        func = inspect.unwrap(todo.pop())
        code = getattr(func, "__code__", None)
        if code is None or code in seen:
            continue
        seen.add(code)
        scope = getattr(func, "__globals__", {})
        codes = [code]
        while codes:
            c = codes.pop()
            for const in c.co_consts:
                if isinstance(const, str):
                    consts.add(const)
                elif inspect.iscode(const):
                    codes.append(const)
            for name in c.co_names:
                names.add(name)
                obj = scope.get(name)
                if obj is None:
                    continue
                home = obj.__name__ if inspect.ismodule(obj) else getattr(obj, "__module__", None)
                modules.add(home)
                if _ours(home) and name not in DOORS:
                    if inspect.isfunction(obj):
                        todo.append(obj)
                    elif inspect.isclass(obj):  # a helper class of the module: its methods
                        todo += [f for f in vars(obj).values() if inspect.isfunction(f)]
    return modules, names, consts


AREA_MARKERS = {"interop": ("interop", "pi"), "reliability": ("reliability",)}  # (unit, cli: select by path)


def _area(item):
    """The tests/AREA directory an item's module is in, or None (a module at tests/ root)."""
    try:
        parts = Path(str(item.path)).resolve().relative_to(TESTS).parts
    except ValueError:
        return None
    return parts[0] if len(parts) > 1 else None


def pytest_collection_modifyitems(config, items):
    for item in items:
        for marker in AREA_MARKERS.get(_area(item), ()):
            item.add_marker(marker)
        if not hasattr(item, "function"):
            continue
        modules, names, consts = _reach(item)
        if modules & PI_MODULES or "pi_version" in item.fixturenames:  # (pi_harness.each_version)
            item.add_marker("pi")
        if modules & BROWSER_MODULES:
            item.add_marker("browser")
        if consts & SHELL_PROGRAMS and "which" in names:  # (each looks for the program it runs)
            item.add_marker("shell")
        if modules & SLOW_MODULES or getattr(item.obj, "is_hypothesis_test", False):
            item.add_marker("slow")
        if names & PROCESS_NAMES or (modules | names) & PROCESS_MODULES:
            item.add_marker("process")
        if names & DOORS or "stree" in item.fixturenames:
            item.add_marker("cli")
