"""The catalogue reads a session in two parts, each once: its row (what `ls` shows) and its
entries (their text for grep, their usage for `stats --all`). `ls` reads only the rows; the first
command that needs the entries reads them for every session that lacks them, and only those.
Counted (STREE_DEBUG_STATS: lines parsed, entries decoded, sessions indexed), never timed; the
answers compared with the files' (`--no-cache`) after files grow, are replaced or deleted, and
with a damaged catalogue. Real files in a temporary HOME, stree run as a user runs it."""

import json
import os
import sqlite3
import sys
import time

import pytest

from builders import dumps
from clock import past_the_tick
from conftest import ROOT

from pgkit import pg_server, pg_url  # noqa: F401  (fixtures)
from stree.core.catalog_refresh import INDEX_MIN

PROJECT = "--home-dev-proj--"
DEBUG = {"STREE_DEBUG_STATS": "1"}


@pytest.fixture(autouse=True)
def each_command_past_the_tick(monkeypatch, tmp_path):
    """Each command starts once every file under tmp_path is past its last change's tick of the
    clock (storage.index.racy), as a process's start would have let it be: the work counted is
    then the command's, not a racy file read again."""
    import clock

    clock.each_command_past_the_tick(monkeypatch, tmp_path)


@pytest.fixture
def sessions(isolated_home):
    """10 generated sessions, small ones (read whole again) and ones over INDEX_MIN (with their
    per-session index)."""
    sys.path.insert(0, str(ROOT / "tools" / "bench"))
    from gen import Gen

    d = isolated_home / ".pi/agent/sessions" / PROJECT
    d.mkdir(parents=True)
    paths = []
    for i in range(10):
        p = d / f"s{i}.jsonl"
        with open(p, "w", encoding="utf-8") as f:
            Gen(70 + i, out=f).run(20 + 25 * i)
        paths.append(p)
    sizes = [p.stat().st_size for p in paths]
    assert min(sizes) < INDEX_MIN <= max(sizes)  # (both kinds)
    return paths


def work(r):
    """(lines parsed, entries decoded, sessions indexed) of a run, from its STREE_DEBUG_STATS line."""
    line = [x for x in r.err.splitlines() if x.startswith("stree: stats:")][-1]
    words = line.replace(",", " ").split()
    return (int(words[words.index("parsed") + 1]), int(words[words.index("decoded") + 1]),
            int(words[words.index("indexed") + 1]))


def lines_of(path):
    return sum(1 for x in path.read_bytes().splitlines() if x.strip())


def text_entries(stree):
    """How many entries the catalogue's text index holds (what `stree catalog` reports)."""
    r = stree("catalog", "--json")
    assert r.code == 0, r
    return json.loads(r.out)["entries"]


def same_grep(stree, *args):
    """`grep --json ARGS` from the catalogue and from the files: the same matches (sorted: the
    generated sessions' last activity ties, and ties are not ordered alike by both)."""
    warm = stree("grep", "--json", *args)
    cold = stree("--no-cache", "grep", "--json", *args)
    assert warm.code == cold.code and warm.code in (0, 1), (warm, cold)
    assert "Traceback" not in warm.err, warm.err
    assert sorted(warm.out.splitlines()) == sorted(cold.out.splitlines())
    return [json.loads(x) for x in warm.out.splitlines()]


def grow(path, text, id):
    last = json.loads(path.read_text().splitlines()[-1])
    with open(path, "a") as f:
        f.write(dumps({"type": "message", "id": id, "parentId": last["id"], "timestamp": "2027-01-01T00:00:00.000Z",
                       "message": {"role": "user", "content": text, "timestamp": 1798761600000}}) + "\n")
    past_the_tick(path)


def test_ls_reads_the_rows_only_and_the_first_grep_each_session_s_entries_once(stree, sessions, isolated_home):
    lines = sum(lines_of(p) for p in sessions)
    first = stree("ls", "--all", env=DEBUG)
    assert first.code == 0 and work(first) == (lines, 0, 0), first.err  # each line parsed once, no text indexed
    assert text_entries(stree) == 0
    assert work(stree("ls", "--all", env=DEBUG)) == (0, 0, 0)
    # the first grep reads every session's entries, once: a session with its per-session index
    # is not parsed again (its entries decoded from where the index says they are); a small one is
    small = sum(lines_of(p) for p in sessions if p.stat().st_size < INDEX_MIN)
    g = stree("grep", "-c", "parser", env=DEBUG)
    assert g.code in (0, 1) and work(g)[0] == small and work(g)[2] == len(sessions), g.err
    assert text_entries(stree) > 0
    again = stree("grep", "-c", "parser", env=DEBUG)
    assert again.out == g.out and work(again)[::2] == (0, 0), again.err
    assert work(stree("stats", "--all", env=DEBUG)) == (0, 0, 0)  # (usage read with the text)
    assert work(stree("ls", "--all", env=DEBUG)) == (0, 0, 0)
    same_grep(stree, "parser")


def test_stats_after_ls_reads_the_entries_and_answers_as_the_files(stree, sessions):
    assert stree("ls", "--all").code == 0
    warm = stree("stats", "--all", "--json", env=DEBUG)
    assert warm.code == 0 and work(warm)[2] == len(sessions), warm.err
    assert warm.out == stree("--no-cache", "stats", "--all", "--json").out
    assert work(stree("grep", "-c", "parser", env=DEBUG))[::2] == (0, 0)  # (the text read with the usage)


def test_a_session_grown_between_ls_and_grep_has_only_its_new_entries_read(stree, sessions):
    big = next(p for p in sessions if p.stat().st_size >= INDEX_MIN)
    assert same_grep(stree, "zebra") == []  # every session's entries in
    grow(big, "a zebra crossing", "feed0001")
    assert work(stree("ls", "--all", env=DEBUG)) == (1, 1, 0)  # its row: the line appended
    g = stree("grep", "--json", "zebra", env=DEBUG)
    # its new entry read for the index (its line parsed again: the per-session index is rewritten
    # only once appended lines add up, storage.index.TAIL_LINES), and the match confirmed against
    # the text the catalogue keeps: nothing decoded for it
    assert work(g) == (1, 1, 1), g.err
    assert [json.loads(x)["entry"] for x in g.out.splitlines()] == ["feed0001"]
    grow(big, "a second zebra", "feed0002")
    grow(sessions[0], "a small zebra", "feed0003")
    assert stree("ls", "--all").code == 0
    assert {m["entry"] for m in same_grep(stree, "zebra")} == {"feed0001", "feed0002", "feed0003"}
    assert work(stree("grep", "zebra", env=DEBUG))[::2] == (0, 0)


def test_grep_answers_as_the_files_whether_ls_ran_before_or_not(stree, sessions, isolated_home):
    """Files grown, replaced and deleted with `ls` run between the change and the grep, and
    with it not run; a damaged catalogue; the text of a session read after its row."""
    assert stree("ls", "--all").code == 0
    grow(sessions[3], "quokka one", "feed0011")
    assert stree("ls", "--all").code == 0  # (row read again, entries not)
    replaced = sessions[7]
    text = replaced.read_text().replace("parser", "quokka")
    tmp = replaced.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, replaced)
    past_the_tick(replaced)
    assert stree("ls", "--all").code == 0
    sessions[5].unlink()
    assert stree("ls", "--all").code == 0
    found = same_grep(stree, "quokka")
    assert {m["path"] for m in found} == {str(sessions[3]), str(replaced)}
    assert same_grep(stree, "parser")
    # changed again with no ls between the change and the grep
    grow(sessions[7], "quokka two", "feed0012")
    sessions[8].unlink()
    assert {m["entry"] for m in same_grep(stree, "quokka")} >= {"feed0011", "feed0012"}
    # a damaged catalogue (another schema): built again, by ls (rows) and then grep (entries)
    db = isolated_home / ".cache" / "stree" / "index" / "catalog.sqlite"
    con = sqlite3.connect(db)
    con.execute("DROP TABLE indexed")
    con.commit()
    con.close()
    assert stree("ls", "--all").code == 0
    assert text_entries(stree) == 0
    same_grep(stree, "quokka")
    same_grep(stree, "-i", "PARSER")


def test_catalog_update_reads_the_entries_ls_left(stree, sessions, isolated_home):
    """`stree catalog --update` brings the entries in too (what it reports counts them)."""
    assert stree("ls", "--all").code == 0
    state = json.loads(stree("catalog", "--update", "--json", env=DEBUG).out)
    assert state["sessions"] == len(sessions) and state["entries"] > 0
    assert work(stree("grep", "-c", "parser", env=DEBUG))[::2] == (0, 0)


def test_an_old_session_gets_its_index_when_first_seen_grown(stree, sessions, isolated_home):
    """A session last written long ago (most of a history) is read by the first `ls` without
    writing its per-session index; parsed whole the first time it is seen grown, its index
    written then; after that only its appended lines are parsed."""
    from stree.core.catalog_read import LIVE_NS

    big = [p for p in sessions if p.stat().st_size >= INDEX_MIN]
    old = (os.stat(big[0]).st_mtime_ns - 2 * LIVE_NS) // 10**9
    for p in sessions:
        os.utime(p, (old, old))
    index = isolated_home / ".cache" / "stree" / "index"
    first = stree("ls", "--all", env=DEBUG)
    assert work(first) == (sum(lines_of(p) for p in sessions), 0, 0), first.err
    assert not list(index.glob("*.idx"))  # no per-session index written
    g = stree("grep", "-c", "parser", env=DEBUG)  # their entries: parsed again, still no index
    assert work(g)[::2] == (sum(lines_of(p) for p in sessions), len(sessions)), g.err
    assert not list(index.glob("*.idx"))
    grow(big[0], "a zebra crossing", "feed0001")
    grown = stree("ls", "--all", env=DEBUG)
    assert work(grown) == (lines_of(big[0]), 1, 0), grown.err  # parsed whole, its new entry decoded
    assert len(list(index.glob("*.idx"))) == 1
    for n in (2, 3):
        grow(big[0], f"zebra {n}", f"feed000{n}")
    assert work(stree("ls", "--all", env=DEBUG)) == (2, 2, 0)  # the two lines appended since, only
    assert {m["entry"] for m in same_grep(stree, "zebra")} == {"feed0001", "feed0002", "feed0003"}
    assert ls_records(stree) == ls_records(stree, "--no-cache")


def ls_records(stree, *extra):
    r = stree(*extra, "ls", "--all", "--json")
    assert r.code == 0, r
    return [json.loads(x) for x in r.out.splitlines()]


@pytest.mark.parametrize("dated", ["now", "long ago"])
def test_every_kind_of_file_answers_as_the_files_after_ls(stree, isolated_home, dated):
    """v1 and v2 files (migrated in memory), a malformed one with a torn last line, forks of
    every entry type, a deep one over INDEX_MIN: their entries read after their rows (through
    the per-session index, or parsed again when the file has none) give what the files give."""
    from corpus import build

    d = isolated_home / ".pi/agent/sessions" / PROJECT
    paths = build(d, isolated_home)
    assert paths["deep"].stat().st_size >= INDEX_MIN
    if dated == "long ago":
        from stree.core.catalog_read import LIVE_NS

        old = (paths["deep"].stat().st_mtime_ns - 2 * LIVE_NS) // 10**9
        for p in paths.values():
            os.utime(p, (old, old))
    assert ls_records(stree) == ls_records(stree, "--no-cache")
    for word in ("m3", "hooked", "garbage", "question", "s"):
        same_grep(stree, "-i", word)
    warm = stree("stats", "--all", "--json")
    assert warm.code == 0 and warm.out == stree("--no-cache", "stats", "--all", "--json").out


@pytest.mark.pg
def test_a_push_after_ls_sends_every_entry(stree, sessions, pg_url):
    """`catalog push` reads the entries `ls` left out before it sends them: the shared
    catalogue then answers grep as the files do."""
    assert stree("ls", "--all").code == 0
    r = stree("--catalog", pg_url, "catalog", "push", "--json", env=DEBUG)
    assert r.code == 0 and "Traceback" not in r.err, r
    assert json.loads(r.out)["sent"] > 0 and work(r)[2] == len(sessions), r.err
    for args in (["-c", "parser"], ["-i", "the"]):
        shared = stree("--catalog", pg_url, "grep", *args)
        assert shared.code == 0, shared
        assert sorted(shared.out.splitlines()) == sorted(stree("--no-cache", "grep", *args).out.splitlines())


def test_a_first_build_gives_an_index_to_the_newest_live_sessions_only(stree, isolated_home):
    """Sessions written within the last day are likely to grow, but a first build over many of
    them indexes only the LIVE_MAX newest (their index is written with the catalogue); another one
    is parsed whole when it first grows, then has its index like them."""
    from stree.core.catalog_read import LIVE_MAX

    sys.path.insert(0, str(ROOT / "tools" / "bench"))
    from gen import Gen

    d = isolated_home / ".pi/agent/sessions" / PROJECT
    d.mkdir(parents=True)
    now = time.time()
    paths = []
    for k in range(LIVE_MAX + 2):  # newest first, a minute apart, all within the last hour
        p = d / f"live{k}.jsonl"
        with open(p, "w", encoding="utf-8") as f:
            Gen(500 + k, out=f).run(320)
        os.utime(p, (now - 60 * (k + 1), now - 60 * (k + 1)))
        assert p.stat().st_size >= INDEX_MIN
        paths.append(p)
    first = stree("ls", "--all", env=DEBUG)
    assert first.code == 0 and work(first)[0] == sum(lines_of(p) for p in paths), first.err
    newest, oldest = paths[0], paths[-1]
    grow(newest, "one more", "feed0101")
    grow(oldest, "one more", "feed0102")
    again = stree("ls", "--all", env=DEBUG)
    # the newest: its appended line through its index; the oldest, beyond LIVE_MAX: parsed whole
    assert work(again)[0] == 1 + lines_of(oldest), again.err
    grow(oldest, "and another", "feed0103")
    assert work(stree("ls", "--all", env=DEBUG))[0] == 1  # (its index written by that read)
    assert stree("ls", "--all", "--json").out == stree("--no-cache", "ls", "--all", "--json").out
