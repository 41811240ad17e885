"""The work a warm `stree grep` does, counted (STREE_DEBUG_STATS), never timed: it decodes no
entry (the catalogue keeps each entry's text: a hit is confirmed against it, no file read
again; without a word to narrow by, only the entries it reads from their files), a session
that grew is read only for its appended lines, and the words it looks cut words up in (the catalogue's
terms table) follow the index. The plain grep answered without click (stree.fastgrep) says
exactly what the click command says. Real files in a temporary HOME, stree run as a user
runs it."""

import json
import os
import sqlite3
import sys

import pytest

from builders import dumps
from catalog_corpus import PROJECT, generated
from clock import past_the_tick
from inprocess import SCRIPT


@pytest.fixture(autouse=True)
def each_command_past_the_tick(monkeypatch, tmp_path):
    """These tests count the work a command does after files were just written, and a file read
    in the same tick of the clock as its last change is checked again by the next command
    (storage.index.racy): each command here starts once every file under tmp_path (the HOME,
    the sessions, the caches) is past that tick, as a process's start would have let it be."""
    import clock

    clock.each_command_past_the_tick(monkeypatch, tmp_path)


PLANTED = "zanzibarquux"


def stats(r):
    line = [x for x in r.err.splitlines() if x.startswith("stree: stats:")][-1]
    words = line.split()
    return int(words[words.index("parsed") + 1]), int(words[words.index("decoded") + 1])


@pytest.fixture
def sessions(isolated_home):
    """8 generated sessions; 3 of them with PLANTED in one entry's text (two in one session)."""
    return generated(isolated_home, PLANTED, {1: [5], 4: [5, 6], 6: [5]}, count=8, seed=50, entries=80)


def printed_entries(out):
    return {line.split(" ", 1)[0] for line in out.splitlines()}


def test_a_warm_grep_decodes_no_entry(stree, sessions):
    env = {"STREE_DEBUG_STATS": "1"}
    # (the catalogue and its text built by a grep, `ls` reading only the rows; then a file read
    # in the tick it was written read again)
    for _ in range(2):
        assert stree("grep", "-l", PLANTED).code == 0
    for fast in ({}, {"STREE_NO_FAST": "1"}):
        r = stree("grep", PLANTED, env={**env, **fast})
        assert r.code == 0, r
        entries = printed_entries(r.out)
        assert len(entries) == 4
        assert stats(r) == (0, 0)  # no session parsed, no entry decoded: the text the catalogue keeps
        # (what the files say; --no-cache lists the sessions in another order: the files')
        assert sorted(r.out.splitlines()) == sorted(stree("grep", "--no-cache", PLANTED).out.splitlines())
        # a word no entry holds: the index rules every entry out
        r = stree("grep", "qqxjzvv", env={**env, **fast})
        assert r.code == 1 and r.out == "" and stats(r) == (0, 0), r
    for flag in ("-l", "-c", "-i", "-w"):
        r = stree("grep", flag, PLANTED, env=env)
        assert r.code == 0 and stats(r) == (0, 0), r
    # without a word to narrow by, every entry with text is read again from its file
    r = stree("grep", "-E", r"z\w{10}x", env=env)
    assert r.code == 0 and len(printed_entries(r.out)) == 4 and stats(r)[1] > 100, r


def grow(path, text, id="feed0001"):
    last = json.loads(path.read_text().splitlines()[-1])
    with open(path, "a") as f:
        f.write(dumps({"type": "message", "id": id, "parentId": last["id"], "timestamp": "2027-01-01T00:00:00.000Z",
                       "message": {"role": "user", "content": text, "timestamp": 1798761600000}}) + "\n")
    past_the_tick(path)  # (the next command's read is then one that later ones can trust)


def test_a_grown_session_is_read_only_for_its_appended_lines(stree, sessions):
    env = {"STREE_DEBUG_STATS": "1"}
    for _ in range(2):  # (the catalogue and its words built, and settled)
        assert stree("grep", PLANTED).code == 0
    grow(sessions[2], "a question about the xylophonists")
    # the cut word 'lophon' is looked up among the indexed words: the new one is there
    r = stree("grep", "lophon", env=env)
    assert r.code == 0 and r.out.splitlines() == [r.out.splitlines()[0]], r
    assert r.out.split(" ", 1)[0].endswith(":feed0001") and "xylophonists" in r.out
    # one line parsed (the appended one), one decode: the catalogue's (the match: from its text kept)
    assert stats(r) == (1, 1)
    assert stats(stree("grep", "lophon", env=env)) == (0, 0)  # warm again


OTHER = "quixoticwren"  # (as long as PLANTED: an edit that keeps the file's size)


@pytest.mark.parametrize("change", ["edited in place, mtime put back", "grown", "replaced, same size", "deleted"])
def test_the_text_kept_is_the_files_after_any_change(stree, sessions, tmp_path, change):
    """A hit is confirmed against the text the catalogue keeps, not the file: whatever happens to a
    session file, the next grep answers what the file says now (as --no-cache does), reading again
    only that file, and the one after it reads nothing."""
    env = {"STREE_DEBUG_STATS": "1"}
    for _ in range(2):  # (the catalogue built, then settled)
        assert stree("grep", PLANTED).code == 0
    target = sessions[1]  # (PLANTED in one of its entries)
    before = target.stat()
    data = target.read_bytes()
    if change.startswith("edited"):
        with open(target, "r+b") as f:
            f.write(data.replace(PLANTED.encode(), OTHER.encode()))
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert (target.stat().st_size, target.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    elif change == "grown":
        grow(target, f"and then {OTHER}")
    elif change.startswith("replaced"):
        other = tmp_path / "other.jsonl"
        other.write_bytes(data.replace(PLANTED.encode(), OTHER.encode()))
        os.replace(other, target)
        assert target.stat().st_size == before.st_size
    else:
        target.unlink()
    if target.exists():
        past_the_tick(target)
    expected = {PLANTED: 4 if change == "grown" else 3, OTHER: 0 if change == "deleted" else 1}
    for word in (PLANTED, OTHER):
        r = stree("grep", word, env=env)
        files = stree("grep", "--no-cache", word)
        assert (r.code, sorted(r.out.splitlines())) == (files.code, sorted(files.out.splitlines())), (word, r)
        assert len(r.out.splitlines()) == expected[word], r.out
        if word == PLANTED:  # (the first grep after the change: only that file read again, whole or its tail)
            lines = len(target.read_text().splitlines()) if target.exists() else 0
            assert stats(r)[0] == (1 if change == "grown" else lines), r.err
        else:
            assert stats(r) == (0, 0), r.err


def terms_and_vocab(home):
    con = sqlite3.connect(home / ".cache" / "stree" / "index" / "catalog.sqlite")
    try:
        terms = {t for (t,) in con.execute("SELECT term FROM terms")}
        vocab = {t for (t,) in con.execute("SELECT term FROM vocab")}
        fresh = con.execute("SELECT value FROM meta WHERE key='fresh'").fetchone()[0]
    finally:
        con.close()
    return terms, vocab, fresh


@pytest.mark.parametrize("appended", ["one small line: Quetzalcoatlus", "big " * 40_000 + "Quetzalcoatlus"])
def test_the_words_grep_looks_up_follow_the_index(stree, sessions, isolated_home, appended):
    """After each grep the terms table holds every word of the index, whether the text added
    since was a few words (tokenized alone) or too much to keep (the index's words read whole)."""
    assert stree("grep", "-i", "ZANZIBAR").code == 0
    terms, vocab, fresh = terms_and_vocab(isolated_home)
    assert terms == vocab and fresh == 0
    grow(sessions[5], appended)
    grow(sessions[6], "and Pterodactylus", id="feed0002")
    r = stree("grep", "-i", "coatl")
    assert r.code == 0 and "Quetzalcoatlus" in r.out and len(r.out.splitlines()) == 1, r
    terms, vocab, fresh = terms_and_vocab(isolated_home)
    assert terms == vocab and fresh == 0 and {"quetzalcoatlus", "pterodactylus"} <= terms
    assert stree("grep", "dactyl").out.split(" ", 1)[0].endswith(":feed0002")


@pytest.mark.parametrize("args", [
    [PLANTED], ["-i", "ZANZIBARQUUX"], ["-w", "timeout"], ["-E", r"zanzi\w+ \w+"], ["-l", "parse_line"],
    ["-c", "quote"], ["-i", "-w", "-c", "The"], ["nothing-like-this-anywhere"], ["-E", "("], ["-l", "-c", "x"],
    ["--session-dir", "/nowhere", PLANTED], ["--agent-dir=/nowhere", PLANTED], ["--agent-dir", "~/.pi/agent", PLANTED],
    ["--agent-dir", "/a", "--agent-dir", "/b", PLANTED],
])
def test_the_plain_grep_without_click_says_what_click_says(stree, sessions, args):
    stree("ls", "--all")
    fast = stree("grep", *args)
    slow = stree("grep", *args, env={"STREE_NO_FAST": "1"})
    assert (fast.code, fast.out, fast.err) == (slow.code, slow.out, slow.err)
    assert fast.code in (0, 1, 2)


@pytest.mark.parametrize("where", [[], ["--session-dir", "/nowhere"], ["--agent-dir", "~/.pi/agent"]])
def test_the_plain_grep_does_not_load_click(stree, sessions, where):
    stree("ls", "--all")  # (the sessions' rows: their entries are read by the first grep, this one)
    assert stree("grep", "-l", PLANTED).code == 0
    r = stree(*where, "grep", PLANTED, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert r.code == 0 and PLANTED in r.out
    imported = {line.rsplit("|", 1)[-1].strip() for line in r.err.splitlines() if line.startswith("import time:")}
    assert "stree.fastgrep" in imported and "click" not in imported
    # nor what a plain grep of the catalogue's kept text has no use for (SQLite's C core without
    # the sqlite3 package, whose date adapters import datetime: stree.storage.catalog.common.sqlite3)
    assert not imported & {"pathlib", "re", "json", "threading", "msgspec", "stree.core.entrytypes", "datetime",
                           "sqlite3"}, imported
    assert "_sqlite3" in imported
    assert "stree.grepserver" not in imported  # (not asked for: none of its code loaded)


def test_the_plain_grep_as_installed_loads_neither_functools_nor_collections(stree, sessions):
    """SQLite's core is given its statement cache without functools and the collections package
    (stree.format.stdlib), and nothing loads what could cut the grep short (stree.core.budget)."""
    import subprocess

    stree("ls", "--all")
    assert stree("grep", "-l", PLANTED).code == 0  # (the entries read into the catalogue)
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", SCRIPT, "grep", PLANTED], capture_output=True,
                       text=True, timeout=60, env={k: v for k, v in os.environ.items() if k != "STREE_NO_FAST"})
    assert r.returncode == 0 and PLANTED in r.stdout, r.stderr
    assert r.stdout == stree("grep", PLANTED).out  # (the same lines as through `python -m stree`)
    imported = {line.rsplit("|", 1)[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    assert "stree.fastgrep" in imported and "_sqlite3" in imported
    assert not imported & {"functools", "collections", "stree.core.budget"}, sorted(imported)


@pytest.mark.parametrize("word", [PLANTED, "the"])  # (a few lines, still in the buffer; many)
def test_the_plain_grep_ends_its_process_having_said_where_its_output_went(stree, sessions, word):
    """The plain grep ends its process without the interpreter's finalization (stree.entrypoint):
    its output is flushed first, inside stree's error boundary, so a reader gone is still no
    error and a full disk still is one."""
    import subprocess

    assert stree("ls", "--all").code == 0
    lines = stree("grep", word).out.count("\n")
    assert lines > 0
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first write
    p = subprocess.run([sys.executable, "-m", "stree", "grep", word], stdout=w, stderr=subprocess.PIPE)
    os.close(w)
    assert (p.returncode, p.stderr) == (0, b"")
    with open("/dev/full", "wb") as full:
        p = subprocess.run([sys.executable, "-m", "stree", "grep", word], stdout=full, stderr=subprocess.PIPE)
    assert p.returncode == 4 and p.stderr.startswith(b"stree: error:") and b"Traceback" not in p.stderr, p.stderr
    p = subprocess.run([sys.executable, "-m", "stree", "grep", word], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert (p.returncode, p.stdout.count(b"\n"), p.stderr) == (0, lines, b"")


def grep_work(r):
    """(active paths read, short ids worked out) of STREE_DEBUG_STATS's line (stree.core.grep_match.STATS)."""
    line = [x for x in r.err.splitlines() if x.startswith("stree: stats:")][-1]
    words = line.replace(",", "").split()
    return int(words[words.index("paths") + 2]), int(words[words.index("ids") + 3])


def test_a_sessions_part_of_each_line_is_worked_out_once_per_session(stree, isolated_home):
    """Of the 38 lines two sessions print, each session's active path is read once (for the @ or
    . of each line) and its short id worked out once (for its SESSION part), not once a line; a
    session whose entries the index proposed but none of whose lines match has neither."""
    from builders import SessionBuilder

    d = isolated_home / ".pi/agent/sessions" / PROJECT
    d.mkdir(parents=True)
    text = "\n".join(f"step {k}: the alpha beta check" for k in range(3))
    many = SessionBuilder(id="0199aaaa-0000-7000-8000-000000000001")
    fork = many.user(text)
    for _ in range(5):  # (a branch the leaf leaves: off the active path)
        many.user(text)
    many.at(fork)
    for _ in range(6):
        many.user(text)
    many.write(d / "many.jsonl")
    few = SessionBuilder(id="0199aaaa-0000-7000-8000-000000000002", start_ms=1_796_000_000_000)
    few.user("alpha beta\nagain: alpha beta")
    few.write(d / "few.jsonl")
    none = SessionBuilder(id="0199bbbb-0000-7000-8000-000000000003", start_ms=1_797_000_000_000)
    none.user("beta, then alpha")  # (both words: a candidate of the index, without a line to show)
    none.write(d / "none.jsonl")
    assert stree("ls", "--all").code == 0
    for fast in ({}, {"STREE_NO_FAST": "1"}):
        r = stree("grep", "alpha beta", env={"STREE_DEBUG_STATS": "1", **fast})
        assert r.code == 0, r
        lines = r.out.splitlines()
        assert len(lines) == 38
        marks = [line.split(" ")[1] for line in lines]  # (SESSION:ENTRY MARK ROLE: LINE)
        assert (marks.count("@"), marks.count(".")) == (7 * 3 + 2, 5 * 3)  # (the fork and the 6 after it; `few`)
        assert grep_work(r) == (2, 2)
    r = stree("grep", "--json", "alpha beta", env={"STREE_DEBUG_STATS": "1"})
    assert len(r.out.splitlines()) == 38
    assert grep_work(r) == (2, 0)  # (--json prints whole ids: none worked out)
