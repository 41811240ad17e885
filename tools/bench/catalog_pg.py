#!/usr/bin/env python3
"""Benchmark the shared catalogue on PostgreSQL (issue 29) against the SQLite one, on a
throwaway local server (Debian's postgresql; tests/lib/pgkit.py starts it) in a temporary HOME.

    python3 tools/bench/catalog_pg.py [--sessions 300] [--grep-sessions 1000] [--runs 3]

Rows: the first push of N real-size sessions against building the SQLite catalogue from
scratch (`stree catalog --rebuild`); a second push after one session grew by one line,
against the first; `grep` of a rare word across the grep corpus, PostgreSQL against SQLite.
"""

import json
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

from catalog import RARE, make  # noqa: E402
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
    try:
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
        grown_file = sorted(root.rglob("*.jsonl"))[n // 2]
        counter = [0]

        def grow():
            last = json.loads(grown_file.read_text().splitlines()[-1])
            counter[0] += 1
            with open(grown_file, "a") as f:
                f.write(json.dumps({"type": "message", "id": f"b{counter[0]:07x}", "parentId": last["id"],
                                    "timestamp": "2026-12-01T00:00:00.000Z",
                                    "message": {"role": "user", "content": "one more line"}}) + "\n")

        second = timed(pg + ["catalog", "push"], env, runs, before=grow)
        db_size = server.sql("SELECT pg_database_size('bench')", db="bench")[0][0]

        ghome = tmp / "ghome"
        ghome.mkdir()
        genv = home_env(ghome)
        _, gsize = make(ghome, g)
        gurl = server.fresh_db("grep")
        gpg = stree + ["--catalog", gurl]
        assert subprocess.run(gpg + ["catalog", "push"], env=genv, capture_output=True).returncode == 0
        timed(stree + ["grep", RARE], genv)
        sqlite_grep = timed(stree + ["grep", RARE], genv, runs)
        pg_grep = timed(gpg + ["grep", RARE], genv, runs)
        sqlite_common = timed(stree + ["grep", "-c", "timeout"], genv, runs)
        pg_common = timed(gpg + ["grep", "-c", "timeout"], genv, runs)
        print(f"\n## The shared catalogue on PostgreSQL (tools/bench/catalog_pg.py)\n\n{n} sessions ({size / 1e6:.1f} MB) "
              f"for the push, {g} ({gsize / 1e6:.1f} MB) for grep; PostgreSQL {bindir.split('/')[4]} on a Unix "
              f"socket (fsync off), median of {runs} runs ({os.cpu_count()} cores)\n")
        print("| measurement | stree | baseline | ratio | target |")
        print("| --- | --- | --- | --- | --- |")
        print(f"| first push vs building the SQLite catalogue from scratch | {first:.2f} s | {built:.2f} s "
              f"| {first / built:.2f} | ≤ 2 |")
        print(f"| push after one session grew by one line vs the first push | {second:.2f} s | {first:.2f} s "
              f"| {second / first:.3f} | ≤ 0.05 |")
        print(f"| `grep {RARE}` on PostgreSQL vs on SQLite | {pg_grep:.3f} s | {sqlite_grep:.3f} s "
              f"| {pg_grep / sqlite_grep:.2f} | ≤ 2 |")
        print(f"| `grep -c timeout` (a common word) on PostgreSQL vs on SQLite | {pg_common:.3f} s "
              f"| {sqlite_common:.3f} s | {pg_common / sqlite_common:.2f} | (info) |")
        print(f"| PostgreSQL database size / sessions' size | {db_size / 1e6:.1f} MB | {size / 1e6:.1f} MB "
              f"| {db_size / size:.2f} | (info) |")
    finally:
        server.stop("immediate")
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
