"""The work a command does, counted (STREE_DEBUG_STATS reports the entries whose content it
decoded), never timed: a long compacted session to count it on, and the count read back."""

import re

from builders import SessionBuilder


def compacted(tmp_path, before, kept, after, name="s.jsonl"):
    """A linear session: `before` entries, a model and thinking change, `kept` entries from the
    compaction's firstKeptEntryId (users and custom messages, a context edit, no assistant),
    the compaction, then `after` user/assistant entries. -> (path, ids)"""
    b = SessionBuilder()
    b.model_change("openai", "gpt-early")
    b.thinking("low")
    for i in range(before // 2):
        b.user(f"question {i}")
        b.assistant(f"answer {i}")
    old = b.compaction("an older compaction", b.entries[-4]["id"])
    b.model_change("anthropic", "claude-late")
    b.thinking("high")
    first = b.user("kept 0")
    b.append("context_edit", targetId=first, replacement={"content": "ignored: before the kept range"})
    for i in range(kept - 3):
        if i % 2:
            b.user(f"kept {i + 1}")
        else:
            b.custom_message("note", f"kept note {i}")
    b.append("context_edit", targetId=first, replacement={"content": [{"type": "text", "text": "kept 0, edited"}]})
    compaction = b.compaction("summary of the start", first)
    for i in range(after // 2):
        b.user(f"after {i}")
        b.assistant(f"after answer {i}")
    path = b.write(tmp_path / name)
    return path, {"old": old, "first": first, "compaction": compaction, "branch_at": b.entries[-6]["id"],
                  "leaf": b.leaf, "builder": b}


def decoded(result):
    m = re.search(r"decoded (\d+) entries", result.err)
    assert m, result
    return int(m.group(1))


def stats_run(stree, path, *args):
    return stree("-s", path, *args, env={"STREE_DEBUG_STATS": "1"})
