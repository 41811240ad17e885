"""A read request of a long-running server (`stree serve`, `stree serve --mcp`) stopped at any
line (a client's cancel, a deadline: core.budget raises wherever the work is) never damages
what the server keeps between requests: the sessions kept read and brought current by an
append, their decoded entries, the indexes loaded, the answers and drawings kept, the locks
and descriptors. After each stop, the next requests answer what a server started afresh
answers, and nothing is left held or open.

tests/lib/serve_stop_anywhere.py runs one server (its request handler as its main loop calls
it, the state it keeps the real one) and stops each read request in turn at every STRIDE-th
line of stree's code it runs (the budget's own tick, raised there by a trace function), the
served session appended to before each: see its docstring."""

import json
import os
import subprocess
import sys

import pytest


def stopped_at_each_line(home, front, stride):
    """The driver's report for `front` (rpc or mcp), every `stride`-th line tried."""
    lib = os.path.join(os.path.dirname(os.path.dirname(__file__)), "lib")
    path = os.pathsep.join([lib, os.environ.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, os.path.join(lib, "serve_stop_anywhere.py"), str(home), front, str(stride)],
                       capture_output=True, timeout=3600, env=dict(os.environ, PYTHONPATH=path))
    assert r.returncode == 0 and b"Traceback" not in r.stderr and b"Exception ignored" not in r.stderr, r
    return json.loads(r.stdout)


# the stride of `make test`: about 290 stops for rpc, 210 for mcp (every line: under `make soak`)
STRIDES = {"rpc": 40, "mcp": 40}


@pytest.mark.parametrize("front", ["rpc", "mcp"])
def test_a_read_request_stopped_at_any_line_leaves_the_server_answering_as_a_fresh_one(tmp_path, front):
    """Each read request that runs under the budget (serve's INTERRUPTIBLE, MCP's read tools),
    the served session grown since the server last read it, stopped at every STRIDE-th line:
    the same request and two others then answer byte for byte what a server started afresh
    answers, the kept get_state answer too; the same request decodes no more entries than it
    does unstopped (nothing kept warm was lost); no lock, shield, descriptor or temporary file
    is left, and nothing is printed (no "Exception ignored", no traceback)."""
    report = stopped_at_each_line(tmp_path, front, STRIDES[front])
    assert report["wrong"] == [], report["wrong"]
    for kind, seen in report["kinds"].items():
        assert seen["stopped"] > 0, (kind, seen)  # (each request was cut short part-way)
    assert sum(seen["stopped"] for seen in report["kinds"].values()) > 100, report["kinds"]
    assert {"stree/core/warm.py", "stree/storage/index.py", "stree/storage/scan.py"} <= set(report["files"]), \
        report["files"]  # (the warm state was brought current through the index)


@pytest.mark.soak
@pytest.mark.parametrize("front", ["rpc", "mcp"])
def test_a_read_request_stopped_at_every_line(tmp_path, front):
    report = stopped_at_each_line(tmp_path, front, 1)
    assert report["wrong"] == [], report["wrong"]
