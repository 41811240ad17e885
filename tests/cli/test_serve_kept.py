"""A warm server's kept answers (stree.service.kept), tested by counting work (not by timing):
get_state is answered from the answer kept while the served file is unchanged (its stats line
says `kept answer`, nothing decoded or parsed), made again after an append or a switch, never
ahead of a request sent before it, and always as a fresh server answers."""

import json
import subprocess
import sys

from clock import past_the_tick
from serve_kit import Server
from test_serve_warm import generated


def stats(stderr):
    """[(kind, decoded, parsed, kept)] from the server's STREE_DEBUG_STATS lines, in order."""
    out = []
    for line in stderr.splitlines():
        if line.startswith("stree: stats: ") and ": decoded " in line:
            kind, rest = line[len("stree: stats: "):].split(": decoded ")
            words = rest.replace(",", "").split()
            out.append((kind, int(words[0]), int(words[3]), line.endswith(", kept answer")))
    return out


def fresh_state(path, id="f1"):
    """get_state's whole response from a server started afresh on `path`."""
    s = Server(path)
    try:
        s.send({"id": id, "type": "get_state"})
        record = s.wait(id)
        assert s.close() == 0
    finally:
        s.kill()
    return record


def served_copy(tmp_path, source, lines):
    path = tmp_path / "served.jsonl"
    path.write_bytes(b"".join(source.read_bytes().splitlines(keepends=True)[:lines]))
    past_the_tick(path)
    return path


def test_get_state_is_answered_from_its_kept_answer_while_the_file_is_unchanged(tmp_path):
    source = generated(tmp_path, 400)
    path = served_copy(tmp_path, source, 401)
    s = Server(path, env={"STREE_DEBUG_STATS": "1", "STREE_CACHE_DIR": str(tmp_path / "cache")})
    try:
        first = s.request("get_state")
        again = [s.request("get_state") for _ in range(5)]
        assert s.close() == 0
    finally:
        s.kill()
    counts = stats(s.stderr())
    assert [c[0] for c in counts] == ["get_state"] * 6
    assert counts[0][1] > 0 and not counts[0][3]  # the first answer is made: the context decoded
    assert all(kept and decoded == 0 and parsed == 0 for _, decoded, parsed, kept in counts[1:])
    assert [r["data"] for r in again] == [first["data"]] * 5
    assert [r["id"] for r in again] == [f"r{n}" for n in range(2, 7)]
    assert fresh_state(path, "r1") == first


def raw_lines(path, requests, env=None):
    """The response lines (bytes, as written) to `requests` (bytes lines), each sent once the
    one before is answered; and the server's stderr."""
    import os

    proc = subprocess.Popen([sys.executable, "-m", "stree", "-s", str(path), "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, **(env or {})))
    out = []
    try:
        for line in requests:
            proc.stdin.write(line)
            proc.stdin.flush()
            out.append(proc.stdout.readline())
        proc.stdin.close()
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return out, proc.stderr.read().decode()


def test_a_kept_answer_repeats_any_id_as_the_handler_does(tmp_path):
    """The id is spliced into the kept line: any JSON value, spelled byte for byte as the
    handler's answer spells it."""
    path = served_copy(tmp_path, generated(tmp_path, 50), 51)
    ids = ["plain-1", 'quo"te', "back\\slash", "\u00fc\u2028\x1b[31m\x7f", "\ud800", 2.5, 1e400, None,
           {"a": [1, "x"]}, ""]
    requests = [json.dumps({"id": id, "type": "get_state"}).encode() + b"\n" for id in ids]
    requests.insert(0, b'{"type":"get_state"}\n')
    kept, err = raw_lines(path, [b'{"type":"get_state"}\n'] + requests, env={"STREE_DEBUG_STATS": "1"})
    counts = stats(err)
    assert len(counts) == len(ids) + 2 and not counts[0][3] and all(c[3] for c in counts[1:])
    assert kept[0] == kept[1] and b'"id"' not in kept[1]
    for request, line in zip(requests[1:], kept[2:]):  # each the first get_state of its server: made by
        made, _ = raw_lines(path, [request])            # the handler
        assert made == [line], request


def test_an_append_makes_the_answer_again_then_it_is_kept_again(tmp_path):
    source = generated(tmp_path, 600)
    lines = source.read_bytes().splitlines(keepends=True)
    path = served_copy(tmp_path, source, 401)
    s = Server(path, env={"STREE_DEBUG_STATS": "1", "STREE_CACHE_DIR": str(tmp_path / "cache")})
    try:
        before = [s.data("get_state"), s.data("get_state")]
        with open(path, "ab") as f:  # as pi appends
            f.write(b"".join(lines[401:]))
        past_the_tick(path)
        after = [s.data("get_state"), s.data("get_state")]
        assert s.close() == 0
    finally:
        s.kill()
    counts = stats(s.stderr())
    assert [c[3] for c in counts] == [False, True, False, True]
    assert counts[3][1:3] == (0, 0)
    assert after[0] == after[1] and after[0]["messageCount"] != before[0]["messageCount"]
    assert fresh_state(path)["data"] == after[0]


def test_a_switch_to_another_session_is_not_answered_from_the_first(tmp_path):
    one = served_copy(tmp_path, generated(tmp_path, 80, seed=1), 81)
    other = generated(tmp_path, 120, seed=2)
    past_the_tick(other)
    s = Server(one, env={"STREE_DEBUG_STATS": "1"})
    try:
        mine = [s.data("get_state"), s.data("get_state")]
        assert s.data("switch_session", sessionPath=str(other)) == {"cancelled": False}
        theirs = [s.data("get_state"), s.data("get_state")]
        assert s.close() == 0
    finally:
        s.kill()
    assert [c[3] for c in stats(s.stderr()) if c[0] == "get_state"] == [False, True, False, True]
    assert mine[0]["sessionFile"] == str(one) and theirs[0]["sessionFile"] == str(other)
    assert theirs == [fresh_state(other)["data"]] * 2


def test_a_kept_answer_never_overtakes_a_request_sent_before_it(tmp_path):
    """Requests written at once, a slow one first: the responses come in the order asked."""
    path = served_copy(tmp_path, generated(tmp_path, 1500), 1501)
    s = Server(path, env={"STREE_DEBUG_STATS": "1"})
    try:
        s.data("get_state")  # (kept from here on)
        batch = b"".join(json.dumps({"id": f"o{n}", "type": kind}).encode() + b"\n"
                         for n, kind in enumerate(["get_tree", "get_state", "get_entries", "get_state",
                                                   "get_state"]))
        s.send(batch)
        got = [s.response()["id"] for _ in range(5)]
        assert s.close() == 0
    finally:
        s.kill()
    assert got == [f"o{n}" for n in range(5)]


def test_past_its_budget_a_server_keeps_the_newest_entries(tmp_path):
    """STREE_SERVE_KEEP smaller than the session: the entries kept are the newest (what a
    client asks with `since` after an append), the oldest decoded at each request."""
    source = generated(tmp_path, 800)
    lines = source.read_bytes().splitlines(keepends=True)
    path = served_copy(tmp_path, source, 701)
    budget = path.stat().st_size // 4
    since = json.loads(lines[650])["id"]  # the last 50 entries (well within a quarter of the file)
    s = Server(path, env={"STREE_DEBUG_STATS": "1", "STREE_SERVE_KEEP": str(budget),
                          "STREE_CACHE_DIR": str(tmp_path / "cache")})
    try:
        whole = [s.data("get_entries"), s.data("get_entries")]
        tail = s.data("get_entries", since=since)
        with open(path, "ab") as f:  # as pi appends
            f.write(b"".join(lines[701:]))
        past_the_tick(path)
        grown = [s.data("get_entries", since=since), s.data("get_entries", since=since)]
        assert s.close() == 0
    finally:
        s.kill()
    counts = [(kind, decoded) for kind, decoded, _, _ in stats(s.stderr())]
    assert counts[0] == ("get_entries", 700)
    assert 0 < counts[1][1] < 700  # the oldest, decoded again
    assert counts[2:] == [("get_entries", 0), ("get_entries", 100), ("get_entries", 0)]
    assert whole[0] == whole[1] and tail["entries"] == whole[0]["entries"][650:]
    fresh = Server(path)
    try:
        assert fresh.data("get_entries", since=since) == grown[0] == grown[1]
        assert len(grown[0]["entries"]) == 150
        assert fresh.close() == 0
    finally:
        fresh.kill()


def tree_pages(m, **arguments):
    """(rows, pages) of the tree tool, paged through."""
    rows, cursor, pages = [], None, 0
    while True:
        answer = m.call("tree", timeout=120, **arguments, **({"cursor": cursor} if cursor else {}))
        data = json.loads(answer["content"][0]["text"])  # (a page is its text alone)
        rows += data["rows"]
        pages += 1
        cursor = data.get("nextCursor")
        if cursor is None:
            return rows, pages


def cli_graph(path, *args):
    from conftest import run_stree

    return [json.loads(line) for line in run_stree("-s", path, "log", "--graph", "--json", *args).out.splitlines()]


def test_the_mcp_tree_tool_draws_once_for_all_its_pages(tmp_path):
    """The drawing's layout is kept between the pages of the tree tool (it was made again at
    every page: quadratic in a long session), and made again when the file grows or the
    arguments change; the pages add up to the CLI's drawing."""
    from mcp_kit import McpServer

    source = generated(tmp_path, 900)
    lines = source.read_bytes().splitlines(keepends=True)
    path = served_copy(tmp_path, source, 701)
    want = cli_graph(path), cli_graph(path, "--filter", "user-only")
    m = McpServer("-s", path, env={"STREE_DEBUG_STATS": "1", "STREE_MCP_PAGE_BYTES": str(16 << 10),
                                   "STREE_CACHE_DIR": str(tmp_path / "cache")})
    try:
        first, n1 = tree_pages(m)
        users, n2 = tree_pages(m, filter="user-only")
        with open(path, "ab") as f:  # as pi appends
            f.write(b"".join(lines[701:]))
        past_the_tick(path)
        grown, n3 = tree_pages(m)
        assert m.close() == 0
    finally:
        m.kill()
    # (each page after the first: of the kept drawing, and begun by the server before its call)
    notes = [line.endswith(", kept drawing, page begun ahead") for line in m.stderr().splitlines()
             if line.startswith("stree: stats: tree: ")]
    assert n1 > 3 and n2 > 1 and n3 > n1
    assert notes == [False] + [True] * (n1 - 1) + [False] + [True] * (n2 - 1) + [False] + [True] * (n3 - 1)
    assert (first, users) == want
    assert grown == cli_graph(path) and len(grown) > len(first)


def test_the_mcp_tree_page_begun_ahead_is_let_go_when_the_file_grows(tmp_path):
    """The server begins the tree's next page while it waits for the next call; when the file
    grew meanwhile (pi appended), the next call draws the grown file again and pages it from its
    cursor: no row of the page begun ahead of the old drawing is sent."""
    from mcp_kit import McpServer

    source = generated(tmp_path, 600)
    lines = source.read_bytes().splitlines(keepends=True)
    path = served_copy(tmp_path, source, 501)
    old = cli_graph(path)
    m = McpServer("-s", path, env={"STREE_DEBUG_STATS": "1", "STREE_MCP_PAGE_BYTES": str(16 << 10),
                                   "STREE_CACHE_DIR": str(tmp_path / "cache")})
    try:
        first = json.loads(m.call("tree")["content"][0]["text"])
        with open(path, "ab") as f:  # as pi appends
            f.write(b"".join(lines[501:]))
        past_the_tick(path)
        pages, cursor = [], first["nextCursor"]
        while cursor is not None:
            pages.append(json.loads(m.call("tree", cursor=cursor)["content"][0]["text"]))
            cursor = pages[-1].get("nextCursor")
        assert m.close() == 0
    finally:
        m.kill()
    grown, at = cli_graph(path), int(first["nextCursor"])
    assert first["rows"] == old[:at] and len(grown) > len(old) and len(pages) > 2
    assert [p["total"] for p in pages] == [len(grown)] * len(pages)
    assert [row for p in pages for row in p["rows"]] == grown[at:]
    notes = [line for line in m.stderr().splitlines() if line.startswith("stree: stats: tree: ")]
    assert [n.endswith(", page begun ahead") for n in notes] == [False, False] + [True] * (len(pages) - 1), notes
