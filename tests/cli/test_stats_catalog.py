"""`stats --all` from the catalogue answers exactly what reading every file answers
(`--no-cache`): on the README's demo copy, forks whose parents live elsewhere, sibling forks,
generated sessions, in another TZ, with --since/--until, and after lines are appended (the
catalogue brought up to date from the appended lines only). Work is counted, not timed
(STREE_DEBUG_STATS): a warm `stats --all` parses and decodes nothing, after an append only
the appended lines."""

import json
import shutil
import sys

import pytest

from builders import SessionBuilder
from conftest import ROOT
from test_stats import usage

from stree.core.catalog_refresh import INDEX_MIN


@pytest.fixture(autouse=True)
def each_command_past_the_tick(monkeypatch, tmp_path):
    """These tests count the work a command does after files were just written, and a file read
    in the same tick of the clock as its last change is checked again by the next command
    (storage.index.racy): each command here starts once every file under tmp_path (the HOME,
    the sessions, the caches) is past that tick, as a process's start would have let it be."""
    import clock

    clock.each_command_past_the_tick(monkeypatch, tmp_path)

DEMO = ROOT / "stree" / "data" / "demo.jsonl"
DEBUG = {"STREE_DEBUG_STATS": "1"}


def work(r):
    """(lines parsed, entries decoded) of a run, from its STREE_DEBUG_STATS line."""
    line = [x for x in r.err.splitlines() if x.startswith("stree: stats:")][-1]
    words = line.split()
    return int(words[words.index("parsed") + 1]), int(words[words.index("decoded") + 1])


def both(stree, *args, env=None):
    """The --json records of `stats --all ARGS` from the catalogue and from the files: equal."""
    warm = stree("stats", "--all", *args, "--json", env=env)
    cold = stree("--no-cache", "stats", "--all", *args, "--json", env=env)
    assert warm.code == 0 and cold.code == 0, (warm, cold)
    assert warm.out == cold.out  # the same rows, in the same order, to the last digit
    return [json.loads(x) for x in warm.out.splitlines()]


def near_midnight(path, seed, parent=None, copy=()):
    """A session whose turns straddle midnight UTC (so the local day differs by TZ), with
    usage of int and float costs, a usage entry and a tool result with usage."""
    b = SessionBuilder(id=f"0199a1b2-0000-7000-8000-{seed:012d}", start_ms=1_795_046_000_000 + seed * 86_400_000)
    if parent is not None:
        b.header["parentSession"] = str(parent)
    for e in copy:
        b.entries.append(dict(e))
        b.leaf = e["id"]
    for i in range(4):
        b.user(f"question {seed}.{i}")
        b.assistant(f"answer {seed}.{i}", model=f"model-{i % 2}")
        b.entries[-1]["message"]["usage"] = usage(10 * seed + i, 7, 100, 3, cost=0.1 * seed + 0.01 * i)
        b.ms += 1_700_000  # about half an hour a turn: the session crosses midnight UTC
    b.append("usage", kind="cache_warm", provider="p", model="m", usage=usage(1, 2, 3, 4, 0.7))
    b.write(path)
    return b


def append_turn(path, n, cost):
    """Lines appended as pi appends them: an assistant turn with usage, under the last entry."""
    last = json.loads(path.read_text().splitlines()[-1])
    with open(path, "a") as f:
        for k in range(n):
            entry = {"type": "message", "id": f"a{cost * 1000:05.0f}{k:03d}", "parentId": last["id"],
                     "timestamp": "2026-11-20T23:59:30.000Z",
                     "message": {"role": "assistant", "provider": "anthropic", "model": "claude-added",
                                 "content": [{"type": "text", "text": "added"}], "usage": usage(3, 4, 5, 6, cost),
                                 "timestamp": 1_795_219_170_000}}
            f.write(json.dumps(entry) + "\n")
            last = entry


@pytest.fixture
def sessions(stree, isolated_home, tmp_path):
    """A project holding the demo copy, a fork of the bundled demo, a fork of a parent in a
    custom dir, a parent with two forks (one of them forked again), and generated sessions."""
    project = isolated_home / ".pi" / "agent" / "sessions" / "--home-dev-proj--"
    project.mkdir(parents=True)
    assert stree("-s", "demo", "fork", "--full", "-o", project / "demo.jsonl").code == 0  # README: copy it first
    assert stree("-s", "demo", "fork", "bug-found", "-o", project / "fork.jsonl").code == 0
    elsewhere = tmp_path / "custom-dir"
    elsewhere.mkdir()
    shutil.copyfile(DEMO, elsewhere / "parent.jsonl")
    assert stree("-s", elsewhere / "parent.jsonl", "fork", "@~2", "-o", project / "other.jsonl").code == 0
    a = near_midnight(project / "a.jsonl", 1)
    b = near_midnight(project / "b.jsonl", 2, parent=project / "a.jsonl", copy=a.entries[:4])
    near_midnight(project / "c.jsonl", 3, parent=project / "a.jsonl", copy=a.entries[:6])
    near_midnight(project / "d.jsonl", 4, parent=project / "b.jsonl", copy=b.entries[:8])
    near_midnight(project / "e.jsonl", 5)
    sys.path.insert(0, str(ROOT / "tools" / "bench"))
    from gen import Gen

    for i in range(3):
        with open(project / f"gen{i}.jsonl", "w", encoding="utf-8") as f:
            Gen(40 + i, out=f).run(150 + 20 * i)
    return project


def test_the_catalogue_answers_what_the_files_do(stree, sessions):
    recs = both(stree)  # (the first run builds the catalogue)
    assert len([r for r in recs if r["group"] == "session"]) == 11
    assert [r for r in recs if r["group"] == "total"][0]["cost"] > 0.6  # (the demo copy's)
    days = {r["key"] for r in recs if r["group"] == "day"}
    assert len(days) > 2
    both(stree)  # warm
    both(stree, "--since", "2026-11-18", "--until", "2026-11-19")
    both(stree, "--since", "2026-11-19T23:30:00Z")
    # another TZ: other local days (turns straddle midnight UTC), from the same catalogue
    tokyo = both(stree, env={"TZ": "Asia/Tokyo"})
    assert {r["key"] for r in tokyo if r["group"] == "day"} != days
    both(stree, env={"TZ": "America/St_Johns"})


def test_appended_lines_are_all_that_is_read(stree, sessions):
    both(stree)
    warm = stree("stats", "--all", env=DEBUG)
    assert warm.code == 0 and work(warm) == (0, 0)  # nothing parsed, nothing decoded
    parsed = 0
    for name, n, cost in (("b", 2, 0.125), ("e", 1, 0.25), ("gen1", 3, 0.5)):  # a fork with forks, a
        path = sessions / f"{name}.jsonl"  # session on its own, a larger one (with its per-session index)
        # (a file under INDEX_MIN has no index: parsed again whole, its old entries not decoded)
        parsed += n if path.stat().st_size >= INDEX_MIN else len(path.read_text().splitlines()) + n
        append_turn(path, n, cost)
    assert parsed < 60
    grown = stree("stats", "--all", env=DEBUG)
    assert grown.code == 0 and work(grown) == (parsed, 6), grown.err  # the six appended lines decoded once
    assert work(stree("stats", "--all", env=DEBUG)) == (0, 0)
    recs = both(stree)
    assert any(r["group"] == "model" and r["key"] == "anthropic/claude-added" and r["count"] == 6 for r in recs)
    both(stree, "--since", "2026-11-20")
    both(stree, env={"TZ": "Pacific/Chatham"})
    # appended under another TZ: the kept days are checked, the answer still the files'
    append_turn(sessions / "e.jsonl", 1, 0.0625)
    both(stree, env={"TZ": "Asia/Kolkata"})
    both(stree)


def test_a_rewritten_a_removed_and_an_unreadable_file(stree, sessions):
    both(stree)
    text = (sessions / "c.jsonl").read_text().replace('"answer 3.1"', '"answer 3.1, edited"')
    (sessions / "c.jsonl").write_text(text)  # rewritten in place: read again whole
    (sessions / "gen2.jsonl").unlink()
    (sessions / "bad.jsonl").write_text('{"type":"session","version":3,"id":"x","cwd":"/"}\nnot json at all\n')
    (sessions / "a.jsonl").chmod(0)  # a parent that cannot be read: its forks count what they copied
    try:
        recs = both(stree)
    finally:
        (sessions / "a.jsonl").chmod(0o600)
    assert str(sessions / "gen2.jsonl") not in {r.get("path") for r in recs}
    both(stree)


def test_a_first_build_decodes_each_line_once(stree, sessions, isolated_home):
    """The catalogue built from nothing: every line parsed once, no entry decoded again
    (the parse hands the catalogue the objects it decoded); the answers are the files'."""
    lines = sum(1 for f in sessions.glob("*.jsonl") for x in f.read_bytes().splitlines() if x.strip())
    first = stree("ls", "--all", env=DEBUG)
    assert first.code == 0 and work(first) == (lines, 0), first.err
    assert work(stree("ls", "--all", env=DEBUG)) == (0, 0)
    assert stree("ls", "--all", "--json").out == stree("--no-cache", "ls", "--all", "--json").out
    both(stree)
    assert work(stree("stats", "--all", env=DEBUG)) == (0, 0)
    # built again from nothing, by `stats --all` itself
    shutil.rmtree(isolated_home / ".cache" / "stree")
    again = stree("stats", "--all", env=DEBUG)
    assert again.code == 0 and work(again) == (lines, 0), again.err
    both(stree)


@pytest.mark.parametrize("tz", ["UTC", "Europe/Paris", "America/Sao_Paulo", "Australia/Lord_Howe", "Pacific/Chatham",
                                "Asia/Kolkata", "Europe/Amsterdam"])
def test_the_kept_local_day_is_the_date_of_each_time(tz, monkeypatch):
    """local_day keeps the span of the day last found: each answer is still the plain local date,
    across changes of UTC offset (DST, 30- and 45-minute offsets, LMT) and out-of-range times."""
    import random
    import time
    from datetime import datetime

    from stree.format import timestamp

    def plain(ms):
        try:
            return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d")
        except (OverflowError, OSError, ValueError):
            return "unknown"

    monkeypatch.setenv("TZ", tz)
    time.tzset()
    try:
        timestamp._DAY[:] = [0, 0, None]
        r = random.Random(tz)
        times = []
        for base in (1_790_000_000_000, 0, -2_500_000_000_000, 1_200_000_000_000, 10**17):
            ms = base
            for _ in range(3000):
                ms += r.randint(-3_600_000, 7_200_000) if r.random() < 0.9 else r.randint(-10**11, 10**11)
                times.append(ms)
        for hour in range(2 * 365 * 24):  # every hour of 2008 and 2009, a second either side
            for d in (-1000, -1, 0, 999, 1000):
                times.append(1_199_145_600_000 + hour * 3_600_000 + d)
        assert [timestamp.local_day(ms) for ms in times] == [plain(ms) for ms in times]
        assert timestamp.local_day(None) == "unknown"
    finally:
        monkeypatch.undo()
        time.tzset()
