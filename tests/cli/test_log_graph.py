"""`stree log --graph`: pi's /tree drawn, with its filters and search. (The kept and
incremental drawings, the terminal and --follow are test_log_graph_<aspect>.py.)"""


def test_the_graphs_hint_names_only_what_finds_something(stree):
    r = stree("-s", "demo", "log", "--graph", "--search", "zzzz")
    assert r.code == 1 and "--filter all" not in r.err and "zzzz" in r.err, r
    assert stree("-s", "demo", "log", "--graph", "--filter", "all", "--search", "zzzz").code == 1
    # a word in assistant text only: the user-only graph has none, --filter all finds it
    r = stree("-s", "demo", "log", "--graph", "--filter", "user-only", "--search", "Reverting")
    assert r.code == 1 and "try --filter all" in r.err, r
    assert stree("-s", "demo", "log", "--graph", "--filter", "all", "--search", "Reverting").out


def test_graph_marks_active_path_leaf_and_labels(stree, branchy_file):
    r = stree("-s", branchy_file, "log", "--graph", "--no-ids")
    rows = r.out.splitlines()
    assert rows[0] == "• [start] user: Fix the CSV quoting bug in parser.py"
    assert rows[-1] == "      [csv-attempt] assistant: Switched to the csv module."
    assert [row for row in rows if row.endswith("← active")] == \
        ["│     • assistant: Added tests/test_newlines.py  ← active"]


def test_graph_filters_and_search(stree, branchy_file):
    def rows(*args):
        return stree("-s", branchy_file, "log", "--graph", "--format", "{row}", *args).out.splitlines()

    assert rows("--filter", "user-only") == [
        "• [start] user: Fix the CSV quoting bug in parser.py",
        "├─ • user: Write a regex-based parser instead",
        "│     • user: Now add a test for embedded newlines",
        "└─ user: Try the csv module",
    ]
    assert rows("--filter", "labeled-only") == ["• [start] user: Fix the CSV quoting bug in parser.py",
                                                "[csv-attempt] assistant: Switched to the csv module."]
    assert not any("[read:" in x for x in rows("--filter", "no-tools"))
    assert any("[label: start]" in x for x in rows("--filter", "all"))
    searched = rows("--search", "csv MODULE")
    assert searched[1:] == ["user: Try the csv module", "   [csv-attempt] assistant: Switched to the csv module."]
    assert searched[0].startswith("• [branch summary]: ")
