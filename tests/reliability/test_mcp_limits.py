"""`stree serve --mcp` stays responsive (issue 24, items 7 and 9 and "servers stay responsive"),
driven with raw JSON-RPC lines: a tool call cancelled with notifications/cancelled stops at
once (even inside a backtracking regex) and `ping` and the next call are answered; a call past
STREE_REQUEST_TIMEOUT fails alone; the end of input ends the server while a call runs; `tree`
answers a long session in pages (a cursor), equal together to `stree log --graph --json`."""

import json

from builders import SessionBuilder
from conftest import run_stree
from mcp_kit import McpServer

EVIL = "(a+)+$"
SLOW = {"STREE_REGEX_TIMEOUT": "600"}


def _session(path):
    b = SessionBuilder()
    b.user("a line to backtrack on:\n" + "a" * 34 + "b")
    b.assistant("ok")
    return b.write(path)


def test_a_cancelled_call_stops_and_ping_and_the_next_call_are_answered(tmp_path):
    session = _session(tmp_path / "s.jsonl")
    m = McpServer("-s", session, env=SLOW)
    try:
        evil = m.start("grep", pattern=EVIL, regex=True, session=str(session))
        assert m.ping()["result"] == {}  # the loop answers while the call runs
        m.cancel(evil)
        assert m.ping()["result"] == {}
        ok = m.call("grep", pattern="a+b$", regex=True, session=str(session), timeout=60)
        assert not ok.get("isError") and len(ok["structuredContent"]["results"]) == 1, ok
        assert evil not in m.pending  # a cancelled call is never answered (MCP)
        assert m.close() == 0
    finally:
        m.kill()


def test_a_call_past_its_deadline_fails_alone(tmp_path):
    session = _session(tmp_path / "s.jsonl")
    m = McpServer("-s", session, env=dict(SLOW, STREE_REQUEST_TIMEOUT="1"))
    try:
        evil = m.start("grep", pattern=EVIL, regex=True, session=str(session))
        result = m.wait(evil, timeout=120)["result"]
        assert result["isError"] is True and "past its deadline" in result["structuredContent"]["error"], result
        assert m.ping()["result"] == {}
        assert not m.call("labels")["isError"]
        assert m.close() == 0
    finally:
        m.kill()


def test_end_of_input_ends_the_server_while_a_call_runs(tmp_path):
    session = _session(tmp_path / "s.jsonl")
    m = McpServer("-s", session, env=SLOW)
    try:
        m.start("grep", pattern=EVIL, regex=True, session=str(session))
        assert m.ping()["result"] == {}
        assert m.close(timeout=120) == 0
    finally:
        m.kill()


def test_tree_of_a_long_session_comes_in_pages_that_add_up_to_the_cli_drawing(tmp_path):
    b = SessionBuilder()
    for n in range(1500):
        b.user(f"question {n}")
        a = b.assistant(f"answer {n}")
        if n % 100 == 0:
            b.at(a).user(f"side {n}")
            b.at(a)
    session = b.write(tmp_path / "long.jsonl")
    want = [json.loads(x) for x in run_stree("-s", session, "log", "--graph", "--json").out.splitlines()]
    m = McpServer("-s", session, env={"STREE_MCP_PAGE_BYTES": str(64 << 10)})
    try:
        rows, cursor, pages = [], None, 0
        while True:
            args = {"cursor": cursor} if cursor else {}
            page = m.call("tree", timeout=120, **args)
            assert not page.get("isError"), page
            assert "structuredContent" not in page and len(page["content"]) == 1  # (a page is sent once)
            data = json.loads(page["content"][0]["text"])
            rows += data["rows"]
            pages += 1
            cursor = data.get("nextCursor")
            if cursor is None:
                break
            assert data["total"] == len(want) and "cursor=" + cursor in data["note"]
            assert len(json.dumps(data["rows"])) < 2 * (64 << 10)
        assert pages > 5 and rows == want
        bad = m.call("tree", cursor="soon")
        assert bad["isError"] and "cursor" in bad["structuredContent"]["error"]
        assert m.close() == 0
    finally:
        m.kill()
