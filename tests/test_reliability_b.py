"""Reliability, second round (issue 17): a live pi racing stree's writes, stale and damaged
caches, files that are not regular, hooks that leave children behind, huge lines, comb-shaped
graphs, a file cut while being read. Each test reproduces the fault as it was found."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from builders import SessionBuilder, branchy, dumps

ROOT = Path(__file__).resolve().parent.parent
PI_PACKAGE = ROOT / "tests" / "pi" / "node_modules" / "@mariozechner" / "pi-coding-agent"


# -- 1. a live pi appending while stree writes ----------------------------------------------

PI_AGENT = """
// the real pi's SessionManager, as an agent turn uses it: the file opened once, the leaf kept
// in memory, every entry appended with appendFileSync and no lock
const [dist, file, turns] = process.argv.slice(2);
const { SessionManager } = await import(dist + "/core/session-manager.js");
const sm = SessionManager.open(file);
const usage = {input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2,
               cost: {input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0}};
for (let i = 0; i < Number(turns); i++) {
  sm.appendMessage({role: "user", content: [{type: "text", text: `turn ${i}`}], timestamp: Date.now()});
  await new Promise((r) => setTimeout(r, 1));
  sm.appendMessage({role: "assistant", content: [{type: "text", text: "answer " + "x".repeat(400)}],
                    api: "openai-completions", provider: "openai", model: "m", usage, stopReason: "stop",
                    timestamp: Date.now()});
  await new Promise((r) => setTimeout(r, 1));
}
"""

STREE_LABELS = """
import os, sys
from stree.cli import run
path, count, stop = sys.argv[1], int(sys.argv[2]), sys.argv[3]
n = 0
while n < count or not os.path.exists(stop):
    sys.argv = ["stree", "-s", path, "label", f"s-{n}", "root"]
    try:
        run()
    except SystemExit as e:
        assert e.code in (0, None), e.code
    n += 1
print(n)
"""


def _race(tmp_path, turns, min_writes, padding=0):
    builder = branchy()
    for i in range(padding):  # a longer file: a longer read under the lock
        builder.user(f"padding {i} " + "p" * 2000)
    path = builder.write(tmp_path / "live.jsonl")
    stop = tmp_path / "pi-done"
    script = tmp_path / "agent.mjs"
    script.write_text(PI_AGENT)
    writer = subprocess.Popen([sys.executable, "-c", STREE_LABELS, str(path), str(min_writes), str(stop)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    pi = subprocess.run(["node", str(script), str(PI_PACKAGE / "dist"), str(path), str(turns)],
                        capture_output=True, timeout=600)
    stop.touch()
    out, err = writer.communicate(timeout=600)
    assert pi.returncode == 0, pi.stderr.decode()[-2000:]
    assert writer.returncode == 0, err.decode()[-2000:]
    entries = [json.loads(line) for line in path.read_bytes().splitlines()[1:]]  # every line whole
    ours = 0
    misparented = []
    for before, entry in zip(entries, entries[1:]):
        if entry["type"] == "label" and entry["label"].startswith("s-"):
            ours += 1
            if entry["parentId"] != before["id"]:  # not the leaf when it was written
                misparented.append(entry["id"])
    assert sum(1 for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant"
               and str(e["message"]["content"][0].get("text")).startswith("answer")) == turns  # pi lost nothing
    assert ours == int(out)
    return ours, misparented


def test_stree_writes_hang_off_the_leaf_a_live_pi_left(tmp_path):
    ours, misparented = _race(tmp_path, turns=300, min_writes=150)
    print(f"{ours} stree writes with the real pi appending, {len(misparented)} off the leaf")
    assert misparented == []


@pytest.mark.soak
def test_live_pi_race_soak(tmp_path):
    ours, misparented = _race(tmp_path, turns=3000, min_writes=1500, padding=2000)
    print(f"{ours} stree writes with the real pi appending, {len(misparented)} off the leaf")
    assert misparented == []


# -- 4. a FIFO (or any file that is not a regular file) as the session -------------------------

@pytest.mark.parametrize("args", [["log"], ["log", "--graph"], ["show", "@"], ["context"], ["label", "x"],
                                  ["checkout", "root", "--no-hooks"], ["rev-parse", "@"]])
def test_a_fifo_is_refused_not_read(tmp_path, stree, args):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    result = stree("-s", fifo, *args, timeout=20)  # (on main: every one of them hung)
    assert result.code == 4, result
    assert "FIFO" in result.err and "not a session file" in result.err and "Traceback" not in result.err


def test_a_device_is_refused(stree):
    result = stree("-s", "/dev/zero", "log", timeout=20)  # (an endless read otherwise)
    assert result.code == 4 and "device" in result.err, result
