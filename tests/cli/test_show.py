"""`stree show`: one entry, several, or a range's entries, for people and as JSON, decoding
only the entry and its parent (counted, not timed)."""

import json

from decode_count import compacted, decoded, stats_run
from readback import ids


def test_show_a_range_shows_its_entries(stree):
    listed = ids(stree("-s", "demo", "log", "--format", "{id}", "bug-found..@"))
    assert ids(stree("-s", "demo", "show", "--format", "{id}", "bug-found..@")) == listed
    shown = [json.loads(x)["id"] for x in stree("-s", "demo", "show", "--json", "bug-found...@~3").out.splitlines()]
    assert shown == ids(stree("-s", "demo", "log", "--format", "{id}", "bug-found...@~3"))
    human = stree("-s", "demo", "show", "bug-found..@")
    assert human.code == 0 and human.out.count("\nentry ") + human.out.startswith("entry ") == len(listed)


def test_show_and_show_json(stree, branchy_file):
    r = stree("-s", branchy_file, "show", "start")
    assert r.code == 0
    assert "entry 00000001 (start)" in r.out and "Fix the CSV quoting bug in parser.py" in r.out
    raw = json.loads(stree("-s", branchy_file, "show", "--json", "00000014").out)  # a label entry, by id
    assert raw["type"] == "label" and raw["targetId"] == "00000009"


def test_unknown_and_ambiguous_revisions_exit_3_naming_them(stree, branchy_file):
    r = stree("-s", branchy_file, "show", "nothing-here")
    assert r.code == 3 and "nothing-here" in r.err and "Traceback" not in r.err
    r = stree("-s", branchy_file, "show", "0000")
    assert r.code == 3 and "ambiguous" in r.err and "00000001" in r.err


def test_show_decodes_the_entry_and_its_parent_only(tmp_path, stree):
    path, ids = compacted(tmp_path, 20000, 200, 20)
    stats_run(stree, path, "rev-parse", "@")
    r = stats_run(stree, path, "show", "@~3")
    assert r.code == 0, r
    assert decoded(r) <= 2 + 2, r.err
    assert r.raw == stree("--no-cache", "-s", path, "show", "@~3").raw
