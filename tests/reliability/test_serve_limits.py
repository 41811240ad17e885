"""`stree serve` stays responsive (issue 24, "servers stay responsive"): a request can be
cancelled with pi's `abort` while it runs and fails alone (errorCode cancelled); one past its
deadline (STREE_REQUEST_TIMEOUT) fails alone (timeout); the next request is answered; the end
of input ends the server even while a request runs."""

import time

from builders import SessionBuilder
from serve_kit import Server

EVIL = "(a+)+$"
SLOW = {"STREE_REGEX_TIMEOUT": "600"}  # the regex budget out of the way: only abort or the deadline stop it


def _session(path):
    b = SessionBuilder()
    b.user("a line to backtrack on:\n" + "a" * 34 + "b")
    b.assistant("ok")
    return b.write(path)


def test_abort_cancels_the_request_under_way_and_the_next_is_answered(tmp_path):
    session = _session(tmp_path / "s.jsonl")
    s = Server(session, env=SLOW)
    try:
        s.send({"id": "evil", "type": "grep", "pattern": EVIL, "regex": True, "session": str(session)})
        aborts = 0
        end = time.monotonic() + 300  # (a deadline no loaded machine comes near, not a count of round trips)
        while "evil" not in s.pending:  # abort until the grep has answered (an abort before it starts does nothing)
            aborts += 1
            s.send({"id": f"abort{aborts}", "type": "abort"})
            r = s.wait(f"abort{aborts}", timeout=60)
            assert r == {"id": f"abort{aborts}", "type": "response", "command": "abort", "success": True}
            assert time.monotonic() < end, f"{aborts} aborts and the grep still runs"
            while not s.lines.empty():
                record = s.lines.get()
                s.pending[record.get("id")] = record
        r = s.wait("evil")
        assert (r["success"], r["errorCode"]) == (False, "cancelled") and "cancelled" in r["error"], r
        assert s.data("get_state")["sessionFile"] == str(session)
        assert s.data("grep", pattern="a+b$", regex=True, session=str(session))["records"]
    finally:
        assert s.close() == 0


def test_a_request_past_its_deadline_fails_alone(tmp_path):
    session = _session(tmp_path / "s.jsonl")
    s = Server(session, env=dict(SLOW, STREE_REQUEST_TIMEOUT="1"))
    try:
        s.send({"id": "evil", "type": "grep", "pattern": EVIL, "regex": True, "session": str(session)})
        s.send({"id": "next", "type": "get_state"})
        r = s.wait("evil", timeout=120)
        assert (r["success"], r["errorCode"]) == (False, "timeout") and "deadline" in r["error"], r
        assert "STREE_REQUEST_TIMEOUT" in r["hint"]
        assert s.wait("next")["success"] is True
    finally:
        assert s.close() == 0


def test_end_of_input_ends_the_server_while_a_request_runs(tmp_path):
    session = _session(tmp_path / "s.jsonl")
    s = Server(session, env=dict(SLOW, STREE_REQUEST_TIMEOUT="2"))
    try:
        s.send({"id": "evil", "type": "grep", "pattern": EVIL, "regex": True, "session": str(session)})
        assert s.close(timeout=120) == 0  # (the request ends at its deadline, then the server)
        assert [r["errorCode"] for r in s.records if r.get("id") == "evil"] == ["timeout"]
    finally:
        s.kill()


def test_a_bad_request_timeout_is_refused_at_start(demo, stree):
    r = stree("-s", demo, "serve", env={"STREE_REQUEST_TIMEOUT": "soon"}, input=b"")
    assert r.code == 2 and "STREE_REQUEST_TIMEOUT" in r.err, r


def test_a_request_line_over_the_limit_is_refused_unread_and_the_next_is_answered(demo):
    s = Server(demo, env={"STREE_LINE_MAX": str(1 << 20)})
    try:
        huge = b'{"id":"big","type":"rev_parse","revisions":["' + b"~0" * (3 << 20) + b'"]}\n'
        s.send(huge)
        r = s.response(timeout=120)
        assert (r["success"], r["errorCode"]) == (False, "parse") and "longer than 1048576 bytes" in r["error"], r
        assert s.data("get_state")["sessionFile"] == str(demo)
    finally:
        assert s.close() == 0
