"""`stree show`: one entry, several, or a range's entries, for people and as JSON."""

import json

from readback import ids


def test_show_a_range_shows_its_entries(stree):
    listed = ids(stree("-s", "demo", "log", "--format", "{id}", "bug-found..@"))
    assert ids(stree("-s", "demo", "show", "--format", "{id}", "bug-found..@")) == listed
    shown = [json.loads(x)["id"] for x in stree("-s", "demo", "show", "--json", "bug-found...@~3").out.splitlines()]
    assert shown == ids(stree("-s", "demo", "log", "--format", "{id}", "bug-found...@~3"))
    human = stree("-s", "demo", "show", "bug-found..@")
    assert human.code == 0 and human.out.count("\nentry ") + human.out.startswith("entry ") == len(listed)
