"""A new pi fork is one record (stree.format.agents): two made-up forks are added to the
registry in the stree process itself, before it starts, and every front door finds their
sessions: discovery, `ls` (this project's and --all), `-s ID`, `--agent`, its completion,
grep, the headerless rule and the kept copies' states. Real files in a temporary HOME.

The agent records are read by every front door, not one command: so one module."""

import json
import os
import subprocess
import sys

import pytest

from builders import SessionBuilder, dumps
from conftest import Result

# `stree` with two more records in its registry: "kit" keeps one directory per project under
# ~/.kit/agent/sessions (or $KIT_HOME), "den" one flat directory per box under
# ~/.den/boxes/<box>/sessions, with files without a header and archived copies
LAUNCH = """
import sys
from stree.format import agents
agents.AGENTS += (
    agents.Agent("kit", "pi-kit", (".kit/agent",), env=("KIT_HOME",)),
    agents.Agent("den", "Den", (".den",), sessions="boxes/*/sessions", per_project=False,
                 headerless=True, states=("archived",)),
)
sys.argv[0] = "stree"
from stree.entrypoint import main
main()
"""

KIT_ID = "0199eeee-0000-7000-8000-000000000001"
DEN_ID = "0199ffff-0000-7000-8000-000000000001"
ARCHIVED_ID = "0199ffff-0000-7000-8000-000000000002"
HEADERLESS_ID = "0199ffff-0000-7000-8000-000000000003"


def with_forks(*args, cwd=None, env=None):
    proc = subprocess.run([sys.executable, "-c", LAUNCH, *map(str, args)], capture_output=True, cwd=cwd,
                          env={**os.environ, **(env or {})}, timeout=60)
    return Result(proc)


def session(id, text, cwd):
    b = SessionBuilder(cwd=str(cwd), id=id, start_ms=1_795_000_000_000)
    b.user(f"{text} question")
    b.assistant(f"{text} answer")
    return b


def encode(cwd):  # pi's directory name for a project (--home-dev-app--)
    return "--" + str(cwd).strip("/").replace("/", "-") + "--"


@pytest.fixture
def forks(isolated_home, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    kit = isolated_home / ".kit/agent/sessions" / encode(project)
    kit.mkdir(parents=True)
    den = isolated_home / ".den/boxes/main/sessions"
    den.mkdir(parents=True)
    out = {"project": project,
           "kit": session(KIT_ID, "kit live", project).write(kit / "k.jsonl"),
           "den": session(DEN_ID, "den live", project).write(den / f"{DEN_ID}.jsonl"),
           "archived": session(ARCHIVED_ID, "den old", project).write(
               den / f"{ARCHIVED_ID}.jsonl.archived.2026-01-02T03-04-05Z"),
           "headerless": den / f"{HEADERLESS_ID}.jsonl"}
    entries = session("ignored", "den headerless", project).entries
    out["headerless"].write_text("\n".join(dumps(e) for e in entries) + "\n")
    return out


def records(result):
    assert result.code == 0 and "Traceback" not in result.err, result
    return [json.loads(line) for line in result.out.splitlines()]


def test_a_fourth_fork_is_one_record_that_every_door_reads(forks, stree):
    listed = {r["path"]: r for r in records(with_forks("ls", "--all", "--json"))}
    kit, den, archived, headerless = (str(forks[k]) for k in ("kit", "den", "archived", "headerless"))
    assert listed[kit]["agent"] == "kit" and listed[kit]["state"] == "live"
    assert listed[den]["agent"] == "den" and listed[archived]["state"] == "archived"
    assert listed[headerless]["agent"] == "den" and listed[headerless]["id"] == HEADERLESS_ID
    # without the records these are nobody's sessions: the records did it
    assert not {kit, den, archived, headerless} & {r["path"] for r in records(stree("ls", "--all", "--json"))}

    # this project's sessions (kit keeps one directory per project), and --agent narrows
    here = records(with_forks("ls", "--json", cwd=forks["project"]))
    assert kit in {r["path"] for r in here} and den not in {r["path"] for r in here}
    assert {r["agent"] for r in records(with_forks("--agent", "kit", "ls", "--all", "--json"))} == {"kit"}
    assert len(records(with_forks("--agent", "den", "ls", "--all", "--json"))) == 3
    assert stree("--agent", "kit", "ls").code == 2  # not a choice without its record

    # -s ID, through the fast path and through click
    for argv in (("-s", KIT_ID[:13], "log", "--json"), ("-s", KIT_ID[:13], "show", "--json", "@")):
        log = with_forks(*argv)
        assert log.code == 0 and "kit live answer" in log.out, log
    assert stree("-s", KIT_ID[:13], "log").code != 0

    # completion offers the agent and its sessions
    offered = with_forks("__complete", "bash", "", "--", "--agent", "")
    assert {"kit", "den"} <= {line.split("\t")[1] for line in offered.out.splitlines()[1:]}
    ids = with_forks("__complete", "bash", "", "--", "-s", "", cwd=forks["project"])
    assert KIT_ID in ids.out and DEN_ID in ids.out

    # grep searches its sessions and says whose they are
    found = records(with_forks("grep", "--json", "live answer"))
    assert {(r["path"], r["agent"]) for r in found} == {(kit, "kit"), (den, "den")}

    # its environment variable moves its home
    moved = forks["project"].parent / "kit-home"
    (moved / "sessions" / "p").mkdir(parents=True)
    forks["kit"].rename(moved / "sessions" / "p" / "k.jsonl")
    listed = records(with_forks("--agent", "kit", "ls", "--all", "--json", env={"KIT_HOME": str(moved)}))
    assert [r["path"] for r in listed] == [str(moved / "sessions" / "p" / "k.jsonl")]


def test_a_file_without_header_is_read_only_where_its_record_allows_it(forks, stree, tmp_path):
    headerless = forks["headerless"]
    read = with_forks("-s", headerless, "log", "--json")
    assert read.code == 0 and "no session header" in read.err, read
    assert len(records(read)) == 2
    before = headerless.read_bytes()
    label = with_forks("-s", headerless, "label", "x", "@")
    assert label.code == 6 and "read-only" in label.err and headerless.read_bytes() == before, label
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_bytes(headerless.read_bytes())
    assert with_forks("-s", elsewhere, "log").code == 4  # refused, as pi refuses it


def test_serve_and_mcp_take_the_fork_as_an_agent(forks):
    """serve's `grep` and MCP's (its `agent` enum listed by tools/list) read the records too."""
    from mcp_kit import McpServer
    from serve_kit import Server

    kit = str(forks["kit"])
    served = Server(forks["kit"], launch=("-c", LAUNCH))
    try:
        found = served.data("grep", pattern="live answer", agent="kit")["records"]
        assert [(r["path"], r["agent"]) for r in found] == [(kit, "kit")]
        assert served.request("grep", pattern="x", agent="nobody")["success"] is False
    finally:
        assert served.close() == 0

    mcp = McpServer("-s", forks["kit"], launch=("-c", LAUNCH))
    try:
        mcp.n += 1
        mcp.send({"jsonrpc": "2.0", "id": mcp.n, "method": "tools/list"})
        tools = {t["name"]: t for t in mcp.wait(mcp.n)["result"]["tools"]}
        agent = tools["grep"]["inputSchema"]["properties"]["agent"]
        assert {"kit", "den"} <= set(agent["enum"]) and "kit (pi-kit)" in agent["description"]
        result = mcp.call("grep", pattern="live answer", agent="den")
        assert [r["agent"] for r in result["structuredContent"]["results"]] == ["den"], result
    finally:
        assert mcp.close() == 0


def test_the_help_names_the_forks_their_homes_and_their_states(forks):
    """`--agent`'s help and the `agent` / `state` fields read the records."""
    top = with_forks("--help").out
    assert "kit (pi-kit, ~/.kit/agent)" in " ".join(top.split())
    fields = " ".join(with_forks("ls", "--help").out.split())
    assert "kit (pi-kit) or den" in fields and "archived for Den's kept copies" in fields


# only pi's record: no agent writes a title slot, so line 1 must be the header (as pi reads it)
PI_ONLY = LAUNCH.replace("agents.AGENTS += (", "agents.AGENTS = agents.AGENTS[:1] + (")


def test_a_title_slot_is_read_while_a_record_says_an_agent_writes_one(forks, stree, tmp_path):
    slotted, copy = tmp_path / "slotted.jsonl", tmp_path / "copy.jsonl"  # (each file's index: its first reader's)
    for path in (slotted, copy):
        path.write_text(dumps({"type": "title", "title": "named in the slot"}) + "\n" + forks["kit"].read_text())
    assert "kit live answer" in stree("-s", slotted, "log").out  # oh-my-pi's record has a title slot
    proc = subprocess.run([sys.executable, "-c", PI_ONLY, "-s", str(copy), "log"], capture_output=True,
                          env=dict(os.environ), timeout=60)
    assert proc.returncode == 4 and b"not a session header" in proc.stderr, proc
