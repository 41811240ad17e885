#!/usr/bin/env python3
"""Generate realistic pi session files for the benchmark (deterministic per seed).

    python3 tools/bench/gen.py ENTRIES OUT.jsonl [--seed N]

The shape follows real coding sessions: a user prompt, several tool rounds
(assistant with thinking + tool calls, tool results of realistic size: file
reads of a few KB, bash output, grep hits, edits), a closing answer; now and
then a label, a model or thinking level change, a compaction, a session name,
and a /tree navigation back up the path (half of them with a branch summary),
which makes a branch. 100,000 entries come to about 80 MB, 1,000,000 to about 800 MB
(written as they are made: memory stays small at any size).
"""

import json
import random
import sys
from collections import deque
from datetime import datetime, timezone

WORDS = ("the parser file test function value error return line field quote config module index "
         "session tree entry branch cache offset read write append lock path node leaf label "
         "summary compaction context model token request response retry timeout buffer stream "
         "decode encode schema migrate version header payload commit revert check assert").split()
IDENTS = ("parse_line rows fields delimiter quotechar reader writer handle buf pos end offset "
          "result items count total key value node parent children path leaf cache index").split()
VERSION = 2  # in the names of the files the bench generates (tools/bench/measure.py): bump it when
#             the output changes, so that files made by an older generator are not used (2: a
#             compaction's firstKeptEntryId is on its path, as pi writes it; 1 was not always)
TOOLS = ("read", "read", "read", "bash", "bash", "grep", "edit", "edit", "write", "find", "ls")


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


class Gen:
    RECENT = 256  # entries kept for back-references (extras and navigate look <= 120 back)

    def __init__(self, seed, out=None, limit=None):
        self.rnd = random.Random(seed)
        self.ms = 1_790_000_000_000
        self.ids = set()
        self.entries = deque(maxlen=self.RECENT)
        self.count = 0  # entries made
        self.out = out  # a file the first `limit` entries are written to, as they are made
        self.limit = limit
        self.leaf = None
        self.calls = 0

    # -- text ------------------------------------------------------------

    def words(self, n):
        r = self.rnd
        out = " ".join(r.choice(WORDS) for _ in range(n))
        return out[:1].upper() + out[1:] + "."

    def prose(self, chars):
        parts = []
        size = 0
        while size < chars:
            s = self.words(self.rnd.randint(6, 18))
            if self.rnd.random() < 0.05:
                s += " Überprüfung der Zeichenkette → “ok” ✓"
            parts.append(s)
            size += len(s) + 1
        return " ".join(parts)

    def code(self, chars):
        r = self.rnd
        lines = []
        size = 0
        depth = 0
        while size < chars:
            kind = r.random()
            ind = "    " * depth
            if kind < 0.12:
                line = f"def {r.choice(IDENTS)}({r.choice(IDENTS)}, {r.choice(IDENTS)}=\"{r.choice(WORDS)}\"):"
                depth = 1
            elif kind < 0.2:
                line = f"{ind}\"\"\"{self.words(r.randint(4, 9))}\"\"\""
            elif kind < 0.3:
                line = f"{ind}if {r.choice(IDENTS)} == '{r.choice(WORDS)}':"
                depth = min(depth + 1, 3)
            elif kind < 0.36:
                line = ""
                depth = max(depth - 1, 0)
            elif kind < 0.42:
                line = f"{ind}# {self.words(r.randint(3, 10))}"
            else:
                line = f"{ind}{r.choice(IDENTS)} = {r.choice(IDENTS)}.{r.choice(IDENTS)}({r.choice(IDENTS)}, \"\\t{r.choice(WORDS)}\")"
            lines.append(line)
            size += len(line) + 1
        return "\n".join(lines)

    def sig(self):
        return "".join(self.rnd.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
                       for _ in range(self.rnd.randint(40, 120)))

    # -- entries ---------------------------------------------------------

    def iso(self):
        dt = datetime.fromtimestamp(self.ms / 1000, tz=timezone.utc)
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.ms % 1000:03d}Z"

    def new_id(self):
        while True:
            i = "%08x" % self.rnd.getrandbits(32)
            if i not in self.ids:
                self.ids.add(i)
                return i

    def append(self, type, parent="leaf", **fields):
        self.ms += self.rnd.randint(50, 30000)
        entry = {"type": type, "id": self.new_id(), "parentId": self.leaf if parent == "leaf" else parent,
                 "timestamp": self.iso()}
        entry.update(fields)
        self.entries.append(entry)
        self.count += 1
        self.leaf = entry["id"]
        return entry

    def flush(self):
        """Write the entries made since the last flush (up to the limit)."""
        if self.out is None:
            return
        fresh = min(self.count, self.limit) - self.written
        if fresh > 0:
            tail = list(self.entries)[len(self.entries) - (self.count - self.written):][:fresh]
            self.out.write("".join(dumps(e) + "\n" for e in tail))
            self.written += fresh

    def message(self, msg):
        msg["timestamp"] = self.ms + 1
        return self.append("message", message=msg)

    def usage(self):
        r = self.rnd
        i, o, c = r.randint(1, 50), r.randint(20, 2000), r.randint(1000, 150000)
        return {"input": i, "output": o, "cacheRead": c, "cacheWrite": r.randint(0, 3000),
                "totalTokens": i + o + c,
                "cost": {"input": i * 3e-6, "output": o * 1.5e-5, "cacheRead": c * 3e-7, "cacheWrite": 0,
                         "total": round(i * 3e-6 + o * 1.5e-5 + c * 3e-7, 8)}}

    def assistant(self, content, stop):
        return self.message({"role": "assistant", "content": content, "api": "anthropic-messages",
                             "provider": "anthropic", "model": self.model, "usage": self.usage(),
                             "stopReason": stop, "responseId": "msg_%024x" % self.rnd.getrandbits(96)})

    def tool_args(self, name):
        r = self.rnd
        path = f"src/{r.choice(IDENTS)}/{r.choice(IDENTS)}.py"
        if name == "read":
            return {"path": path} if r.random() < 0.7 else {"path": path, "offset": r.randint(1, 400), "limit": 80}
        if name == "bash":
            return {"command": r.choice(["pytest -q tests/", "git status", "git diff --stat",
                                         f"python -m {r.choice(IDENTS)} --verbose {path}",
                                         f"rg -n '{r.choice(IDENTS)}' src | head -50"])}
        if name == "grep":
            return {"pattern": r.choice(IDENTS), "path": "src"}
        if name == "edit":
            return {"path": path, "oldText": self.code(r.randint(20, 100)), "newText": self.code(r.randint(20, 120))}
        if name == "write":
            return {"path": path, "content": self.code(r.randint(150, 900))}
        if name == "find":
            return {"pattern": "*.py", "path": "src"}
        return {"path": "src"}

    def tool_output(self, name, args):
        r = self.rnd
        if name == "read":
            return self.code(int(r.lognormvariate(6.2, 0.8)))  # median ~2 KB, long tail
        if name == "bash":
            return self.code(int(r.lognormvariate(5.4, 1.0)))
        if name == "grep":
            return "\n".join(f"src/{r.choice(IDENTS)}.py:{r.randint(1, 900)}: {r.choice(IDENTS)} = {r.choice(WORDS)}"
                             for _ in range(r.randint(1, 30)))
        if name in ("edit", "write"):
            return f"Successfully replaced text in {args['path']}." if name == "edit" else \
                f"Successfully wrote {len(args.get('content', ''))} bytes to {args['path']}"
        return "\n".join(f"src/{r.choice(IDENTS)}/{r.choice(IDENTS)}.py" for _ in range(r.randint(1, 40)))

    def tool_round(self):
        r = self.rnd
        calls = []
        content = [{"type": "thinking", "thinking": self.prose(r.randint(20, 150)), "thinkingSignature": self.sig()}]
        if r.random() < 0.25:
            content.append({"type": "text", "text": self.prose(r.randint(30, 150))})
        for _ in range(1 if r.random() < 0.8 else r.randint(2, 3)):
            self.calls += 1
            name = r.choice(TOOLS)
            args = self.tool_args(name)
            cid = "toolu_%024x" % r.getrandbits(96)
            content.append({"type": "toolCall", "id": cid, "name": name, "arguments": args})
            calls.append((cid, name, args))
        self.assistant(content, "toolUse")
        for cid, name, args in calls:
            out = self.tool_output(name, args)
            msg = {"role": "toolResult", "toolCallId": cid, "toolName": name,
                   "content": [{"type": "text", "text": out}], "isError": r.random() < 0.05}
            if name == "edit":
                msg["details"] = {"diff": "\n".join("+" + x for x in args["newText"].splitlines()[:20])}
            self.message(msg)

    def turn(self):
        r = self.rnd
        self.message({"role": "user", "content": [{"type": "text", "text": self.prose(r.randint(40, 700))}]})
        for _ in range(r.randint(1, 12)):
            self.tool_round()
        stop = "stop" if r.random() < 0.97 else "aborted"
        content = [{"type": "thinking", "thinking": self.prose(r.randint(30, 200)), "thinkingSignature": self.sig()}]
        if stop == "stop":
            content.append({"type": "text", "text": self.prose(r.randint(80, 800))})
        self.assistant(content, stop)

    def extras(self):
        r = self.rnd
        x = r.random()
        if x < 0.15:
            path_entry = self.entries[-r.randint(1, min(self.count, 40))]
            self.append("label", targetId=path_entry["id"], label=f"mark-{self.count}")
        elif x < 0.2:
            self.model = r.choice(["claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"])
            self.append("model_change", provider="anthropic", modelId=self.model)
        elif x < 0.24:
            self.append("thinking_level_change", thinkingLevel=r.choice(["low", "medium", "high"]))
        elif x < 0.3:
            path = self.path_back(60)  # pi keeps messages from an entry on the compaction's path
            kept = path[r.randint(min(4, len(path) - 1), len(path) - 1)]["id"]
            self.append("compaction", summary="## Goal\n" + self.prose(r.randint(1500, 5000)),
                        firstKeptEntryId=kept, tokensBefore=r.randint(80000, 190000),
                        details={"readFiles": [f"src/{w}.py" for w in r.sample(IDENTS, 4)], "modifiedFiles": []})
        elif x < 0.32:
            self.append("session_info", name=self.words(r.randint(2, 5)))
        elif x < 0.5:
            self.navigate()

    def path_back(self, n):
        """The last n entries of the leaf's path, the leaf first (among the recent entries)."""
        by_id = {e["id"]: e for e in self.entries}
        path = []
        at = self.leaf
        while at in by_id and len(path) < n:
            path.append(by_id[at])
            at = by_id[at]["parentId"]
        return path

    def navigate(self):
        """/tree back to an earlier user-prompt's parent or an assistant answer: a new branch."""
        r = self.rnd
        back = self.entries[-r.randint(3, min(self.count, 120))]
        old = self.leaf
        target = back["parentId"] if back["type"] == "message" and back["message"]["role"] == "user" else back["id"]
        self.leaf = target
        if r.random() < 0.5:
            self.append("branch_summary", fromId=target or "root",
                        summary="The user explored a different conversation branch before returning here.\n"
                                "Summary of that exploration:\n\n## Goal\n" + self.prose(r.randint(400, 2000)),
                        details={"readFiles": [f"src/{w}.py" for w in r.sample(IDENTS, 3)], "modifiedFiles": []})
        else:
            self.append("custom", customType="stree/checkout", data={"from": old, "to": back["id"]})

    def run(self, n):
        """Write the header and n entries to self.out."""
        self.model = "claude-sonnet-4-5"
        self.limit = n
        self.written = 0
        header = {"type": "session", "version": 3, "id": "0199c0de-%04x-7abc-8def-%012x" % (
            self.rnd.getrandbits(16), self.rnd.getrandbits(48)), "timestamp": self.iso(), "cwd": "/home/dev/project"}
        self.out.write(dumps(header) + "\n")
        self.append("model_change", provider="anthropic", modelId=self.model)
        self.append("thinking_level_change", thinkingLevel="medium")
        while self.count < n:
            self.turn()
            self.extras()
            self.flush()  # a turn makes at most a few dozen entries: all still in self.entries
        # the first n entries: the file ends on an assistant answer, as a real session does


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    n, out = int(argv[0]), argv[1]
    seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else n
    with open(out, "w", encoding="utf-8") as f:
        g = Gen(seed, f)
        g.run(n)


if __name__ == "__main__":
    main(sys.argv[1:])
