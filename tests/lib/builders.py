"""Build pi session files for tests, entry by entry, the way pi appends them."""

import json
import os
from pathlib import Path

UUID = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


class SessionBuilder:
    """Appends entries as children of the leaf; `at(id)` moves the leaf like /tree."""

    def __init__(self, cwd="/home/dev/proj", id=UUID, version=3, start_ms=1_795_000_000_000):
        self.header = {"type": "session", "version": version, "id": id,
                       "timestamp": self._iso(start_ms), "cwd": cwd}
        self.entries = []
        self.leaf = None
        self.ms = start_ms
        self.n = 0

    @staticmethod
    def _iso(ms):
        from datetime import datetime, timezone

        dt = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"

    def _next_id(self):
        self.n += 1
        return f"{self.n:08x}"

    def append(self, type, id=None, parent="leaf", **fields):
        self.ms += 1000
        entry = {"type": type, "id": id or self._next_id(),
                 "parentId": self.leaf if parent == "leaf" else parent,
                 "timestamp": self._iso(self.ms)}
        entry.update(fields)
        self.entries.append(entry)
        self.leaf = entry["id"]
        return entry["id"]

    def at(self, id):
        self.leaf = id
        return self

    def user(self, text, **kw):
        return self.append("message", message={"role": "user", "content": [{"type": "text", "text": text}],
                                               "timestamp": self.ms + 1000}, **kw)

    def assistant(self, text=None, tools=(), stop=None, model="claude-sonnet-4-5", provider="anthropic",
                  thinking=None, **kw):
        content = []
        if thinking:
            content.append({"type": "thinking", "thinking": thinking})
        if text:
            content.append({"type": "text", "text": text})
        for i, (name, args) in enumerate(tools):
            content.append({"type": "toolCall", "id": f"call_{self.n + 1}_{i}", "name": name, "arguments": args})
        msg = {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": provider,
               "model": model, "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0,
                                         "totalTokens": 15},
               "stopReason": stop or ("toolUse" if tools else "stop"), "timestamp": self.ms + 1000}
        return self.append("message", message=msg, **kw)

    def tool_result(self, call_id, name, text, error=False, **kw):
        return self.append("message", message={"role": "toolResult", "toolCallId": call_id, "toolName": name,
                                               "content": [{"type": "text", "text": text}], "isError": error,
                                               "timestamp": self.ms + 1000}, **kw)

    def tool_round(self, name, args, result, text=None):
        """An assistant tool call and its result; returns the result's id."""
        a = self.assistant(text, tools=[(name, args)])
        call = self.entries[-1]["message"]["content"][-1]["id"]
        return a, self.tool_result(call, name, result)

    def label(self, target, label):
        return self.append("label", targetId=target, label=label)

    def compaction(self, summary, first_kept, tokens=50000):
        return self.append("compaction", summary=summary, firstKeptEntryId=first_kept, tokensBefore=tokens)

    def branch_summary(self, summary, from_id="leaf", details=None):
        parent = self.leaf if from_id == "leaf" else from_id
        return self.append("branch_summary", parent=parent, fromId=parent if parent else "root",
                           summary=summary, details=details or {"readFiles": [], "modifiedFiles": []})

    def model_change(self, provider, model_id):
        return self.append("model_change", provider=provider, modelId=model_id)

    def thinking(self, level):
        return self.append("thinking_level_change", thinkingLevel=level)

    def name(self, name):
        return self.append("session_info", name=name)

    def custom_message(self, custom_type, content, display=True):
        return self.append("custom_message", customType=custom_type, content=content, display=display)

    def custom(self, custom_type, data=None):
        return self.append("custom", customType=custom_type, data=data)

    def lines(self):
        return [dumps(self.header)] + [dumps(e) for e in self.entries]

    def write(self, path):
        path = Path(path)
        path.write_text("\n".join(self.lines()) + "\n", encoding="utf-8")
        return path


def branchy(cwd="/home/dev/proj"):
    """A small session with two branch points, labels, a compaction, a branch summary."""
    b = SessionBuilder(cwd=cwd)
    u1 = b.user("Fix the CSV quoting bug in parser.py")
    a1, r1 = b.tool_round("read", {"path": "src/parser.py"}, "def parse(line):\n    return line.split(',')")
    b.assistant("The parser splits on commas without honouring quotes.")
    b.label(u1, "start")
    u2 = b.user("Try the csv module")
    b.tool_round("edit", {"path": "src/parser.py", "oldText": "split", "newText": "csv"}, "ok")
    b.assistant("Switched to the csv module.", stop="stop")
    abandoned = b.leaf
    b.at(r1)
    b.branch_summary("The user explored a different conversation branch before returning here.\n"
                     "Summary of that exploration:\n\n## Goal\nUse the csv module.",
                     details={"readFiles": ["src/parser.py"], "modifiedFiles": ["src/parser.py"]})
    u3 = b.user("Write a regex-based parser instead")
    b.tool_round("bash", {"command": "pytest -q tests/test_parser.py"}, "3 passed")
    b.model_change("openai", "gpt-5")
    b.thinking("high")
    b.assistant("All tests pass with the regex parser.", model="gpt-5", provider="openai")
    b.compaction("## Goal\nFix quoting.", first_kept=u3, tokens=48213)
    b.user("Now add a test for embedded newlines")
    b.assistant("Added tests/test_newlines.py", model="gpt-5", provider="openai")
    b.label(abandoned, "csv-attempt")
    b.name("fix quoting")
    return b


def sessions_sharing_a_prefix(tmp_path):
    """Three sessions in a flat session dir with UUIDv7-like ids that share long prefixes."""
    directory = tmp_path / "sessions"
    directory.mkdir()
    made = {}
    # (id, entry times start, message timestamps shift): pi sorts by message.timestamp
    for n, (sid, start, shift) in enumerate((("019a0000-1111-7aaa-8aaa-aaaaaaaaaaaa", 1_795_000_000_000, 0),
                                             ("019a0000-1112-7bbb-8bbb-bbbbbbbbbbbb", 1_795_500_000_000, -900_000_000),
                                             ("019a0000-2222-7ccc-8ccc-cccccccccccc", 1_795_100_000_000, 0))):
        b = SessionBuilder(id=sid, start_ms=start, cwd=str(directory))  # sessions of that directory
        b.user(f"task {n}")
        b.assistant(f"done {n}")
        for entry in b.entries:
            entry["message"]["timestamp"] += shift
        path = b.write(directory / f"s{n}_{sid}.jsonl")
        os.utime(path, (1_000_000 + n, 1_000_000 + n))
        made[sid] = path
    return directory, made
