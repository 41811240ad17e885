"""Ask the real pi (tests/pi/harness.mjs, pinned in tests/pi/package.json) what it sees."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parent / "pi" / "harness.mjs"
PACKAGE = HARNESS.parent / "node_modules" / "@mariozechner" / "pi-coding-agent" / "package.json"
PI_DIST = PACKAGE.parent / "dist"


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


run_pi = pi  # for tests that use `pi` as a local name


def pi_constant(name, module="core/compaction/branch-summarization.js"):
    """A template-string constant from pi's own source, e.g. BRANCH_SUMMARY_PROMPT."""
    if not PACKAGE.exists():
        pytest.fail("the real pi is not installed: run 'make test' (npm ci --prefix tests/pi)")
    source = (PI_DIST / module).read_text(encoding="utf-8")
    match = re.search(r"(?:export )?const " + name + r" = `(.*?)`;", source, re.S)
    if match is None:
        pytest.fail(f"{name} not found in pi's {module}")
    return match.group(1)


def pi_batch(requests, timeout=600, allow_errors=False):
    """Several harness calls in one node process: a list of argument lists -> a list of results.
    With allow_errors, a request pi cannot answer gives {"error", "exitCode"} in its place."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: the interop tests need the real pi (Node 20)")
    if not PACKAGE.exists():
        pytest.fail("the real pi is not installed: run 'make test' (npm ci --prefix tests/pi)")
    stdin = "".join(json.dumps([str(a) for a in args]) + "\n" for args in requests)
    proc = subprocess.run([node, str(HARNESS), "batch"], input=stdin, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(f"pi harness batch failed: {proc.stderr[-2000:]}")
    results = [_loads(line) for line in proc.stdout.split("\n") if line.strip()]  # not splitlines: \u2028 is data
    assert len(results) == len(requests), proc.stderr[-2000:]
    for args, result in zip(requests, results):
        if isinstance(result, dict) and "error" in result and "exitCode" in result and not allow_errors:
            pytest.fail(f"pi harness failed on {args}: {result['error']}")
    return results


def _loads(text):
    try:
        return json.loads(text)
    except RecursionError:  # pi answered about JSON nested deeper than Python's json module goes
        from stree.session import decode_deep

        return decode_deep(text)


def without_timestamps(context):
    """A pi context with the summary messages' timestamps dropped (they differ per write)."""
    messages = []
    for m in context["messages"]:
        if m.get("role") in ("branchSummary",):
            m = {k: v for k, v in m.items() if k != "timestamp"}
        messages.append(m)
    return dict(context, messages=messages)
