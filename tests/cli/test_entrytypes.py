"""A new entry type is one row (stree.core.entrytypes): a made-up type `note` is added to the
table in the stree process itself, before it starts, and appears in every view with no
other change: the graph's rows, /tree's search, :/TEXT, grep (the catalogue indexes it),
show, export (Markdown and HTML) and fsck. A copy of the file read by a plain stree shows
what an unknown type gets (a copy: the kept previews and the catalogue are per file, made
by the first reader), so each check can fail.

The table of entry types is read by every view, not one command: so one module."""

import json
import os
import subprocess
import sys

import pytest

from builders import SessionBuilder
from conftest import Result

# `note`: its text is made from two fields (`a pelican riding a bicycle` is in no field), so a
# view that shows it read the row, not the fields as JSON
LAUNCH = """
import sys
from stree.core import entrytypes

def text(entry):
    return f"a {entry.get('animal')} riding a {entry.get('vehicle')}"

entrytypes.TYPES["note"] = entrytypes.EntryType(
    "note", lambda entry, tool_call=None: [("dim", "[note]: "), ("", text(entry))],
    search=lambda entry: ["note", text(entry)], text=text, grep=True,
    node=lambda entry, call: {"type": "note", "preview": text(entry)})
sys.argv[0] = "stree"
from stree.entrypoint import main
main()
"""

TEXT = "a pelican riding a bicycle"


def with_note(*args, env=None):
    proc = subprocess.run([sys.executable, "-c", LAUNCH, *map(str, args)], capture_output=True,
                          env={**os.environ, **(env or {})}, timeout=60)
    return Result(proc)


def noted_session(path):
    b = SessionBuilder()
    b.user("draw something")
    note = b.append("note", animal="pelican", vehicle="bicycle")
    b.assistant("done")
    return b.write(path), note


@pytest.fixture
def noted(tmp_path):
    return noted_session(tmp_path / "noted.jsonl")


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
    found = ok(with_note("-s", path, "log", "--search", "pelican riding", "--no-ids"))
    assert TEXT in found and "draw something" not in found
    assert "pelican" not in stree("-s", copy, "log", "--search", "pelican", "--no-ids").out

    hits = [json.loads(line) for line in ok(with_note("-s", path, "grep", "--json", "pelican riding")).splitlines()]
    assert [(h["entry"], h["type"], h["line"]) for h in hits] == [(note, "note", TEXT)]
    assert ok(with_note("-s", path, "grep", "--type", "note", "-c", "bicycle")).strip().endswith("1")
    assert stree("-s", copy, "grep", "--json", "pelican").out == ""  # without the row: not searched

    for rev in (note, f":/{TEXT}"):
        assert f"\n    {TEXT}\n" in ok(with_note("-s", path, "show", rev))  # its text, then its fields
    assert TEXT not in ok(stree("-s", copy, "show", note))
    for fmt in ("md", "html"):
        assert TEXT in ok(with_note("-s", path, "export", "-o", "-", "--format", fmt)), fmt
        assert TEXT not in ok(stree("-s", copy, "export", "-o", "-", "--format", fmt)), fmt

    assert ok(with_note("-s", path, "fsck", "--json")) == ""
    plain = stree("-s", copy, "fsck", "--json")
    assert [json.loads(line)["kind"] for line in plain.out.splitlines()] == ["unknown-type"]


def test_the_catalogue_indexes_a_made_up_type_by_its_row(isolated_home, stree):
    """grep over every session reads the catalogue's word index first: an entry it did not
    index is never read. The note is found through it, as without it (--no-cache)."""
    sessions = isolated_home / ".pi/agent/sessions/--home-dev-proj--"
    sessions.mkdir(parents=True)
    path, note = noted_session(sessions / "noted.jsonl")
    assert stree("grep", "--json", "pelican riding").out == ""  # a plain stree's catalogue: not indexed
    (isolated_home / ".cache").rename(isolated_home / "plain-cache")
    for flags in ((), ("--no-cache",)):
        hits = [json.loads(line) for line in ok(with_note(*flags, "grep", "--json", "pelican riding")).splitlines()]
        assert [(h["path"], h["entry"], h["line"]) for h in hits] == [(str(path), note, TEXT)], flags
    assert list((isolated_home / ".cache").rglob("catalog.sqlite"))  # (the first search made it)


def test_serve_projects_a_made_up_type_by_its_row(noted):
    """serve's lightweight tree (pi PR #1762): the node the row makes, under its parent."""
    from serve_kit import Server

    path, note = noted
    served = Server(path, launch=("-c", LAUNCH))
    try:
        tree = served.data("get_tree", lightweight=True)["tree"]
    finally:
        assert served.close() == 0
    nodes, stack = {}, list(tree)
    while stack:
        node = stack.pop()
        nodes[node["id"]] = node
        stack += node["children"]
    assert nodes[note]["type"] == "note" and nodes[note]["preview"] == TEXT
    written = [json.loads(line) for line in path.read_text().splitlines()][1:]
    parent = next(e["parentId"] for e in written if e["id"] == note)
    child = next(e["id"] for e in written if e["parentId"] == note)
    assert nodes[note]["parentId"] == parent and [c["id"] for c in nodes[note]["children"]] == [child]
