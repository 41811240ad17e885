"""`stree rev-parse` (and `merge-base`, its sibling): revisions as git spells them, resolved
to entry ids, and the errors of a revision that is malformed or names nothing."""


def test_rev_parse_and_merge_base(stree, branchy_file):
    r = stree("-s", branchy_file, "rev-parse", "@", "root", "csv-attempt~2", "start..@")
    assert r.out.split() == ["00000013", "00000001", "00000007", "00000013", "^00000001"]
    assert stree("-s", branchy_file, "merge-base", "csv-attempt", "@").out.strip() == "00000003"
    assert stree("-s", branchy_file, "merge-base", "--is-ancestor", "start", "@").code == 0
    no = stree("-s", branchy_file, "merge-base", "--is-ancestor", "csv-attempt", "@")
    assert no.code == 1 and no.out == "" and no.err == ""
    q = stree("-s", branchy_file, "rev-parse", "--verify", "-q", "nothing-here")
    assert q.code == 3 and q.out == "" and q.err == ""


def test_bad_revision_syntax_exits_2_unknown_names_3(stree, branchy_file):
    for rev in ("@~x", "~3", "@{x}", "a:b", "@@"):
        r = stree("-s", branchy_file, "rev-parse", rev)
        assert r.code == 2 and r.err.startswith("stree: error: bad revision syntax") and "hint:" in r.err, (rev, r)
    r = stree("-s", branchy_file, "rev-parse", "nosuchlabel")
    assert r.code == 3 and r.err.startswith("stree: error: unknown revision")
