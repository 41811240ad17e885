"""Ask the real pi (tests/pi/harness.mjs, pinned in tests/pi/package.json) what it sees."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parent / "pi" / "harness.mjs"
PACKAGE = HARNESS.parent / "node_modules" / "@mariozechner" / "pi-coding-agent" / "package.json"


def pi(*args, timeout=120):
    """Run a harness subcommand; a missing node or pi is a failure, never a skip."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: the interop tests need the real pi (Node 20)")
    if not PACKAGE.exists():
        pytest.fail("the real pi is not installed: run 'make test' (npm ci --prefix tests/pi)")
    proc = subprocess.run([node, str(HARNESS), *map(str, args)], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(f"pi harness failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


def pi_batch(requests, timeout=600):
    """Several harness calls in one node process: a list of argument lists -> list of results.
    A request pi cannot answer gives {"error", "exitCode"} in its place."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: the interop tests need the real pi (Node 20)")
    if not PACKAGE.exists():
        pytest.fail("the real pi is not installed: run 'make test' (npm ci --prefix tests/pi)")
    stdin = "".join(json.dumps([str(a) for a in req]) + "\n" for req in requests)
    proc = subprocess.run([node, str(HARNESS), "batch"], input=stdin, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(f"pi harness batch failed: {proc.stderr[-2000:]}")
    results = [_loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(results) == len(requests), proc.stderr[-2000:]
    return results


def _loads(text):
    try:
        return json.loads(text)
    except RecursionError:  # pi answered about JSON nested deeper than Python's json module goes
        from stree.session import decode_deep

        return decode_deep(text)
