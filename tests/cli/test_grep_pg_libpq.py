"""A grep of a shared catalogue reads through libpq by ctypes (stree.storage.catalog.libpq),
not psycopg, whose import costs a one-shot grep more than its search: on a real PostgreSQL
server (tests/lib/pgkit.py), the same answers, byte for byte, as through psycopg (STREE_LIBPQ
naming a file that does not load: the documented way back to psycopg), the same one-line
errors with their hints and exit codes, and psycopg not imported."""

import ctypes
import threading

import pytest

from pgkit import pg_server, pg_url  # noqa: F401  (fixtures)
from test_catalog import corpus
from test_grep_pg_fast import PLANTED, answer, each_command_a_process, imported  # noqa: F401  (a fixture)
from waiting import until

pytestmark = pytest.mark.pg

ODD = "O'Brien said \\\"50%_done\\\" at C:\\\\tmp"  # (as JSON holds it: quotes, %, _ and a backslash)
GREPS = [[PLANTED], ["the"], ["-c", "the"], ["-i", PLANTED.upper()], ["-E", r"zanzi[a-z]+|O'Bri.n"],
         ["-w", "-c", "error"], ["-l", "the"], ["--json", PLANTED], ["-i", "--json", "o'brien"], ["50%_done"],
         ['"50%_done"'], ["C:\\tmp"], ["-E", r"C:\\tmp"], ["--type", "message", "-c", "timeout"], ["qqq-not-there"]]
PSYCOPG = {"STREE_LIBPQ": "none"}  # (no such library: psycopg reads)


@pytest.fixture
def pushed(stree, isolated_home, pg_url):
    paths = corpus(isolated_home, n=6, entries=60)
    for k, p in enumerate(paths[1::2]):
        lines = p.read_text().splitlines()
        at = [i for i, line in enumerate(lines) if '"text":"' in line]
        lines[at[0]] = lines[at[0]].replace('"text":"', f'"text":"{PLANTED} ', 1)
        lines[at[-1]] = lines[at[-1]].replace('"text":"', f'"text":"{ODD} ', 1)
        p.write_text("\n".join(lines) + "\n")
    r = stree("--catalog", pg_url, "catalog", "push")
    assert r.code == 0, r
    return pg_url


def grep(stree, url, *args, env=None):
    return stree("--catalog", url, "grep", *args, env={**(env or {}), "PYTHONPROFILEIMPORTTIME": "1"})


@pytest.mark.parametrize("args", GREPS, ids=" ".join)
def test_grep_through_libpq_prints_what_it_prints_through_psycopg(stree, pushed, args):
    through = grep(stree, pushed, *args, env=PSYCOPG)
    assert through.code in (0, 1) and "Traceback" not in through.err, through
    assert "psycopg" in imported(through)
    for env in ({}, {"STREE_NO_FAST": "1"}):  # the plain grep (stree.fastgrep) and click's
        light = grep(stree, pushed, *args, env=env)
        assert answer(light) == answer(through), env
        assert light.raw == through.raw, env  # (byte for byte)
        assert "psycopg" not in imported(light) and "stree.storage.catalog.libpq" in imported(light), env
    if args == [PLANTED]:
        assert through.code == 0 and len(through.out.splitlines()) == 3
    if args == ["50%_done"]:  # (the literal sent as a parameter: its quote, % and _ taken as they are)
        assert through.code == 0 and len(through.out.splitlines()) == 3 and "O'Brien" in through.out


def test_a_libpq_that_does_not_load_is_psycopg_silently(stree, pushed, tmp_path):
    """STREE_LIBPQ names the one libpq to load: nothing there, or a file that is not a library,
    and grep reads through psycopg, saying nothing of it."""
    want = answer(grep(stree, pushed, PLANTED, env=PSYCOPG))
    junk = tmp_path / "libpq.so.5"
    junk.write_text("not a library\n")
    for named in (str(tmp_path / "nothing.so"), str(junk)):
        r = grep(stree, pushed, PLANTED, env={"STREE_LIBPQ": named})
        assert answer(r) == want and r.code == 0, named
        assert "psycopg" in imported(r), named
    light = grep(stree, pushed, PLANTED)
    assert answer(light) == want and "psycopg" not in imported(light)


def test_the_system_libpq_serves_too(stree, pushed):
    try:
        ctypes.CDLL("libpq.so.5")
    except OSError:
        pytest.skip("no libpq.so.5 on this system (Debian: libpq5)")
    want = answer(grep(stree, pushed, "-c", "the", env=PSYCOPG))
    r = grep(stree, pushed, "-c", "the", env={"STREE_LIBPQ": "libpq.so.5"})
    assert answer(r) == want and "psycopg" not in imported(r)


def one_error(r):
    """The error said: (its line, its hints); exit 5, nothing on stdout, no traceback."""
    assert r.code == 5 and r.out == "" and "Traceback" not in r.err, r
    said = answer(r)[2].splitlines()
    assert said[0].startswith("stree: error: catalogue postgresql://") and said[1:], said
    assert all(line.startswith("hint: ") for line in said[1:]), said
    return said


def both(stree, url, *args, before=None, after=None):
    """The same grep through libpq, then through psycopg: (libpq's result, psycopg's)."""
    out = []
    for env in ({}, PSYCOPG):
        if before:
            before()
        try:
            out.append(grep(stree, url, *args, env=env))
        finally:
            if after:
                after()
    return out


def test_a_server_down_or_a_wrong_database_is_said_as_psycopg_says_it(stree, pushed, pg_server):
    for url, what in ((pushed.replace(f"port={pg_server.port}", "port=1"), "connection failed"),
                      (pg_server.url("no_such_db"), 'database "no_such_db" does not exist')):
        light, through = both(stree, url, PLANTED)
        assert answer(light) == answer(through), url
        said = one_error(light)
        assert what in said[0], said


def test_permission_denied_is_said_as_psycopg_says_it(stree, pushed, pg_server):
    db = pushed.split("/")[3].split("?")[0]
    pg_server.sql("DROP ROLE IF EXISTS stranger")
    pg_server.sql("CREATE ROLE stranger LOGIN")  # (neither stree_reader nor stree_pusher)
    pg_server.sql(f'GRANT CONNECT ON DATABASE "{db}" TO stranger')
    light, through = both(stree, pg_server.url(db, "stranger"), PLANTED)
    assert answer(light) == answer(through)
    said = one_error(light)
    assert "permission denied" in said[0] and "stree_reader" in said[1], said
    assert "psycopg" not in imported(light)


class Locked:
    """The sessions table locked by another connection: a grep waits at its first read of it."""

    def __init__(self, url):
        self.con = connected(url)

    def lock(self):
        self.con.execute("LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE")

    def unlock(self):
        self.con.rollback()


def test_a_statement_timeout_is_said_as_psycopg_says_it(stree, pushed):
    locked = Locked(pushed)
    slow = pushed + "&options=-c%20statement_timeout%3D200"  # (ms: the grep waits for the lock until then)
    light, through = both(stree, slow, PLANTED, before=locked.lock, after=locked.unlock)
    assert answer(light) == answer(through)
    said = one_error(light)
    assert "statement timeout" in said[0], said
    assert "psycopg" not in imported(light)


def waiting_for_the_lock(url):
    """The pid of the grep's backend once it waits for the lock (polled, with a deadline)."""
    import psycopg

    db = url.split("/")[3].split("?")[0]
    with psycopg.connect(url, autocommit=True) as con:
        return until(lambda: [pid for (pid,) in con.execute("SELECT pid FROM pg_stat_activity WHERE wait_event_type "
                                                           "= 'Lock' AND datname = %s", (db,))],
                     "a grep waiting for the lock")[0]


def connected(url):
    """A connection to `url`, once the server takes them again (after a crash: its recovery)."""
    import psycopg

    def connect():
        try:
            return psycopg.connect(url)
        except psycopg.OperationalError:  # (recovering from a crash: not taking connections yet)
            return None

    return until(connect, f"the server to take connections again ({url})")


@pytest.mark.parametrize("how", ["terminated", "killed"])
def test_a_connection_dropped_mid_grep_is_said_as_psycopg_says_it(stree, pushed, how):
    """The grep's backend ended while the grep waits for a lock: terminated (the server's
    FATAL, then the connection closed), or killed (SIGKILL: the connection closed without a
    word; the server recovers by itself)."""
    import os
    import signal

    import psycopg

    ended, threads, locked = [], [], []

    def end_the_waiter():
        pid = waiting_for_the_lock(pushed)
        if how == "killed":
            os.kill(pid, signal.SIGKILL)
        else:
            with psycopg.connect(pushed, autocommit=True) as con:
                con.execute("SELECT pg_terminate_backend(%s)", (pid,))
        ended.append(pid)

    def before():
        locked.append(connected(pushed))
        locked[-1].execute("LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE")
        threads.append(threading.Thread(target=end_the_waiter))
        threads[-1].start()

    def after():
        threads[-1].join()
        try:
            locked[-1].close()
        except psycopg.Error:
            pass
        connected(pushed).close()  # (the server back, after a crash)

    light, through = both(stree, pushed, PLANTED, before=before, after=after)
    assert len(ended) == 2
    assert answer(light) == answer(through)
    said = one_error(light)
    assert "connection failed or lost" in said[0], said
    assert ("terminating connection" if how == "terminated" else "server closed the connection") in said[0], said
    assert "psycopg" not in imported(light)


def test_ctrl_c_while_the_server_works_stops_the_grep_and_its_statement(pushed):
    """Ctrl-C while a grep's statement waits on the server (here: for a lock) ends the grep at
    once (`stree: interrupted`, exit 130), and the server's statement is cancelled, as
    psycopg does: not left waiting for a client that is gone."""
    import os
    import signal
    import subprocess
    import sys

    from conftest import interruptible

    locked = Locked(pushed)
    locked.lock()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "stree", "--catalog", pushed, "grep", PLANTED],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, PYTHONPROFILEIMPORTTIME="1"), preexec_fn=interruptible)
        try:
            pid = waiting_for_the_lock(pushed)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
        assert proc.returncode == 130 and out == "" and "stree: interrupted" in err and "Traceback" not in err, err
        assert "psycopg" not in {line.rsplit("|", 1)[-1].strip() for line in err.splitlines()}
        until(lambda: pid not in [p for (p,) in locked.con.execute("SELECT pid FROM pg_locks WHERE NOT granted")],
              "the grep's statement to stop waiting on the server")
    finally:
        locked.unlock()


def test_a_client_encoding_other_than_utf8_is_read_by_psycopg(stree, pushed):
    """libpq's values are read as UTF-8: a connection asked for another client encoding is
    left to psycopg, which decodes it (the same answer)."""
    latin = pushed + "&client_encoding=LATIN1"
    want = grep(stree, latin, PLANTED, env=PSYCOPG)
    got = grep(stree, latin, PLANTED)
    assert answer(got) == answer(want) and got.code == 0 and got.out == answer(grep(stree, pushed, PLANTED))[1], got
    assert "psycopg" in imported(got)


def test_the_rows_grep_reads_are_the_same_values_through_either_client(pushed):
    """What grep reads of the catalogue (every session's head, the candidates, their sessions'
    whole rows: numeric, bytea, double precision and JSON columns among them), and values of
    every type the binding converts, are equal, type for type, to psycopg's."""
    from stree.core.grep_match import Pattern
    from stree.storage.catalog import libpq
    from stree.storage.catalog.postgres import Catalog

    def read(light):
        cat = Catalog(pushed, migrate=False, light=light)
        cat.open()
        try:
            heads = cat.heads()
            found = cat.candidates(Pattern("the"), heads)
            rows = cat.rows(gens={c[0] for c in found})
            return cat.db.__class__.__module__, heads, found, rows
        finally:
            cat.close()

    light, through = read(True), read(False)
    assert light[0] == "stree.storage.catalog.libpq" and through[0].startswith("psycopg")
    assert light[1:] == through[1:] and light[2] and light[3]
    typed = [{k: type(v) for k, v in row.items()} for row in light[3].values()]
    assert typed == [{k: type(v) for k, v in row.items()} for row in through[3].values()]
    assert any(isinstance(row["path_rows"], bytes) for row in light[3].values())
    sql = ("SELECT true, false, '\\x00ff27'::bytea, 1::int2, 2::int4, 3::int8, 1.5::float8, 'NaN'::float8, "
           "2.5::float4, 12345678901234567890::numeric, -7::numeric, 0.25::numeric, 'x''\"\\'::text, ''::text, NULL::text, "
           "'n'::name, 'v'::varchar, 'é'::char(2), %s::text, %s::bigint[] = ARRAY[1, 2]::bigint[], "
           "%s::text[] = ARRAY['a\"b', 'c\\d', NULL]")
    args = ["it's 50%", [1, 2], ['a"b', "c\\d", None]]
    import math

    import psycopg

    db = libpq.connect(pushed, 10)
    try:
        got = db.execute(sql, args).fetchone()
    finally:
        db.close()
    with psycopg.connect(pushed, autocommit=True) as con:
        want = con.execute(sql, args).fetchone()
    assert [type(v) for v in got[:9] + got[11:]] == [type(v) for v in want[:9] + want[11:]]
    assert type(got[9]) is type(got[10]) is int  # (a whole numeric: psycopg's Decimal, of the same value)
    assert math.isnan(got[7]) and math.isnan(want[7])
    assert got[:7] + got[8:] == want[:7] + want[8:]
    assert got[-3:] == ("it's 50%", True, True)
