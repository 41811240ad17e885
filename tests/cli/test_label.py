"""`stree label`: one label per entry, on the entry checked out, nothing written when nothing
changes, and names that could not be revisions refused; the real pi confirming what it sees."""

import json

from pi_harness import pi
from readback import lines_of


def test_label_right_after_checkout_labels_the_entry_checked_out(stree, branchy_file):
    path = branchy_file
    assert stree("-s", path, "checkout", "00000011").code == 0
    marker = lines_of(path)[-1]
    assert marker["customType"] == "stree/checkout" and marker["parentId"] == "00000011"
    for cmd in (["rev-parse"], ["rev-parse", "@"], ["rev-parse", "HEAD"]):
        assert stree("-s", path, *cmd).out == "00000011\n", cmd
    assert json.loads(stree("-s", path, "show", "--json").out)["id"] == "00000011"
    assert stree("-s", path, "log", "-n", "1", "--format", "{id} {leaf}").out == "00000011 true\n"
    assert stree("-s", path, "show").out.startswith("entry 00000011 (@)")
    # the marker is still in the file, and its id still reaches it
    assert json.loads(stree("-s", path, "show", "--json", marker["id"]).out)["customType"] == "stree/checkout"

    r = stree("-s", path, "label", "regex-done")
    assert r.code == 0, r
    label = lines_of(path)[-1]
    assert label["targetId"] == "00000011" and label["parentId"] == marker["id"]  # appended at pi's leaf
    seen = pi("inspect", path)
    assert seen["labels"]["00000011"] == "regex-done" and seen["leafId"] == label["id"]
    graph = pi("graph", path)  # pi's /tree shows the label on the entry checked out
    row = graph["rows"][graph["ids"].index("00000011")]
    assert "[regex-done]" in row, row
    assert marker["id"] not in graph["ids"]
    assert stree("-s", path, "rev-parse", "regex-done").out == "00000011\n"


def test_one_label_per_entry_replacing_says_so(stree, branchy_file):
    path = branchy_file
    assert stree("-s", path, "label", "first", "00000006").code == 0
    r = stree("-s", path, "label", "second", "00000006")
    assert r.code == 0 and "label 'first' on 00000006 replaced by 'second'" in r.err, r
    assert pi("inspect", path)["labels"]["00000006"] == "second"
    assert stree("-s", path, "rev-parse", "first").code == 3


def test_label_writes_nothing_when_nothing_changes(stree, branchy_file):
    path = branchy_file
    before = path.read_bytes()
    r = stree("-s", path, "label", "start", "00000001")  # the label it already has
    assert r.code == 0 and path.read_bytes() == before and "nothing written" in r.err, r
    r = stree("-s", path, "label", "", "00000006")  # clearing where there is none
    assert r.code == 0 and path.read_bytes() == before and "nothing written" in r.err, r
    r = stree("-s", path, "label", "-d", "no-such-label")
    assert r.code == 3 and path.read_bytes() == before
    r = stree("-s", path, "label", "start", "00000006")  # a name on another entry still needs -f
    assert r.code == 6 and "label -f start" in r.err and path.read_bytes() == before


def test_label_names_that_cannot_be_revisions_are_refused(stree, branchy_file):
    path = branchy_file
    before = path.read_bytes()
    for name in ("@", "HEAD", "root", "a~1", "a^", "x:y", "a..b", "two words", "tab\there", "-x", "a@{1}"):
        args = ["-s", path, "label", "--", name] if name.startswith("-") else ["-s", path, "label", name]
        r = stree(*args)
        assert r.code == 2 and r.err.startswith("stree: error: invalid label name") and "hint:" in r.err, (name, r)
    assert path.read_bytes() == before
    assert stree("-s", path, "label", "v1.2/ok_name-3").code == 0
