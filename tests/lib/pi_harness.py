"""Ask the real pi what it sees (tests/pi/harness.mjs), at any of the pinned versions.

0.73.1 comes from tests/pi/package-lock.json (npm ci) and runs under the system node;
0.87.1, 1.5.2 and 1.6.0 (and Node 22, which they need) are pinned in tests/pi/pins.json and
unpacked by tests/pi/install.py. `make test` installs all of them. 1.6.0 is the reference:
where versions differ, stree follows it. `make test-latest` adds the newest pi (LATEST).
"""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

PINNED = ("0.73.1", "0.87.1", "1.5.2", "1.6.0")
REFERENCE = "1.6.0"
# `make test-latest` (tests/pi/latest.py) adds the newest pi from npm: STREE_PI_LATEST=V, unpacked
# in $STREE_PI_LATEST_DIR/V (default tests/pi/latest/V); every interop test then runs against it too
LATEST = os.environ.get("STREE_PI_LATEST") or None
LATEST_DIR = Path(os.environ.get("STREE_PI_LATEST_DIR") or Path(__file__).resolve().parent / "pi" / "latest")
VERSIONS = PINNED + ((LATEST,) if LATEST and LATEST not in PINNED else ())

PI_DIR = Path(__file__).resolve().parent.parent / "pi"
HARNESS = PI_DIR / "harness.mjs"
NODE22 = PI_DIR / "node22" / "bin" / "node"
INSTALL_HINT = "run 'make test' (npm ci --prefix tests/pi; python3 tests/pi/install.py)"

# a test runs once per version, with the version in its id: test_x[pi-1.5.2]
each_version = pytest.mark.parametrize("pi_version", VERSIONS, ids=[f"pi-{v}" for v in VERSIONS])


@pytest.fixture(params=VERSIONS, ids=[f"pi-{v}" for v in VERSIONS])
def pi_version(request):
    """The pi version a test runs against (the test runs once per version)."""
    return request.param


def package_dir(version):
    if version not in PINNED:
        return LATEST_DIR / version
    if version == "0.73.1":
        return PI_DIR / "node_modules" / "@mariozechner" / "pi-coding-agent"
    return PI_DIR / "versions" / version


def pi_dist(version=REFERENCE):
    """pi's dist/ folder (its .js modules, with the TypeScript sources in the .js.map files)."""
    return package_dir(version) / "dist"


def _node(version):
    """The node that runs this version; a missing node or pi is a failure, never a skip."""
    if version not in VERSIONS:
        pytest.fail(f"unknown pi version {version!r} (the harness knows {', '.join(VERSIONS)})")
    if version == "0.73.1":
        node = shutil.which("node")
        if node is None:
            pytest.fail("node is not installed: the interop tests need Node >= 20 for pi 0.73.1")
    else:
        node = str(NODE22)
        if not NODE22.exists():
            pytest.fail(f"Node 22 (for pi {version}) is not installed in {NODE22.parent.parent}: {INSTALL_HINT}")
    if not (package_dir(version) / "package.json").exists():
        pytest.fail(f"the real pi {version} is not installed in {package_dir(version)}: {INSTALL_HINT}")
    return node


def pi(*args, version=REFERENCE, timeout=120):
    """Run one harness subcommand against pi `version` -> its JSON document."""
    node = _node(version)
    proc = subprocess.run([node, str(HARNESS), "--pi", version, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(f"pi {version} harness failed on {[str(a) for a in args]}: {proc.stderr[-2000:]}")
    return _loads(proc.stdout)


run_pi = pi  # for tests that use `pi` as a local name


def pi_batch(requests, version=REFERENCE, timeout=600, allow_errors=False):
    """Several harness calls in one node process: a list of argument lists -> a list of results.
    With allow_errors, a request pi cannot answer gives {"error", "exitCode"} in its place."""
    node = _node(version)
    if not requests:
        return []
    stdin = "".join(json.dumps([str(a) for a in args]) + "\n" for args in requests)
    proc = subprocess.run([node, str(HARNESS), "--pi", version, "batch"], input=stdin, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(f"pi {version} harness batch failed: {proc.stderr[-2000:]}")
    results = [_loads(line) for line in proc.stdout.split("\n") if line.strip()]  # not splitlines: \u2028 is data
    assert len(results) == len(requests), f"pi {version}: {proc.stderr[-2000:]}"
    for args, result in zip(requests, results):
        if isinstance(result, dict) and "error" in result and "exitCode" in result and not allow_errors:
            pytest.fail(f"pi {version} harness failed on {[str(a) for a in args]}: {result['error']}")
    return results


def pi_write(path, ops, version=REFERENCE, cwd=None):
    """Build or extend a session file with pi's own SessionManager writers: ops is a list of
    [method, *args]; {"$ref": i} in an argument stands for the id op i returned."""
    args = ["write", path, "--ops", json.dumps(ops)]
    if cwd is not None:
        args += ["--cwd", cwd]
    return pi(*args, version=version)


def pi_rpc(path, commands=("get_state", "get_messages"), version=REFERENCE, in_place=False, timeout=120):
    """The real `pi --mode rpc --session PATH` CLI (offline): one response per command."""
    args = ["rpc", path, "--commands", json.dumps(list(commands))]
    if in_place:
        args.append("--in-place")
    return pi(*args, version=version, timeout=timeout)


def pi_constant(name, module="core/compaction/branch-summarization.js", version=REFERENCE):
    """A template-string constant from pi's own source, e.g. BRANCH_SUMMARY_PROMPT."""
    _node(version)
    source = (pi_dist(version) / module).read_text(encoding="utf-8")
    match = re.search(r"(?:export )?const " + name + r" = `(.*?)`;", source, re.S)
    if match is None:
        pytest.fail(f"{name} not found in pi {version}'s {module}")
    return match.group(1)


def _loads(text):
    try:
        return json.loads(text)
    except RecursionError:  # pi answered about JSON nested deeper than Python's json module goes
        from stree.format.decode import decode_deep

        return decode_deep(text)


def without_timestamps(context):
    """A pi context with the summary messages' timestamps dropped (they differ per write)."""
    messages = []
    for m in context["messages"]:
        if m.get("role") in ("branchSummary",):
            m = {k: v for k, v in m.items() if k != "timestamp"}
        messages.append(m)
    return dict(context, messages=messages)
