"""`stree export` of one 100 MB message writes the page as it makes it (issue 24.10: it peaked
at 2.45 GB for HTML and 2.06 GB for Markdown, 24 x the entry). The bound is on the child's
peak RSS, scaled generously; nothing here is timed. The peak is measured by a small wrapper
process (its children's ru_maxrss): a child forked from pytest itself inherits pytest's peak
(the stree fixture runs commands inside pytest, which grows it past 1 GB in a full run)."""

import json
import subprocess
import sys

import pytest

MESSAGE = 100_000_000
BOUND = 6 * MESSAGE  # reading the one entry costs ~3 x (the line, its text); the page adds slices
# runs its arguments as a child, then prints the child's peak RSS (KiB) as its last line
MEASURED = ("import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)")


@pytest.fixture(scope="module")
def big_session(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "big.jsonl"
    line = "some <b>text</b> & `code` [link](x) ``` \n"
    text = line * (MESSAGE // len(line))
    entries = [
        {"type": "session", "version": 3, "id": "0199a1b2-0000-7000-8000-00000000beef",
         "timestamp": "2026-11-01T00:00:00.000Z", "cwd": "/tmp"},
        {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-11-01T00:00:01.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": "a big one"}], "timestamp": 1}},
        {"type": "message", "id": "a2", "parentId": "a1", "timestamp": "2026-11-01T00:00:02.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": text}], "provider": "p",
                     "model": "m", "stopReason": "stop", "timestamp": 2}},
        {"type": "message", "id": "a3", "parentId": "a2", "timestamp": "2026-11-01T00:00:03.000Z",
         "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "isError": False,
                     "content": [{"type": "text", "text": text}], "timestamp": 3}},
    ]
    with open(path, "w") as f:
        for e in entries:
            f.write(json.dumps(e) + "\n")
    return path


@pytest.mark.parametrize("fmt", ["html", "md"])
def test_a_100_mb_message_exports_in_bounded_memory(big_session, tmp_path, fmt):
    target = tmp_path / f"page.{fmt}"
    proc = subprocess.run([sys.executable, "-c", MEASURED, sys.executable, "-m", "stree", "-s", str(big_session),
                           "export", "-o", str(target)], capture_output=True)
    assert proc.returncode == 0, proc.stderr
    peak = int(proc.stdout.split()[-1]) * 1024  # KiB on Linux
    assert peak < BOUND, f"peak RSS {peak / 1e6:.0f} MB for a {MESSAGE / 1e6:.0f} MB message"
    size = target.stat().st_size
    assert size > 2 * MESSAGE  # both copies of the text are in the page, whole
    with open(target, "rb") as f:
        f.seek(size // 2)
        middle = f.read(4096).decode("utf-8", "replace")
    shown = ("&lt;b&gt;text&lt;/b&gt;",) if fmt == "html" else ("some &lt;b>text&lt;/b>", "some <b>text</b>")
    assert any(s in middle for s in shown), middle  # escaped as prose, or literal in a fence
