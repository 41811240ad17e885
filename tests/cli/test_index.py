"""The on-disk index: used, updated by appends, rebuilt on any other change, never trusted blindly.

Every check compares what a user sees with the index against `--no-cache` (a
plain parse), and counts parsed lines through STREE_DEBUG_STATS.

The index is read by every command: one concern, so one module."""

import json
import os
import re
import subprocess
import sys
import time

import pytest

from builders import SessionBuilder, branchy, dumps
from clock import past_the_tick
from corpus import build

VIEWS = (
    ("log", "--json"),
    ("log", "--graph", "--filter", "all", "--format", "{id} {row}"),
    ("log", "--graph", "--json"),
    ("rev-parse", "@", "root", "@~1"),
    ("context", "--json"),
)


def stats(result):
    m = re.search(r"parsed (\d+) lines, index ([\w-]+)", result.err)
    assert m, result
    return int(m.group(1)), m.group(2)


def run(stree, path, *args, **env):
    return stree("-s", path, *args, env=dict({"STREE_DEBUG_STATS": "1"}, **env))


def views(stree, path, *extra, **env):
    out = []
    for view in VIEWS:
        r = stree(*extra, "-s", path, *view, env=env)
        out.append((r.code, r.out, re.sub(r"stree: (stats|debug): .*\n", "", r.err)))
    return out


def index_files(home):
    d = home / ".cache" / "stree" / "index"
    return sorted(d.glob("*.idx")) if d.exists() else []


def appended(b, text):
    """A new user entry line, as pi appends it."""
    b.user(text)
    return dumps(b.entries[-1]) + "\n"


def test_index_is_built_then_used_then_updated_by_one_line(stree, tmp_path, isolated_home):
    b = branchy()
    path = b.write(tmp_path / "s.jsonl")
    first = run(stree, path, "log", "-n", "2")
    assert first.code == 0 and stats(first) == (len(b.entries) + 1, "built")
    assert len(index_files(isolated_home)) == 1
    again = run(stree, path, "log", "-n", "2")
    assert stats(again) == (0, "fresh") and again.out == first.out
    with open(path, "a", encoding="utf-8") as f:
        f.write(appended(b, "one more question"))
    after = run(stree, path, "log", "-n", "2")
    assert stats(after) == (1, "updated")
    assert "user: one more question" in after.out.splitlines()[0]
    assert views(stree, path) == views(stree, path, "--no-cache")


def test_appends_by_another_process_are_picked_up(stree, tmp_path):
    b = branchy()
    path = b.write(tmp_path / "s.jsonl")
    run(stree, path, "log")
    lines = appended(b, "from a writer process") + appended(b, "and another")
    writer = "import sys; f = open(sys.argv[1], 'a'); f.write(sys.argv[2]); f.close()"
    subprocess.run([sys.executable, "-c", writer, str(path), lines], check=True)
    r = run(stree, path, "log", "-n", "1", "--format", "{id} {preview}")
    assert stats(r) == (2, "updated")
    assert r.out == f"{b.leaf} user: and another\n"
    assert views(stree, path) == views(stree, path, "--no-cache")


def test_torn_last_line_is_never_indexed(stree, tmp_path):
    b = branchy()
    path = b.write(tmp_path / "s.jsonl")
    line = appended(b, "written in two parts")
    with open(path, "a", encoding="utf-8") as f:
        f.write(line[:25])
    r = run(stree, path, "log", "-n", "1")
    assert "torn last line" not in r.out and "skipped 1 malformed line" in r.err
    assert stats(r)[1] == "built"
    with open(path, "a", encoding="utf-8") as f:
        f.write(line[25:])
    r = run(stree, path, "log", "-n", "1")
    assert stats(r) == (1, "updated") and "user: written in two parts" in r.out and "malformed" not in r.err
    assert views(stree, path) == views(stree, path, "--no-cache")


@pytest.mark.parametrize("change", ["truncate", "edit-same-size", "edit-and-append", "replace-by-rename"])
def test_any_other_change_rebuilds(stree, tmp_path, change):
    b = branchy()
    path = b.write(tmp_path / "s.jsonl")
    run(stree, path, "log")
    text = path.read_text(encoding="utf-8")
    time.sleep(0.01)  # a distinct mtime even on coarse clocks
    if change == "truncate":
        path.write_text("\n".join(text.splitlines()[:-3]) + "\n", encoding="utf-8")
    elif change == "edit-same-size":
        path.write_text(text.replace("Fix the CSV quoting bug", "Fix the TSV quoting bug"), encoding="utf-8")
    elif change == "edit-and-append":  # an earlier line changes at the start of the file, then lines are added
        edited = text.replace("Fix the CSV quoting bug", "Mend the CSV quoting bugs!")
        path.write_text(edited + appended(b, "appended too"), encoding="utf-8")
    else:  # as `stree migrate` or an editor does: a new file renamed over the old one
        new = tmp_path / "new.jsonl"
        new.write_text(text.replace("Fix the CSV quoting bug", "Fix the CSV quoting BUG"), encoding="utf-8")
        os.replace(new, path)
    r = run(stree, path, "log", "--graph", "--filter", "all")
    assert stats(r)[1] == "built"
    assert r.out == stree("--no-cache", "-s", path, "log", "--graph", "--filter", "all").out
    if change != "truncate":
        assert "quoting bug in parser.py" not in r.out or "TSV" in r.out or "Mend" in r.out or "BUG" in r.out


def test_corrupt_index_is_a_miss_not_an_error(stree, tmp_path, isolated_home):
    path = branchy().write(tmp_path / "s.jsonl")
    run(stree, path, "log", "--graph")  # builds the index and caches previews
    expected = views(stree, path, "--no-cache")
    (index,) = index_files(isolated_home)
    data = bytearray(index.read_bytes())
    for damage in ("flip", "truncate", "garbage", "empty", "extended"):
        if damage == "extended":
            bad = data + b"\0"
        elif damage == "flip":
            bad = bytearray(data)
            bad[len(bad) // 2] ^= 0xFF
        elif damage == "truncate":
            bad = data[:len(data) // 3]
        elif damage == "garbage":
            bad = b"not an index at all" * 10
        else:
            bad = b""
        index.write_bytes(bytes(bad))
        r = run(stree, path, "log", "-n", "3")
        assert r.code == 0 and stats(r)[1] == "built", (damage, r)
        index.write_bytes(bytes(bad))
        assert views(stree, path) == expected, damage


def test_an_index_damaged_with_its_modification_time_put_back_is_a_miss(stree, tmp_path, isolated_home):
    """Bytes rotted on disk, or an editor that restores the mtime: the index's own stat says
    nothing changed, its CRC does."""
    path = branchy().write(tmp_path / "s.jsonl")
    run(stree, path, "log", "--graph")
    expected = views(stree, path, "--no-cache")
    (index,) = index_files(isolated_home)
    data = bytearray(index.read_bytes())
    for where in (0.3, 0.6, 0.9):
        bad = bytearray(data)
        for i in range(int(len(bad) * where), int(len(bad) * where) + 64):
            bad[i] ^= 0xFF
        st = index.stat()
        index.write_bytes(bytes(bad))
        os.utime(index, ns=(st.st_atime_ns, st.st_mtime_ns))
        r = run(stree, path, "log", "-n", "3")
        assert r.code == 0 and stats(r)[1] == "built", (where, r)
        index.write_bytes(bytes(bad))
        os.utime(index, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert views(stree, path) == expected, where


def test_two_processes_updating_the_same_index(stree, tmp_path, isolated_home):
    b = SessionBuilder()
    for i in range(300):
        b.user(f"question {i}")
        b.assistant(f"answer {i}", tools=[("read", {"path": f"src/f{i}.py"})])
    path = b.write(tmp_path / "s.jsonl")
    run(stree, path, "log", "-n", "1")
    with open(path, "a", encoding="utf-8") as f:
        f.write(appended(b, "racing"))
    env = dict(os.environ, STREE_DEBUG_STATS="1")
    cmd = [sys.executable, "-m", "stree", "-s", str(path), "log", "--graph", "--format", "{id} {row}"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for _ in range(6)]
    results = [p.communicate(timeout=120) for p in procs]
    expected = stree("--no-cache", "-s", path, "log", "--graph", "--format", "{id} {row}").out.encode()
    assert all(p.returncode == 0 for p in procs)
    assert all(out == expected for out, _ in results)
    assert len(index_files(isolated_home)) == 1
    assert not list((isolated_home / ".cache" / "stree" / "index").glob("*.tmp"))
    r = run(stree, path, "log", "--graph", "--format", "{id} {row}")
    assert stats(r) == (0, "graph-cache") and r.out.encode() == expected  # drawn by the racers, kept
    r = run(stree, path, "log", "--graph", "--format", "{row}")
    assert stats(r) == (0, "fresh")


def test_results_identical_with_and_without_index_over_the_corpus(stree, tmp_path, isolated_home):
    files = build(tmp_path / "corpus", isolated_home)
    omp = tmp_path / "corpus" / "omp.jsonl"
    title = dumps({"type": "title", "v": 1, "title": "omp session", "pad": " " * 180})
    omp.write_text(title + "\n" + branchy().write(tmp_path / "b.jsonl").read_text(), encoding="utf-8")
    files["omp"] = omp
    for name, path in files.items():
        plain = views(stree, path, "--no-cache")
        assert views(stree, path) == plain, name  # builds the index (and caches previews)
        assert views(stree, path) == plain, name  # reads it


def test_parse_across_read_blocks_matches(tmp_path, monkeypatch):
    """Lines cut by the block-wise read (many tiny blocks) parse as one read of the whole file."""
    from stree.storage import scan, session

    b = SessionBuilder()
    for i in range(400):
        b.user(f"question {i} — ünïcödé")
        b.assistant(f"answer {i}", tools=[("bash", {"command": f"echo {i}"})])
    lines = b.lines()
    lines.insert(200, "{broken")
    lines.insert(300, "")
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def shape(s):
        return ([(n.id, n.parent, n.type, n.role, n.ts, n.offset, n.length, n.line, n.index, n.aux, n.hidden)
                 for n in s.nodes], s.malformed, s.line, s.index)

    whole = session.parse(str(path))
    monkeypatch.setattr(scan, "BLOCK", 97)
    blocks = session.parse(str(path))
    in_memory = session.parse(str(path), path.read_bytes())
    assert len(whole.nodes) == 800
    assert shape(whole) == shape(blocks) == shape(in_memory)
    assert whole.malformed == [(201, "invalid JSON (Expecting property name enclosed in double quotes)")]


@pytest.mark.parametrize("block", [1, 2, 7, 300, 4096])
@pytest.mark.parametrize("tail", ["\n", "", "torn"])
def test_each_block_parses_where_it_was_read_and_the_line_it_cuts_starts_the_next(tmp_path, monkeypatch, block,
                                                                                 tail):
    """A block is parsed up to its last newline and the line it cut is read again with the next
    block: lines shorter and longer than a block, blank and broken ones, a last line ended, not
    ended or torn, parse as one read of the whole file."""
    from stree.storage import scan, session

    b = SessionBuilder()
    for i in range(60):
        b.user("q" * (i * 37 % 700))
        b.assistant(f"answer {i}", tools=[("bash", {"command": f"echo {i}"})] if i % 3 else [])
    lines = b.lines()
    lines[20:20] = ["", "   ", "{broken", "[]"]
    text = "\n".join(lines) + ("\n" if tail == "\n" else "")
    if tail == "torn":
        text = text[:-9]
    path = tmp_path / "s.jsonl"
    path.write_text(text, encoding="utf-8")

    def shape(s):
        return ([(n.id, n.parent, n.type, n.role, n.ts, n.offset, n.length, n.line, n.index, n.aux, n.hidden)
                 for n in s.nodes], s.malformed, s.line, s.index, s.ends_with_newline)

    in_memory = session.parse(str(path), path.read_bytes())
    monkeypatch.setattr(scan, "BLOCK", block)
    assert shape(session.parse(str(path))) == shape(in_memory)
    assert len(in_memory.nodes) == 120 - (tail == "torn") and in_memory.malformed


def test_no_cache_flag_and_env_leave_no_index(stree, tmp_path, isolated_home):
    path = branchy().write(tmp_path / "s.jsonl")
    assert stats(stree("--no-cache", "-s", path, "log", env={"STREE_DEBUG_STATS": "1"}))[1] == "off"
    r = run(stree, path, "log", STREE_NO_CACHE="1")
    assert stats(r)[1] == "off"
    assert index_files(isolated_home) == []


def test_gc_removes_stale_indexes_and_cache_clear_all(stree, tmp_path, isolated_home):
    keep = branchy().write(tmp_path / "keep.jsonl")
    gone = branchy().write(tmp_path / "gone.jsonl")
    replaced = branchy().write(tmp_path / "replaced.jsonl")
    for p in (keep, gone, replaced):
        run(stree, p, "log")
    assert len(index_files(isolated_home)) == 3
    gone.unlink()
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(replaced.read_bytes())
    os.replace(copy, replaced)
    listing = [json.loads(x) for x in stree("cache", "--json").out.splitlines()]
    assert {(x["session"], x["stale"]) for x in listing} == {(str(keep), False), (str(gone), True),
                                                            (str(replaced), True)}
    r = stree("gc")
    assert r.code == 0 and "removed 2 cache file(s)" in r.err
    assert len(index_files(isolated_home)) == 1
    assert stats(run(stree, keep, "log"))[1] == "fresh"
    r = stree("cache", "clear")
    assert r.code == 0 and "removed 1 cache file(s)" in r.err and index_files(isolated_home) == []


LOAD_MANY = """
import os, sys
from stree.storage import index
from stree.storage.nodes import FIELDS
index.MAP_MAX = int(sys.argv[1])
before = len(os.listdir("/proc/self/fd"))
out = []
for path in sys.argv[2:]:
    s, state = index.load(path)
    out.append((state, [s.nodes.col(name) for name in FIELDS], s.nodes.shape.state()))
    s.close()  # as ls --all does: the session file's descriptor is closed, the Session kept
print(len(os.listdir("/proc/self/fd")) - before)
print(repr(out))
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc")
def test_index_files_mapped_or_read_give_the_same_sessions_and_few_descriptors(tmp_path, isolated_home):
    """An index's data area is mapped (no copy per command), but a process loading many
    sessions keeps at most index.MAP_MAX mappings (each holds a descriptor) and reads the rest."""
    paths = []
    for i in range(20):
        b = branchy()
        b.user(f"session {i}")
        paths.append(str(b.write(tmp_path / f"s{i}.jsonl")))

    def load_all(map_max):
        r = subprocess.run([sys.executable, "-c", LOAD_MANY, str(map_max), *paths], capture_output=True,
                           text=True, env=dict(os.environ, STREE_JOBS="1"), timeout=120)
        assert r.returncode == 0, r.stderr
        fds, sessions = r.stdout.split("\n", 1)
        return int(fds), sessions
    load_all(0)  # builds the indexes
    assert len(index_files(isolated_home)) == 20
    mapped_fds, mapped = load_all(16)
    read_fds, read = load_all(0)
    assert "'fresh'" in mapped and "'built'" not in mapped and "'updated'" not in mapped
    assert mapped == read
    assert read_fds <= 1 and 16 <= mapped_fds <= 17, (read_fds, mapped_fds)


def test_previews_kept_across_an_append_and_its_rewrite(stree, tmp_path, isolated_home):
    """Every preview computed, lines appended, a command computes theirs and rewrites the index
    (its previews section copied, the new ones added): the next command decodes no entry, and
    every view is what a plain parse gives."""
    b = branchy()
    path = b.write(tmp_path / "s.jsonl")
    run(stree, path, "log", "--graph", "--filter", "all")
    run(stree, path, "log", "--graph", "--filter", "all")
    with open(path, "a", encoding="utf-8") as f:
        f.write(appended(b, "first appended") + appended(b, "second appended"))
    past_the_tick(path)  # an index written in the file's tick of the clock checks it again
    r = run(stree, path, "log", "-n", "3")
    assert stats(r) == (2, "updated") and "second appended" in r.out
    again = run(stree, path, "log", "--graph", "--filter", "all")
    assert stats(again)[1] == "fresh" and re.search(r"decoded 0 entries", again.err), again.err
    assert views(stree, path) == views(stree, path, "--no-cache")
