"""`stree checkout`: the leaf moved as pi's /tree moves it, through stree's own markers,
`checkout -` back along the reflog, and what it says `@` now names."""

import json
import re

from builders import SessionBuilder
from pi_harness import pi
from readback import lines_of


def test_checking_out_where_you_are_writes_nothing_whatever_the_last_line(stree, branchy_file):
    path = branchy_file
    # the file ends with a label and a name entry after 00000013
    for rev in ("@", "00000013", "HEAD"):
        before = path.read_bytes()
        r = stree("-s", path, "checkout", rev)
        assert r.code == 0 and path.read_bytes() == before, r
    assert stree("-s", path, "checkout", "00000011").code == 0
    assert stree("-s", path, "label", "here").code == 0
    assert stree("-s", path, "name", "renamed").code == 0  # now: marker, label, name after 00000011
    before = path.read_bytes()
    r = stree("-s", path, "checkout", "00000011")
    assert r.code == 0 and path.read_bytes() == before and "nothing written" in r.err, r


def test_reflog_revisions_and_checkout_dash(stree, branchy_file):
    path = branchy_file
    assert stree("-s", path, "checkout", "00000011").code == 0
    assert stree("-s", path, "checkout", "csv-attempt").code == 0
    reflog = [json.loads(x) for x in stree("-s", path, "reflog", "--json").out.splitlines()]
    for n, move in enumerate(reflog):
        for rev in (f"@{{{n}}}", f"HEAD@{{{n}}}"):
            assert stree("-s", path, "rev-parse", rev).out == f"{move['id']}\n", rev
    assert stree("-s", path, "rev-parse", "@{1}~1").out == "00000010\n"  # suffixes apply
    assert stree("-s", path, "rev-parse", "@{1}..@").out == "00000009\n^00000011\n"
    r = stree("-s", path, "rev-parse", f"@{{{len(reflog)}}}")
    assert r.code == 3 and "stree reflog" in r.err

    r = stree("-s", path, "checkout", "-")
    assert r.code == 0, r
    assert stree("-s", path, "rev-parse").out == "00000011\n"
    assert stree("-s", path, "checkout", "-").code == 0
    assert stree("-s", path, "rev-parse").out == "00000009\n"
    assert pi("inspect", path)["leafId"] == lines_of(path)[-1]["id"]


def test_checkout_dash_without_moves(stree, tmp_path):
    from builders import SessionBuilder

    b = SessionBuilder()
    b.user("hello")
    b.assistant("hi")
    path = b.write(tmp_path / "flat.jsonl")
    before = path.read_bytes()
    r = stree("-s", path, "checkout", "-")
    assert r.code == 3 and r.err.startswith("stree: error: checkout -:") and path.read_bytes() == before


def test_checkout_of_a_user_message_after_a_label_says_what_at_names(stree, tmp_path):
    b = SessionBuilder()
    first = b.user("first question")
    answer = b.assistant("first answer")
    b.append("label", targetId=first, label="start")  # pi appends a label into the chain...
    asked = b.user("second question")  # ...and the next message's parent is the label entry
    b.assistant("second answer")
    path = b.write(tmp_path / "s.jsonl")
    assert json.loads(path.read_text().splitlines()[-2])["parentId"] != answer
    for fast in ("", "1"):
        copy = tmp_path / f"c{fast}.jsonl"
        copy.write_bytes(path.read_bytes())
        r = stree("-s", copy, "checkout", asked, env={"STREE_NO_FAST": fast})
        assert r.code == 0, r
        at = stree("-s", copy, "rev-parse", "@").out.strip()
        assert at == answer
        assert re.search(r"now at (\S+)", r.err).group(1) == at, r.err


def test_checkout_with_a_summary_says_the_summary_is_at(stree, demo):
    r = stree("-s", demo, "checkout", "dd3d7fdd", "--summarize", "--provider", "extractive")
    assert r.code == 0, r
    at = stree("-s", demo, "rev-parse", "@").out.strip()
    assert json.loads(demo.read_text().splitlines()[-1])["id"] == at  # the branch summary entry
    assert re.search(r"now at (\S+)", r.err).group(1) == at, r.err
