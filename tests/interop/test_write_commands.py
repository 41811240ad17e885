"""label, name, fork, migrate, reflog and the writing layer, driven as a user drives them,
with the real pi (harness) confirming what it sees in every file stree writes."""

import json
import os
import re
import subprocess
import sys
import textwrap
import time

import pytest
from builders import SessionBuilder, branchy, dumps
from pi_harness import VERSIONS, each_version, pi

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def lines_of(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- label / name ----------------------------------------------------------------


@each_version
def test_label_set_list_clear_like_pi(stree, branchy_file, pi_version):
    path = branchy_file
    last = lines_of(path)[-1]["id"]  # the session_info entry of the name: bookkeeping, not a position
    leaf = "00000013"  # @: the entry before the label and name entries appended at it
    assert stree("-s", path, "rev-parse", "@").out == f"{leaf}\n"
    r = stree("-s", path, "label", "bug-found")
    assert r.code == 0, r
    entry = lines_of(path)[-1]
    assert list(entry) == ["type", "id", "parentId", "timestamp", "targetId", "label"]
    assert entry["parentId"] == last and entry["targetId"] == leaf and ISO.match(entry["timestamp"])
    assert stree("-s", path, "label", "  retry  ", "00000006").code == 0
    listed = [json.loads(x) for x in stree("-s", path, "label", "--json").out.splitlines()]
    assert [(x["label"], x["id"]) for x in listed] == [
        ("bug-found", leaf), ("csv-attempt", "00000009"), ("retry", "00000006"), ("start", "00000001")]
    assert listed[2]["preview"] == "user: Try the csv module"
    human = stree("-s", path, "label").out.splitlines()
    assert human[2] == "retry        00000006  user: Try the csv module"  # names aligned

    assert stree("-s", path, "label", "-d", "retry").code == 0  # by name
    assert stree("-s", path, "label", "-d", "00000001").code == 0  # by revision
    assert stree("-s", path, "label", " ", "00000009").code == 0  # blank clears, as pi
    cleared = lines_of(path)[-1]
    assert cleared == {k: cleared[k] for k in ("type", "id", "parentId", "timestamp", "targetId")}
    assert pi("inspect", path, version=pi_version)["labels"] == {leaf: "bug-found"}
    assert stree("-s", path, "label", "-d", "nothing-here").code == 3


@each_version
def test_label_is_unique_unless_forced(stree, branchy_file, pi_version):
    before = branchy_file.read_bytes()
    r = stree("-s", branchy_file, "label", "start", "@")
    assert r.code == 6 and "already exists" in r.err and "label -f start" in r.err
    assert branchy_file.read_bytes() == before
    assert stree("-s", branchy_file, "label", "-f", "start", "00000006").code == 0
    assert stree("-s", branchy_file, "rev-parse", "start").out.strip() == "00000006"
    assert "00000001" not in pi("inspect", branchy_file, version=pi_version)["labels"]


@each_version
def test_name_show_set_clear_on_any_session(stree, tmp_path, branchy_file, pi_version):
    other = branchy().write(tmp_path / "older.jsonl")
    os.utime(other, (1, 1))  # not the newest: -s still reaches it
    assert stree("-s", other, "name").out == "fix quoting\n"
    assert stree("-s", other, "name", "  csv spike ").code == 0
    assert lines_of(other)[-1]["name"] == "csv spike"
    assert pi("inspect", other, version=pi_version)["name"] == "csv spike"
    assert stree("-s", other, "name", "--clear").code == 0
    r = stree("-s", other, "name")
    assert r.code == 1 and r.out == ""
    assert pi("inspect", other, version=pi_version)["name"] is None


# -- fork ------------------------------------------------------------------------


@each_version
def test_fork_path_labels_and_parent_session(stree, branchy_file, tmp_path, pi_version):
    os.chmod(branchy_file, 0o640)
    r = stree("-s", branchy_file, "fork", "@~1")
    assert r.code == 0, r
    new = tmp_path / r.out.strip()
    assert new.parent == tmp_path and oct(new.stat().st_mode & 0o777) == "0o640"
    header, *entries = lines_of(new)
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", header["id"])
    assert header["parentSession"] == str(branchy_file) and header["cwd"] == "/home/dev/proj"
    assert new.name.endswith(f"_{header['id']}.jsonl")

    source = pi("inspect", branchy_file, version=pi_version)
    seen = pi("inspect", new, version=pi_version)
    path_ids = [e["id"] for e in source["entries"] if e["type"] != "label"]
    on_path = set(stree("-s", branchy_file, "log", "--format", "{id}", "@~1").out.split())
    kept = [e for e in source["entries"] if e["id"] in on_path and e["type"] != "label"]
    assert [e for e in seen["entries"] if e["type"] != "label"] == kept
    assert set(path_ids) >= {e["id"] for e in kept}
    # labels of kept entries, re-appended with their original timestamps
    assert seen["labels"] == {"00000001": "start"}
    assert seen["labelTimestamps"]["00000001"] == source["labelTimestamps"]["00000001"]
    assert seen["header"]["parentSession"] == str(branchy_file)
    at = kept[-1]["id"]
    assert seen["context"] == pi("inspect", branchy_file, "--context-at", at, version=pi_version)["contexts"][at]


@each_version
def test_fork_before_a_user_message_full_and_cwd(stree, branchy_file, tmp_path, pi_version):
    r = stree("-s", branchy_file, "fork", "--before", "00000006", "-o", tmp_path / "f.jsonl")
    assert r.code == 0 and r.out.splitlines() == [str(tmp_path / "f.jsonl")]  # the path alone: p=$(stree fork ...)
    assert r.err.splitlines() == ["Try the csv module"]  # the text to send again
    assert [e["id"] for e in lines_of(tmp_path / "f.jsonl")[1:4]] == ["00000001", "00000002", "00000003"]
    assert stree("-s", branchy_file, "fork", "--before", "00000002").code == 2
    again = stree("-s", branchy_file, "fork", "-o", tmp_path / "f.jsonl")
    assert again.code == 6 and "already exists" in again.err

    r = stree("-s", branchy_file, "fork", "--full", "--cwd", tmp_path / "other", "--json")
    made = json.loads(r.out)
    expected_dir = tmp_path / "home" / ".pi" / "agent" / "sessions" / ("--" + str(tmp_path / "other")[1:].replace("/", "-") + "--")
    assert os.path.dirname(made["path"]) == str(expected_dir)
    full = pi("inspect", made["path"], version=pi_version)
    assert full["header"]["cwd"] == str(tmp_path / "other")
    assert full["entries"] == pi("inspect", branchy_file, version=pi_version)["entries"]

    root = stree("-s", branchy_file, "fork", "--before", "00000001", "-o", tmp_path / "empty.jsonl")
    assert root.code == 0 and root.err.splitlines() == ["Fix the CSV quoting bug in parser.py"]
    assert pi("inspect", tmp_path / "empty.jsonl", version=pi_version)["entries"] == []


# -- migrate ---------------------------------------------------------------------


def v1_file(path):
    """A version 1 session: no ids, a compaction pointing at a line index, a hookMessage."""
    lines = [
        {"type": "session", "id": "5b1c0e8e-2f0a-4e4b-9d7e-6a2c1b0f3e11", "timestamp": "2025-01-02T03:04:05.678Z",
         "cwd": "/home/dev/old"},
        {"type": "message", "timestamp": "2025-01-02T03:04:06.000Z",
         "message": {"role": "user", "content": "hello", "timestamp": 1735787046000}},
        {"type": "message", "timestamp": "2025-01-02T03:04:07.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}], "provider": "anthropic",
                     "model": "claude-sonnet-4-5", "usage": {"input": 1, "output": 2, "cost": {"total": 0.1}},
                     "stopReason": "stop", "timestamp": 1735787047000}},
        {"type": "message", "timestamp": "2025-01-02T03:04:08.000Z",
         "message": {"role": "user", "content": "more ünïcode", "timestamp": 1735787048000}},
        {"type": "compaction", "timestamp": "2025-01-02T03:04:09.000Z", "summary": "said hello",
         "firstKeptEntryIndex": 3, "tokensBefore": 1.5e3},
        {"type": "message", "timestamp": "2025-01-02T03:04:10.000Z",
         "message": {"role": "hookMessage", "customType": "x", "content": "hooked", "display": True,
                     "timestamp": 1735787050000}},
    ]
    path.write_text("\n".join(dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


@each_version
def test_migrate_v1_keeps_the_ids_stree_showed_and_pi_agrees(stree, tmp_path, pi_version):
    path = v1_file(tmp_path / "old.jsonl")
    ids_before = stree("-s", path, "log", "--format", "{id}").out.split()
    pis_own = pi("inspect", path, version=pi_version)  # pi migrates a copy, with random ids
    check = stree("-s", path, "migrate", "--check")
    assert check.code == 1 and "version 1" in check.out

    r = stree("-s", path, "migrate")
    assert r.code == 0 and "migrated" in r.err
    assert stree("-s", path, "log", "--format", "{id}").out.split() == ids_before
    assert stree("-s", path, "migrate", "--check").code == 0
    seen = pi("inspect", path, version=pi_version)
    assert not seen["rewritten"] and seen["header"]["version"] == 3
    assert seen["context"] == pis_own["context"]
    assert [e["id"] for e in seen["entries"]][::-1] == ids_before
    compaction = seen["entries"][3]
    assert compaction["firstKeptEntryId"] == seen["entries"][2]["id"]
    # key order and numbers exactly as pi's JSON.stringify writes its own migration
    assert list(compaction) == list(pis_own["entries"][3])
    assert '"tokensBefore":1500' in path.read_text()


@each_version
def test_appending_to_an_old_file_migrates_it_first(stree, tmp_path, pi_version):
    path = v1_file(tmp_path / "old.jsonl")
    ids = stree("-s", path, "log", "--format", "{id}").out.split()
    r = stree("-s", path, "label", "greeting", ids[-1])
    assert r.code == 0 and "migrated" in r.err and "from version 1 to 3" in r.err
    seen = pi("inspect", path, version=pi_version)
    assert not seen["rewritten"] and seen["labels"] == {ids[-1]: "greeting"}


def test_migrate_keeps_an_oh_my_pi_title_line_byte_identical(stree, tmp_path):
    title = dumps({"type": "title", "v": 1, "title": "spike", "pad": ""})
    title = title[:-2] + " " * (255 - len(title)) + '"}'
    path = tmp_path / "omp.jsonl"
    body = v1_file(tmp_path / "v1.jsonl").read_text()
    path.write_text(title + "\n" + body.replace('"cwd":"/home/dev/old"}', '"cwd":"/home/dev/old","version":2}', 1)
                    .replace('"firstKeptEntryIndex":3', '"firstKeptEntryId":"x"'))
    # as a v2 file the entries need ids
    lines = path.read_text().splitlines()
    for i in range(2, len(lines)):
        obj = json.loads(lines[i])
        obj = {"type": obj.pop("type"), "id": f"{i:08x}", "parentId": f"{i - 1:08x}" if i > 2 else None, **obj}
        lines[i] = dumps(obj)
    path.write_text("\n".join(lines) + "\n")
    assert stree("-s", path, "migrate").code == 0
    after = path.read_text().splitlines()
    assert after[0] == title and len(after[0].encode()) + 1 == 256  # the slot, newline included
    assert json.loads(after[1])["version"] == 3
    assert json.loads(after[-1])["message"]["role"] == "custom"
    assert after[2:-1] == [line.replace("1500.0", "1500") for line in lines[2:-1]]  # as JSON.stringify


# -- reflog ----------------------------------------------------------------------


def test_reflog_lists_checkouts_summaries_and_pi_jumps(stree, branchy_file, tmp_path):
    path = branchy_file
    assert stree("-s", path, "checkout", "csv-attempt").code == 0
    summary = tmp_path / "s.md"
    summary.write_text("went back")
    assert stree("-s", path, "checkout", "00000006", "--summary", summary).code == 0
    recs = [json.loads(x) for x in stree("-s", path, "reflog", "--json").out.splitlines()]
    commits = [r for r in recs if r["kind"] == "commit"]  # every entry appended at the leaf, as git's
    lines = [json.loads(x) for x in path.read_text().splitlines()[1:]]
    assert sorted(r["id"] for r in commits) == sorted(e["id"] for e in lines if e["type"] not in
                                                      ("label", "session_info", "branch_summary", "custom"))
    recs = [r for r in recs if r["kind"] != "commit"]
    assert [(r["kind"], r["from"], r["to"], r["id"]) for r in recs] == [
        ("summary", "00000009", "00000005", "00000005"),  # a user message: the leaf went to its parent
        ("checkout", "00000013", "00000009", "00000009"),  # from @, not the name entry after it
        ("summary", "00000009", "00000003", "00000003"),  # pi's own navigation in the builder
    ]
    human = stree("-s", path, "reflog", "-n", "2").out.splitlines()
    assert human == ["00000005 @{0}: checkout with summary: moving from 00000009 to 00000005",
                     "00000009 @{1}: checkout: moving from 00000013 to 00000009"]
    assert stree("-s", path, "reflog", "--format", "{from}", "-n", "1", "-z").raw == b"00000009\0"


def test_reflog_sees_a_leaf_jump_made_by_pi(stree, tmp_path):
    b = SessionBuilder()
    u = b.user("one")
    b.assistant("two")
    b.at(u)  # pi's /tree to the first answer's question, then a new prompt
    b.assistant("another answer")
    recs = [json.loads(x) for x in stree("-s", b.write(tmp_path / "j.jsonl"), "reflog", "--json").out.splitlines()]
    assert [(r["kind"], r["from"], r["to"], r["line"]) for r in recs] == [
        ("commit", u, "00000003", 4), ("jump", "00000002", u, 4),  # the jump, then the append there
        ("commit", u, "00000002", 3), ("commit", None, u, 2)]


# -- faults ----------------------------------------------------------------------


@each_version
def test_torn_last_line_is_left_alone_and_the_append_starts_fresh(stree, branchy_file, pi_version):
    torn = b'{"type":"message","id":"deadbeef","parentId":"00000015","timesta'
    with open(branchy_file, "ab") as f:
        f.write(torn)
    before = branchy_file.read_bytes()
    r = stree("-s", branchy_file, "label", "after-crash")
    assert r.code == 0, r
    data = branchy_file.read_bytes()
    assert data.startswith(before) and data[len(before):len(before) + 1] == b"\n"
    new = json.loads(data[len(before) + 1:])
    assert new["parentId"] == "00000015" and new["targetId"] == "00000013"  # @, under the name entry
    seen = pi("inspect", branchy_file, version=pi_version)
    assert seen["leafId"] == new["id"] and seen["labels"]["00000013"] == "after-crash"


@pytest.mark.parametrize("command", [["fork", "-o", "{dir}/out.jsonl"], ["fork"], ["migrate"]])
def test_killed_between_write_and_rename_leaves_everything_intact(stree, tmp_path, command):
    path = v1_file(tmp_path / "s.jsonl") if command == ["migrate"] else branchy().write(tmp_path / "s.jsonl")
    before = path.read_bytes()
    args = [a.replace("{dir}", str(tmp_path)) for a in command]
    r = stree("-s", path, *args, env={"STREE_TEST_CRASH_BEFORE_RENAME": "1"})
    assert r.code == 99 and r.out == ""
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == ["s.jsonl"]  # no half-written session
    assert stree("-s", path, "fsck").code == 0


def test_leftovers_of_a_killed_migrate_are_removed_by_the_next_one(stree, tmp_path):
    path = v1_file(tmp_path / "s.jsonl")
    assert stree("-s", path, "migrate", env={"STREE_TEST_CRASH_BEFORE_RENAME": "1"}).code == 99
    [stale] = tmp_path.glob(".s.jsonl.*.tmp")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    fresh = tmp_path / ".s.jsonl.inflight.tmp"  # another writer's, still young: kept
    fresh.write_bytes(b"")
    r = stree("-s", path, "migrate")
    assert r.code == 0, r
    assert not stale.exists() and fresh.exists()
    assert stree("-s", path, "fsck").code == 0


@pytest.mark.parametrize("command", [["label", "x"], ["name", "n"], ["checkout", "00000006"], ["migrate"]])
def test_read_only_file_is_refused_and_unchanged(stree, tmp_path, command):
    path = v1_file(tmp_path / "s.jsonl") if command == ["migrate"] else branchy().write(tmp_path / "s.jsonl")
    os.chmod(path, 0o444)
    before = path.read_bytes()
    r = stree("-s", path, *command)
    assert r.code == 6 and "read-only" in r.err and "nothing written" in r.err and "Traceback" not in r.err
    assert path.read_bytes() == before and oct(path.stat().st_mode & 0o777) == "0o444"


# -- concurrency -------------------------------------------------------------------

WORKER = textwrap.dedent("""
    import sys
    from stree.writing.append import append_entries
    path, worker = sys.argv[1], sys.argv[2]
    for n in range(50):
        append_entries(path, lambda session, tree, new: [
            new.label(tree.leaf, f"w{worker}-{n}", tree.leaf)])
""")


def test_four_processes_fifty_appends_each(tmp_path):
    path = branchy().write(tmp_path / "busy.jsonl")
    before = path.read_bytes()
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(path), str(w)]) for w in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    data = path.read_bytes()
    assert data.startswith(before) and data.endswith(b"\n")
    new = [json.loads(line) for line in data[len(before):].decode().splitlines()]
    assert len(new) == 200
    ids = [e["id"] for e in lines_of(path)[1:]]
    assert len(set(ids)) == len(ids)
    # each append is a child of the entry before it: no lost or interleaved appends
    prev = json.loads(before.splitlines()[-1])["id"]
    for e in new:
        assert e["parentId"] == prev == e["targetId"]
        prev = e["id"]
    assert sorted(e["label"] for e in new) == sorted(f"w{w}-{n}" for w in range(4) for n in range(50))
    for version, seen in zip(VERSIONS, [pi("inspect", path, version=v) for v in VERSIONS]):  # (one stress run)
        assert seen["leafId"] == new[-1]["id"] and len(seen["entries"]) == len(ids), f"pi {version}"
