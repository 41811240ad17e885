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
