"""The writing layer's pieces, checked against JavaScript itself where pi's format comes from it."""

import json
import re
import shutil
import subprocess

from stree.core.fileops import branch_file_lists
from stree.writing.entries import NewEntries, js_dumps, now_iso, uuid7

SAMPLES = [0.0, -0.0, 1.0, 1.5, 0.1, 1e21, 1e20, 123456789012345680000.0, 1e-6, 1e-7, 1.5e-7, 2.5e300,
           -3.25e-10, 0.000123, 1 / 3, 100.0, 12345.678]
VALUES = {"n": SAMPLES, "s": ["é\u2028\x7f\x01\"\\", "\ud800lone", "😀"], "nested": [{"a": None, "b": True}],
          "int": 2 ** 53}


def test_js_dumps_is_byte_identical_to_json_stringify():
    node = shutil.which("node")
    assert node, "node is required"
    # hand the values to JS through escaped JSON, let JS write them back
    source = json.dumps(VALUES, ensure_ascii=True)
    out = subprocess.run([node, "-e", "process.stdout.write(JSON.stringify(JSON.parse(process.argv[1])))", source],
                         capture_output=True, check=True).stdout.decode("utf-8")
    assert js_dumps(VALUES) == out


def test_timestamps_ids_and_session_ids():
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", now_iso())
    taken = {f"{i:08x}" for i in range(1000)}
    new = NewEntries(taken)
    ids = [new.entry("label", None)["id"] for _ in range(2000)]
    assert len(set(ids)) == 2000 and not set(ids) & taken and all(re.fullmatch("[0-9a-f]{8}", i) for i in ids)
    a, b = uuid7(), uuid7()
    assert a[14] == "7" and a[19] in "89ab" and a[:8] <= b[:8]


def test_entry_key_orders_follow_pi():
    new = NewEntries(set())
    assert list(new.custom("t", {"x": 1}, "p")) == ["type", "customType", "data", "id", "parentId", "timestamp"]
    assert list(new.label("a", "  x ", "p")) == ["type", "id", "parentId", "timestamp", "targetId", "label"]
    assert "label" not in new.label("a", "   ", "p")  # blank clears: pi leaves the key undefined
    summary = new.branch_summary(None, "s", None, False, None)
    assert summary["fromId"] == "root" and list(summary) == ["type", "id", "parentId", "timestamp", "fromId",
                                                             "summary", "fromHook"]
    # pi 1.5.2: fromId is the old leaf, not the new position; usage goes before fromHook
    summary = new.branch_summary("p", "s", {"readFiles": []}, False, "old", {"input": 1})
    assert (summary["parentId"], summary["fromId"]) == ("p", "old")
    assert list(summary) == ["type", "id", "parentId", "timestamp", "fromId", "summary", "details", "usage",
                             "fromHook"]


def test_file_lists_like_pi():
    def call(name, path):
        return {"type": "message", "message": {"role": "assistant", "content": [
            {"type": "toolCall", "id": "c", "name": name, "arguments": {"path": path}}]}}

    entries = [call("read", "b.py"), call("read", "a.py"), call("edit", "a.py"), call("write", "\uff5e.py"),
               call("write", "😀.py"), call("bash", "x.py"),
               {"type": "branch_summary", "details": {"readFiles": ["r.md"], "modifiedFiles": ["m.md"]}},
               {"type": "branch_summary", "fromHook": True, "details": {"readFiles": ["hook.md"]}}]
    # UTF-16 order, as Array.prototype.sort: the astral 😀 (a surrogate pair) sorts before U+FF5E
    assert branch_file_lists(entries) == {"readFiles": ["b.py", "r.md"],
                                          "modifiedFiles": ["a.py", "m.md", "😀.py", "\uff5e.py"]}
