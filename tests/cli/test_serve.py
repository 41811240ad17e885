"""`stree serve` driven as an editor drives it: a subprocess with pipes, one request per line.
Framing and typed errors; stree's own requests equal to the CLI's --json; pi PR #1762's
browsing commands (list_sessions, set_label, rename/delete, the lightweight tree)."""

import json
import os

import pytest
from serve_kit import Server

from stree.storage.session import parse

LEAF = "f7e0df1c"  # the demo's leaf


@pytest.fixture
def server(demo):
    s = Server(demo)
    yield s
    s.kill()


def test_framing_malformed_lines_and_unknown_commands_get_errors_and_the_server_goes_on(server):
    server.send(b"{not json\n")
    r = server.response()
    assert r["type"] == "response" and r["command"] == "parse" and r["success"] is False
    assert r["error"].startswith("Failed to parse command") and r["errorCode"] == "parse" and "id" not in r
    server.send(b"[1, 2]\n")
    assert server.response()["errorCode"] == "parse"
    server.send(b"\xff\xfe\n")
    assert server.response()["errorCode"] == "parse"
    r = server.request("no_such_thing")
    assert (r["success"], r["error"], r["errorCode"], r["command"]) == \
        (False, "Unknown command: no_such_thing", "unknown_command", "no_such_thing")
    server.send({"id": "x"})  # no type
    r = server.response()
    assert r["id"] == "x" and "command" not in r and r["errorCode"] == "unknown_command"
    server.send({"type": "extension_ui_response", "id": "dialog-1", "value": "ok"})  # pi's: ignored, no answer
    server.send({"type": "get_state"})  # no id: none in the answer
    r = server.response()
    assert "id" not in r and r["command"] == "get_state" and r["success"] is True
    server.send({"id": 7, "type": "get_state"})  # ids are echoed as given
    assert server.response()["id"] == 7
    server.send(b'{"id":"crlf","type":"get_state"}\r\n')
    assert server.response()["id"] == "crlf"
    server.send(b'{"id":"sep\xe2\x80\xa8","type":"get_state"}\n')  # U+2028 is inside a line, not a break
    assert server.response()["id"] == "sep\u2028"
    assert server.close() == 0


def test_bad_params_are_typed_errors(server):
    for type, fields, word in [
        ("get_entries", {"since": 5}, "'since' must be a string"),
        ("navigate_tree", {}, "missing field 'targetId'"),
        ("list_sessions", {"scope": "everywhere"}, "'scope' must be one of"),
        ("set_label", {"entryId": LEAF, "label": 3}, "'label' must be a string"),
        ("log", {"maxCount": -1}, "'maxCount' must be 0 or more"),
        ("show", {"revisions": "@"}, "'revisions' must be an array"),
        ("log", {"since": "soonish"}, "since 'soonish': not a date"),
        ("log", {"roles": ["robot"]}, "'roles' holds 'robot'"),
        ("log", {"graph": True, "reverse": True}, "graph and reverse cannot be combined"),
        ("stats", {"all": True, "revision": "@"}, "stats: all sums every session; it takes no revision"),
        ("stats", {"until": "later"}, "until 'later': not a date"),
        ("switch_session", {}, "missing field 'sessionPath'"),
    ]:
        r = server.request(type, **fields)
        assert r["success"] is False and r["errorCode"] == "bad_params" and word in r["error"], r


def test_unknown_ids_and_ambiguous_revisions(tmp_path):
    lines = [{"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}]
    parent = None
    for id in ("abcd1111", "abcd2222"):
        lines.append({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
                      "message": {"role": "user", "content": id, "timestamp": 1}})
        parent = id
    path = tmp_path / "amb.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    s = Server(path)
    try:
        r = s.request("show", revisions=["abcd"])
        assert r["errorCode"] == "ambiguous" and "is ambiguous" in r["error"] and "hint" in r
        for type, fields in [("show", {"revisions": ["zzzz9999"]}), ("fork", {"entryId": "nope"}),
                             ("set_label", {"entryId": "nope", "label": "x"}),
                             ("navigate_tree", {"targetId": "nope"}), ("context", {"revision": "nope"})]:
            r = s.request(type, **fields)
            assert r["errorCode"] == "not_found", r
        assert s.request("get_entries", since="nope")["error"] == "Entry not found: nope"
        assert s.data("rev_parse", revisions=["abcd1"]) == {"records": [{"rev": "abcd1", "id": "abcd1111"}]}
    finally:
        assert s.close() == 0


@pytest.mark.parametrize("type,fields,argv", [
    ("log", {}, ["log"]),
    ("log", {"revision": "bug-found", "maxCount": 3}, ["log", "bug-found", "-n", "3"]),
    ("log", {"revision": "bug-found..@", "reverse": True}, ["log", "bug-found..@", "--reverse"]),
    ("log", {"filter": "user-only", "search": "csv"}, ["log", "--filter", "user-only", "--search", "csv"]),
    ("log", {"graph": True}, ["log", "--graph"]),
    ("log", {"graph": True, "filter": "all", "maxCount": 9}, ["log", "--graph", "--filter", "all", "-n", "9"]),
    ("show", {"revisions": ["@", "bug-found", "@~2"]}, ["show", "@", "bug-found", "@~2"]),
    ("show", {"revisions": ["bug-found..@", "root"]}, ["show", "bug-found..@", "root"]),
    ("log", {"roles": ["assistant"], "maxCount": 3}, ["log", "--role", "assistant", "-n", "3"]),
    ("log", {"models": ["gpt-*", "anthropic/*"]}, ["log", "--model", "gpt-*", "--model", "anthropic/*"]),
    ("log", {"since": "2026-01-01", "roles": ["user", "toolResult"]},
     ["log", "--since", "2026-01-01", "--role", "user", "--role", "toolResult"]),
    ("log", {"graph": True, "roles": ["user"]}, ["log", "--graph", "--role", "user"]),
    ("rev_parse", {"revisions": ["@", "bug-found...@", "fix-verified..@"]},
     ["rev-parse", "@", "bug-found...@", "fix-verified..@"]),
    ("rev_parse", {"revisions": [":/Change of plan"], "verify": True}, ["rev-parse", "--verify", ":/Change of plan"]),
    ("context", {}, ["context"]),
    ("context", {"revision": "bug-found~1"}, ["context", "bug-found~1"]),
    ("stats", {}, ["stats"]),
    ("stats", {"revision": "bug-found..@", "since": "2026-11-20"}, ["stats", "bug-found..@", "--since", "2026-11-20"]),
])
def test_stree_requests_answer_what_the_cli_prints_with_json(stree, demo, server, type, fields, argv):
    r = stree("-s", demo, *argv, "--json")
    assert r.code == 0, r
    lines = [json.loads(line) for line in r.out.splitlines()]
    data = server.data(type, **fields)
    assert data == (lines[0] if type == "context" else {"records": lines})


def test_set_label_sets_and_whitespace_clears(server, demo):
    assert server.request("set_label", entryId="459e8d8a", label="  csv start ") == \
        {"id": "r1", "type": "response", "command": "set_label", "success": True}
    tree = server.data("get_tree")["tree"]
    node = _find(tree, "459e8d8a")
    assert node["label"] == "csv start" and "labelTimestamp" in node
    last = json.loads(demo.read_text().splitlines()[-1])
    assert (last["type"], last["targetId"], last["label"], last["parentId"]) == ("label", "459e8d8a", "csv start",
                                                                                 LEAF)
    assert server.request("set_label", entryId="459e8d8a", label="   ")["success"]
    assert "label" not in _find(server.data("get_tree")["tree"], "459e8d8a")
    assert json.loads(demo.read_text().splitlines()[-1]).get("label") is None


def _find(nodes, id):
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if (node.get("entry") or node)["id"] == id:
            return node
        stack.extend(node["children"])
    return None


def _other_session(directory, name="other", text="a second session about parsers"):
    path = directory / f"2026-01-02T00-00-00-000Z_{name}.jsonl"
    lines = [{"type": "session", "version": 3, "id": f"id-{name}", "timestamp": "2026-01-02T00:00:00.000Z",
              "cwd": "/tmp"},
             {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-01-02T00:00:01.000Z",
              "message": {"role": "user", "content": text, "timestamp": 1767312001000}},
             {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-01-02T00:00:02.000Z",
              "message": {"role": "assistant", "content": [{"type": "text", "text": "sure"}],
                          "timestamp": 1767312002000}}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_list_sessions_with_the_text_to_search_on(server, demo):
    other = _other_session(demo.parent)
    sessions = server.data("list_sessions")["sessions"]
    assert [s["path"] for s in sessions] == [str(demo), str(other)]  # newest activity first
    mine, theirs = sessions
    assert mine["id"] == "01a1f83b-f8c7-7d21-9e44-5c81f0a2d6b3" and mine["name"] == "fix csv quoting bug"
    assert mine["messageCount"] == sum(1 for n in parse(str(demo)).nodes if n.type == "message")
    assert mine["firstMessage"].startswith("`csvtool stats` gives wrong field counts")
    assert "stdlib csv module" in mine["allMessagesText"]
    assert theirs == {"path": str(other), "id": "id-other", "cwd": "/tmp", "created": "2026-01-02T00:00:00.000Z",
                      "modified": "2026-01-02T00:00:02.000Z", "messageCount": 2,
                      "firstMessage": "a second session about parsers",
                      "allMessagesText": "a second session about parsers sure"}
    assert server.data("list_sessions", scope="all")["sessions"][:2] == sessions


def test_rename_and_delete_another_session(server, demo, isolated_home):
    other = _other_session(demo.parent)
    assert server.request("rename_session", sessionPath=str(other), name=" parsers ")["success"]
    assert json.loads(other.read_text().splitlines()[-1])["name"] == "parsers"
    assert server.request("rename_session", sessionPath=str(other), name=" ")["error"] == \
        "Session name cannot be empty"
    r = server.request("rename_session", sessionPath=str(demo.parent / "gone.jsonl"), name="x")
    assert r["errorCode"] == "not_found" and r["error"].startswith("Session file not found")
    r = server.request("delete_session", sessionPath=str(other))
    assert r["errorCode"] == "bad_params" and "confirm" in r["error"] and other.exists()
    r = server.request("delete_session", sessionPath=str(demo), confirm=True)
    assert r["error"] == "Cannot delete the currently active session" and demo.exists()
    data = server.data("delete_session", sessionPath=str(other), confirm=True)
    trash = isolated_home / ".local" / "share" / "Trash"
    assert data == {"path": str(other), "method": "trash", "trashPath": str(trash / "files" / other.name)}
    assert not other.exists() and (trash / "files" / other.name).exists()
    info = (trash / "info" / (other.name + ".trashinfo")).read_text()
    assert info.startswith("[Trash Info]\nPath=" + str(other).replace(" ", "%20") + "\nDeletionDate=")
    assert [s["path"] for s in server.data("list_sessions")["sessions"]] == [str(demo)]
    again = _other_session(demo.parent)  # the same name again: a second name in the trash
    assert server.data("delete_session", sessionPath=str(again), confirm=True)["trashPath"].endswith(
        ".2.jsonl")


def test_lightweight_tree_drops_bookkeeping_and_resolves_tool_calls(server, demo):
    data = server.data("get_tree", lightweight=True)
    nodes = parse(str(demo)).nodes
    kept = {n.id for n in nodes if n.type not in ("label", "session_info", "custom")}
    seen = {}
    stack = [(n, None) for n in data["tree"]]
    while stack:
        node, parent = stack.pop()
        seen[node["id"]] = node
        assert node["parentId"] == parent
        stack.extend((c, node["id"]) for c in node["children"])
    assert set(seen) == kept and data["leafId"] == LEAF
    assert seen["b2af4122"]["parentId"] == "b08eb4e0"  # re-parented over the label and the name entry
    assert seen["9bd41591"]["label"] == "bug-found" and seen["9bd41591"]["role"] == "assistant"
    read = seen["1f81cdb3"]
    assert read["type"] == "tool_result" and read["toolName"] == "read"
    assert read["formattedToolCall"] == read["preview"] == "[read: src/csvtool/parser.py]"
    assert read["toolArgs"]["path"].endswith("src/csvtool/parser.py")
    assert seen["5c0a2a6b"]["preview"] == "(aborted)" and seen["5c0a2a6b"]["stopReason"] == "aborted"
    assert seen["b2af4122"]["type"] == "compaction" and isinstance(seen["b2af4122"]["tokensBefore"], int)
    assert seen["edc2c8c2"] == {"id": "edc2c8c2", "parentId": "f768421d", "timestamp": "2026-11-20T09:22:03.836Z",
                                "children": seen["edc2c8c2"]["children"], "type": "model_change",
                                "provider": "openai", "modelId": "gpt-5"}


def test_lightweight_tool_results_resolve_along_their_own_branch(tmp_path):
    """The same toolCallId on two branches (a retried turn): each result names its own call."""
    lines = [{"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"},
             {"type": "message", "id": "u", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
              "message": {"role": "user", "content": "go", "timestamp": 1}}]
    for n, (tool, args) in enumerate([("read", {"path": "/a.py"}), ("bash", {"command": "ls"})]):
        lines.append({"type": "message", "id": f"a{n}", "parentId": "u", "timestamp": f"2026-01-01T00:00:0{2 + n}.000Z",
                      "message": {"role": "assistant", "timestamp": 2,
                                  "content": [{"type": "toolCall", "id": "call_1", "name": tool, "arguments": args}]}})
        lines.append({"type": "message", "id": f"t{n}", "parentId": f"a{n}",
                      "timestamp": f"2026-01-01T00:00:0{4 + n}.000Z",
                      "message": {"role": "toolResult", "toolCallId": "call_1", "toolName": tool,
                                  "content": [{"type": "text", "text": "out"}], "timestamp": 3}})
    path = tmp_path / "retry.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    s = Server(path)
    try:
        tree = s.data("get_tree", lightweight=True)["tree"]
        assert _find(tree, "t0")["formattedToolCall"] == "[read: /a.py]"
        assert _find(tree, "t1")["formattedToolCall"] == "[bash: ls]"
        assert _find(tree, "t1")["toolArgs"] == {"command": "ls"}
    finally:
        assert s.close() == 0


def test_export_html_writes_one_self_contained_page(server, demo, tmp_path, stree):
    out = tmp_path / "page.html"
    assert server.data("export_html", outputPath=str(out)) == {"path": str(out)}
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<title>fix csv quoting bug</title>" in page
    assert "Content-Security-Policy" in page and page.count("<script") == 1 and "http:" not in page  # self-contained
    assert "<code>csvtool stats</code> gives wrong field counts" in page  # its Markdown rendered
    assert page == stree("-s", demo, "export", "-o", "-", "--format", "html").out  # the page `stree export` writes


def test_switch_session_serves_another_file(server, demo):
    other = _other_session(demo.parent)
    assert server.data("switch_session", sessionPath=str(other)) == {"cancelled": False}
    assert server.data("get_state")["sessionFile"] == str(other)
    assert server.data("get_entries")["leafId"] == "a1"
    r = server.request("switch_session", sessionPath=str(demo.parent / "missing.jsonl"))
    assert r["success"] is False and r["errorCode"] == "not_found"
    assert server.data("get_state")["sessionFile"] == str(other)


def test_a_session_that_cannot_be_read_is_refused_at_start(stree, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a session\n")
    r = stree("-s", bad, "serve", input=b"")
    assert r.code == 4 and "Traceback" not in r.err
    r = stree("-s", tmp_path / "missing.jsonl", "serve", input=b"")
    assert r.code == 3


def test_end_of_input_ends_the_server(demo, stree):
    r = stree("-s", demo, "serve", input=b'{"id":"1","type":"get_state"}\n{"id":"2","type":"rev_parse"}')
    assert r.code == 0, r
    first, second = [json.loads(line) for line in r.out.splitlines()]
    assert first["id"] == "1" and second["data"] == {"records": [{"rev": "@", "id": LEAF}]}  # last line: no LF
    assert os.path.exists(demo)


OTHER_IDS = {"omp": "0199bbbb-0000-7000-8000-000000000001", "openclaw": "0199cccc-0000-7000-8000-000000000001"}


@pytest.fixture
def agents_home(isolated_home, demo):
    """pi's, oh-my-pi's and OpenClaw's directories in the temporary HOME: the demo in pi's, a
    session of another project in oh-my-pi's, one in OpenClaw's."""
    from builders import SessionBuilder

    pi_dir = isolated_home / ".pi/agent/sessions/--home-dev-csvtool--"
    pi_dir.mkdir(parents=True)
    served = pi_dir / "2026-11-20T09-14-02-311Z_01a1f83b.jsonl"
    served.write_bytes(demo.read_bytes())
    made = {"pi": served}
    for agent, d, cwd, start in (
            ("omp", ".omp/agent/sessions/--home-dev-other--", "/home/dev/other", 1_795_000_000_000),
            ("openclaw", ".openclaw/agents/main/sessions", "/home/dev/claw", 1_796_000_000_000)):
        b = SessionBuilder(cwd=cwd, id=OTHER_IDS[agent], start_ms=start)
        b.user(f"{agent}: the CSV quoting bug again")
        b.assistant("a quote inside quotes is doubled, as csv writes it")
        (isolated_home / d).mkdir(parents=True)
        made[agent] = b.write(isolated_home / d / f"{agent}.jsonl")
    return made


@pytest.mark.parametrize("fields,argv", [
    ({"pattern": "csv"}, ["grep", "csv"]),
    ({"pattern": "CSV", "ignoreCase": True, "word": True, "roles": ["user", "assistant"]},
     ["grep", "-i", "-w", "--role", "user", "--role", "assistant", "CSV"]),
    ({"pattern": r"quot(e|ing)\b", "regex": True, "types": ["message"], "maxCount": 5},
     ["grep", "-E", "--type", "message", "-m", "5", r"quot(e|ing)\b"]),
    ({"pattern": "quote", "filesOnly": True}, ["grep", "-l", "quote"]),
    ({"pattern": "quote", "count": True}, ["grep", "-c", "quote"]),
    ({"pattern": "quote", "agent": "omp"}, ["--agent", "omp", "grep", "quote"]),
    ({"pattern": "quote", "cwd": "/home/dev/claw"}, ["grep", "--cwd", "/home/dev/claw", "quote"]),
    ({"pattern": "csv", "since": "2026-11-20T09:20:00Z", "until": "2026-11-21"},
     ["grep", "--since", "2026-11-20T09:20:00Z", "--until", "2026-11-21", "csv"]),
    ({"pattern": "nowhere-in-any-session"}, ["grep", "nowhere-in-any-session"]),
])
def test_grep_answers_what_stree_grep_json_prints(stree, agents_home, fields, argv):
    r = stree(*argv, "--json")
    assert r.code in (0, 1) and "Traceback" not in r.err, r
    expected = [json.loads(line) for line in r.out.splitlines()]
    assert (r.code == 1) == (not expected) and (not expected) == ("nowhere" in fields["pattern"])
    s = Server(agents_home["pi"])
    try:
        assert s.data("grep", **fields) == {"records": expected}
        # one session, as -s takes it (an id prefix): the CLI's -s
        one = stree("-s", "0199bbbb", *argv, "--json")
        assert s.data("grep", session="0199bbbb", **fields) == \
            {"records": [json.loads(x) for x in one.out.splitlines()]}
    finally:
        assert s.close() == 0


@pytest.mark.parametrize("fields,argv", [
    ({"all": True}, ["stats", "--all"]),
    ({"all": True, "since": "2026-11-20", "until": "2026-11-20"}, ["stats", "--all", "--since", "2026-11-20",
                                                                    "--until", "2026-11-20"]),
])
def test_stats_of_every_session_answers_what_stree_stats_all_json_prints(stree, agents_home, fields, argv):
    r = stree(*argv, "--json")
    assert r.code == 0, r
    expected = [json.loads(line) for line in r.out.splitlines()]
    sessions = [rec for rec in expected if rec["group"] == "session"]
    assert {rec["path"] for rec in sessions} >= {str(agents_home["pi"])}  # (not vacuous: the demo's cost is there)
    s = Server(agents_home["pi"])
    try:
        assert s.data("stats", **fields) == {"records": expected}
    finally:
        assert s.close() == 0


def test_grep_finds_every_agents_sessions_and_says_which_entry(agents_home):
    s = Server(agents_home["pi"])
    try:
        records = s.data("grep", pattern="quot", ignoreCase=True)["records"]
        assert {r["agent"] for r in records} == {"pi", "omp", "openclaw"}
        demo = next(r for r in records if r["agent"] == "pi" and r["onPath"])
        assert s.data("show", revisions=[demo["entry"]])["records"][0]["id"] == demo["entry"]
        assert s.data("grep", pattern="quot", agent="openclaw", filesOnly=True)["records"] == [
            {"session": OTHER_IDS["openclaw"], "path": str(agents_home["openclaw"]), "agent": "openclaw",
             "state": "live", "count": 1, "rev": OTHER_IDS["openclaw"]}]
    finally:
        assert s.close() == 0


def test_grep_errors_are_typed(agents_home):
    s = Server(agents_home["pi"])
    try:
        for fields, code, word in [
            ({}, "bad_params", "missing field 'pattern'"),
            ({"pattern": ""}, "bad_params", "non-empty PATTERN"),
            ({"pattern": "(", "regex": True}, "bad_params", "not a valid regular expression"),
            ({"pattern": "x", "filesOnly": True, "count": True}, "bad_params", "do not go together"),
            ({"pattern": "x", "roles": ["robot"]}, "bad_params", "'roles' holds 'robot'"),
            ({"pattern": "x", "types": "message"}, "bad_params", "'types' must be an array"),
            ({"pattern": "x", "maxCount": 0}, "bad_params", "'maxCount' must be 1 or more"),
            ({"pattern": "x", "since": "someday"}, "bad_params", "since 'someday': not a date"),
            ({"pattern": "x", "agent": "claude"}, "bad_params", "'agent' must be one of"),
            ({"pattern": "x", "session": "zzzz9999"}, "not_found", "zzzz9999"),
        ]:
            r = s.request("grep", **fields)
            assert r["success"] is False and r["errorCode"] == code and word in r["error"], (fields, r)
    finally:
        assert s.close() == 0
