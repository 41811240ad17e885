"""A reference model of a pi session, written from pi's source independently of stree's core.

Deliberately naive (lists, linear scans, recursion-free walks): it should be obviously
right, not fast. Entries are the dicts exactly as written to the file.
"""

import json
import random
from datetime import datetime, timezone

HEADER_ID = "0199a1b2-0000-7000-8000-00000000beef"
# String.prototype.trim(): ECMAScript WhiteSpace + LineTerminator (not \x1c-\x1f or \x85 as in Python)
JS_SPACE = "\t\n\v\f\r \u00a0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200b)) + \
    "\u2028\u2029\u202f\u205f\u3000\ufeff"


def iso(ms):
    dt = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def millis(ts):
    """new Date(ts).getTime() for the ISO strings this model writes."""
    dt = datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    return round(dt.timestamp() * 1000)


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


class Model:
    def __init__(self, cwd="/home/dev/proj"):
        self.header = {"type": "session", "version": 3, "id": HEADER_ID, "timestamp": iso(1_800_000_000_000),
                       "cwd": cwd}
        self.entries = []
        self.ms = 1_800_000_000_000
        self.ids = set()

    # -- building, as pi appends -------------------------------------------------

    def fresh_id(self, rng):
        while True:
            candidate = f"{rng.getrandbits(32):08x}"
            if candidate not in self.ids:
                self.ids.add(candidate)
                return candidate

    def make(self, rng, type, parent, clock_step, **fields):
        self.ms += clock_step  # may be 0 (ties) or negative (a clock going back)
        entry = {"type": type, "id": self.fresh_id(rng), "parentId": parent, "timestamp": iso(self.ms)}
        entry.update(fields)
        return entry

    def add(self, entry):
        """Record an entry that is now the last line of the file."""
        self.ids.add(entry["id"])
        self.entries.append(entry)

    # -- what pi derives from the file ------------------------------------------

    @property
    def leaf(self):
        return self.entries[-1]["id"] if self.entries else None

    def get(self, id):
        found = None
        for e in self.entries:
            if e["id"] == id:
                found = e
        return found

    def parent(self, e):
        p = e.get("parentId")
        if p is None or p == e["id"]:
            return None
        return self.get(p)

    def roots(self):
        return [e["id"] for e in self.entries if self.parent(e) is None]

    def children(self, id):
        kids = [e for e in self.entries if e.get("parentId") == id and e["id"] != id]
        return [e["id"] for e in sorted(kids, key=lambda e: millis(e["timestamp"]))]

    def labels(self):
        out = {}
        for e in self.entries:
            if e["type"] == "label":
                if e.get("label"):
                    out[e["targetId"]] = e["label"]
                else:
                    out.pop(e["targetId"], None)
        return out

    def name(self):
        for e in reversed(self.entries):
            if e["type"] == "session_info":
                return (e.get("name") or "").strip(JS_SPACE) or None
        return None

    def path(self, id):
        out = []
        e = self.get(id) if id is not None else None
        while e is not None:
            out.insert(0, e)
            e = self.parent(e)
        return out

    def path_ids(self, id):
        return [e["id"] for e in self.path(id)]

    def merge_base(self, a, b):
        on_a = self.path_ids(a)
        common = [x for x in self.path_ids(b) if x in on_a]
        return common[-1] if common else None

    def range(self, a, b):
        on_a = self.path_ids(a)
        return [x for x in self.path_ids(b) if x not in on_a]

    def abandoned(self, old, target):
        """pi's collectEntriesForBranchSummary: old leaf back to the common ancestor."""
        if old is None:
            return [], None
        common = self.merge_base(old, target) if target is not None else None
        out = []
        for x in reversed(self.path_ids(old)):
            if x == common:
                break
            out.insert(0, x)
        return out, common

    def context(self, leaf):
        """pi's buildSessionContext(entries, leaf)."""
        if leaf is None:
            return {"messages": [], "thinkingLevel": "off", "model": None}
        path = self.path(leaf)
        thinking, model, compaction = "off", None, None
        for e in path:
            if e["type"] == "thinking_level_change":
                thinking = e["thinkingLevel"]
            elif e["type"] == "model_change":
                model = {"provider": e["provider"], "modelId": e["modelId"]}
            elif e["type"] == "message" and e["message"]["role"] == "assistant":
                model = {"provider": e["message"]["provider"], "modelId": e["message"]["model"]}
            elif e["type"] == "compaction":
                compaction = e
        messages = []

        def emit(e):
            if e["type"] == "message":
                messages.append(e["message"])
            elif e["type"] == "custom_message":
                m = {"role": "custom"}
                for key in ("customType", "content", "display", "details"):
                    if key in e:
                        m[key] = e[key]
                m["timestamp"] = millis(e["timestamp"])
                messages.append(m)
            elif e["type"] == "branch_summary" and e.get("summary"):
                messages.append({"role": "branchSummary", "summary": e["summary"], "fromId": e["fromId"],
                                 "timestamp": millis(e["timestamp"])})

        if compaction is None:
            for e in path:
                emit(e)
        else:
            messages.append({"role": "compactionSummary", "summary": compaction["summary"],
                             "tokensBefore": compaction["tokensBefore"],
                             "timestamp": millis(compaction["timestamp"])})
            at = path.index(compaction)
            keeping = False
            for e in path[:at]:
                keeping = keeping or e["id"] == compaction["firstKeptEntryId"]
                if keeping:
                    emit(e)
            for e in path[at + 1:]:
                emit(e)
        return {"messages": messages, "thinkingLevel": thinking, "model": model}

    def lines(self):
        return [dumps(self.header)] + [dumps(e) for e in self.entries]

    def write(self, path):
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in self.lines()))


# -- entries like pi writes them ------------------------------------------------------


def pi_entry(model, rng, kind, parent, step, text):
    """One entry of `kind` as pi's SessionManager would append it under `parent`."""
    ids = [e["id"] for e in model.entries]
    ms = model.ms + step
    if kind == "user":
        return model.make(rng, "message", parent, step,
                          message={"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms})
    if kind == "assistant":
        content = [{"type": "text", "text": text}] if text else []
        if rng.random() < 0.4:
            content.append({"type": "toolCall", "id": f"call_{rng.getrandbits(24):06x}",
                            "name": rng.choice(["read", "bash", "edit", "write"]),
                            "arguments": {"path": f"src/{text[:5] or 'x'}.py", "command": "ls"}})
        return model.make(rng, "message", parent, step, message={
            "role": "assistant", "content": content, "api": "anthropic-messages",
            "provider": rng.choice(["anthropic", "openai"]), "model": rng.choice(["claude-x", "gpt-5"]),
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
            "stopReason": rng.choice(["stop", "toolUse", "aborted", "error", "length"]), "timestamp": ms})
    if kind == "toolResult":
        return model.make(rng, "message", parent, step, message={
            "role": "toolResult", "toolCallId": "call_x", "toolName": "bash",
            "content": [{"type": "text", "text": text}], "isError": rng.random() < 0.2, "timestamp": ms})
    if kind == "compaction":
        kept = rng.choice(model.path_ids(parent) + ["gone0000"]) if parent is not None else "gone0000"
        return model.make(rng, "compaction", parent, step, summary=text or "summary",
                          firstKeptEntryId=kept, tokensBefore=rng.randint(0, 99999))
    if kind == "branch_summary":
        return model.make(rng, "branch_summary", parent, step, fromId=parent or "root",
                          summary=rng.choice([text, ""]), details={"readFiles": [], "modifiedFiles": []})
    if kind == "model_change":
        return model.make(rng, "model_change", parent, step, provider=rng.choice(["openai", "anthropic"]),
                          modelId=rng.choice(["gpt-5", "claude-x"]))
    if kind == "thinking":
        return model.make(rng, "thinking_level_change", parent, step,
                          thinkingLevel=rng.choice(["off", "low", "high"]))
    if kind == "custom_message":
        fields = {"customType": "ext", "content": text or [{"type": "text", "text": "c"}],
                  "display": rng.random() < 0.5}
        if rng.random() < 0.5:
            fields["details"] = {"k": text}
        return model.make(rng, "custom_message", parent, step, **fields)
    if kind == "custom":
        return model.make(rng, "custom", parent, step, customType="ext", data={"t": text})
    if kind == "session_info":
        return model.make(rng, "session_info", parent, step, name=text)
    if kind == "label":
        target = rng.choice(ids) if ids else "gone0000"
        fields = {"targetId": target}
        if rng.random() < 0.75:
            fields["label"] = text.strip() or "x"
        return model.make(rng, "label", parent, step, **fields)
    raise ValueError(kind)


KINDS = ["user", "assistant", "toolResult", "compaction", "branch_summary", "model_change", "thinking",
         "custom_message", "custom", "session_info", "label"]


def random_session(seed, n):
    """A session of n pi-style appends with random leaf moves (for soak runs without hypothesis)."""
    rng = random.Random(seed)
    m = Model()
    at = None
    for _ in range(n):
        if m.entries and rng.random() < 0.2:
            at = rng.choice([None] + [e["id"] for e in m.entries])
        e = pi_entry(m, rng, rng.choice(KINDS), at, rng.choice([0, 1, 1000, 1000, -700]), f"t{rng.randint(0, 99)}")
        m.add(e)
        at = e["id"]
    return m
