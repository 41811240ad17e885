"""examples/serve_client.py, run as written against a session pi appends to."""

import os
import subprocess
import sys
from pathlib import Path

from conftest import interruptible
from pi_harness import pi_write

ROOT = Path(__file__).resolve().parents[2]


def test_the_example_client_shows_the_tree_and_the_entries_pi_appends(demo):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.Popen([sys.executable, str(ROOT / "examples" / "serve_client.py"), str(demo), "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
                            preexec_fn=interruptible)
    try:
        first = proc.stdout.readline()
        assert first == "1 root(s); leaf f7e0df1c\n", first + proc.stderr.read()
        seen = pi_write(str(demo), [["appendMessage", {"role": "user", "content": "and now?", "timestamp": 1}]])
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out.splitlines() == [f"{seen['ids'][0]} message user"]
