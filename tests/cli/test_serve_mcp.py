"""`stree serve --mcp` (issue 18, for agents): driven by the MCP SDK's own client, which spawns
`stree serve --mcp` as a subprocess and talks to it over stdio. Each tool's result is compared
with what a real `stree ... --json` subprocess prints for the same question; writes are read
back by the real pi 1.5.2."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_stree
from pi_harness import pi

pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install -e '.[mcp]'; make test installs it)")

import anyio  # noqa: E402  (installed with mcp)
from mcp import Client, StdioServerParameters, stdio_client  # noqa: E402

HELLO = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
READS = {"list_sessions", "grep", "log", "tree", "show", "context", "labels", "stats"}
WRITES = {"set_label", "checkout", "set_name"}


def serve(*args, calls, cwd=None):
    """Start `stree ARGS serve --mcp` under the SDK's stdio client; `calls(client)` (async) runs
    against it. Returns what `calls` returns, and the server's stderr."""
    err = Path(os.environ["HOME"]) / "serve-stderr.txt"
    params = StdioServerParameters(command=sys.executable, args=["-m", "stree", *map(str, args)],
                                   env=dict(os.environ), cwd=str(cwd) if cwd else None)

    async def main():
        with open(err, "w") as log:
            async with Client(stdio_client(params, errlog=log), read_timeout_seconds=60) as client:
                return await calls(client)
    result = anyio.run(main)
    return result, err.read_text()


def lines(out):
    return [json.loads(line) for line in out.splitlines()]


def cli_json(*args, cwd=None):
    r = run_stree(*args, cwd=cwd)
    assert r.code == 0, r
    return r.out


# -- the SDK stays out of every other command ------------------------------------


def test_cli_never_imports_the_sdk(demo):
    code = ("import sys, runpy; sys.argv = ['stree', '-s', sys.argv[1], 'serve', '--help']\n"
            "import stree.cli, stree.commands.serve\n"
            "try:\n    runpy.run_module('stree', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'pydantic', 'starlette'))\n"
            "print(loaded, file=sys.stderr); sys.exit(1 if loaded else 0)")
    r = subprocess.run([sys.executable, "-c", code, str(demo)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "--allow-writes" in r.stdout  # the help was printed, without the SDK


def test_without_the_sdk_serve_mcp_says_how_to_install_it(demo):
    # as on a machine without the extra: `import mcp` fails
    code = ("import sys, runpy; sys.modules['mcp'] = None; sys.modules['mcp_types'] = None\n"
            "sys.argv = ['stree', '-s', sys.argv[1], 'serve', '--mcp']\n"
            "runpy.run_module('stree', run_name='__main__')")
    r = subprocess.run([sys.executable, "-c", code, str(demo)], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert r.returncode == 2, r
    assert "pip install 'stree[mcp]'" in r.stderr and "Traceback" not in r.stderr
    assert r.stdout == ""


def test_allow_writes_without_mcp_is_a_usage_error(stree, demo):
    r = stree("-s", demo, "serve", "--allow-writes")
    assert r.code == 2 and "--mcp" in r.err


# -- tools listed ------------------------------------------------------------------


def test_write_tools_are_listed_only_with_allow_writes(demo):
    async def listed(client):
        return {t.name: t for t in (await client.list_tools()).tools}

    plain, err = serve("-s", demo, "serve", "--mcp", calls=listed)
    assert set(plain) == READS, err
    writes, _ = serve("-s", demo, "serve", "--mcp", "--allow-writes", calls=listed)
    assert set(writes) == READS | WRITES
    for name, tool in writes.items():
        assert tool.description and len(tool.description) > 60
        assert tool.input_schema["type"] == "object" and tool.input_schema["additionalProperties"] is False
        if name == "tree":  # its pages are sent once, as JSON text: no schema asks for a structured copy
            assert tool.output_schema is None and "as text (no structuredContent)" in tool.description
        else:
            assert tool.output_schema["type"] == "object"
        assert tool.annotations.read_only_hint is (name in READS)
        if name != "list_sessions":
            assert "session" in tool.input_schema["properties"]
    assert writes["set_label"].input_schema["required"] == ["name"]
    assert writes["checkout"].input_schema["required"] == ["revision"]


# -- reads: the data of the CLI's --json -----------------------------------------


def call_all(requests):
    async def calls(client):
        out = []
        for name, args in requests:
            r = await client.call_tool(name, args)
            assert not r.is_error, (name, args, r.content[0].text)
            assert len(r.content) == 1
            data = json.loads(r.content[0].text)  # every answer's text is its JSON
            if name == "tree":
                assert r.structured_content is None  # (a page is sent once)
            else:
                assert r.structured_content == data  # the same JSON, structured
            out.append(data)
        return out
    return calls


@pytest.mark.parametrize("fixture", ["demo", "branchy_file"])
def test_read_tools_give_what_the_cli_json_gives(request, fixture):
    path = request.getfixturevalue(fixture)
    tip = cli_json("-s", path, "rev-parse", "@~4").strip()
    # an entry on a branch away from @: its path is partly off the active one
    aside = next(r["id"] for r in lines(cli_json("-s", path, "log", "--graph", "--json", "--filter", "all"))
                 if not r["active"] and r["type"] == "message")
    requests = [
        ("log", {}),
        ("log", {"revision": "@~2", "max_count": 3}),
        ("log", {"revision": f"{tip}..@"}),
        ("log", {"revision": f"{tip}...root", "filter": "user-only"}),
        ("log", {"search": "the"}),
        ("log", {"revision": aside}),
        ("tree", {}),
        ("tree", {"filter": "all"}),
        ("tree", {"filter": "user-only", "max_count": 4}),
        ("show", {}),
        ("show", {"revisions": ["@~3", "root"]}),
        ("show", {"revisions": [f"{tip}..@"]}),
        ("log", {"roles": ["user"], "max_count": 2}),
        ("context", {}),
        ("context", {"revision": "@~5"}),
        ("labels", {}),
        ("stats", {}),
        ("stats", {"revision": "@~3"}),
    ]
    expected = [
        {"entries": lines(cli_json("-s", path, "log", "--json"))},
        {"entries": lines(cli_json("-s", path, "log", "--json", "-n", "3", "@~2"))},
        {"entries": lines(cli_json("-s", path, "log", "--json", f"{tip}..@"))},
        {"entries": lines(cli_json("-s", path, "log", "--json", "--filter", "user-only", f"{tip}...root"))},
        {"entries": lines(cli_json("-s", path, "log", "--json", "--search", "the"))},
        {"entries": lines(cli_json("-s", path, "log", "--json", aside))},
        {"rows": lines(cli_json("-s", path, "log", "--graph", "--json"))},
        {"rows": lines(cli_json("-s", path, "log", "--graph", "--json", "--filter", "all"))},
        {"rows": lines(cli_json("-s", path, "log", "--graph", "--json", "--filter", "user-only", "-n", "4"))},
        {"entries": lines(cli_json("-s", path, "show", "--json"))},
        {"entries": lines(cli_json("-s", path, "show", "--json", "@~3", "root"))},
        {"entries": lines(cli_json("-s", path, "show", "--json", f"{tip}..@"))},
        {"entries": lines(cli_json("-s", path, "log", "--json", "--role", "user", "-n", "2"))},
        json.loads(cli_json("-s", path, "context", "--json")),
        json.loads(cli_json("-s", path, "context", "--json", "@~5")),
        {"labels": lines(cli_json("-s", path, "label", "--json"))},
        {"rows": lines(cli_json("-s", path, "stats", "--json"))},
        {"rows": lines(cli_json("-s", path, "stats", "--json", "@~3"))},
    ]
    got, err = serve("-s", path, "serve", "--mcp", calls=call_all(requests))
    for (name, args), mine, cli in zip(requests, got, expected):
        assert mine == cli, (name, args)
    assert all(v["entries"] for v in expected[:6]) and expected[6]["rows"] and expected[13]["messages"]
    assert len(expected[11]["entries"]) == 4 and {e["role"] for e in expected[12]["entries"]} == {"user"}
    assert {e["active"] for e in expected[5]["entries"]} == {True, False}  # not vacuous
    assert "Traceback" not in err


def test_tree_pages_are_sent_once_and_add_up_to_the_cli_drawing(demo, monkeypatch):
    """A page of the tree tool is its JSON text alone, sent once: no structuredContent copy (a
    page is megabytes of records on a long session), and no outputSchema asking for one. Its
    pages, joined, are the records of the CLI's `log --graph --json`, row for row."""
    want = lines(cli_json("-s", demo, "log", "--graph", "--json", "--filter", "all"))
    monkeypatch.setenv("STREE_MCP_PAGE_BYTES", "3000")

    async def calls(client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        answers, cursor = [], None
        while True:
            r = await client.call_tool("tree", {"filter": "all", **({"cursor": cursor} if cursor else {})})
            answers.append(r)
            cursor = json.loads(r.content[0].text).get("nextCursor")
            if cursor is None:
                return listed["tree"], answers

    tool, answers = serve("-s", demo, "serve", "--mcp", calls=calls)[0]
    assert tool.output_schema is None
    assert all(not r.is_error and r.structured_content is None and len(r.content) == 1 for r in answers)
    pages = [json.loads(r.content[0].text) for r in answers]
    assert len(pages) > 3 and all(p["total"] == len(want) for p in pages)
    assert [row for page in pages for row in page["rows"]] == want
    assert all(len(r.content[0].text) < 2 * 3000 for r in answers[:-1])


def test_session_argument_picks_another_file(demo, branchy_file):
    got, _ = serve("-s", demo, "serve", "--mcp", calls=call_all([
        ("log", {"session": str(branchy_file), "max_count": 2}), ("labels", {"session": str(branchy_file)}),
        ("log", {"session": None, "max_count": 2, "search": None})]))  # null: as if not given
    assert got[0] == {"entries": lines(cli_json("-s", branchy_file, "log", "--json", "-n", "2"))}
    assert got[1] == {"labels": lines(cli_json("-s", branchy_file, "label", "--json"))}
    assert got[2] == {"entries": lines(cli_json("-s", demo, "log", "--json", "-n", "2"))}
    assert got[0] != got[2]


@pytest.fixture
def project(tmp_path, demo, branchy_file, monkeypatch):
    """A project directory with two sessions in pi's agent dir (the demo and branchy, forked in),
    and a session of another project."""
    work = tmp_path / "work"
    other = tmp_path / "other"
    work.mkdir()
    other.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    made = {}
    for name, source, cwd in (("demo", demo, work), ("branchy", branchy_file, work), ("elsewhere", branchy_file, other)):
        made[name] = cli_json("-s", source, "fork", "--full", "--cwd", cwd).splitlines()[0]
    return work, made


def test_list_sessions_gives_the_ls_records_and_filters_them(project):
    work, made = project
    with open(made["demo"]) as f:
        demo_id = json.loads(f.readline())["id"]
    mine_here = lines(cli_json("ls", "--json", cwd=work))
    mine_all = lines(cli_json("ls", "--all", "--json", cwd=work))
    assert len(mine_here) == 2 and len(mine_all) == 3
    first = next(r for r in mine_here if r["path"] == made["demo"])["firstMessage"]
    word = first.split()[1]  # a word of the demo's first message
    got, _ = serve("serve", "--mcp", cwd=work, calls=call_all([
        ("list_sessions", {}), ("list_sessions", {"all": True}), ("list_sessions", {"all": True, "limit": 1}),
        ("list_sessions", {"query": f"{word.upper()} {demo_id[:8]}"}), ("list_sessions", {"query": "no-such-words"})]))
    assert got[0] == {"sessions": mine_here}
    assert got[1] == {"sessions": mine_all}
    assert got[2] == {"sessions": mine_all[:1]}
    assert [s["path"] for s in got[3]["sessions"]] == [made["demo"]]
    assert got[4] == {"sessions": []}


def test_grep_gives_the_records_of_stree_grep_json(tmp_path, demo, branchy_file):
    """Sessions of pi, oh-my-pi and OpenClaw in the temporary HOME: the tool's results are the
    lines `stree grep --json` prints for the same question."""
    from builders import SessionBuilder

    home = Path(os.environ["HOME"])
    pi_dir = home / ".pi/agent/sessions/--home-dev-csvtool--"
    pi_dir.mkdir(parents=True)
    (pi_dir / "demo.jsonl").write_bytes(demo.read_bytes())
    (pi_dir / "branchy.jsonl").write_bytes(branchy_file.read_bytes())
    for agent, d in (("omp", ".omp/agent/sessions/--home-dev-other--"), ("openclaw", ".openclaw/agents/main/sessions")):
        b = SessionBuilder(cwd=f"/home/dev/{agent}", id=f"0199{agent[:4]}-0000-7000-8000-000000000001")
        b.user(f"{agent}: the CSV quoting bug again")
        b.assistant("a quote inside quotes is doubled")
        (home / d).mkdir(parents=True)
        b.write(home / d / f"{agent}.jsonl")
    questions = [
        ({"pattern": "quot"}, ["quot"]),
        ({"pattern": "CSV", "ignore_case": True, "word": True, "roles": ["user"]},
         ["-i", "-w", "--role", "user", "CSV"]),
        ({"pattern": r"parse_(line|rows)", "regex": True, "max_count": 4}, ["-E", "-m", "4", r"parse_(line|rows)"]),
        ({"pattern": "quote", "files_only": True}, ["-l", "quote"]),
        ({"pattern": "quote", "count": True, "agent": "omp"}, ["-c", "quote"]),
        ({"pattern": "quote", "cwd": "/home/dev/openclaw", "types": ["message"]},
         ["--cwd", "/home/dev/openclaw", "--type", "message", "quote"]),
        ({"pattern": "quote", "session": str(pi_dir / "demo.jsonl"), "since": "2026-11-20T09:20:00Z"},
         ["--since", "2026-11-20T09:20:00Z", "quote"]),
    ]
    expected = []
    for args, argv in questions:
        pre = ["--agent", args["agent"]] if "agent" in args else ["-s", args["session"]] if "session" in args else []
        expected.append({"results": lines(cli_json(*pre, "grep", "--json", *argv))})
    got, err = serve("-s", demo, "serve", "--mcp", calls=call_all([("grep", a) for a, _ in questions]))
    for (args, _), mine, cli in zip(questions, got, expected):
        assert mine == cli, args
        assert cli["results"], args  # not vacuous
    assert {r["agent"] for r in expected[0]["results"]} == {"pi", "omp", "openclaw"}

    async def bad(client):
        return [(await client.call_tool("grep", args)) for args in
                ({"pattern": "x", "roles": ["robot"]}, {"pattern": "(", "regex": True},
                 {"pattern": "x", "files_only": True, "count": True})]
    errors, _ = serve("-s", demo, "serve", "--mcp", calls=bad)
    assert all(r.is_error and r.structured_content["exitCode"] == 2 for r in errors), [r.content for r in errors]
    assert "'roles' holds 'robot'" in errors[0].content[0].text


# -- errors ------------------------------------------------------------------------


def test_errors_are_tool_errors_with_streess_message_and_the_server_goes_on(demo, tmp_path):
    bad_rev = run_stree("-s", demo, "show", "--json", "no-such-label")
    no_session = run_stree("-s", "ffffffff", "log", "--json")
    bad_range = run_stree("-s", demo, "log", "--json", "@~999")

    async def calls(client):
        out = {}
        for key, name, args in (("rev", "show", {"revisions": ["no-such-label"]}),
                                ("session", "log", {"session": "ffffffff"}),
                                ("range", "log", {"revision": "@~999"}),
                                ("type", "log", {"max_count": "three"}),
                                ("unknown-arg", "context", {"revison": "@"}),
                                ("write", "set_label", {"name": "x"}),
                                ("missing-file", "log", {"session": str(tmp_path / "gone.jsonl")}),
                                ("after", "labels", {})):
            r = await client.call_tool(name, args)
            out[key] = (r.is_error, r.content[0].text, r.structured_content)
        return out
    got, err = serve("-s", demo, "serve", "--mcp", calls=calls)
    for key, cli in (("rev", bad_rev), ("session", no_session), ("range", bad_range)):
        is_error, text, data = got[key]
        assert is_error and cli.code != 0
        assert text.splitlines()[0] == cli.err.splitlines()[0], key  # `stree: error: ...`, word for word
        assert data["exitCode"] == cli.code
    assert got["type"][0] and "max_count" in got["type"][1] and got["type"][2]["exitCode"] == 2
    assert got["unknown-arg"][0] and "revison" in got["unknown-arg"][1]
    assert got["write"][0] and "--allow-writes" in got["write"][1]
    assert got["missing-file"][0] and got["missing-file"][2]["exitCode"] == 3
    assert got["after"][0] is False and got["after"][2]["labels"]  # still serving
    assert "Traceback" not in err


# -- writes ------------------------------------------------------------------------


def test_writes_append_what_the_cli_would_and_pi_reads_them(demo):
    before = demo.read_bytes()
    target = cli_json("-s", demo, "rev-parse", "@~3").strip()
    user = json.loads(cli_json("-s", demo, "log", "--json", "--filter", "user-only", "-n", "1").splitlines()[0])

    async def calls(client):
        out = []
        for name, args in (("set_label", {"name": "mcp-mark", "revision": target}),
                           ("set_label", {"name": "mcp-mark", "revision": target}),  # again: nothing
                           ("set_name", {"name": "looked up by an agent"}),
                           ("checkout", {"revision": "mcp-mark"}),
                           ("checkout", {"revision": user["id"], "label": "resubmit-here"})):
            r = await client.call_tool(name, args)
            assert not r.is_error, r.content[0].text
            out.append(r.structured_content)
        return out
    (label, again, name, move, back), err = serve("-s", demo, "serve", "--mcp", "--allow-writes", calls=calls)
    assert demo.read_bytes().startswith(before)  # appended, nothing rewritten
    assert [e["type"] for e in label["written"]] == ["label"] and again["written"] == []
    assert "already labelled" in again["notes"][0]
    assert name == {"name": "looked up by an agent", "written": name["written"], "notes": []}
    assert move["newLeafId"] == target and move["editorText"] is None
    assert back["newLeafId"] == user["parentId"] and back["editorText"]
    assert [e["type"] for e in back["written"]] == ["custom", "label"]

    # stree and pi 1.5.2 agree on what was written
    assert cli_json("-s", demo, "rev-parse", "@").strip() == user["parentId"]
    assert cli_json("-s", demo, "name").strip() == "looked up by an agent"
    seen = pi("inspect", demo)
    assert seen["name"] == "looked up by an agent"
    assert seen["labels"][target] == "mcp-mark" and seen["labels"][user["id"]] == "resubmit-here"
    assert seen["leafId"] == back["written"][-1]["id"]
    at = user["parentId"]
    assert seen["context"] == pi("inspect", demo, "--context-at", at)["contexts"][at]
    assert run_stree("-s", demo, "fsck").code == 0
    assert "Traceback" not in err


def test_write_errors_leave_the_file_as_it_was(demo, tmp_path, monkeypatch):
    bundled = ROOT / "stree" / "data" / "demo.jsonl"
    hooks = tmp_path / "hooks"
    hooks.mkdir(mode=0o700)
    hook = hooks / "before-tree"
    hook.write_text("#!/bin/sh\ncat >/dev/null\necho '{\"cancel\": true}'\n")
    hook.chmod(0o700)
    monkeypatch.setenv("STREE_HOOKS_DIR", str(hooks))
    target = cli_json("-s", demo, "rev-parse", "@~2").strip()
    cli_json("-s", demo, "label", "taken", "@~4")
    before = demo.read_bytes()

    async def calls(client):
        out = []
        for name, args in (("set_label", {"name": "taken", "revision": target}),
                           ("set_label", {"name": "bad name"}),
                           ("checkout", {"revision": target}),
                           ("set_name", {"name": "x", "session": str(bundled)}),
                           ("checkout", {"revision": "@~1", "session": str(bundled)})):  # refused before the hook
            r = await client.call_tool(name, args)
            out.append((r.is_error, r.content[0].text, (r.structured_content or {}).get("exitCode")))
        return out
    got, err = serve("-s", demo, "serve", "--mcp", "--allow-writes", calls=calls)
    assert [(e, code) for e, _, code in got] == [(True, 6), (True, 2), (True, 6), (True, 6), (True, 6)], got
    assert "already exists" in got[0][1] and "cancelled by the before-tree hook" in got[2][1]
    assert "read-only" in got[3][1] and "read-only" in got[4][1]
    assert demo.read_bytes() == before
    assert bundled.read_bytes() == (ROOT / "stree" / "data" / "demo.jsonl").read_bytes()
    assert "Traceback" not in err


def test_what_a_hook_writes_to_the_servers_stdout_goes_to_stderr_not_to_the_client(demo, tmp_path):
    """While it serves, the server's fd 1 writes to stderr (fd 0 reads nothing): a hook, or any
    child, writing there puts no line on the wire the client reads (stree.mcp.stdio)."""
    from mcp_kit import McpServer

    hooks = tmp_path / "hooks"
    hooks.mkdir(mode=0o700)
    hook = hooks / "before-tree"  # (run by checkout, its parent the server)
    hook.write_text("#!/bin/sh\ncat >/dev/null\necho 'a stray line' > /proc/$PPID/fd/1\n")
    hook.chmod(0o700)
    target = cli_json("-s", demo, "rev-parse", "@~2").strip()
    m = McpServer("-s", demo, serve_args=("--allow-writes",), env={"STREE_HOOKS_DIR": str(hooks)})
    try:
        moved = m.call("checkout", revision=target)
        assert not moved.get("isError") and moved["structuredContent"]["newLeafId"] == target, moved
        assert m.ping()["result"] == {}  # (every line the client read was JSON-RPC)
        assert m.close() == 0
    finally:
        m.kill()
    assert "a stray line" in m.stderr()


def test_a_running_server_sees_what_others_append(demo):
    async def calls(client):
        before = (await client.call_tool("labels", {})).structured_content
        assert run_stree("-s", demo, "label", "from-outside", "@~1").code == 0  # another process appends
        after = (await client.call_tool("labels", {})).structured_content
        log = (await client.call_tool("log", {"max_count": 2})).structured_content
        return before, after, log
    (before, after, log), _ = serve("-s", demo, "serve", "--mcp", calls=calls)
    assert "from-outside" not in [entry["label"] for entry in before["labels"]]
    assert after == {"labels": lines(cli_json("-s", demo, "label", "--json"))}
    assert "from-outside" in [entry["label"] for entry in after["labels"]]
    assert log == {"entries": lines(cli_json("-s", demo, "log", "--json", "-n", "2"))}


def test_ctrl_c_stops_the_server_with_130(demo):
    import signal

    from conftest import interruptible

    proc = subprocess.Popen([sys.executable, "-m", "stree", "-s", demo, "serve", "--mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=interruptible)
    proc.stdin.write((json.dumps(HELLO) + "\n").encode())
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1  # serving, and waiting for the next request
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and out == b""
    assert b"stree: interrupted" in err and b"Traceback" not in err


def test_eof_ends_the_server_quietly(demo):
    r = subprocess.run([sys.executable, "-m", "stree", "-s", demo, "serve", "--mcp"], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "" and "Traceback" not in r.stderr


def test_a_garbled_line_gets_an_answer_and_the_server_goes_on(demo):
    proc = subprocess.Popen([sys.executable, "-m", "stree", "-s", demo, "serve", "--mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.stdin.write("{not json\n" + json.dumps(HELLO) + "\n")
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline())]
        while answers[-1].get("id") != 1:
            answers.append(json.loads(proc.stdout.readline()))
        assert answers[-1]["result"]["serverInfo"]["name"] == "stree"
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                     "params": {"name": "log", "arguments": {"max_count": 1}}}) + "\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        assert answer["id"] == 2
        assert answer["result"]["structuredContent"] == {"entries": lines(cli_json("-s", demo, "log", "--json", "-n", "1"))}
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        proc.stdout.close()
        proc.stderr.close()


def test_a_client_that_stops_reading_ends_the_server_quietly(demo):
    """A client gone (its end of the server's stdout closed) hears nothing more: the answer the
    server was writing is dropped and the server ends, as at the end of its input."""
    proc = subprocess.Popen([sys.executable, "-m", "stree", "-s", demo, "serve", "--mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write((json.dumps(HELLO) + "\n").encode())
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    proc.stdout.close()
    proc.stdin.write((json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
                      + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                    "params": {"name": "tree", "arguments": {}}}) + "\n").encode())
    proc.stdin.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0 and err == b"", err
