"""The shared catalogue on a real PostgreSQL server (tests/lib/pgkit.py starts a throwaway
one): `stree catalog push`, the same answers as the SQLite catalogue, row-level security
between two roles, schema migrations, and the faults a team's server meets."""

import json
import os
import random
import subprocess
import sys
import time

import pytest

from catalog_corpus import HOSTILE, build_corpus
from pgkit import pg_server, pg_url  # noqa: F401  (fixtures)
from test_catalog import corpus, dumps

pytestmark = pytest.mark.pg


def with_catalog(url, *args):
    return ["--catalog", url, *args]


def push(stree, url, env=None):
    r = stree(*with_catalog(url, "catalog", "push", "--json"), env=env)
    assert r.code == 0 and "Traceback" not in r.err, r
    return json.loads(r.out)


def lines(r):
    assert r.code in (0, 1) and "Traceback" not in r.err, r
    return r.out.splitlines()


GREPS = [["-c", "parser"], ["-m", "7", "the"], ["parse_line"], ["-i", "FOO"], ["-E", r"foo\.bar|x_foo"], ["-l", "the"],
         ["-w", "foo"], ["--role", "user", "café"], ["-E", r"\d+ question"], ["İstanbul"], ["-i", "straße"],
         ["--type", "message", "-c", "timeout"], ["zzz-not-there"]]


def test_ls_and_grep_answer_the_same_from_both_backends(stree, isolated_home, pg_url):
    build_corpus(isolated_home, random.Random(7))
    corpus(isolated_home, n=5, entries=60)
    before = stree(*with_catalog(pg_url, "ls", "--all"))
    assert before.code == 5 and "stree catalog migrate" in before.err, before  # (nothing pushed there yet)
    got = push(stree, pg_url)
    assert got["pushed"] > 0 and got["sent"] > 0
    for args in (["ls", "--all", "--json"], ["ls", "--all", "--format", "{id} {name} {messages}"]):
        local = lines(stree(*args))
        assert local and lines(stree(*with_catalog(pg_url, *args))) == local, args
    for args in GREPS:
        local = lines(stree("grep", *args))
        shared = lines(stree(*with_catalog(pg_url, "grep", *args)))
        assert shared == local, args  # (in the same order: sessions newest first, entries in file order)
        if "-m" not in args:  # (without a catalogue the sessions come in another order: -m keeps other lines)
            assert sorted(local) == sorted(lines(stree("--no-cache", "grep", *args))), args
    assert any(lines(stree("grep", *a)) for a in GREPS)


def test_push_sends_only_what_changed_and_again_nothing(stree, isolated_home, pg_url):
    paths = corpus(isolated_home, n=8, entries=50)
    first = push(stree, pg_url)
    assert first["pushed"] == 8 and first["unchanged"] == 0
    again = push(stree, pg_url)
    assert (again["pushed"], again["sent"], again["unchanged"]) == (0, 0, 8)
    grown = paths[3]
    last = json.loads(grown.read_text().splitlines()[-1])
    with open(grown, "a") as f:
        f.write(dumps({"type": "message", "id": "feed0001", "parentId": last["id"],
                       "timestamp": "2027-01-01T00:00:00.000Z",
                       "message": {"role": "user", "content": "a brand new zebra question"}}) + "\n")
    third = push(stree, pg_url)
    assert (third["pushed"], third["sent"], third["unchanged"]) == (1, 1, 7)
    hit = lines(stree(*with_catalog(pg_url, "grep", "--json", "zebra")))
    assert len(hit) == 1 and json.loads(hit[0])["entry"] == "feed0001"
    paths[5].unlink()
    fourth = push(stree, pg_url)
    assert fourth["dropped"] == 1
    assert lines(stree(*with_catalog(pg_url, "ls", "--all", "--json"))) == lines(stree("ls", "--all", "--json"))
    state = json.loads(stree(*with_catalog(pg_url, "catalog", "--json")).out)
    assert state["sessions"] == 7 and "password" not in state["path"]


def test_an_older_schema_is_upgraded_and_a_newer_one_refused(stree, isolated_home, pg_server, pg_url):
    import psycopg

    from stree.storage.catalog.postgres import MIGRATIONS, SCHEMA

    corpus(isolated_home, n=3, entries=30)
    with psycopg.connect(pg_url, autocommit=True) as con:  # the schema an stree of version 1 made
        for sql in MIGRATIONS[0]:
            con.execute(sql)
        con.execute("UPDATE stree_schema SET version = 1")
    read = stree(*with_catalog(pg_url, "ls", "--all"))
    assert read.code == 5 and "schema version 1" in read.err and "stree catalog migrate" in read.err, read
    r = stree(*with_catalog(pg_url, "catalog", "migrate", "--json"))
    assert r.code == 0 and json.loads(r.out)["schema"] == SCHEMA, r
    assert push(stree, pg_url)["pushed"] == 3
    with psycopg.connect(pg_url, autocommit=True) as con:
        con.execute("UPDATE stree_schema SET version = 99")
    r = stree(*with_catalog(pg_url, "catalog", "push"))
    assert r.code == 5 and "schema version 99, newer than this stree's" in r.err and "Traceback" not in r.err, r
    assert len(r.err.splitlines()) == 2 and r.err.splitlines()[1].startswith("hint: upgrade stree"), r.err


def test_two_roles_see_and_change_only_their_own_rows(stree, tmp_path, isolated_home, pg_server, pg_url):
    import psycopg

    db = pg_url.split("/")[3].split("?")[0]
    assert stree(*with_catalog(pg_url, "catalog", "migrate")).code == 0  # (as the catalogue's owner)
    for role, group in (("alice", "stree_pusher"), ("bob", "stree_pusher"), ("carol", "stree_reader")):
        pg_server.sql(f"DROP ROLE IF EXISTS {role}")
        pg_server.sql(f"CREATE ROLE {role} LOGIN IN ROLE {group}")
    pg_server.sql(f'GRANT CONNECT ON DATABASE "{db}" TO alice, bob, carol')
    homes = {}
    for who in ("alice", "bob"):
        home = tmp_path / who
        corpus(home, n=3 if who == "alice" else 2, entries=30)
        homes[who] = {"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"),
                      "XDG_CONFIG_HOME": str(home / ".config")}
        assert push(stree, pg_server.url(db, who), env=homes[who])["pushed"] == (3 if who == "alice" else 2)
    bob = lines(stree(*with_catalog(pg_server.url(db, "bob"), "ls", "--all", "--json"), env=homes["bob"]))
    assert len(bob) == 2 and all(json.loads(x)["path"].startswith(homes["bob"]["HOME"]) for x in bob)
    assert not lines(stree(*with_catalog(pg_server.url(db, "bob"), "grep", "-l", "the"), env=homes["bob"])) == []
    carol = lines(stree(*with_catalog(pg_server.url(db, "carol"), "ls", "--all", "--json"), env=homes["bob"]))
    assert len(carol) == 5
    with psycopg.connect(pg_server.url(db, "bob"), autocommit=True) as con:
        assert con.execute("SELECT count(*) FROM sessions").fetchone()[0] == 2
        assert con.execute("UPDATE sessions SET name = 'owned' WHERE owner = 'alice'").rowcount == 0
        assert con.execute("DELETE FROM entries WHERE owner = 'alice'").rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            con.execute("INSERT INTO sessions(owner, host, path) VALUES ('alice', 'h', '\"/x\"')")
    with psycopg.connect(pg_server.url(db, "carol"), autocommit=True) as con:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            con.execute("DELETE FROM sessions")
    r = stree(*with_catalog(pg_server.url(db, "carol"), "catalog", "push"), env=homes["bob"])
    assert r.code == 5 and "permission denied" in r.err and "stree_pusher" in r.err and "Traceback" not in r.err, r
    assert pg_server.sql(f"SELECT owner, count(*) FROM sessions GROUP BY owner ORDER BY owner", db=db) == \
        [("alice", 3), ("bob", 2)]


def test_the_server_gone_or_slow_is_one_line_with_a_hint(stree, isolated_home, pg_server, pg_url):
    corpus(isolated_home, n=3, entries=30)
    dead = pg_url.replace(f"port={pg_server.port}", "port=1")
    for args in (["catalog", "push"], ["ls", "--all"], ["grep", "the"]):
        r = stree(*with_catalog(dead, *args))
        assert r.code == 5 and "Traceback" not in r.err, r
        assert "connection failed" in r.err and len(r.err.splitlines()) == 2 and "hint:" in r.err, r.err
    slow = pg_url + "&options=-c%20statement_timeout%3D1"
    r = stree(*with_catalog(slow, "catalog", "push"))
    assert r.code == 5 and "statement timeout" in r.err and "hint:" in r.err and "Traceback" not in r.err, r
    bad = stree("--catalog", "mysql://x/y", "ls")
    assert bad.code == 2 and "not a postgresql:// URL" in bad.err, bad
    # after all that, a push goes through and is whole
    assert push(stree, pg_url)["pushed"] == 3


def _count(pg_server, url, table):
    import psycopg

    with psycopg.connect(url, autocommit=True) as con:
        return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_the_server_killed_mid_push_then_the_push_run_again(stree, isolated_home, pg_server, pg_url):
    import psycopg

    corpus(isolated_home, n=200, entries=20)
    assert stree("catalog", "--update").code == 0  # (the local catalogue first: the push itself is what is cut)
    proc = subprocess.Popen([sys.executable, "-m", "stree", "--catalog", pg_url, "catalog", "push"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    seen = 0
    while time.time() < deadline and proc.poll() is None:
        try:
            seen = _count(pg_server, pg_url, "entries")
        except psycopg.Error:
            seen = 0
        if seen:
            break
    pg_server.kill()
    out, err = proc.communicate(timeout=120)
    pg_server.start()
    if proc.returncode == 0:
        pytest.skip("the push finished before the server could be killed")
    assert proc.returncode == 5 and b"Traceback" not in err and b"hint:" in err, err
    again = push(stree, pg_url)
    assert again["pushed"] + again["unchanged"] == 200
    assert _count(pg_server, pg_url, "sessions") == 200
    assert lines(stree(*with_catalog(pg_url, "grep", "-c", "parser"))) == lines(stree("grep", "-c", "parser"))
    assert push(stree, pg_url)["pushed"] == 0


def test_two_homes_push_at_once_and_a_reader_reads_meanwhile(stree, tmp_path, isolated_home, pg_url):
    envs = []
    for who in ("a", "b"):
        home = tmp_path / who
        corpus(home, n=40, entries=30)
        parent = sorted((home / ".pi/agent/sessions").rglob("*.jsonl"))[0]
        fork = parent.with_name("fork.jsonl")  # a fork: the parent's entries copied under a new header
        lines_ = parent.read_text().splitlines()
        header = json.loads(lines_[0])
        header.update(id="0199f0f0-0000-7000-8000-0000000000f1", parentSession=str(parent))
        fork.write_text("\n".join([dumps(header)] + lines_[1:]) + "\n")
        envs.append({**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"),
                     "XDG_CONFIG_HOME": str(home / ".config")})
    procs = [subprocess.Popen([sys.executable, "-m", "stree", "--catalog", pg_url, "catalog", "push", "--json"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for env in envs]
    reads = 0
    while any(p.poll() is None for p in procs) or not reads:
        r = stree(*with_catalog(pg_url, "grep", "-c", "the"))
        assert r.code in (0, 1, 5) and "Traceback" not in r.err, r
        reads += 1
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and b"Traceback" not in err, err
        assert json.loads(out)["pushed"] == 41
    listed = lines(stree(*with_catalog(pg_url, "ls", "--all", "--json")))
    assert len(listed) == 82 and len({json.loads(x)["path"] for x in listed}) == 82
    for env in envs:  # nothing twice: pushing again sends nothing
        out = subprocess.run([sys.executable, "-m", "stree", "--catalog", pg_url, "catalog", "push", "--json"],
                             env=env, capture_output=True, check=True).stdout
        assert json.loads(out)["pushed"] == 0
    assert reads >= 1 and HOSTILE


def test_stats_all_answers_the_same_from_both_backends(stree, isolated_home, pg_url):
    """With a fork (its copied prefix counted once) and the same session in two places."""
    paths = corpus(isolated_home, n=6, entries=80)
    lines_ = paths[0].read_text().splitlines()
    header = json.loads(lines_[0])
    header.update(id="0199f0f0-0000-7000-8000-0000000000f3", parentSession=str(paths[0]))
    paths[0].with_name("fork.jsonl").write_text("\n".join([dumps(header)] + lines_[1:]) + "\n")
    push(stree, pg_url)
    for extra in ([], ["--since", "2026-01-01"]):
        same_stats(lines(stree("stats", "--all", "--json", *extra)),
                   lines(stree(*with_catalog(pg_url, "stats", "--all", "--json", *extra))))


def same_stats(local, shared):
    """`stats --all --json` lines equal, costs to the last bits a float sum in another order moves."""
    local, shared = [json.loads(x) for x in local], [json.loads(x) for x in shared]
    assert len(local) == len(shared) and local
    for a, b in zip(local, shared):
        assert a.keys() == b.keys()
        assert {k: v for k, v in a.items() if k != "cost"} == {k: v for k, v in b.items() if k != "cost"}, (a, b)
        assert a["cost"] == pytest.approx(b["cost"], rel=1e-9, abs=1e-12)


def test_mcp_list_sessions_and_grep_answer_the_same_from_both_backends(stree, isolated_home, pg_url):
    pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install 'stree[test]')")
    from test_serve_mcp import call_all, serve

    corpus(isolated_home, n=5, entries=40)
    push(stree, pg_url)
    questions = [("list_sessions", {"all": True}), ("grep", {"pattern": "parser", "count": True}),
                 ("grep", {"pattern": "the", "max_count": 5}), ("grep", {"pattern": "PARSE", "ignore_case": True})]
    local, _ = serve("serve", "--mcp", calls=call_all(questions))
    shared, err = serve("--catalog", pg_url, "serve", "--mcp", calls=call_all(questions))
    assert shared == local and "Traceback" not in err
    assert local[0]["sessions"] and local[1]["results"]


def test_the_connection_dropped_mid_push_then_the_push_run_again(stree, isolated_home, pg_server, pg_url):
    import psycopg

    corpus(isolated_home, n=200, entries=20)
    assert stree("catalog", "--update").code == 0
    assert stree(*with_catalog(pg_url, "catalog", "migrate")).code == 0
    proc = subprocess.Popen([sys.executable, "-m", "stree", "--catalog", pg_url, "catalog", "push"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    dropped = 0
    with psycopg.connect(pg_url, autocommit=True) as con:
        while time.time() < deadline and proc.poll() is None and not dropped:
            if con.execute("SELECT count(*) FROM entries").fetchone()[0]:  # (a batch is in: the push is under way)
                dropped = con.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                      "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchone()[0]
    out, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the push finished before its connection could be dropped")
    assert dropped and proc.returncode == 5 and b"Traceback" not in err and b"hint:" in err, err
    assert len(err.splitlines()) == 2, err
    again = push(stree, pg_url)
    assert again["pushed"] + again["unchanged"] == 200 and again["unchanged"] > 0
    assert _count(pg_server, pg_url, "sessions") == 200
    same_stats(lines(stree("stats", "--all", "--json")),
               lines(stree(*with_catalog(pg_url, "stats", "--all", "--json"))))


def _grow(path, when, text):
    last = json.loads(path.read_text().splitlines()[-1])
    with open(path, "a") as f:
        f.write(dumps({"type": "message", "id": f"f{abs(hash(text)) % 10**7:07d}", "parentId": last["id"],
                       "timestamp": when, "message": {"role": "user", "content": text}}) + "\n")


def test_push_since_sends_only_the_sessions_active_since(stree, isolated_home, pg_url):
    paths = corpus(isolated_home, n=5, entries=30)
    for p in paths[:2]:
        _grow(p, "2030-06-01T00:00:00.000Z", "a late question about walruses")
    got = stree(*with_catalog(pg_url, "catalog", "push", "--since", "2030-05-01", "--json"))
    assert got.code == 0, got
    assert json.loads(got.out)["pushed"] == 2
    listed = [json.loads(x)["path"] for x in lines(stree(*with_catalog(pg_url, "ls", "--all", "--json")))]
    assert sorted(listed) == sorted(str(p) for p in paths[:2])
    rest = push(stree, pg_url)  # (without --since: the others; the two sent before are as they were)
    assert (rest["pushed"], rest["unchanged"], rest["dropped"]) == (3, 2, 0)
    again = stree(*with_catalog(pg_url, "catalog", "push", "--since", "2030-05-01", "--json"))
    assert json.loads(again.out)["pushed"] == 0 and json.loads(again.out)["dropped"] == 0  # (older ones kept)
    bad = stree(*with_catalog(pg_url, "catalog", "push", "--since", "someday"))
    assert bad.code == 2 and bad.err.startswith("stree: error: --since 'someday': not a date"), bad
    misplaced = stree("catalog", "--since", "3d")
    assert misplaced.code == 2 and "--since goes with `catalog push`" in misplaced.err and "hint:" in misplaced.err


def test_a_file_removed_while_the_push_waits_is_reported_not_sent_empty(stree, isolated_home, pg_url):
    """The file goes between this machine's catalogue reading it and the push reading its entries
    again: its row is not sent without them; the push says which file and that it should be run again."""
    import socket

    import psycopg

    paths = corpus(isolated_home, n=4, entries=30)
    assert stree("catalog", "--update").code == 0
    assert stree(*with_catalog(pg_url, "catalog", "migrate")).code == 0
    victim = paths[2]
    with psycopg.connect(pg_url, autocommit=True) as con:
        # hold the lock the push takes on that file (owner, host and path), so it waits right there
        con.execute("SELECT pg_advisory_lock(hashtextextended(current_user || %s || %s, 0))",
                    (socket.gethostname(), json.dumps(str(victim))))
        proc = subprocess.Popen([sys.executable, "-m", "stree", "--catalog", pg_url, "catalog", "push", "--json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None and not con.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").fetchone()[0]:
            pass
        assert proc.poll() is None, proc.communicate()
        victim.unlink()
        con.execute("SELECT pg_advisory_unlock_all()")
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and b"Traceback" not in err, err
    got = json.loads(out)
    assert (got["pushed"], got["skipped"]) == (3, 1), got
    said = err.decode().splitlines()
    assert said[0].startswith("stree: warning: ") and str(victim) in said[0] and "not pushed" in said[0], said
    assert said[1] == "hint: run `stree catalog push` again", said
    with psycopg.connect(pg_url, autocommit=True) as con:
        rows = dict(con.execute("SELECT s.path, count(e.row) FROM sessions s LEFT JOIN entries e "
                                "ON (e.owner, e.host, e.path) = (s.owner, s.host, s.path) GROUP BY s.path").fetchall())
    assert sorted(json.loads(p) for p in rows) == sorted(str(p) for p in paths if p != victim)
    assert all(n > 0 for n in rows.values()), rows  # (every row sent came with its entries)
    assert push(stree, pg_url)["pushed"] == 0


def test_sessions_pushed_before_the_word_index_are_still_found_and_filled_in_when_they_grow(stree, isolated_home,
                                                                                           pg_url):
    import psycopg

    paths = corpus(isolated_home, n=4, entries=40)
    _grow(paths[1], "2027-01-01T00:00:00.000Z", "an unworded zebra question")
    push(stree, pg_url)
    with psycopg.connect(pg_url, autocommit=True) as con:  # (as a push of schema 3 left them: no words)
        con.execute("UPDATE sessions SET words = NULL")
        con.execute("TRUNCATE vocab")
    for args in (["-c", "zebra"], ["-c", "parser"], ["-l", "parse_line(rows"], ["-i", "-c", "TIMEOUT"]):
        assert lines(stree(*with_catalog(pg_url, "grep", *args))) == lines(stree("grep", *args)), args
    _grow(paths[1], "2027-01-02T00:00:00.000Z", "a worded okapi question")
    got = push(stree, pg_url)
    assert (got["pushed"], got["unchanged"]) == (1, 3)
    with psycopg.connect(pg_url, autocommit=True) as con:
        worded = con.execute("SELECT path, words FROM sessions WHERE words IS NOT NULL").fetchall()
    assert [json.loads(p) for p, _ in worded] == [str(paths[1])]  # (sent whole again, its words with it)
    assert {"zebra", "okapi", "unworded"} <= set(worded[0][1])
    for args in (["-c", "zebra"], ["-c", "okapi"], ["-c", "parser"]):
        assert lines(stree(*with_catalog(pg_url, "grep", *args))) == lines(stree("grep", *args)), args
    assert lines(stree(*with_catalog(pg_url, "grep", "-c", "okapi")))
