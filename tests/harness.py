"""The real pi, through tests/pi/harness.mjs. Interop tests fail (never skip) without it."""

import json
import shutil
import subprocess
from pathlib import Path

HARNESS = Path(__file__).resolve().parent / "pi" / "harness.mjs"


def pi(*args):
    node = shutil.which("node")
    assert node, "node is required for the interop tests (install node, then 'make test')"
    proc = subprocess.run([node, str(HARNESS), *map(str, args)], capture_output=True, timeout=120)
    assert proc.returncode == 0, f"harness {args[0]} failed: {proc.stderr.decode(errors='replace')}"
    return json.loads(proc.stdout)


def without_timestamps(context):
    """A pi context with the summary messages' timestamps dropped (they differ per write)."""
    messages = []
    for m in context["messages"]:
        if m.get("role") in ("branchSummary",):
            m = {k: v for k, v in m.items() if k != "timestamp"}
        messages.append(m)
    return dict(context, messages=messages)
