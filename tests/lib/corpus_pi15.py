"""Session files as pi 1.5 and later write them, built by pi's own writers (the reference's, 1.6.0).

Each builder is a list of steps: a list of SessionManager calls ([method, *args], run by
the harness's `write` subcommand, {"$ref": i} = the id call i returned) or a raw line
(a dict), appended the way a port or an older pi writes entries pi's writer never
makes (a string replacing an assistant message, null content, a `leaf` entry). A raw
line's parentId is the leaf so far unless it names one; later calls continue from it.
"""

import json

from pi_harness import REFERENCE, pi_write

CLOCK = 1_800_000_000_000
USAGE = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


class Steps:
    def __init__(self):
        self.steps = []
        self.ms = CLOCK

    def tick(self):
        self.ms += 1000
        return self.ms

    def call(self, method, *args):
        """Queue a SessionManager call; returns a reference to the id it will return."""
        if not self.steps or not isinstance(self.steps[-1], list):
            self.steps.append([])
        ops = self.steps[-1]
        ops.append([method, *args])
        return Ref(len(self.steps) - 1, len(ops) - 1)

    def raw(self, entry):
        self.steps.append(dict(entry))
        return entry["id"]

    # messages as pi's agent makes them
    def user(self, text):
        return self.call("appendMessage", {"role": "user", "content": text, "timestamp": self.tick()})

    def assistant(self, content, **extra):
        msg = {"role": "assistant", "content": content, "api": "openai-completions", "provider": "openai",
               "model": "gpt-5", "usage": USAGE, "stopReason": "stop", "timestamp": self.tick()}
        msg.update(extra)
        return self.call("appendMessage", msg)

    def text(self, text):
        return self.assistant([{"type": "text", "text": text}])

    def tool(self, call_id, name, args, result="ok"):
        self.assistant([{"type": "toolCall", "id": call_id, "name": name, "arguments": args}], stopReason="toolUse")
        return self.call("appendMessage", {"role": "toolResult", "toolCallId": call_id, "toolName": name,
                                           "content": [{"type": "text", "text": result}], "isError": False,
                                           "timestamp": self.tick()})

    def system(self, content, **extra):
        msg = {"role": "system", "content": content, "timestamp": self.tick()}
        msg.update(extra)
        return self.call("appendMessage", msg)


class Ref:
    """The id a queued call returns: {"$ref": i} within its own batch, the id itself later."""

    def __init__(self, batch, index):
        self.batch = batch
        self.index = index


def tool_decl(name):
    return {"name": name, "description": f"the {name} tool", "parameters": {"type": "object", "properties": {}}}


def context_edits(home):
    b = Steps()
    u1 = b.user("hello, first question")
    a1 = b.assistant([{"type": "text", "text": "first answer"},
                      {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": f"{home}/proj/a.py"}}],
                     stopReason="toolUse")
    t1 = b.call("appendMessage", {"role": "toolResult", "toolCallId": "c1", "toolName": "read",
                                  "content": [{"type": "text", "text": "contents of a.py"}], "isError": False,
                                  "timestamp": b.tick()})
    a2 = b.text("second answer")
    n1 = b.call("appendCustomMessageEntry", "note", "a note for the model", True)
    b.call("appendContextEdit", u1, {"content": "hello, edited once"})
    b.call("appendContextEdit", u1, {"content": [{"type": "text", "text": "hello, edited twice"}]})  # latest wins
    b.call("appendContextEdit", t1, None)  # omit the tool result
    b.call("appendContextEdit", a2, {"content": "replaced answer"})  # pi's writer makes it a text block
    b.call("appendContextEdit", n1, {"content": "an edited note"})
    b.user("after the edits")
    b.text("ok")
    # a string replacement for an assistant message, as a port writes it: one text block in context
    b.raw({"type": "context_edit", "id": "e0000001", "targetId": a1, "replacement": {"content": "raw string"}})
    b.call("branch", u1)  # an edit on another branch does not apply here
    b.call("appendContextEdit", u1, None)
    b.user("on the other branch")
    b.call("branch", a2)
    b.user("back on the first branch")
    return b


def edits_and_compaction(home):
    b = Steps()
    u1 = b.user("old question")
    b.text("old answer")
    u2 = b.user("kept question")
    a2 = b.text("kept answer")
    b.call("appendContextEdit", u1, {"content": "edit of a summarised entry"})
    keep = b.user("first kept")
    b.call("appendContextEdit", u2, {"content": "an edit made before the kept range"})
    b.call("appendContextEdit", keep, {"content": "an edit inside the kept range"})
    b.text("answer")
    b.call("appendCompaction", "summary of the old part", keep, 12345)
    b.call("appendContextEdit", keep, {"content": "an edit after the compaction wins"})
    b.call("appendContextEdit", a2, None)  # its target was summarised away: nothing to omit
    b.call("appendContextEdit", keep, {"content": "the last of several edits"})
    b.user("after compaction")
    return b


def system_messages(home):
    b = Steps()
    b.system("You are pi, version one.", toolsAdded=[tool_decl("read"), tool_decl("bash")],
             sections={"cwd": "Working directory: /proj", "date": "Today is Monday."})
    b.call("appendModelChange", "openai", "gpt-5")
    b.call("appendThinkingLevelChange", "high")
    u1 = b.user("hello with a system prompt")
    b.text("hi")
    b.system("", sections={"date": "Today is Tuesday.", "cwd": None},  # a section patch, as pi sends it
             toolsAdded=[tool_decl("edit")], toolsRemoved=[{"name": "bash"}])
    u2 = b.user("second question")
    b.text("second answer")
    b.call("appendCompaction", "summary with a system message", u1, 5000)  # pi stores the current system message
    b.user("after the first compaction")
    b.text("fine")
    b.call("appendCompaction", "a compaction that keeps nothing", None, 7000)  # firstKeptEntryId: its own id
    b.user("after keeping nothing")
    b.call("branch", u2)
    b.call("appendCompaction", "kept range holds a system message", u1, 6000)
    b.user("on a branch")
    return b


def null_content(home):
    b = Steps()
    b.call("appendMessage", {"role": "user", "content": None, "timestamp": b.tick()})
    b.call("appendMessage", {"role": "assistant", "provider": "openai", "model": "gpt-5", "usage": USAGE,
                             "stopReason": "stop", "timestamp": b.tick()})
    b.call("appendMessage", {"role": "toolResult", "toolCallId": "c9", "toolName": "bash", "content": None,
                             "isError": False, "timestamp": b.tick()})
    b.call("appendMessage", {"role": "system", "content": None, "timestamp": b.tick()})
    b.call("appendCustomMessageEntry", "nothing", None, True)
    b.raw({"type": "custom_message", "id": "c0000001", "customType": "no-content", "display": True})
    b.user("and a real question")
    return b


def usage_entries(home):
    b = Steps()
    u1 = b.user("hello usage")
    warm = b.call("appendUsage", "cache_warm", "openai", "gpt-5", USAGE, "warming")
    b.call("appendLabelChange", warm, "on-usage")
    b.call("appendLabelChange", u1, "first")
    b.text("answer")
    b.call("appendUsage", "cache_warm", "openai", "gpt-5", USAGE)  # the leaf: pi's /tree still hides it
    return b


READS = [
    {"offset": 10, "limit": 20}, {"offset": None, "limit": None}, {"offset": "5", "limit": "3"},
    {"offset": " 7 ", "limit": None}, {"offset": "abc", "limit": 5}, {"offset": 4, "limit": "x"},
    {"offset": None, "limit": 30}, {"offset": 1.5, "limit": 2}, {"offset": "0x10", "limit": "1e2"},
    {"offset": 1, "limit": 0}, {"offset": True, "limit": 2}, {"offset": "", "limit": 2},
    {"offset": -3, "limit": 1}, {"offset": "Infinity", "limit": 1}, {"offset": 2},
]


def read_ranges(home):
    b = Steps()
    b.user("read these")
    for i, args in enumerate(READS):
        key = "file_path" if i == len(READS) - 1 else "path"
        b.tool(f"r{i}", "read", {key: f"{home}/proj/f{i}.py", **args})
    b.text("done reading")
    return b


def home_paths(home):
    b = Steps()
    b.user("paths")
    paths = [home, f"{home}/", f"{home}/proj/../notes.md", f"{home}//a/./b.py", f"{home}2/x.py", f"{home}x",
             "proj/rel.py", "/etc/hosts", f"/{home}/deep.py"]
    for i, p in enumerate(paths):
        name = ("read", "write", "edit", "ls", "grep", "find")[i % 6]
        b.tool(f"h{i}", name, {"pattern": "TODO", "path": p} if name in ("grep", "find") else {"path": p})
    b.text("done")
    return b


def unknown_types(home):
    b = Steps()
    b.user("before a port's entries")
    b.raw({"type": "leaf", "id": "f0000001", "targetId": "nothing"})  # a port's leaf pointer: no pi writes it
    b.text("after")
    b.raw({"type": "future_kind", "id": "f0000002"})
    return b


def missing_fields(home):
    b = Steps()
    b.user("fields a port left out")
    b.raw({"type": "model_change", "id": "d0000001", "provider": "openai"})  # no modelId
    b.raw({"type": "thinking_level_change", "id": "d0000002", "thinkingLevel": None})
    b.raw({"type": "custom", "id": "d0000003"})  # no customType
    b.raw({"type": "label", "id": "d0000004", "targetId": "d0000001", "label": False})
    b.raw({"type": "branch_summary", "id": "d0000005", "fromId": "d0000001", "summary": "summed up"})
    b.raw({"type": "message", "id": "d0000006", "message": {"content": "a message without a role"}})
    b.raw({"type": "context_edit", "id": "d0000007", "targetId": None, "replacement": None})
    b.text("the end")
    b.raw({"type": "compaction", "id": "d0000008", "summary": "tokens as text", "tokensBefore": "5000"})
    b.raw({"type": "compaction", "id": "d0000009", "tokensBefore": None})  # no summary, no firstKeptEntryId
    b.user("after two odd compactions")
    return b


BUILDERS = {f.__name__: f for f in (context_edits, edits_and_compaction, system_messages, null_content,
                                    usage_entries, read_ranges, home_paths, unknown_types, missing_fields)}


def write(path, steps, home, version=REFERENCE):
    """Run the steps: pi's writers for the calls, raw lines appended as they come."""
    ids = {}  # (batch, index) -> id
    leaf = None
    for k, step in enumerate(steps.steps):
        if isinstance(step, dict):
            entry = {"type": step.pop("type"), "id": step.pop("id"),
                     "parentId": leaf, "timestamp": "2027-01-15T08:00:00.000Z"}
            entry.update({key: _resolve(v, ids, k, None) for key, v in step.items()})
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")
            leaf = entry["id"]
            continue
        ops = [[op[0], *[_resolve(a, ids, k, True) for a in op[1:]]] for op in step]
        seen = pi_write(path, ops, version=version, cwd=f"{home}/proj")
        for i, id in enumerate(seen["ids"]):
            ids[k, i] = id
        leaf = seen["leafId"]
    return path


def _resolve(value, ids, batch, in_batch):
    if isinstance(value, Ref):
        if value.batch == batch and in_batch:
            return {"$ref": value.index}
        return ids[value.batch, value.index]
    if isinstance(value, list):
        return [_resolve(v, ids, batch, in_batch) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, ids, batch, in_batch) for k, v in value.items()}
    return value


# Files as other writers leave them (what pi 1.6.0 makes of each is asked at test time)
HEADER = {"type": "session", "version": 3, "id": "0199a1b2-0000-7000-8000-0000000f11e5",
          "timestamp": "2026-11-01T00:00:00.000Z", "cwd": "/tmp"}
E1 = {"type": "message", "id": "aaaa0001", "parentId": None, "timestamp": "2026-11-01T00:00:01.000Z",
      "message": {"role": "user", "content": "hi", "timestamp": 1}}
E2 = {"type": "message", "id": "aaaa0002", "parentId": "aaaa0001", "timestamp": "2026-11-01T00:00:02.000Z",
      "message": {"role": "user", "content": "again", "timestamp": 2}}


def _line(obj):
    return json.dumps(obj, separators=(",", ":"))


H, L1, L2 = _line(HEADER), _line(E1), _line(E2)
ODD_FILES = {
    "bom": f"\ufeff{H}\n{L1}\n",
    "blank_lines_first": f"\n  \n{H}\n{L1}\n",
    "garbage_first": f"{{garbage\n{H}\n{L1}\n",
    "number_first": f"5\n{H}\n{L1}\n",
    "null_first": f"null\n{H}\n{L1}\n",
    "falsy_lines": f'{H}\n0\nfalse\n""\nnull\n{L1}\n',
    "unicode_space_line": f"\u00a0\n{H}\n{L1}\n",
    "no_final_newline": f"{H}\n{L1}\n{L2}",
    "unicode_space_at_end": f"{H}\n{L1}\n{L2}\u00a0",
    "unicode_space_at_start": f"\u00a0{H}\n{L1}\n",
    "entry_first": f"{L1}\n{H}\n",
    "crlf": f"{H}\r\n{L1}\r\n",
}
