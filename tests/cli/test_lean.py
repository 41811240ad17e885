"""Commands that list or check a whole session decode only what they need from the index
(counted through STREE_DEBUG_STATS: the entries loaded, the index values decoded) and give what a
plain parse gives. (fsck's firstKeptEntryId check on a long path is in test_fsck.py.)

The decoding of several commands at once, measured one way: one concern, so one module."""

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def stats(result):
    m = re.search(r"index (\w+), decoded (\d+) entries, index values (\d+)", result.err)
    assert m, result.err
    return m.group(1), int(m.group(2)), int(m.group(3))


def generated(tmp_path, n):
    path = tmp_path / f"g{n}.jsonl"
    subprocess.run([sys.executable, str(ROOT / "tools/bench/gen.py"), str(n), str(path)], check=True, timeout=120)
    return path


def test_listings_decode_few_index_values_and_match_a_plain_parse(stree, tmp_path, isolated_home):
    n = 6000
    path = generated(tmp_path, n)
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    markers = sum(1 for e in lines if e["type"] == "custom" and e.get("customType") == "stree/checkout")
    others = sum(1 for e in lines if e["type"] != "message")
    assert markers and others < n // 10
    stree("-s", path, "log", "-n", "1")  # builds the index
    stree("-s", path, "label")  # keeps the previews of the labelled entries in it (the first may need
    #                             every assistant message's toolCall ids to preview a tool result)
    for args in (["reflog"], ["reflog", "--json"], ["name"], ["label"], ["label", "--json"], ["fsck", "--json"]):
        warm = stree("-s", path, *args, env={"STREE_DEBUG_STATS": "1", "STREE_NO_FAST": "1"})
        plain = stree("--no-cache", "-s", path, *args)
        assert (warm.code, warm.out) == (plain.code, plain.out), args
        state, entries, values = stats(warm)
        if args[0] == "fsck":
            # every id and timestamp is looked at once, a block at a time, and nothing else is
            assert values <= 2 * n + others, (args, values)
        elif args[0] == "reflog":
            # every entry appended at the leaf is a move (a commit, as git lists them): its id,
            # parent and timestamp, and its preview from the index; nothing decoded twice
            assert state == "fresh"
            assert values <= 4 * n + others, (args, values)
        else:
            assert state == "fresh"
            # the aux values of the rows that are not messages at most: no column decoded whole
            assert values <= others, (args, values)
        if args[0] == "reflog":
            # its commit lines show previews: computed once (a tool result's reads its call's
            # assistant message too) and kept in the index, so the next run reads only the
            # checkout markers from the file (their from/to)
            assert entries <= 2 * n, (args, entries)
            again = stats(stree("-s", path, *args, env={"STREE_DEBUG_STATS": "1", "STREE_NO_FAST": "1"}))
            assert again[1] == markers, (args, again)
        if args[0] == "name":
            assert entries == 0
    # `reflog -n 3` makes the newest three moves only: as many lines as entries in a long session,
    # made as they are printed, never all of them first
    few = stree("-s", path, "reflog", "-n", "3", env={"STREE_DEBUG_STATS": "1", "STREE_NO_FAST": "1"})
    assert few.out.splitlines() == stree("--no-cache", "-s", path, "reflog").out.splitlines()[:3]
    assert stats(few)[2] <= 100, stats(few)


def test_the_counter_counts(stree, tmp_path, isolated_home):
    """The stats line's index values: a command that reads every entry's id decodes them all."""
    path = generated(tmp_path, 3000)
    stree("-s", path, "log", "-n", "1")
    r = stree("-s", path, "log", "--format", "{id} {parentId} {timestamp}", env={"STREE_DEBUG_STATS": "1", "STREE_NO_FAST": "1"})
    assert r.code == 0
    assert stats(r)[2] >= 3000


def reference_abandoned(entries, old_leaf, target):
    """pi's collectEntriesForBranchSummary over a list of entries: the old leaf's path back to
    the first entry of the target's path it holds (ids, oldest first), and that entry."""
    by_id = {e["id"]: e for e in entries}

    def path(id):
        out = []
        while id is not None and id in by_id and id not in out:
            out.append(id)
            id = by_id[id]["parentId"]
        return out
    old_path = path(old_leaf)
    common = next((x for x in path(target) if x in old_path), None) if target is not None else None
    out = []
    for x in old_path:
        if x == common:
            break
        out.append(x)
    return out[::-1], common


def test_abandoned_branches_where_paths_meet():
    """Tree.abandoned (walking both paths up in turn) against the whole-path reference, on random
    trees: the target above the old leaf, below it, on another branch, on another root, itself."""
    import random

    from stree.core.tree import Tree
    from stree.storage.nodes import node_from_object

    rnd = random.Random(7)
    for trial in range(40):
        entries = []
        for i in range(rnd.randint(1, 60)):
            parent = None
            if entries and rnd.random() < 0.95:
                parent = entries[-rnd.randint(1, min(len(entries), 6))]["id"] if rnd.random() < 0.5 else entries[-1]["id"]
            entries.append({"type": "message", "id": f"{i:08x}", "parentId": parent,
                            "timestamp": "2026-01-01T00:00:00.000Z", "message": {"role": "user", "content": "x"}})
        nodes = [node_from_object(e, k, 1, k + 2, k + 1) for k, e in enumerate(entries)]
        tree = Tree(nodes)
        ids = [e["id"] for e in entries]
        for _ in range(20):
            old, target = rnd.choice(ids), rnd.choice(ids + [None])
            got_nodes, common = tree.abandoned(old, target)
            assert ([n.id for n in got_nodes], common) == reference_abandoned(entries, old, target), (trial, old, target)
