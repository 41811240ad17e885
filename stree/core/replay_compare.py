"""How a new answer compares with the recorded one, for `stree replay` (teacher forcing).

- tools: "same" when both messages call the same tools in the same order with equal
  arguments (compared as JSON values: key order and spacing do not matter), else "differ";
- stop: pi's stop reasons (stop, length, toolUse, error, aborted) compared as they are;
- similarity: difflib.SequenceMatcher(None, a, b).ratio() of the two texts (text blocks
  joined, lower-cased, whitespace runs made one space; each cut at 20,000 characters),
  1.0 when both are empty. Thinking is not compared.

A turn diverges when its tools differ, its stop reason differs, or its similarity is below
the threshold.
"""

import difflib
import json
import re

SIMILARITY_CHARS = 20000
DEFAULT_THRESHOLD = 0.5
_SPACE = re.compile(r"\s+")


def text_of(message):
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text") or "" for b in content if isinstance(b, dict) and b.get("type") == "text") \
        if isinstance(content, list) else ""


def calls_of(message):
    content = message.get("content")
    return [(b.get("name"), b.get("arguments")) for b in content
            if isinstance(b, dict) and b.get("type") == "toolCall"] if isinstance(content, list) else []


def similarity(a, b):
    a = _SPACE.sub(" ", a.lower()).strip()[:SIMILARITY_CHARS]
    b = _SPACE.sub(" ", b.lower()).strip()[:SIMILARITY_CHARS]
    if not a and not b:
        return 1.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def _canonical(value):
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def compare_tools(recorded, new):
    """(same?, what differs or None) for two lists of (name, arguments)."""
    names = [n for n, _ in recorded], [n for n, _ in new]
    if names[0] != names[1]:
        recorded_names, new_names = (", ".join(map(str, n)) for n in names)
        return False, f"tool calls differ: recorded [{recorded_names}], new [{new_names}]"
    for (name, a), (_, b) in zip(recorded, new):
        if _canonical(a) != _canonical(b):
            keys = sorted(set(a) | set(b)) if isinstance(a, dict) and isinstance(b, dict) else []
            changed = [k for k in keys if _canonical(a.get(k)) != _canonical(b.get(k))]
            return False, f"arguments of {name} differ" + (f": {', '.join(changed)}" if changed else "")
    return True, None


def compare(recorded, new, threshold=DEFAULT_THRESHOLD):
    """The comparison of two pi assistant messages, as the fields of a turn's record."""
    same, tools_detail = compare_tools(calls_of(recorded), calls_of(new))
    ratio = round(similarity(text_of(recorded), text_of(new)), 4)
    reasons = []
    if not same:
        reasons.append(tools_detail)
    if recorded.get("stopReason") != new.get("stopReason"):
        reasons.append(f"stop reason {recorded.get('stopReason')} -> {new.get('stopReason')}")
    if ratio < threshold:
        reasons.append(f"similarity {ratio:.2f} below {threshold:g}")
    return {"tools": "same" if same else "differ", "recordedTools": [n for n, _ in calls_of(recorded)],
            "newTools": [n for n, _ in calls_of(new)], "recordedStop": recorded.get("stopReason"),
            "newStop": new.get("stopReason"), "similarity": ratio, "diverged": bool(reasons), "reasons": reasons}
