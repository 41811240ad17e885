"""Run the real pi through tests/pi/harness.mjs. Missing node or pi is a failure, never a skip."""

import json
import re
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
HARNESS = HERE / "pi" / "harness.mjs"
PI_DIST = HERE / "pi" / "node_modules" / "@mariozechner" / "pi-coding-agent" / "dist"


def run_pi(*args, timeout=60):
    node = shutil.which("node")
    assert node, "node is required for the pi interop tests (install Node.js >= 20)"
    assert PI_DIST.is_dir(), "the real pi is not installed: run `make test` (npm ci --prefix tests/pi)"
    proc = subprocess.run([node, str(HARNESS), *map(str, args)], capture_output=True, timeout=timeout)
    assert proc.returncode == 0, f"harness {args[0]} failed: {proc.stderr.decode(errors='replace')}"
    return json.loads(proc.stdout)


def pi_constant(name, module="core/compaction/branch-summarization.js"):
    """A template-string constant from pi's own source, e.g. BRANCH_SUMMARY_PROMPT."""
    source = (PI_DIST / module).read_text(encoding="utf-8")
    match = re.search(r"(?:export )?const " + name + r" = `(.*?)`;", source, re.S)
    assert match, f"{name} not found in pi's {module}"
    return match.group(1)
