"""A new entry type is one row (stree.core.entrytypes): a made-up type `note` is added to the
table in the stree process itself, before it starts, and appears in every view with no
other change: the graph's rows, /tree's search, grep (the catalogue indexes it), show,
export and fsck. A copy of the file read by a plain stree shows what an unknown type gets
(a copy: the kept previews and the catalogue are per file, made by the first reader)."""

import json
import os
import subprocess
import sys

import pytest

from builders import SessionBuilder
from conftest import Result

LAUNCH = """
import sys
from stree.core import entrytypes
entrytypes.TYPES["note"] = entrytypes.EntryType(
    "note", lambda entry, tool_call=None: [("dim", "[note]: "), ("", entry.get("text", ""))],
    search=lambda entry: ["note", entry.get("text", "")], text=lambda entry: entry.get("text", ""), grep=True)
sys.argv[0] = "stree"
from stree.fast import main
main()
"""

TEXT = "a pelican riding a bicycle"


def with_note(*args):
    proc = subprocess.run([sys.executable, "-c", LAUNCH, *map(str, args)], capture_output=True,
                          env=dict(os.environ), timeout=60)
    return Result(proc)


@pytest.fixture
def noted(tmp_path):
    b = SessionBuilder()
    b.user("draw something")
    note = b.append("note", text=TEXT)
    b.assistant("done")
    return b.write(tmp_path / "noted.jsonl"), note


def ok(result):
    assert result.code == 0 and "Traceback" not in result.err, result
    return result.out


def test_a_made_up_type_is_one_row_that_every_view_reads(noted, stree, tmp_path):
    path, note = noted
    copy = tmp_path / "plain.jsonl"
    copy.write_bytes(path.read_bytes())
    rows = ok(with_note("-s", path, "log"))
    assert f"[note]: {TEXT}" in rows
    assert TEXT not in ok(stree("-s", copy, "log"))  # an unknown type: pi's empty row
    found = ok(with_note("-s", path, "log", "--search", "pelican", "--no-ids"))
    assert TEXT in found and "draw something" not in found

    hits = [json.loads(line) for line in ok(with_note("-s", path, "grep", "--json", "pelican")).splitlines()]
    assert [(h["entry"], h["type"]) for h in hits] == [(note, "note")]
    assert ok(with_note("-s", path, "grep", "--type", "note", "-c", "bicycle")).strip().endswith("1")
    assert stree("-s", copy, "grep", "--json", "pelican").out == ""  # without the row: not searched

    shown = ok(with_note("-s", path, "show", note))
    assert TEXT in shown
    assert TEXT in ok(with_note("-s", path, "export", "-o", "-", "--format", "md"))
    assert TEXT in ok(with_note("-s", path, "export", "-o", "-", "--format", "html"))

    assert ok(with_note("-s", path, "fsck", "--json")) == ""
    plain = stree("-s", copy, "fsck", "--json")
    assert [json.loads(line)["kind"] for line in plain.out.splitlines()] == ["unknown-type"]
