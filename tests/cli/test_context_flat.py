"""A warm `context` does work that does not grow with the session (issue 28: flat warm costs).

Counted, not timed (STREE_DEBUG_STATS): sessions whose newest part is the same (a compaction,
its kept entries, the entries after it) and whose older part is not (10,000 entries, then
four times as many). The thinking level and the model are set once, at the start, as pi
writes them, and no assistant message sets the model after: the setters are as far from the
leaf as the session is long. A warm `context` walks the same rows of the path (the index
holds the last setters of every row's path: stree.storage.shape.Shape.setters) and decodes
the same entries at both sizes, and answers as a plain parse does.
"""

import json
import re

from builders import SessionBuilder
from clock import past_the_tick


def session(tmp_path, before, name):
    """`before` user messages after a model and a thinking-level change, then the same newest
    part at every size: 30 kept entries, a compaction, 20 entries after it. -> path"""
    b = SessionBuilder()
    b.model_change("openai", "gpt-early")
    b.thinking("high")
    b.label(b.leaf, "start")
    for i in range(before):
        b.user(f"question {i}")
    first = b.user("kept 0")
    for i in range(29):
        if i % 3:
            b.custom_message("note", f"kept note {i}")
        else:
            b.user(f"kept {i + 1}")
    b.compaction("summary of the start", first)
    for i in range(20):
        b.user(f"after {i}")
    return b.write(tmp_path / name)


def work(stree, path, *args):
    """(entries decoded, path rows walked, the answer) of a warm `context` (the index exists
    and is fresh)."""
    r = stree("-s", path, "context", *args, env={"STREE_DEBUG_STATS": "1"})
    assert r.code == 0, r
    assert re.search(r"index fresh", r.err), r.err
    decoded = int(re.search(r"decoded (\d+) entries", r.err).group(1))
    walked = re.search(r"path rows walked (\d+)", r.err)
    assert walked, r.err
    return decoded, int(walked.group(1)), r.out


def test_warm_context_walks_and_decodes_as_much_at_10k_as_at_40k(tmp_path, stree):
    counts = {}
    for n in (10_000, 40_000):
        path = session(tmp_path, n, f"s{n}.jsonl")
        past_the_tick(path)  # (a file changed in the index's tick of the clock is checked whole)
        assert stree("-s", path, "rev-parse", "@").code == 0  # builds the index
        for args in ((), ("--json",), ("--format", "{role}")):
            decoded, walked, out = work(stree, path, *args)
            assert out == stree("--no-cache", "-s", path, "context", *args).out
            counts[n, args] = decoded, walked
        context = json.loads(work(stree, path, "--json")[2])
        assert context["thinkingLevel"] == "high"
        assert context["model"] == {"provider": "openai", "modelId": "gpt-early"}
        assert len(context["messages"]) == 1 + 30 + 20
    for args in ((), ("--json",), ("--format", "{role}")):
        assert counts[10_000, args] == counts[40_000, args], (args, counts)
        decoded, walked = counts[40_000, args]
        # the kept entries, the compaction and those after it; the model and thinking level
        # from the index; the rows of the context's part of the path and the two setters
        assert decoded == 30 + 1 + 20 and walked <= 30 + 1 + 20 + 2, counts


def test_context_of_a_session_whose_parent_comes_after_its_child(tmp_path, stree):
    """A hand-edited file (lines moved): a path may then go down the file, and only the whole
    path proves it has no loop; the answer is a plain parse's."""
    b = SessionBuilder()
    b.model_change("openai", "gpt-early")
    b.thinking("low")
    first = b.user("kept")
    b.compaction("summary", first)
    b.user("after")
    path = b.write(tmp_path / "s.jsonl")
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2], lines[3] = lines[3], lines[2]  # the thinking-level change after its child
    path.write_bytes(b"".join(lines))
    past_the_tick(path)
    stree("-s", path, "rev-parse", "@")
    for args in ((), ("--json",)):
        r = stree("-s", path, "context", *args)
        assert r.code == 0, r
        assert r.out == stree("--no-cache", "-s", path, "context", *args).out
    assert json.loads(stree("-s", path, "context", "--json").out)["thinkingLevel"] == "low"


def test_lines_appended_after_the_index_keep_the_walk_short(tmp_path, stree):
    """pi appends a thinking-level change, a model change and messages: the index parses them
    (its setters extended, not made again), and the next `context` reads the new setters."""
    from builders import dumps

    b = SessionBuilder()
    b.model_change("openai", "gpt-early")
    b.thinking("high")
    for i in range(3000):
        b.user(f"question {i}")
    first = b.user("kept 0")
    b.compaction("summary of the start", first)
    path = b.write(tmp_path / "s.jsonl")
    past_the_tick(path)
    assert stree("-s", path, "rev-parse", "@").code == 0  # builds the index
    start = len(b.entries)
    b.user("after 0")
    b.thinking("low")
    b.user("after 1")
    b.model_change("anthropic", "claude-late")
    b.user("after 2")
    with open(path, "a") as f:
        f.writelines(dumps(e) + "\n" for e in b.entries[start:])
    past_the_tick(path)
    for _ in range(2):  # the appended lines parsed by each command (the index is rewritten after 16)
        r = stree("-s", path, "context", "--json", env={"STREE_DEBUG_STATS": "1"})
        assert r.code == 0 and re.search(r"index updated", r.err), r
        assert r.out == stree("--no-cache", "-s", path, "context", "--json").out
        context = json.loads(r.out)
        assert context["thinkingLevel"] == "low"
        assert context["model"] == {"provider": "anthropic", "modelId": "claude-late"}
        walked = int(re.search(r"path rows walked (\d+)", r.err).group(1))
        assert walked <= 2 + 5 + 2, r.err  # the kept entry, the compaction, the appended lines, the setters
    start = len(b.entries)
    for i in range(20):
        b.user(f"more {i}")
    with open(path, "a") as f:
        f.writelines(dumps(e) + "\n" for e in b.entries[start:])
    past_the_tick(path)
    assert "index updated" in stree("-s", path, "rev-parse", "@", env={"STREE_DEBUG_STATS": "1"}).err
    r = stree("-s", path, "context", "--json", env={"STREE_DEBUG_STATS": "1"})  # the index rewritten with them
    assert r.code == 0 and "index fresh" in r.err, r
    assert r.out == stree("--no-cache", "-s", path, "context", "--json").out
    assert json.loads(r.out)["thinkingLevel"] == "low"
    assert int(re.search(r"path rows walked (\d+)", r.err).group(1)) <= 2 + 25 + 2, r.err
