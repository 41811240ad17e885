"""`stree fork`: a new session file holding a path, and what it prints for a script."""

import json
import os
import subprocess
import sys


def test_default_revisions_of_fork_and_summarize_look_through_the_marker(stree, branchy_file, tmp_path):
    path = branchy_file
    assert stree("-s", path, "checkout", "00000011").code == 0
    out = tmp_path / "forked.jsonl"
    assert stree("-s", path, "fork", "-o", out).code == 0
    assert "stree/checkout" not in out.read_text()  # the path to 00000011 (labels carried after it)
    assert stree("-s", out, "rev-parse").out == "00000011\n"
    r = stree("-s", path, "summarize", "00000003..", "--prompt", "--json")  # A.. is A..@
    assert r.code == 0, r
    assert json.loads(r.out)["entryIds"][-1] == "00000011"  # not the marker after it


def test_fork_before_in_a_command_substitution(stree, demo, tmp_path):
    shell = (f'p=$({sys.executable} -m stree -s "{demo}" fork --before a6e6657a) && '
             f'{sys.executable} -m stree -s "$p" log -1 --format "{{id}}"')
    r = subprocess.run(["sh", "-c", shell], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "edc2c8c2"  # the new session, at the message's parent
    assert r.stderr.startswith("Change of plan: instead of a --strict flag")  # the text to send again
    made = json.loads(stree("-s", demo, "fork", "--before", "a6e6657a", "--json").out)
    assert made["text"].startswith("Change of plan") and os.path.exists(made["path"])
