import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))


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
    def __init__(self, proc):
        self.code = proc.returncode
        self.out = proc.stdout.decode("utf-8", errors="replace")
        self.err = proc.stderr.decode("utf-8", errors="replace")
        self.raw = proc.stdout

    def __repr__(self):
        return f"Result(code={self.code}, out={self.out[:500]!r}, err={self.err[:500]!r})"


def run_stree(*args, input=None, cwd=None, env=None, timeout=60):
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
