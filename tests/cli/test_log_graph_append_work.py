"""`log --graph` after one entry appended, counted in work: the new rows drawn, and the kept
file added to in place (its unchanged output never copied), byte for byte what a full drawing
prints. (Issue 28: after an append, the cost follows the change, not the session.)"""

import json
import re
import subprocess
import sys
from pathlib import Path

from builders import dumps
from clock import past_the_tick

ROOT = Path(__file__).resolve().parents[2]


def graph(stree, path, *extra, **env):
    return stree(*extra, "-s", path, "log", "--graph", env=dict({"STREE_DEBUG_STATS": "1"}, **env))


def counts(err):
    m = re.search(r"graph rows drawn (\d+), kept (\d+) \(([\w ]+)\)", err)
    return (int(m.group(1)), int(m.group(2)), m.group(3)) if m else None


def append_under_leaf(path, n):
    last = json.loads(path.read_bytes().splitlines()[-1])
    with open(path, "a", encoding="utf-8") as f:
        f.write(dumps({"type": "message", "id": f"beef{n:04d}", "parentId": last["id"],
                       "timestamp": "2030-01-01T00:00:00.000Z",
                       "message": {"role": "user", "content": [{"type": "text", "text": f"one more {n}"}],
                                   "timestamp": 1893456000000}}) + "\n")
    past_the_tick(path)


def kept_file(home):
    (found,) = sorted((home / ".cache" / "stree" / "index").glob("*.graph"))
    return found


def test_appends_add_the_rows_drawn_to_the_kept_file_in_place(stree, tmp_path, isolated_home):
    path = tmp_path / "big.jsonl"
    subprocess.run([sys.executable, str(ROOT / "tools" / "bench" / "gen.py"), "3000", str(path)], check=True)
    past_the_tick(path)
    first = graph(stree, path, STREE_GRAPH_BLOCK="4096")
    assert first.code == 0 and counts(first.err)[0] > 1500
    kept = kept_file(isolated_home)
    inode, size = kept.stat().st_ino, kept.stat().st_size
    output = len(first.raw)
    for n in range(1, 6):
        append_under_leaf(path, n)
        got = graph(stree, path, STREE_GRAPH_BLOCK="4096")
        drawn, copied, how = counts(got.err)
        # (the first: under an assistant message shown only as the leaf, whose row the new one takes)
        assert how == ("laid out" if n == 1 else "appended") and drawn <= 3 and copied > 1500, got.err
        assert got.raw == graph(stree, path, "--no-cache").raw
        assert kept_file(isolated_home).stat().st_ino == inode  # added to, not written anew
        grown = kept_file(isolated_home).stat().st_size - size
        assert 0 < grown < output // 4, (grown, output)  # the drawn rows and the rows' state, not the output
        size += grown
        again = graph(stree, path)
        assert again.raw == got.raw and "graph-cache" in again.err, again.err


def test_a_damaged_byte_added_by_a_patch_draws_it_all_again(stree, tmp_path, isolated_home):
    path = tmp_path / "big.jsonl"
    subprocess.run([sys.executable, str(ROOT / "tools" / "bench" / "gen.py"), "600", str(path)], check=True)
    past_the_tick(path)
    graph(stree, path)
    append_under_leaf(path, 1)
    assert counts(graph(stree, path).err)[2] in ("appended", "laid out")
    from stree.storage.keptgraph.file import read_meta

    kept = kept_file(isolated_home)
    start = read_meta(kept)["start"]
    data = bytearray(kept.read_bytes())
    data[start + 2] ^= 0x20  # in the row the patch drew
    kept.write_bytes(bytes(data))
    append_under_leaf(path, 2)
    got = graph(stree, path)
    assert counts(got.err)[2] == "drawn", got.err
    assert got.raw == graph(stree, path, "--no-cache").raw
