"""`stree fork`: a new session file holding a path, and what it prints for a script."""

import json


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
