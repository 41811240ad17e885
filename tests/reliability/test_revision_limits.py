"""Revision parsing a client cannot stall (issue 24, item 13): read in one pass from the end, so
a revision of tens of thousands of steps resolves at once (a quadratic parser takes minutes on
these sizes), and a reflog number beyond any integer is a plain "not found" (exit 3), not an
internal error. Driven through `stree rev-parse` and serve's rev_parse."""

import pytest
from serve_kit import Server

LEAF = "f7e0df1c"  # the demo's leaf


@pytest.mark.parametrize("fast", ["", "1"])
def test_long_step_chains_resolve_at_once(stree, demo, fast):
    env = {"STREE_NO_FAST": fast}
    r = stree("-s", demo, "rev-parse", "@" + "^0" * 60_000, env=env, timeout=60)  # (one argument: < 128 KiB)
    assert (r.code, r.out.strip()) == (0, LEAF), r
    r = stree("-s", demo, "rev-parse", "@" + "~" * 20_000, env=env, timeout=60)
    assert r.code == 3 and "has no parent (it is a root)" in r.err, r
    assert "(20001 characters)" in r.err and len(r.err) < 400  # the revision is not echoed whole
    r = stree("-s", demo, "rev-parse", "@~1" + "~0" * 40_000 + "~1", env=env, timeout=60)
    assert r.code == 0 and r.out.strip() == stree("-s", demo, "rev-parse", "@~2").out.strip(), r


@pytest.mark.parametrize("rev", ["@{99999999999999999999}", "HEAD@{" + "9" * 5000 + "}", "@{500}"])
def test_a_reflog_number_past_the_moves_is_not_found(stree, demo, rev):
    for fast in ("", "1"):
        r = stree("-s", demo, "rev-parse", rev, env={"STREE_NO_FAST": fast})
        assert r.code == 3 and "the leaf has moved only" in r.err and "internal" not in r.err, r


def test_serve_rev_parse_of_a_megabyte_revision_answers_and_the_next_request_too(demo):
    s = Server(demo)
    try:
        r = s.request("rev_parse", revisions=["@" + "~0" * 500_000], timeout=60)
        assert r["success"] is True and r["data"]["records"][0]["id"].startswith(LEAF), r
        r = s.request("rev_parse", revisions=["@{" + "9" * 100 + "}"])
        assert r["success"] is False and r["errorCode"] == "not_found", r
        assert s.request("get_state")["success"] is True
    finally:
        assert s.close() == 0
