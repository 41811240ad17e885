"""An index's data area is checked a block at a time where a command reads it (stree.storage.area),
not whole at every read: a command reads and checks only the blocks it uses. Damage in a block
it reads is found there, and the rows are parsed from the session file again: every view
answers as --no-cache, never an error, and the index is written anew. Damage it does not read
changes nothing it answers."""

import os
import re

import pytest

from builders import SessionBuilder
from clock import past_the_tick

VIEWS = (
    ("log", "--json"),
    ("log", "--graph", "--filter", "all"),
    ("log", "--graph", "-n", "30"),
    ("context", "--json"),
    ("show", "@~3"),
)


def _session(path, turns=700):
    """A session of several thousand entries: an index of many blocks, tool calls, labels, branches."""
    b = SessionBuilder()
    for turn in range(turns):
        prompt = b.user(f"prompt {turn} " + "x" * 40)
        b.tool_round("read", {"path": f"src/f{turn}.py"}, f"contents {turn}")
        b.assistant(f"answer {turn}")
        if turn % 50 == 0:
            b.label(prompt, f"turn-{turn}")
        if turn % 9 == 8:
            b.at(prompt)
    return b.write(path)


def _index(path):
    from stree.storage.index import index_path
    from stree.storage.indexfile import meta_of

    target = index_path(os.stat(path))
    return target, meta_of(target)[0]


def _blobs(meta):
    """name -> (offset, length) in the data area of the blobs a damage is put in."""
    segment = meta["segments"][0][1]
    out = {"ids": segment["id"][1][0], "parents": segment["parent"][1][0], "timestamps": segment["ts"][1][0],
           "offsets": segment["offset"][1], "lengths": segment["length"][1], "types": segment["type"][1][1],
           "hidden": segment["hidden"][1], "message aux": segment["aux"][1][2], "other aux": segment["aux"][1][1],
           "parents by row": meta["shape"][0][0], "the leaf's path": meta["shape"][0][4],
           "call ids": meta["calls"][1][0][0]}
    if meta.get("previews"):
        out["previews"] = meta["previews"]
    return out


def _damaged(target, clean, start, where, at):
    data = bytearray(clean)
    pos = start + where[0] + int(where[1] * at)
    for i in range(pos, min(pos + 16, start + where[0] + where[1])):
        data[i] ^= 0x5A
    target.write_bytes(bytes(data))


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 4 KiB (not 64): an index of a few hundred KiB has many."""
    monkeypatch.setenv("STREE_INDEX_BLOCK", "4096")


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize("previews", [False, True])
def test_damage_anywhere_answers_as_no_cache(stree, tmp_path, previews):
    from pathlib import Path

    path = _session(tmp_path / "s.jsonl")
    past_the_tick(path)
    expected = [stree("--no-cache", "-s", path, *view) for view in VIEWS]
    assert all(r.code == 0 for r in expected)
    assert stree("-s", path, "log", *(("--graph",) if previews else ("-n", "1"))).code == 0  # (the index; previews or not)
    target, meta = _index(path)
    target = Path(target)
    kept = (meta.get("previews") or (0, 0))[1]
    assert (kept > 10_000 if previews else kept < 1000) and meta["blocks"][0] == 12 and len(meta["blocks"][1]) // 4 > 40
    clean = target.read_bytes()
    start = len(clean) - meta["data_len"] - (meta["previews"][1] if meta.get("previews") else 0)
    parsed_again = 0
    for name, where in _blobs(meta).items():
        for at in (0.5,):
            for view, want in zip(VIEWS, expected):
                _damaged(target, clean, start, where, at)
                for kept in target.parent.glob("*.graph"):
                    kept.unlink()
                got = stree("-s", path, *view, env={"STREE_DEBUG_STATS": "1"})
                assert (got.code, got.out) == (want.code, want.out), (name, at, view, got.err[-2000:])
                assert "error" not in got.err, got.err
                stats = re.search(r"parsed (\d+) lines, index (\w+)", got.err)
                if stats.group(2) == "fresh" and int(stats.group(1)) > 0:  # found where it was read: parsed again
                    parsed_again += 1
                    for kept in target.parent.glob("*.graph"):
                        kept.unlink()
                    again = stree("-s", path, *view, env={"STREE_DEBUG_STATS": "1"})
                    assert (again.code, again.out) == (want.code, want.out)
                    assert re.search(r"parsed 0 lines, index fresh", again.err), again.err  # (written anew)
    assert parsed_again >= 5  # (the damage was found where commands read, not only when the index was opened)


@pytest.mark.usefixtures("small_blocks")
def test_a_first_screen_checks_a_few_blocks_of_the_index(tmp_path, monkeypatch):
    """The first 40 rows of the graph read a few values of each column: the blocks checked are
    a small part of the index (before: all of it, at every command)."""
    from stree.core.loading import open_session
    from stree.output.graph import graph
    from stree.storage import index

    path = _session(tmp_path / "s.jsonl", turns=1500)
    monkeypatch.setattr(index, "_LOADED", {})
    past_the_tick(path)
    open_session(str(path)).session.close()  # (the index)
    index._LOADED.clear()
    session, tree, _ = open_session(str(path))
    try:
        rows = []
        for row in graph(tree, "default"):
            rows.append(row.text())
            if len(rows) == 40:
                break
        checked = session.nodes._base.blobs._ok
        assert len(checked) > 40 and sum(checked) < len(checked) // 3, (sum(checked), len(checked))
    finally:
        session.close()


@pytest.mark.usefixtures("small_blocks")
def test_new_previews_copy_the_index_with_its_damage_still_found(stree, tmp_path):
    """A command that makes previews writes the index again with them, its data area copied a
    block at a time from the old file with the blocks' CRCs (stree.storage.indexfile.with_previews):
    a damage the command did not read is copied as it is and found by the next command that
    reads it, which answers as --no-cache."""
    from pathlib import Path

    path = _session(tmp_path / "s.jsonl", turns=300)
    past_the_tick(path)
    expected = [stree("--no-cache", "-s", path, *view) for view in VIEWS]
    carried = 0
    for name, where in _blobs(_index(path)[1] if stree("-s", path, "log", "-n", "1").code == 0 else {}).items():
        if name == "previews":
            continue
        for old in Path(_index(path)[0]).parent.glob("*"):
            old.unlink()  # (an index with the previews of one entry, built again)
        assert stree("-s", path, "log", "-n", "1").code == 0
        target, meta = _index(path)
        target = Path(target)
        clean = target.read_bytes()
        start = len(clean) - meta["data_len"] - (meta["previews"][1] if meta["previews"] else 0)
        _damaged(target, clean, start, where, 0.5)
        whole = target.read_bytes()
        damaged = whole[start + where[0]:start + where[0] + where[1]]
        made = stree("-s", path, "log", "-n", "8", env={"STREE_DEBUG_STATS": "1"})
        assert made.code == 0, made.err
        if re.search(r"parsed [1-9]\d* lines, index fresh", made.err):
            continue  # (the command read the damage: parsed again, the index written anew)
        after = _index(path)[1]
        now = target.read_bytes()
        if after["previews"][1] == (meta["previews"] or (0, 0))[1]:
            assert now == whole, name  # (the block beside the previews damaged: not written again)
            continue
        new_start = len(now) - after["data_len"] - after["previews"][1]
        if now[new_start + where[0]:new_start + where[0] + where[1]] != damaged:
            continue
        carried += 1
        for view, want in zip(VIEWS, expected):
            for kept in target.parent.glob("*.graph"):
                kept.unlink()
            got = stree("-s", path, *view)
            assert (got.code, got.out) == (want.code, want.out), (name, view, got.err[-2000:])
    assert carried >= 3
