"""Two paths side by side (`stree diff`), as git compares two commits: the conversation
entries of each path, aligned by position (after the merge base in one session; from the
root across two files), each pair compared by role, text and tool calls (names, then
arguments as JSON). Entry ids, timestamps, usage and tool-call ids are not compared."""

import difflib
import re
from itertools import zip_longest

from ..format.jsjson import stringify
from .convert import BRANCH_PREFIX, COMPACTION_PREFIX, bash_execution_text, content_text

TURN_TYPES = ("message", "custom_message", "branch_summary", "compaction")


def turn(entry):
    """What diff compares of one conversation entry: {id, role, text, calls}."""
    etype = entry.get("type")
    calls, role, text = [], etype, ""
    if etype == "message":
        msg = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        role = msg.get("role")
        if role == "bashExecution":
            text = bash_execution_text(msg)
        else:
            content = msg.get("content")
            text = content_text(content)
            for b in content if isinstance(content, list) else []:
                if isinstance(b, dict) and b.get("type") == "toolCall":
                    calls.append({"name": b.get("name"), "arguments": b.get("arguments")})
    elif etype == "custom_message":
        role, text = "custom", content_text(entry.get("content"))
    elif etype == "branch_summary":
        role, text = "branchSummary", BRANCH_PREFIX.split("\n")[0] + "\n" + str(entry.get("summary", ""))
    elif etype == "compaction":
        role, text = "compactionSummary", COMPACTION_PREFIX.split("\n")[0] + "\n" + str(entry.get("summary", ""))
    return {"id": entry.get("id"), "role": role if isinstance(role, str) else str(role), "text": text,
            "calls": calls}


def turns(tree, path):
    """The conversation entries of a root-first list of Nodes, loaded (only those)."""
    return [turn(tree.load(n)) for n in path if n.type in TURN_TYPES]


def sides(tree_a, a, tree_b, b):
    """(base id or None, turns of A's path, turns of B's path): after the merge base when both
    are in one tree, else from the root."""
    base = tree_a.merge_base(a, b) if tree_a is tree_b else None
    path_a, path_b = tree_a.path(a), tree_b.path(b)
    if base is not None:
        ids_a = [n.id for n in path_a]
        ids_b = [n.id for n in path_b]
        path_a = path_a[ids_a.index(base) + 1:]
        path_b = path_b[ids_b.index(base) + 1:]
    return base, turns(tree_a, path_a), turns(tree_b, path_b)


def compare_calls(a, b):
    """The tool calls of two aligned entries: same, changed (arguments), added, removed."""
    out = []
    matcher = difflib.SequenceMatcher(None, [c["name"] for c in a], [c["name"] for c in b], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            for x, y in zip(a[i1:i2], b[j1:j2]):
                same = stringify(x["arguments"]) == stringify(y["arguments"])
                out.append({"status": "same" if same else "changed", "name": x["name"],
                            "a": x["arguments"], "b": y["arguments"]})
            continue
        out += [{"status": "removed", "name": x["name"], "a": x["arguments"]} for x in a[i1:i2]]
        out += [{"status": "added", "name": y["name"], "b": y["arguments"]} for y in b[j1:j2]]
    return out


def compare(left, right):
    """One record per aligned position: {index, status, a, b, role, textChanged, calls}.
    status: same, changed, removed (only in A), added (only in B)."""
    out = []
    for i, (x, y) in enumerate(zip_longest(left, right)):
        if y is None:
            rec = {"index": i, "status": "removed", "a": x, "b": None,
                   "calls": [{"status": "removed", "name": c["name"], "a": c["arguments"]} for c in x["calls"]]}
        elif x is None:
            rec = {"index": i, "status": "added", "a": None, "b": y,
                   "calls": [{"status": "added", "name": c["name"], "b": c["arguments"]} for c in y["calls"]]}
        else:
            calls = compare_calls(x["calls"], y["calls"])
            changed = x["role"] != y["role"] or x["text"] != y["text"] or any(c["status"] != "same" for c in calls)
            rec = {"index": i, "status": "changed" if changed else "same", "a": x, "b": y, "calls": calls}
        rec["textChanged"] = (rec["a"] or {}).get("text") != (rec["b"] or {}).get("text")
        out.append(rec)
    return out


def text_lines(a, b):
    """(added, removed) line counts between two texts."""
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, a.split("\n") if a else [], b.split("\n") if b else [], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


def stats(records):
    """Counts over compare()'s records."""
    s = {"positions": len(records), "same": 0, "changed": 0, "removed": 0, "added": 0,
         "callsAdded": 0, "callsRemoved": 0, "callsChanged": 0, "linesAdded": 0, "linesRemoved": 0}
    for rec in records:
        s[rec["status"]] += 1
        for c in rec["calls"]:
            key = {"added": "callsAdded", "removed": "callsRemoved", "changed": "callsChanged"}.get(c["status"])
            if key:
                s[key] += 1
        added, removed = text_lines((rec["a"] or {}).get("text", ""), (rec["b"] or {}).get("text", ""))
        s["linesAdded"] += added
        s["linesRemoved"] += removed
    return s


def line_hunks(a, b, context=3):
    """A unified diff of two texts as (sign, line) pairs; ("@", "") between hunks."""
    out = []
    la, lb = a.split("\n") if a else [], b.split("\n") if b else []
    matcher = difflib.SequenceMatcher(None, la, lb, autojunk=False)
    for k, group in enumerate(matcher.get_grouped_opcodes(context)):
        if k:
            out.append(("@", ""))
        for op, i1, i2, j1, j2 in group:
            if op == "equal":
                out += [(" ", line) for line in la[i1:i2]]
                continue
            out += [("-", line) for line in la[i1:i2]]
            out += [("+", line) for line in lb[j1:j2]]
    return out


_WORDS = re.compile(r"\s+|\S+")


def word_diff(a, b):
    """Two texts as segments (kind, text): kind " " (both), "-" (only A), "+" (only B)."""
    wa, wb = _WORDS.findall(a or ""), _WORDS.findall(b or "")
    out = []
    matcher = difflib.SequenceMatcher(None, wa, wb, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out.append((" ", "".join(wa[i1:i2])))
            continue
        if i2 > i1:
            out.append(("-", "".join(wa[i1:i2])))
        if j2 > j1:
            out.append(("+", "".join(wb[j1:j2])))
    return out
