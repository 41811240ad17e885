"""stree stats: totals checked against a brute-force sum over the raw lines of real files
(written by pi 1.5.2's own SessionManager, and generated), the path / branch / abandoned split,
ranges, forks counted once, and exit codes."""

import json
import random
import sqlite3

import pytest

from builders import SessionBuilder
from pi_harness import pi, pi_rpc, pi_write

KEYS = ("input", "output", "cacheRead", "cacheWrite")


def usage(i, o, r=0, w=0, cost=0.0):
    return {"input": i, "output": o, "cacheRead": r, "cacheWrite": w, "totalTokens": i + o + r + w,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}}


def raw_entries(path):
    """Every entry line of a file (the header and blank/bad lines skipped), plainly parsed."""
    out = []
    for line in open(path, encoding="utf-8"):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("type") not in ("session", None):
            out.append(obj)
    return out


def brute_usage(entry):
    """The usage an entry carries, written out independently of stree: pi's getSessionStats."""
    t = entry.get("type")
    if t == "message":
        m = entry["message"]
        if m.get("role") == "assistant" or (m.get("role") == "toolResult" and m.get("usage")):
            return m.get("usage")
        return None
    if t == "usage" or (t in ("compaction", "branch_summary") and entry.get("usage")):
        return entry["usage"]
    return None


def brute_sum(entries):
    total = dict.fromkeys(KEYS, 0)
    total["cost"] = 0.0
    for e in entries:
        u = brute_usage(e)
        if u:
            for k in KEYS:
                total[k] += u[k]
            total["cost"] += u.get("cost", {}).get("total", 0)  # (builders' usage has no cost: 0)
    return total


def records(stree, *args):
    r = stree(*args, "--json")
    assert r.code == 0, r
    return [json.loads(line) for line in r.out.splitlines()]


def only(recs, group):
    found = [r for r in recs if r["group"] == group]
    assert len(found) == 1, (group, recs)
    return found[0]


def same(rec, expected):
    for k in KEYS:
        assert rec[k] == expected[k], (k, rec, expected)
    assert rec["cost"] == pytest.approx(expected["cost"], rel=1e-12, abs=1e-12)


def total_of(recs, group):
    t = dict.fromkeys(KEYS, 0)
    t["cost"] = 0.0
    for r in recs:
        if r["group"] == group:
            for k in KEYS + ("cost",):
                t[k] += r[k]
    return t


def path_to(entries, leaf):
    by_id = {e["id"]: e for e in entries}
    out = []
    while leaf is not None:
        e = by_id[leaf]
        out.append(e)
        leaf = e.get("parentId")
    return out


# -- a file written by pi 1.5.2 --------------------------------------------

def pi_file(path, cwd):
    ops = [
        ["appendMessage", {"role": "user", "content": "first", "timestamp": 1}],
        ["appendMessage", {"role": "assistant", "content": [{"type": "text", "text": "one"}], "api": "openai",
                           "provider": "openai", "model": "gpt-5", "usage": usage(100, 20, 300, 40, 0.125),
                           "stopReason": "stop", "timestamp": 2}],
        ["appendUsage", "cache_warm", "anthropic", "claude-sonnet-4-5", usage(0, 1, 5000, 0, 0.0015), "warming"],
        ["appendMessage", {"role": "user", "content": "second", "timestamp": 3}],
        ["appendMessage", {"role": "assistant", "content": [{"type": "text", "text": "two"}], "api": "openai",
                           "provider": "openai", "model": "auto", "responseModel": "gpt-5-mini",
                           "usage": usage(7, 8, 9, 10, 0.02), "stopReason": "stop", "timestamp": 4}],
        ["appendMessage", {"role": "toolResult", "toolCallId": "c1", "toolName": "sub", "isError": False,
                           "content": [{"type": "text", "text": "nested"}], "usage": usage(11, 12, 0, 0, 0.5),
                           "timestamp": 5}],
        ["branch", {"$ref": 1}],
        ["branchWithSummary", {"$ref": 1}, "the other way", None, False, usage(50, 60, 0, 0, 0.25)],
        ["appendMessage", {"role": "assistant", "content": [{"type": "text", "text": "three"}], "api": "a",
                           "provider": "anthropic", "model": "claude-sonnet-4-5",
                           "usage": usage(1000, 2000, 3000, 4000, 1.75), "stopReason": "stop", "timestamp": 6}],
        ["appendCompaction", "compacted", None, 1234, None, False, usage(70, 80, 0, 0, 0.0625)],
    ]
    seen = pi_write(str(path), ops, cwd=str(cwd))
    return seen


def test_totals_of_a_pi_written_file_equal_the_raw_sum_and_pis_own(stree, tmp_path):
    path = tmp_path / "pi.jsonl"
    seen = pi_file(path, tmp_path)
    entries = raw_entries(path)
    assert any(e["type"] == "usage" for e in entries)
    recs = records(stree, "-s", path, "stats")
    expected = brute_sum(entries)
    same(only(recs, "total"), expected)
    # pi's own getSessionStats (the real `pi --mode rpc`) agrees
    answer = pi_rpc(str(path), ["get_session_stats"])
    stats = answer["responses"][0]["data"]
    for k in KEYS:
        assert stats["tokens"][k] == expected[k]
    assert stats["cost"] == pytest.approx(only(recs, "total")["cost"])
    # the split: active path (pi's branch to the leaf) + abandoned = the total; the branches cover it
    on_path = path_to(entries, seen["leafId"])
    same(only(recs, "path"), brute_sum(on_path))
    off = [e for e in entries if e not in on_path]
    same(only(recs, "abandoned"), brute_sum(off))
    same(total_of(recs, "branch"), expected)
    same(total_of(recs, "model"), expected)
    same(total_of(recs, "day"), expected)
    models = {r["key"]: r for r in recs if r["group"] == "model"}
    assert set(models) == {"openai/gpt-5", "openai/gpt-5-mini", "anthropic/claude-sonnet-4-5", "Tools/summaries"}
    assert models["Tools/summaries"]["input"] == 11 + 50 + 70  # tool result, branch summary, compaction
    assert models["anthropic/claude-sonnet-4-5"]["cacheRead"] == 5000 + 3000  # the usage entry counted once
    # human output: the same numbers
    r = stree("-s", path, "stats")
    assert r.code == 0 and "active path" in r.out and "abandoned" in r.out and "Tools/summaries" in r.out
    assert f"{expected['input']:,}" in r.out


# -- generated corpora --------------------------------------------------------

def random_session(path, seed, parent=None, copy_from=None):
    rnd = random.Random(seed)
    b = SessionBuilder(id=f"0199a1b2-0000-7000-8000-{seed:012d}", start_ms=1_795_000_000_000 + seed * 40_000_000)
    if parent is not None:
        b.header["parentSession"] = str(parent)
    ids = []
    for e in copy_from or []:
        b.entries.append(e)
        ids.append(e["id"])
        b.leaf = e["id"]
        b.n += 1000
    for _ in range(rnd.randint(5, 60)):
        if ids and rnd.random() < 0.15:
            b.at(rnd.choice(ids))
        kind = rnd.random()
        b.ms += rnd.randint(0, 7_200_000)
        if kind < 0.4:
            ids.append(b.user("q"))
        elif kind < 0.8:
            id = b.assistant("a", model=rnd.choice(["m1", "m2"]), provider=rnd.choice(["p", "q"]))
            b.entries[-1]["message"]["usage"] = usage(*(rnd.randint(0, 10**6) for _ in range(4)),
                                                        cost=rnd.random() * 3)
            ids.append(id)
        elif kind < 0.9:
            ids.append(b.append("usage", kind="cache_warm", provider="p", model="m3",
                                usage=usage(rnd.randint(0, 99), 1, rnd.randint(0, 9999), 0, rnd.random())))
        else:
            ids.append(b.append("branch_summary", fromId=rnd.choice(ids) if ids else "x", summary="s",
                                **({"usage": usage(3, 4, 0, 0, 0.01)} if rnd.random() < 0.5 else {})))
    b.write(path)
    return b


def test_generated_sessions_sum_and_split_exactly(stree, tmp_path):
    for seed in range(8):
        path = tmp_path / f"gen{seed}.jsonl"
        b = random_session(path, seed)
        if seed == 0:  # a key written as a JSON escape is still the key
            text = path.read_text()
            assert '"usage":' in text
            path.write_text(text.replace('"usage":', '"\\u0075sage":', 3))
        entries = raw_entries(path)
        recs = records(stree, "-s", path, "stats")
        expected = brute_sum(entries)
        same(only(recs, "total"), expected)
        same(total_of(recs, "branch"), expected)
        same(total_of(recs, "model"), expected)
        same(total_of(recs, "day"), expected)
        on_path = path_to(entries, entries[-1]["id"])
        same(only(recs, "path"), brute_sum(on_path))
        same(only(recs, "abandoned"), brute_sum([e for e in entries if e not in on_path]))
        days = {}
        for e in entries:
            if brute_usage(e):
                days.setdefault(e["timestamp"][:10], []).append(e)  # TZ=UTC in tests
        assert {r["key"]: r["input"] for r in recs if r["group"] == "day"} == \
            {d: brute_sum(es)["input"] for d, es in days.items()}
        assert b.entries


def test_all_sessions_count_a_forks_copied_prefix_once(stree, tmp_path, isolated_home):
    agent = isolated_home / ".pi" / "agent"
    project = agent / "sessions" / "--home-dev-proj--"
    project.mkdir(parents=True)
    other = agent / "sessions" / "--home-dev-other--"
    other.mkdir(parents=True)
    a = random_session(project / "a.jsonl", 1)
    random_session(other / "b.jsonl", 2)
    # a fork made by hand the way pi's /fork copies: the same entries (ids), then its own
    copied = [dict(e) for e in a.entries[:20]]
    random_session(project / "c.jsonl", 3, parent=project / "a.jsonl", copy_from=copied)
    # stree fork of a's leaf, then pi 1.5.2's own clone of c
    r = stree("-s", project / "a.jsonl", "fork", "-o", project / "d.jsonl")
    assert r.code == 0, r
    cloned = pi("clone", str(project / "c.jsonl"), a.entries[10]["id"])
    assert cloned["parentSessionIsSource"]
    assert cloned["written"]
    lines = [json.dumps(cloned["header"])] + [json.dumps(e) for e in cloned["entries"]]
    header = dict(cloned["header"], parentSession=str(project / "c.jsonl"))  # the copy pi wrote lives elsewhere
    lines[0] = json.dumps(header)
    (project / "e.jsonl").write_text("\n".join(lines) + "\n")

    files = sorted(list(project.glob("*.jsonl")) + list(other.glob("*.jsonl")))
    expected = dict.fromkeys(KEYS, 0)
    expected["cost"] = 0.0
    per_session = {}
    for f in files:
        head = json.loads(open(f).readline())
        parent_ids = set()
        if head.get("parentSession"):
            parent_ids = {e["id"] for e in raw_entries(head["parentSession"])}
        own = brute_sum([e for e in raw_entries(f) if e["id"] not in parent_ids])
        per_session[head["id"]] = own
        for k in expected:
            expected[k] += own[k]
    recs = records(stree, "stats", "--all")
    same(only(recs, "total"), expected)
    sessions = {r["key"]: r for r in recs if r["group"] == "session"}
    assert set(sessions) == set(per_session)
    for sid, own in per_session.items():
        same(sessions[sid], own)
    # d (stree fork of a's path) and e (pi's clone) add nothing of their own
    d_id = json.loads(open(project / "d.jsonl").readline())["id"]
    assert sessions[d_id]["input"] == 0 and sessions[d_id]["cost"] == 0
    assert sessions[header["id"]]["input"] == 0
    same(total_of(recs, "model"), expected)
    same(total_of(recs, "day"), expected)
    # one forked session on its own: its own part and what it inherited
    one = records(stree, "-s", project / "c.jsonl", "stats")
    inherited = only(one, "inherited")
    assert inherited["key"] == str(project / "a.jsonl")
    same(inherited, brute_sum(copied))
    same(only(one, "total"), per_session[json.loads(open(project / "c.jsonl").readline())["id"]])


def test_all_counts_every_agents_sessions_as_ls_all_lists_them(stree, isolated_home):
    """pi's, oh-my-pi's (its title slot first) and OpenClaw's sessions (a live one and a reset
    copy) in a temporary HOME: stats --all counts the sessions ls --all lists; --agent selects."""
    home = isolated_home
    pi_dir = home / ".pi/agent/sessions/--home-dev-proj--"
    omp_dir = home / ".omp/agent/sessions/--home-dev-proj--"
    claw = home / ".openclaw/agents/main/sessions"
    for d in (pi_dir, omp_dir, claw):
        d.mkdir(parents=True)
    random_session(pi_dir / "a.jsonl", 11)
    omp = omp_dir / "b.jsonl"
    random_session(omp, 12)
    title = json.dumps({"type": "title", "title": "an omp title"}).ljust(255) + "\n"  # oh-my-pi's title slot
    omp.write_text(title + omp.read_text())
    live = random_session(claw / "0199a1b2-0000-7000-8000-000000000013.jsonl", 13)
    random_session(claw / "0199a1b2-0000-7000-8000-000000000014.jsonl.reset.2026-01-02T03-04-05Z", 14)
    listed = [json.loads(x)["path"] for x in stree("ls", "--all", "--json").out.splitlines()]
    assert len(listed) == 4
    by_agent = {}
    for path in listed:
        agent = "omp" if "/.omp/" in path else "openclaw" if "/.openclaw/" in path else "pi"
        by_agent.setdefault(agent, []).append(path)
    assert sorted(by_agent) == ["omp", "openclaw", "pi"]

    recs = records(stree, "stats", "--all")
    sessions = {r["path"]: r for r in recs if r["group"] == "session"}
    assert set(sessions) == set(listed)
    for path in listed:
        same(sessions[path], brute_sum(raw_entries(path)))
    same(only(recs, "total"), brute_sum([e for p in listed for e in raw_entries(p)]))
    assert sessions[str(claw / "0199a1b2-0000-7000-8000-000000000013.jsonl")]["key"] == live.header["id"]
    for agent, paths in by_agent.items():
        mine = records(stree, "--agent", agent, "stats", "--all")
        assert sorted(r["path"] for r in mine if r["group"] == "session") == sorted(paths), agent
        same(only(mine, "total"), brute_sum([e for p in paths for e in raw_entries(p)]))


def catalogue_totals(stree):
    """path -> the catalogue's token and cost totals, read from its database."""
    state = json.loads(stree("catalog", "--json").out)
    con = sqlite3.connect(state["path"])
    try:
        rows = con.execute("SELECT path, input, output, cache_read, cache_write, cost FROM sessions WHERE ok = 1")
        return {json.loads(r[0]): dict(zip(KEYS + ("cost",), r[1:])) for r in rows}  # (paths stored as JSON)
    finally:
        con.close()


def test_the_catalogues_totals_are_what_stats_sums(stree, isolated_home):
    """The catalogue reads usage as stats does (pi 1.5.2's sums): on a file pi's own writers wrote
    (usage entries, tool results, summaries, a compaction), generated ones and a fork, a row's
    totals are stats' for the file, also after lines are appended (read incrementally)."""
    project = isolated_home / ".pi/agent/sessions/--home-dev-proj--"
    project.mkdir(parents=True)
    written = project / "pi.jsonl"
    pi_file(written, isolated_home)
    a = random_session(project / "a.jsonl", 21)
    random_session(project / "c.jsonl", 22, parent=project / "a.jsonl", copy_from=[dict(e) for e in a.entries[:15]])
    files = sorted(project.glob("*.jsonl"))

    def check():  # (the totals are read with the entries: `catalog --update` reads them, `ls` only the rows)
        assert stree("catalog", "--update").code == 0
        rows = catalogue_totals(stree)
        for f in files:
            recs = records(stree, "-s", f, "stats")
            whole = total_of(recs, "total")  # the file's own part, and what a fork inherited
            for k in KEYS + ("cost",):
                whole[k] += sum(r[k] for r in recs if r["group"] == "inherited")
            same(rows[str(f)], whole)
            same(rows[str(f)], brute_sum(raw_entries(f)))
    check()
    assert any(e["type"] == "usage" for e in raw_entries(written))
    # grown: a usage entry and a tool result with usage appended (the appended lines only are read)
    last = raw_entries(written)[-1]["id"]
    with open(written, "a") as f:
        f.write(json.dumps({"type": "usage", "id": "u0000001", "parentId": last,
                            "timestamp": "2026-11-20T10:00:00.000Z", "kind": "cache_warm", "provider": "p",
                            "model": "m", "usage": usage(1, 2, 3, 4, 0.5)}) + "\n")
        f.write(json.dumps({"type": "message", "id": "t0000001", "parentId": "u0000001",
                            "timestamp": "2026-11-20T10:00:01.000Z",
                            "message": {"role": "toolResult", "toolCallId": "c9", "toolName": "sub",
                                        "isError": False, "content": [{"type": "text", "text": "x"}],
                                        "usage": usage(5, 6, 0, 0, 0.25), "timestamp": 9}}) + "\n")
    check()


def test_since_and_until_take_whole_days(stree, tmp_path, isolated_home):
    project = isolated_home / ".pi" / "agent" / "sessions" / "--p--"
    project.mkdir(parents=True)
    random_session(project / "a.jsonl", 5)
    entries = raw_entries(project / "a.jsonl")
    days = sorted({e["timestamp"][:10] for e in entries if brute_usage(e)})
    assert len(days) >= 2
    day = days[1]
    recs = records(stree, "stats", "--all", "--since", day, "--until", day)
    same(only(recs, "total"), brute_sum([e for e in entries if e["timestamp"][:10] == day]))
    assert [r["key"] for r in recs if r["group"] == "day"] == [day]
    later = records(stree, "stats", "--all", "--since", f"{day}T12:00:00Z")
    same(only(later, "total"), brute_sum([e for e in entries if e["timestamp"] >= f"{day}T12:00:00"]))


def test_a_range_and_a_path_of_the_branchy_file(stree, branchy_file):
    entries = raw_entries(branchy_file)
    log = stree("-s", branchy_file, "log", "--json", "--format", "{id}")
    assert log.code == 2  # (--json with --format refused: the ids come from --json below)
    path_ids = [json.loads(line)["id"] for line in stree("-s", branchy_file, "log", "--json").out.splitlines()]
    labels = [json.loads(line) for line in stree("-s", branchy_file, "label", "--json").out.splitlines()]
    assert labels
    label = labels[0]["label"]
    recs = records(stree, "-s", branchy_file, "stats", "@")
    same(only(recs, "total"), brute_sum([e for e in entries if e["id"] in path_ids]))
    assert only(recs, "total")["entries"] == len(path_ids)
    rng_ids = [json.loads(line)["id"] for line in
               stree("-s", branchy_file, "log", "--json", f"{label}..@").out.splitlines()]
    recs = records(stree, "-s", branchy_file, "stats", f"{label}..@")
    same(only(recs, "total"), brute_sum([e for e in entries if e["id"] in rng_ids]))
    assert only(recs, "total")["entries"] == len(rng_ids)
    sym_ids = [json.loads(line)["id"] for line in
               stree("-s", branchy_file, "log", "--json", f"{label}...@").out.splitlines()]
    recs = records(stree, "-s", branchy_file, "stats", f"{label}...@")
    same(only(recs, "total"), brute_sum([e for e in entries if e["id"] in sym_ids]))
    # the whole session: each branch once, abandoned = off the path
    whole = records(stree, "-s", branchy_file, "stats")
    branches = [r for r in whole if r["group"] == "branch"]
    assert len(branches) > 2 and sum(r["entries"] for r in branches) == len(entries)
    assert any(r["active"] for r in branches) and any(not r["active"] for r in branches)
    same(only(whole, "abandoned"), brute_sum([e for e in entries if e["id"] not in path_ids]))


@pytest.mark.parametrize("args, code", [
    (("stats", "nosuchrev"), 3),
    (("stats", "nosuch..@"), 3),
    (("stats", "--since", "yesterday-ish"), 2),
    (("stats", "--all", "@"), 2),
    (("stats", "--json", "--format", "{cost}"), 2),
    (("stats", "--format", "{nofield}"), 2),
])
def test_exit_codes(stree, demo, args, code):
    r = stree("-s", demo, *args)
    assert r.code == code, r
    assert r.err.startswith("stree: error:") and "Traceback" not in r.err


def test_missing_and_invalid_session_files(stree, tmp_path):
    assert stree("-s", tmp_path / "none.jsonl", "stats").code == 3
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json at all\n")
    assert stree("-s", bad, "stats").code == 4


def test_format_and_nul(stree, demo):
    r = stree("-s", demo, "stats", "-z", "--format", "{group}\t{key}\t{cost}")
    assert r.code == 0
    rows = r.out.split("\0")[:-1]
    assert rows[0].startswith("total\t") and any(row.startswith("model\t") for row in rows)


def test_completion_of_stats(stree, demo):
    r = stree("__complete", "bash", "st", "--", "st")
    assert "command\tstats\t" in r.out
    r = stree("__complete", "bash", "--", "--", "stats", "--")
    for option in ("--all", "--since", "--until", "--json", "--format"):
        assert f"option\t{option}\t" in r.out
    r = stree("__complete", "bash", "bug", "--", "-s", demo, "stats", "bug")
    assert "label\tbug-found\t" in r.out


def test_usage_of_reads_what_pi_sums():
    from stree.core.entrytypes import usage_of

    u = usage(1, 2, 3, 4, 0.5)
    msg = {"role": "assistant", "provider": "p", "model": "auto", "usage": u}
    assert usage_of({"type": "message", "message": msg}) == ("p/auto", (1, 2, 3, 4, 0.5))
    assert usage_of({"type": "message", "message": dict(msg, responseModel="real")})[0] == "p/real"
    assert usage_of({"type": "message", "message": dict(msg, responseModel="")})[0] == "p/"  # ?? keeps ""
    assert usage_of({"type": "usage", "provider": "q", "model": "m", "kind": "cache_warm", "usage": u}) == \
        ("q/m", (1, 2, 3, 4, 0.5))
    for etype in ("compaction", "branch_summary"):
        assert usage_of({"type": etype, "usage": u}) == ("Tools/summaries", (1, 2, 3, 4, 0.5))
        assert usage_of({"type": etype}) is None
    assert usage_of({"type": "message", "message": {"role": "toolResult", "usage": u}})[0] == "Tools/summaries"
    assert usage_of({"type": "message", "message": {"role": "toolResult"}}) is None
    assert usage_of({"type": "message", "message": {"role": "user", "usage": u}}) is None  # pi ignores it
    assert usage_of({"type": "custom", "usage": u}) is None
    odd = {"input": "7", "output": True, "cacheRead": float("nan"), "cacheWrite": None, "cost": {"total": "1"}}
    assert usage_of({"type": "usage", "usage": odd}) == ("?/?", (0, 0, 0, 0, 0))
    assert usage_of({"type": "message", "message": {"role": "assistant"}}) is None
    assert usage_of("not an entry") is None


def test_demo_stats_as_people_see_it(stree, snapshot):
    """What people look at: pinned (pytest --snapshot-update to refresh)."""
    r = stree("-s", "demo", "stats")
    assert r.code == 0 and r.err == ""
    snapshot.assert_match(r.out, "demo-stats.txt")
    r = stree("-s", "demo", "stats", "bug-found..@")
    snapshot.assert_match(r.out, "demo-stats-range.txt")
