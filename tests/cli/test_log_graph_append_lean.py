"""`log --graph` into a pipe after entries were appended, answered before click loads
(stree.entrypoint, stree.output.keptgraph.patch): what it imports and what it reads, counted,
and what it prints, byte for byte a full drawing (`--no-cache`) whatever the append was: under
the leaf, a new branch in the middle of the drawing, a label, a torn last line. (Issue 28: a
patched graph costs what the change costs, not what the session and stree's startup cost.)"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from builders import branchy, dumps
from clock import past_the_tick
from inprocess import SCRIPT

ROOT = Path(__file__).resolve().parents[2]
# what a patch after an append has no use for: click and the commands, Output (stree.output.modes),
# the json package and re (lines decoded by the C scanner: stree.format.decode.make_scanner), the
# weakref module (_weakref's ref is all stree.storage needs), binascii (zlib's CRC is the same), the
# collections package (array's, which stree.format.stdlib gives it without) and functools; the process
# started as the `stree` script starts it (inprocess.SCRIPT)
NOT_IMPORTED = ("click", "rich", "httpx", "stree.cli", "stree.commands", "stree.output.modes", "json", "re",
                "weakref", "binascii", "collections", "functools")


def stats(err):
    """{what: number} of the STREE_DEBUG_STATS line, and how the graph was written."""
    line = next(x for x in err.splitlines() if x.startswith("stree: stats:"))
    found = {name: int(n) for n, name in re.findall(r"(\d+) (lines|entries)\b", line)}
    found["values"] = int(re.search(r"index values (\d+)", line).group(1))
    m = re.search(r"graph rows drawn (\d+), kept (\d+) \(([\w ]+)\)", line)
    if m:
        found.update(drawn=int(m.group(1)), kept=int(m.group(2)), how=m.group(3))
    return found


def append_user(path, text):
    """One user message under the last entry, as pi appends it."""
    last = json.loads(path.read_bytes().splitlines()[-1])
    with open(path, "a", encoding="utf-8") as f:
        f.write(dumps({"type": "message", "id": f"{abs(hash(text)) % 16**8:08x}", "parentId": last["id"],
                       "timestamp": "2030-01-01T00:00:00.000Z",
                       "message": {"role": "user", "content": [{"type": "text", "text": text}],
                                   "timestamp": 1893456000000}}) + "\n")
    past_the_tick(path)


def test_one_append_is_patched_without_click_or_json_and_reads_only_the_new_line(stree, tmp_path, isolated_home):
    path = tmp_path / "big.jsonl"
    subprocess.run([sys.executable, str(ROOT / "tools" / "bench" / "gen.py"), "2000", str(path)], check=True)
    past_the_tick(path)
    first = stree("-s", path, "log", "--graph", env={"STREE_DEBUG_STATS": "1"})
    assert first.code == 0 and stats(first.err)["drawn"] > 1000
    for n in range(3):
        append_user(path, f"and now the tests, please ({n})")
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c", SCRIPT, "-s", str(path), "log", "--graph"],
                              capture_output=True, env=dict(__import__("os").environ, STREE_DEBUG_STATS="1"))
        err = proc.stderr.decode()
        assert proc.returncode == 0, err
        assert proc.stdout == stree("-s", path, "log", "--graph", "--no-cache").raw
        imported = {line.split("|")[-1].strip() for line in err.splitlines() if line.startswith("import time:")}
        assert "stree.output.keptgraph.patch" in imported, "not patched on the path before click"
        loaded = sorted(name for name in imported if name in NOT_IMPORTED or name.startswith("stree.commands."))
        assert not loaded, f"imported by a patched log --graph: {loaded}"
        got = stats(err)
        # the lines appended since the index was written alone parsed (it is rewritten after 16);
        # the new row and the row that lost the leaf mark alone drawn, their entries alone decoded
        assert got["how"] in ("appended", "laid out") and got["drawn"] <= 2 and got["kept"] > 1000, err
        assert got["lines"] == n + 1 and got["entries"] <= 2, err


def append_message(path, message):
    """One message under the last entry, as pi appends it; its id."""
    last = json.loads(path.read_bytes().splitlines()[-1])
    entry_id = f"{abs(hash(json.dumps(message))) % 16**8:08x}"
    with open(path, "a", encoding="utf-8") as f:
        f.write(dumps({"type": "message", "id": entry_id, "parentId": last["id"],
                       "timestamp": "2030-01-01T00:00:00.000Z", "message": message}) + "\n")
    past_the_tick(path)
    return entry_id


def a_call(call_id):
    return {"role": "assistant", "content": [{"type": "toolCall", "id": call_id, "name": "read",
                                              "arguments": {"path": "src/app.py"}}],
            "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15},
            "stopReason": "toolUse", "timestamp": 1893456000000}


def its_result(call_id):
    return {"role": "toolResult", "toolCallId": call_id, "toolName": "read",
            "content": [{"type": "text", "text": "the file"}], "isError": False, "timestamp": 1893456001000}


def test_an_appended_tool_call_reads_no_column_of_the_rows_before(stree, tmp_path, isolated_home):
    """Whether an appended call id was given before (the tool results naming it would change) is
    answered from the index's bytes: not a value of the rows before it decoded."""
    path = tmp_path / "big.jsonl"
    subprocess.run([sys.executable, str(ROOT / "tools" / "bench" / "gen.py"), "2000", str(path)], check=True)
    past_the_tick(path)
    assert stree("-s", path, "log", "--graph").code == 0
    for message in (a_call("call_appended_1"), its_result("call_appended_1")):
        append_message(path, message)
        got = stree("-s", path, "log", "--graph", env={"STREE_DEBUG_STATS": "1"})
        assert got.code == 0 and got.raw == stree("-s", path, "log", "--graph", "--no-cache").raw, got.err
        found = stats(got.err)
        assert found["how"] in ("appended", "laid out") and found["drawn"] <= 2 and found["values"] == 0, got.err


def test_a_call_id_given_again_is_still_drawn_as_a_full_drawing(stree, tmp_path, isolated_home):
    path = tmp_path / "big.jsonl"
    subprocess.run([sys.executable, str(ROOT / "tools" / "bench" / "gen.py"), "2000", str(path)], check=True)
    past_the_tick(path)
    given = [part["id"] for line in path.read_bytes().splitlines() for entry in [json.loads(line)]
             if entry.get("type") == "message" and entry["message"].get("role") == "assistant"
             for part in entry["message"]["content"] if isinstance(part, dict) and part.get("type") == "toolCall"]
    assert given, "the generated session has tool calls"
    assert stree("-s", path, "log", "--graph").code == 0
    append_message(path, a_call(given[len(given) // 2]))
    got = stree("-s", path, "log", "--graph", env={"STREE_DEBUG_STATS": "1"})
    assert got.code == 0 and got.raw == stree("-s", path, "log", "--graph", "--no-cache").raw, got.err
    assert stats(got.err)["values"] > 0, got.err  # (the rows before were read: the id is there)


OPTIONS = (
    ("--graph",),
    ("--graph", "--no-ids"),
    ("--graph", "-z"),
    ("--graph", "--filter", "all"),
    ("--graph", "--json"),
)


def graph(stree, path, options, *extra):
    return stree(*extra, "-s", path, "log", *options, env={"STREE_DEBUG_STATS": "1"})


def same_as_a_full_drawing(stree, path, options, step):
    got = graph(stree, path, options)
    full = graph(stree, path, options, "--no-cache")
    assert got.code == full.code == 0, (step, got.err)
    assert got.raw == full.raw, (step, got.err)
    return stats(got.err).get("how")


@pytest.mark.parametrize("options", OPTIONS, ids=" ".join)
def test_every_kind_of_append_prints_what_a_full_drawing_prints(stree, tmp_path, isolated_home, options):
    b = branchy()
    path = b.write(tmp_path / "s.jsonl")
    past_the_tick(path)
    assert graph(stree, path, options).code == 0  # (kept: what the patches start from)
    hows = {}

    def append(step, *entries_of):
        before = len(b.entries)
        for make in entries_of:
            make()
        with open(path, "a", encoding="utf-8") as f:
            f.write("".join(dumps(e) + "\n" for e in b.entries[before:]))
        past_the_tick(path)
        hows[step] = same_as_a_full_drawing(stree, path, options, step)

    append("user at the end", lambda: b.user("at the end"))
    append("assistant at the end", lambda: b.assistant("an answer"))
    append("tool call and result", lambda: b.tool_round("read", {"path": "src/x.py"}, "the file"))
    append("tool call as the leaf", lambda: b.assistant(None, tools=[("grep", {"pattern": "x"})]))
    append("result under it", lambda: b.tool_result(b.entries[-1]["message"]["content"][-1]["id"], "grep", "found"))
    middle = [e for e in b.entries if e["type"] == "message"][3]["id"]
    append("a branch in the middle", lambda: b.at(middle), lambda: b.user("a new branch"))
    append("user on the branch", lambda: b.user("more on the branch"))
    append("a label on an older entry", lambda: b.label(b.entries[2]["id"], "checkpoint"))
    append("user after the label", lambda: b.user("after the label"))
    # a torn last line: printed as the full drawing prints it, then completed
    before = len(b.entries)
    b.user("written in two halves")
    line = dumps(b.entries[before]) + "\n"
    with open(path, "a", encoding="utf-8") as f:
        f.write(line[:len(line) // 2])
    past_the_tick(path)
    hows["torn"] = same_as_a_full_drawing(stree, path, options, "torn")
    with open(path, "a", encoding="utf-8") as f:
        f.write(line[len(line) // 2:])
    past_the_tick(path)
    hows["completed"] = same_as_a_full_drawing(stree, path, options, "completed")
    # the appends under the leaf were patched, not drawn whole (what the equality is about)
    assert hows["user at the end"] == "appended" and hows["user on the branch"] == "appended", hows
    assert hows["a branch in the middle"] in ("laid out", "drawn"), hows
