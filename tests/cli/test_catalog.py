"""The catalogue, discovery of every agent's sessions, headerless files: real files in a
temporary HOME, stree run as a user runs it.

The catalogue is what `ls --all`, `grep` and `stats --all` read, not one command: so one module
(the `catalog` command's own tests are test_catalog_<aspect>.py, grep's test_grep*.py)."""

import json
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from builders import SessionBuilder, dumps
from catalog_corpus import PROJECT, session
from conftest import ROOT


@pytest.fixture(autouse=True)
def each_command_past_the_tick(monkeypatch, tmp_path):
    """These tests count the work a command does after files were just written, and a file read
    in the same tick of the clock as its last change is checked again by the next command
    (storage.index.racy): each command here starts once every file under tmp_path (the HOME,
    the sessions, the caches) is past that tick, as a process's start would have let it be."""
    import clock

    clock.each_command_past_the_tick(monkeypatch, tmp_path)


@pytest.fixture
def agents(isolated_home):
    """pi, oh-my-pi and OpenClaw (+ Clawdbot, Moltbot) directories with sessions."""
    home = isolated_home
    out = {}
    pi = home / ".pi/agent/sessions" / PROJECT
    pi.mkdir(parents=True)
    out["pi1"] = session("0199aaaa-0000-7000-8000-000000000001", "pi one").write(pi / "a.jsonl")
    out["pi2"] = session("0199aaaa-0000-7000-8000-000000000002", "pi two", start=1_795_100_000_000).write(pi / "b.jsonl")
    omp = home / ".omp/agent/sessions" / PROJECT
    omp.mkdir(parents=True)
    b = session("0199bbbb-0000-7000-8000-000000000001", "omp one", start=1_795_200_000_000)
    title = dumps({"type": "title", "title": "an omp title"}).ljust(255) + "\n"  # oh-my-pi's title slot
    out["omp"] = omp / "c.jsonl"
    out["omp"].write_text(title + "\n".join(b.lines()) + "\n")
    for base, n in ((".openclaw", 3), (".clawdbot", 4), (".moltbot", 5)):
        d = home / base / "agents" / "main" / "sessions"
        d.mkdir(parents=True)
        sid = f"0199cccc-0000-7000-8000-00000000000{n}"
        out[base] = session(sid, f"{base} live", start=1_795_300_000_000 + n).write(d / f"{sid}.jsonl")
        (d / "sessions.json").write_text("{}")
    d = home / ".openclaw/agents/main/sessions"
    out["reset"] = session("0199cccc-0000-7000-8000-0000000000a1", "reset copy").write(
        d / "0199cccc-0000-7000-8000-0000000000a1.jsonl.reset.2026-01-02T03-04-05Z")
    out["deleted"] = session("0199cccc-0000-7000-8000-0000000000a2", "deleted copy").write(
        d / "0199cccc-0000-7000-8000-0000000000a2.jsonl.deleted.2026-01-02T03-04-05Z")
    headless = session("ignored", "headless text")
    out["headerless"] = d / "0199dddd-0000-7000-8000-000000000001.jsonl"
    lines = [dumps(e) for e in headless.entries]
    lines[2] = dumps({**headless.entries[2], "parentId": "gone0000"})  # an orphan
    out["headerless"].write_text("\n".join(lines) + "\n")
    return out


def ls_all(stree, *extra, env=None):
    r = stree(*extra, "ls", "--all", "--json", env=env)
    assert r.code == 0 and "Traceback" not in r.err, r
    return [json.loads(x) for x in r.out.splitlines()]


def test_every_agent_is_found_and_listed_as_without_the_catalogue(stree, agents):
    listed = ls_all(stree)
    assert listed == ls_all(stree, "--no-cache")
    assert listed == ls_all(stree)  # warm: the same again
    by_path = {Path(r["path"]): r for r in listed}
    for key in ("pi1", "pi2", "omp", ".openclaw", ".clawdbot", ".moltbot", "reset", "deleted", "headerless"):
        assert agents[key] in by_path, key
    assert {by_path[agents[k]]["agent"] for k in ("pi1", "pi2")} == {"pi"}
    assert by_path[agents["omp"]]["agent"] == "omp" and by_path[agents["omp"]]["firstMessage"] == "omp one question 0"
    assert by_path[agents["reset"]]["state"] == "reset" and by_path[agents["deleted"]]["state"] == "deleted"
    assert by_path[agents[".moltbot"]]["agent"] == "openclaw" and by_path[agents[".moltbot"]]["state"] == "live"
    assert by_path[agents["headerless"]]["id"] == "0199dddd-0000-7000-8000-000000000001"
    assert not any(r["path"].endswith("sessions.json") for r in listed)
    only_pi = ls_all(stree, "--agent", "pi")
    assert {r["agent"] for r in only_pi} == {"pi"} and len(only_pi) == 2
    claw = ls_all(stree, "--agent", "openclaw")
    assert {r["agent"] for r in claw} == {"openclaw"} and len(claw) == 6
    human = stree("ls", "--all").out
    assert "[openclaw, reset]" in human and "[omp]" in human
    grep = stree("grep", "--json", "live answer")
    assert grep.code == 0
    assert {json.loads(x)["path"] for x in grep.out.splitlines()} == {str(agents[k]) for k in
                                                                       (".openclaw", ".clawdbot", ".moltbot")}


def test_agent_typed_on_the_command_line_narrows_the_session_ids_completion_offers(stree, agents):
    """`stree --agent pi -s <TAB>` offers what `-s` then resolves: pi's sessions, not the others'
    (as STREE_AGENT=pi does); `--agent omp` after the command works too."""
    def offered(*words):
        r = stree("__complete", "bash", "", "--", *words, "-s", "")
        assert r.code == 0, r
        return {line.split("\t")[1] for line in r.out.splitlines() if line.startswith("session\t")}

    omp, pi1 = "0199bbbb-0000-7000-8000-000000000001", "0199aaaa-0000-7000-8000-000000000001"
    assert {omp, pi1} <= offered()
    assert pi1 in offered("--agent", "pi") and omp not in offered("--agent", "pi")
    assert omp in offered("log", "--agent", "omp")
    narrowed = stree("__complete", "bash", "", "--", "-s", "", env={"STREE_AGENT": "pi"})
    assert {line.split("\t")[1] for line in narrowed.out.splitlines()[1:]} == offered("--agent", "pi")
    assert stree("--agent", "pi", "-s", omp, "log", "-n", "1").code != 0  # what it would not resolve


def test_headerless_openclaw_file_is_read_only(stree, agents, tmp_path):
    path = agents["headerless"]
    before = path.read_bytes()
    r = stree("-s", path, "log", "--format", "{id} {parentId}")
    assert r.code == 0 and "no session header" in r.err and "read-only" in r.err, r
    assert "00000003 gone0000" in r.out
    graph = stree("-s", path, "log", "--graph")
    assert graph.code == 0 and "00000003" in graph.out
    assert stree("-s", "0199dddd", "show", "00000001").code == 0  # found by its name's stem
    for write in (["label", "x", "00000001"], ["name", "new name"], ["checkout", "00000001"]):
        w = stree("-s", path, *write)
        assert w.code == 6 and "no session header" in w.err and "nothing written" in w.err, (write, w)
        assert path.read_bytes() == before
    elsewhere = tmp_path / "plain.jsonl"  # outside OpenClaw's directories: refused as pi 1.5.2 refuses it
    elsewhere.write_bytes(before)
    r = stree("-s", elsewhere, "log")
    assert r.code == 4 and "not a session header" in r.err


def stats(r):
    line = [x for x in r.err.splitlines() if x.startswith("stree: stats:")][-1]
    words = line.split()
    return int(words[words.index("parsed") + 1]), int(words[words.index("decoded") + 1])


def corpus(home, n=12, entries=120):
    sys.path.insert(0, str(ROOT / "tools" / "bench"))
    from gen import Gen

    d = home / ".pi/agent/sessions" / PROJECT
    d.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        p = d / f"s{i:03d}.jsonl"
        with open(p, "w", encoding="utf-8") as f:
            Gen(i, out=f).run(entries + i)
        paths.append(p)
    return paths


def test_only_what_changed_is_read(stree, isolated_home):
    paths = corpus(isolated_home)
    env = {"STREE_DEBUG_STATS": "1"}
    first = stree("ls", "--all", env=env)
    lines = sum(len(p.read_text().splitlines()) for p in paths)
    assert stats(first)[0] == lines
    assert stats(stree("ls", "--all", env=env)) == (0, 0)
    grown = paths[3]
    last = json.loads(grown.read_text().splitlines()[-1])
    with open(grown, "a") as f:
        f.write(dumps({"type": "message", "id": "feed0001", "parentId": last["id"], "timestamp": "2027-01-01T00:00:00.000Z",
                       "message": {"role": "user", "content": "a brand new zebra question", "timestamp": 1798761600000}}) + "\n")
    assert stats(stree("ls", "--all", env=env)) == (1, 1)
    assert ls_all(stree) == ls_all(stree, "--no-cache")
    hit = stree("grep", "--json", "zebra")
    assert hit.code == 0 and json.loads(hit.out)["entry"] == "feed0001"
    # a rewrite (another file renamed over it): read again whole
    rewritten = paths[5]
    text = rewritten.read_text().replace("parser", "PARSER")
    tmp = rewritten.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, rewritten)
    assert stats(stree("ls", "--all", env=env))[0] == len(text.splitlines())
    assert ls_all(stree) == ls_all(stree, "--no-cache")
    # deleted: gone from the listing, the catalogue and the search
    paths[7].unlink()
    listed = ls_all(stree)
    assert str(paths[7]) not in {r["path"] for r in listed} and len(listed) == len(paths) - 1
    state = json.loads(stree("catalog", "--json").out)
    assert state["sessions"] == len(paths) - 1
    con = sqlite3.connect(state["path"])
    assert con.execute("SELECT count(*) FROM sessions WHERE path=?", (str(paths[7]),)).fetchone()[0] == 0
    con.close()
    # its rows, its word index and the entries' text (what grep confirms a hit against), not their JSON
    assert state["bytes"] <= sum(p.stat().st_size for p in paths if p.exists())


def test_two_processes_update_it_at_once(isolated_home, stree):
    corpus(isolated_home, n=16)
    procs = [subprocess.Popen([sys.executable, "-m", "stree", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for args in (["catalog", "--update"], ["grep", "-c", "parser"], ["ls", "--all"])]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and b"Traceback" not in err and b"locked" not in err, err
    assert ls_all(stree) == ls_all(stree, "--no-cache")
    assert json.loads(stree("catalog", "--json").out)["sessions"] == 16
    assert sorted(stree("grep", "-c", "parser").out.splitlines()) == \
        sorted(stree("--no-cache", "grep", "-c", "parser").out.splitlines())


@pytest.mark.parametrize("damage", ["garbage", "pages", "truncated", "schema", "empty-tables", "directory"])
def test_a_damaged_catalogue_is_rebuilt_when_it_is_still_stree_s(isolated_home, stree, damage):
    corpus(isolated_home, n=6)
    expected = ls_all(stree, "--no-cache")
    state = json.loads(stree("catalog", "--update", "--json").out)
    db = Path(state["path"])
    if damage == "garbage":
        db.write_bytes(random.Random(1).randbytes(db.stat().st_size))
    elif damage == "pages":  # SQLite's header and schema intact, the data pages garbage
        data = bytearray(db.read_bytes())
        rng = random.Random(2)
        for at in range(8192, len(data), 512):
            data[at:at + 256] = rng.randbytes(256)
        db.write_bytes(bytes(data))
    elif damage == "truncated":
        with open(db, "r+b") as f:
            f.truncate(db.stat().st_size // 3)
    elif damage == "schema":
        con = sqlite3.connect(db)
        con.execute("UPDATE meta SET value=999 WHERE key='schema'")
        con.commit()
        con.close()
    elif damage == "empty-tables":
        con = sqlite3.connect(db)
        con.execute("DROP TABLE entries")
        con.commit()
        con.close()
    else:
        db.unlink()
        db.mkdir()
    before = None if damage == "directory" else db.read_bytes()
    got = stree("ls", "--all", "--json")
    assert got.code == 0 and "Traceback" not in got.err, got
    assert [json.loads(x) for x in got.out.splitlines()] == expected
    g = stree("grep", "-c", "parser")
    assert g.code == 0 and "Traceback" not in g.err, g
    assert sorted(g.out.splitlines()) == sorted(stree("--no-cache", "grep", "-c", "parser").out.splitlines())
    if damage in ("garbage", "directory"):
        # nothing in it says stree made it (its header is gone): left alone, said so, answered from the files
        assert f"{db}: not stree's catalogue" in got.err and "hint:" in got.err, got.err
        assert db.is_dir() if damage == "directory" else db.read_bytes() == before
    else:  # SQLite's header says it is stree's (application id): rebuilt
        assert json.loads(stree("catalog", "--json").out)["sessions"] == 6


def test_pi_still_reads_the_sessions_after_stree(stree, agents):
    from pi_harness import REFERENCE, pi

    before = {k: p.read_bytes() for k, p in agents.items()}
    assert stree("grep", "-c", "question").code == 0
    ls_all(stree)
    assert {k: p.read_bytes() for k, p in agents.items()} == before  # the catalogue never writes a session
    seen = pi("inspect", agents["pi1"], version=REFERENCE)
    assert seen["header"]["id"] == "0199aaaa-0000-7000-8000-000000000001"


def test_lone_surrogates_in_ids_and_text(stree, isolated_home):
    d = isolated_home / ".pi/agent/sessions" / PROJECT
    d.mkdir(parents=True)
    (d / "s.jsonl").write_text(
        '{"type":"session","version":3,"id":"s\\ud800x-0000","timestamp":1795000000000,"cwd":"/p"}\n'
        '{"type":"message","id":"e\\udc00id","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
        '"message":{"role":"user","content":"hello w\\ud800rld lemon"}}\n')
    assert ls_all(stree) == ls_all(stree, "--no-cache")
    assert ls_all(stree)[0]["created"] == 1795000000000  # a header value read back as it was
    hits = [stree(*mode, "grep", "--json", "lemon") for mode in ([], ["--no-cache"])]
    assert hits[0].code == 0 and hits[0].out == hits[1].out
    assert json.loads(hits[0].out)["entry"] == "e\udc00id" and json.loads(hits[0].out)["line"] == "hello w\ud800rld lemon"


def test_headerless_file_warns_on_every_read_even_when_answered_fast(stree, agents):
    """The fast read paths (stree.fastread, the kept and patched graphs of stree.entrypoint) leave a
    headerless file to click, which warns; no kept graph is replayed without the warning."""
    path = agents["headerless"]
    for _ in range(2):
        for args in (("log", "-n", "2"), ("rev-parse", "@"), ("label",), ("log", "--graph")):
            r = stree("-s", path, *args)
            assert r.code == 0 and "no session header" in r.err, (args, r)


def test_first_message_is_the_first_user_text_with_or_without_it(stree, isolated_home):
    """pi's firstMessage is the first user message with text: one with only an image is passed
    over, by the catalogue (also when the text comes in appended lines) as by a full parse."""
    d = isolated_home / ".pi/agent/sessions" / PROJECT
    d.mkdir(parents=True)
    b = SessionBuilder(cwd="/home/dev/proj", id="0199eeee-0000-7000-8000-000000000001")
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    b.append("message", message={"role": "user", "content": [image], "timestamp": 1_795_000_000_000})
    b.assistant("what is in it?")
    path = b.write(d / "s.jsonl")
    assert ls_all(stree)[0]["firstMessage"] == ls_all(stree, "--no-cache")[0]["firstMessage"] == "(no messages)"
    with open(path, "a") as f:
        f.write(dumps({"type": "message", "id": "u2", "parentId": b.leaf, "timestamp": "2026-11-20T10:00:00.000Z",
                       "message": {"role": "user", "content": "a picture of a lemon",
                                   "timestamp": 1_795_000_100_000}}) + "\n")
    assert ls_all(stree) == ls_all(stree, "--no-cache")
    assert ls_all(stree)[0]["firstMessage"] == "a picture of a lemon"
