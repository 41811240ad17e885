"""A corpus of session files that the real pi can load, covering every entry kind stree reads."""

import json
import shutil
from pathlib import Path

from builders import SessionBuilder, branchy, dumps

from stree.core.store import demo_path


def kitchen_sink(home):
    b = SessionBuilder(cwd=str(home / "proj"))
    b.thinking("medium")
    u1 = b.user("Look around the repo — café ☕ and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 please")
    b.assistant(None, tools=[("read", {"path": str(home / "proj/src/app.py"), "offset": 10, "limit": 20}),
                             ("find", {"pattern": "*.py"}),
                             ("ls", {}),
                             ("grep", {"pattern": "TODO"}),
                             ("mcp_search", {"query": "a long query string that goes past forty chars", "n": 3})],
                thinking="Let me explore.")
    calls = b.entries[-1]["message"]["content"][1:]
    for call in calls:
        b.tool_result(call["id"], call["name"], f"result of {call['name']}")
    b.assistant("Here is what I found.\n\tTabs and\nnewlines.")
    b.append("message", message={"role": "bashExecution", "command": "git status\n--short", "output": "M a.py",
                                 "exitCode": 0, "cancelled": False, "truncated": False, "timestamp": 1})
    b.append("message", message={"role": "bashExecution", "command": "secret", "output": "x", "exitCode": 1,
                                 "cancelled": False, "truncated": False, "excludeFromContext": True,
                                 "timestamp": 2})
    b.custom_message("note", [{"type": "text", "text": "remember "}, {"type": "text", "text": "this"}])
    b.custom("some-ext", {"k": 1})
    b.user("see")
    b.entries[-1]["message"]["content"] = [{"type": "text", "text": "see "},
                                           {"type": "image", "data": "aGk=", "mimeType": "image/png"}]
    b.assistant(None, stop="aborted")
    b.user("retry")
    b.assistant(None, stop="error")
    b.entries[-1]["message"]["errorMessage"] = "529 overloaded\nplease retry"
    b.assistant(None, stop="error")
    b.assistant(None, tools=[("bash", {"command": "x" * 60 + "\n" + "y"})])
    b.tool_result(b.entries[-1]["message"]["content"][-1]["id"], "bash", "ok")
    b.tool_result("no-such-call", "mystery", "orphan result")
    b.assistant(None, tools=[("write", {"path": "/etc/motd", "content": "hi"}),
                             ("edit", {"file_path": str(home / "x.py"), "oldText": "a", "newText": "b"})])
    b.label(u1, "first")
    b.label(b.entries[-2]["id"], "tool-only")  # a label on a hidden entry
    b.label(b.entries[-1]["id"], "label-on-label")
    b.label("deadbeef", "dangling")
    b.name("  kitchen sink  ")
    b.append("session_info", name="")
    b.append("branch_summary", fromId="x", summary="")  # oh-my-pi's empty leaf marker
    b.model_change("openai", "gpt-5")
    b.assistant(None, tools=[("read", {"path": "a.py"})], model="gpt-5", provider="openai")  # tool-only leaf
    return b


def many_roots():
    b = SessionBuilder()
    b.user("first root")
    b.assistant("answer")
    b.at(None)
    b.user("second root")
    b.append("message", parent="missing0", message={"role": "user", "content": "orphan", "timestamp": 3})
    b.assistant("orphan answer")
    b.at(None)
    second = b.user("third root, same timestamp")
    b.entries[-1]["timestamp"] = b.entries[0]["timestamp"]
    b.assistant("x")
    b.at(second)
    b.assistant("sibling with the same time")
    b.entries[-1]["timestamp"] = b.entries[-2]["timestamp"]
    return b


def compactions():
    b = SessionBuilder()
    u1 = b.user("one")
    b.assistant("a1")
    u2 = b.user("two")
    b.assistant("a2")
    b.compaction("first summary", u2, tokens=1499)
    b.user("three")
    b.assistant("a3")
    b.compaction("second summary", u1, tokens=1500)  # firstKept not after the previous compaction
    b.user("four")
    b.at(u2)
    b.compaction("kept id not on path", "zzzzzzzz", tokens=2500)
    b.user("five")
    b.branch_summary("summary at the root", from_id=None)
    b.user("six")
    return b


def v1_file():
    header = {"type": "session", "id": "v1-sess", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/p"}
    rows = [header]
    for i in range(6):
        rows.append({"type": "message", "timestamp": f"2025-01-01T00:00:0{i + 1}.000Z",
                     "message": {"role": "user" if i % 2 == 0 else "assistant",
                                 "content": f"m{i}" if i % 2 == 0 else [{"type": "text", "text": f"m{i}"}],
                                 "provider": "p", "model": "m", "stopReason": "stop", "timestamp": i}})
    rows.append({"type": "compaction", "timestamp": "2025-01-01T00:00:07.000Z", "summary": "s",
                 "firstKeptEntryIndex": 3, "tokensBefore": 9000})
    rows.append({"type": "message", "timestamp": "2025-01-01T00:00:08.000Z",
                 "message": {"role": "hookMessage", "customType": "h", "content": "hooked", "display": True,
                             "timestamp": 8}})
    return "\n".join(dumps(r) for r in rows) + "\n"


def v2_file():
    b = SessionBuilder(version=2)
    b.user("v2 file")
    b.append("message", message={"role": "hookMessage", "customType": "h", "content": "hook", "display": True,
                                 "timestamp": 1})
    b.assistant("done")
    return b


def malformed():
    b = SessionBuilder()
    b.user("before garbage")
    b.assistant("fine")
    lines = b.lines()
    lines.insert(2, "{garbage")
    lines.append("")
    lines.append(dumps({"type": "message", "id": "feedbeef", "parentId": b.leaf, "timestamp": b._iso(b.ms + 5000),
                        "message": {"role": "user", "content": "after garbage", "timestamp": 9}}))
    return "\n".join(lines) + "\n{\"type\":\"message\",\"id\":\"torn"


def deep(n=3000):
    b = SessionBuilder()
    for i in range(n // 2):
        b.user(f"question {i}")
        b.assistant(f"answer {i}")
    return b


def build(directory, home):
    """Write the corpus into `directory`; return {name: path}."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    out = {}
    demo = directory / "demo.jsonl"
    shutil.copyfile(demo_path(), demo)
    out["demo"] = demo
    for name, builder in (("branchy", branchy()), ("kitchen", kitchen_sink(home)), ("roots", many_roots()),
                          ("compactions", compactions()), ("v2", v2_file()), ("deep", deep())):
        out[name] = builder.write(directory / f"{name}.jsonl")
    for name, text in (("v1", v1_file()), ("malformed", malformed())):
        p = directory / f"{name}.jsonl"
        p.write_text(text, encoding="utf-8")
        out[name] = p
    return out


def read_json(text):
    return json.loads(text)
