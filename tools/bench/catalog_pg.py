#!/usr/bin/env python3
"""Benchmark the shared catalogue on PostgreSQL (issue 29) against the SQLite one, on a
throwaway local server (Debian's postgresql; tests/lib/pgkit.py starts it) in a temporary HOME.

    python3 tools/bench/catalog_pg.py [--sessions 300] [--grep-sessions 1000] [--runs 3] [--only grep]

Rows: the first push of N real-size sessions against building the SQLite catalogue from
scratch (`stree catalog --rebuild`); a second push after one session grew by one line,
against the first; `grep` of a rare word across the grep corpus, PostgreSQL against SQLite, and
the floor of a PostgreSQL grep (a process that connects through the grep's client, libpq by
ctypes, and asks `SELECT 1`; and the same through psycopg, which grep no longer imports).
`--only grep`: the grep rows alone (no push corpus).
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent / "tests" / "lib"))  # (pgkit)

from catalog import RARE, grower, make  # noqa: E402
import pgkit  # noqa: E402


def timed(cmd, env, runs=1, before=None):
    times = []
    for _ in range(runs):
        if before:
            before()
        start = time.perf_counter()
        proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            sys.exit(f"{cmd} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return statistics.median(times)


def paired(a, b, env, runs):
    """(median time of `a`, of `b`), run by turns (a, b, a, b, ...): a load that comes and goes
    (the other work of the machine) weighs on both alike."""
    times = ([], [])
    for _ in range(runs):
        for cmd, out in zip((a, b), times):
            out.append(timed(cmd, env))
    return statistics.median(times[0]), statistics.median(times[1])


def home_env(home):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STREE_", "PI_CODING_AGENT"))}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"))
    return env


def main(argv):
    n = int(argv[argv.index("--sessions") + 1]) if "--sessions" in argv else 300
    g = int(argv[argv.index("--grep-sessions") + 1]) if "--grep-sessions" in argv else 1000
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 3
    bindir = pgkit.binaries()
    if bindir is None:
        sys.exit("catalog_pg.py: PostgreSQL's server programs are not installed (apt-get install postgresql)")
    tmp = Path(tempfile.mkdtemp(prefix="stree-catalog-pg-"))
    os.chmod(tmp, 0o755)
    base = tmp / "pg"
    base.mkdir()
    server = pgkit.Server(bindir, str(base))
    server.init()
    server.start()
    stree = [sys.executable, "-m", "stree"]
    only_grep = "--only" in argv and argv[argv.index("--only") + 1] == "grep"
    try:
        pushed = [] if only_grep else push_rows(server, tmp, n, runs, stree)
        rows = pushed[:2] + grep_rows(server, tmp, g, runs, stree) + pushed[2:]
        print(f"\n## The shared catalogue on PostgreSQL (tools/bench/catalog_pg.py)\n\n"
              + ("" if only_grep else f"{n} sessions ({rows[0][5] / 1e6:.1f} MB) for the push, ")
              + f"{g} ({rows[-1][5] / 1e6:.1f} MB) for grep; PostgreSQL {bindir.split('/')[4]} on a Unix "
              f"socket (fsync off), median of {runs} runs ({os.cpu_count()} cores)\n")
        print("| measurement | stree | baseline | ratio | target |")
        print("| --- | --- | --- | --- | --- |")
        for what, value, base, unit, target, _ in rows:
            digits = 3 if unit == "s" and value < 1 else 2
            ratio = f"{value / base:.3f}" if target == "≤ 0.05" else f"{value / base:.2f}"
            print(f"| {what} | {value:.{digits}f} {unit} | {base:.{digits}f} {unit} | {ratio} | {target} |")
    finally:
        server.stop("immediate")
        shutil.rmtree(tmp, ignore_errors=True)


def push_rows(server, tmp, n, runs, stree):
    """The push rows: (what, value, baseline, unit, target, corpus bytes) each."""
    home = tmp / "home"
    home.mkdir()
    env = home_env(home)
    root, size = make(home, n)
    cache = home / ".cache" / "stree" / "index"
    built = timed(stree + ["catalog", "--rebuild"], env, runs, before=lambda: shutil.rmtree(cache, ignore_errors=True))
    url = server.fresh_db("bench")
    pg = stree + ["--catalog", url]
    assert subprocess.run(pg + ["catalog", "migrate"], env=env, capture_output=True).returncode == 0
    pushes = []
    for _ in range(runs):
        server.sql("TRUNCATE sessions, entries, usage, vocab", db="bench")
        pushes.append(timed(pg + ["catalog", "push"], env))
    first = statistics.median(pushes)
    second = timed(pg + ["catalog", "push"], env, runs, before=grower(root, n))
    db_size = server.sql("SELECT pg_database_size('bench')", db="bench")[0][0]
    return [("first push vs building the SQLite catalogue from scratch", first, built, "s", "≤ 2", size),
            ("push after one session grew by one line vs the first push", second, first, "s", "≤ 0.05", size),
            ("PostgreSQL database size / sessions' size", db_size / 1e6, size / 1e6, "MB", "(info)", size)]


def grep_rows(server, tmp, g, runs, stree):
    """The grep rows: a rare word and a common one, PostgreSQL against SQLite, on a corpus of g sessions."""
    ghome = tmp / "ghome"
    ghome.mkdir()
    genv = home_env(ghome)
    _, gsize = make(ghome, g)
    gurl = server.fresh_db("grep")
    gpg = stree + ["--catalog", gurl]
    assert subprocess.run(gpg + ["catalog", "push"], env=genv, capture_output=True).returncode == 0
    timed(stree + ["grep", RARE], genv)
    sqlite_grep, pg_grep = paired(stree + ["grep", RARE], gpg + ["grep", RARE], genv, runs)
    sqlite_common, pg_common = paired(stree + ["grep", "-c", "timeout"], gpg + ["grep", "-c", "timeout"], genv, runs)
    floor = [sys.executable, "-c", f"import os, psycopg; psycopg.connect({gurl!r}).execute('SELECT 1'); os._exit(0)"]
    sqlite_again, bare = paired(stree + ["grep", RARE], floor, genv, runs)
    light = [sys.executable, "-c", "import os; from stree.storage.catalog import libpq; "
             f"libpq.connect({gurl!r}, 10).execute('SELECT 1'); os._exit(0)"]  # (the grep's client: libpq by ctypes)
    sqlite_light, bare_light = paired(stree + ["grep", RARE], light, genv, runs)
    return [(f"`grep {RARE}` on PostgreSQL vs on SQLite", pg_grep, sqlite_grep, "s", "≤ 2", gsize),
            ("a process that only loads libpq (stree.storage.catalog.libpq), connects and asks `SELECT 1` vs the "
             "SQLite grep", bare_light, sqlite_light, "s", "(floor)", gsize),
            ("a process that only imports psycopg, connects and asks `SELECT 1` vs the SQLite grep (what grep no "
             "longer pays)", bare, sqlite_again, "s", "(info)", gsize),
            ("`grep -c timeout` (a common word) on PostgreSQL vs on SQLite", pg_common, sqlite_common, "s", "(info)",
             gsize)]


if __name__ == "__main__":
    main(sys.argv[1:])
