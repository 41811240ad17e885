#!/usr/bin/env python3
"""Scale by simulation (issue 29): HOSTS machines, each with its own HOME and SESSIONS sessions
of its own (tools/bench/gen.py, a seed per session: no two alike), push to one shared
catalogue at once, each as its own PostgreSQL role (a stree_pusher: row-level security on);
then readers (a stree_reader) ask `grep` and `stats --all` of it, RUNS times each.

    python3 tools/bench/team_sim.py [--hosts 20] [--sessions 500] [--entries 40] [--runs 20]

On a throwaway local server (Debian's postgresql; tests/pgkit.py starts it, fsync off), in a
temporary directory. Run by `make bench-team` (not by `make test` nor `make bench`: on 2
cores the default size takes about a quarter of an hour). Prints a markdown section: the
rows, the database's size per GB of sessions, the push's wall time and rate, and p50/p99 of
each question (with 20 samples the p99 is their slowest).
"""

import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent / "tests" / "lib"))  # (pgkit)

from gen import Gen  # noqa: E402
import pgkit  # noqa: E402

RARE = "zanzibarquux"  # in one session of every 50: a search that finds a few hundred lines team-wide


def arg(argv, name, default):
    return int(argv[argv.index(name) + 1]) if name in argv else default


def make_host(job):
    """One machine's sessions: `n` files of about `entries` entries under home/.pi/agent/sessions."""
    home, h, n, entries = job
    root = Path(home) / ".pi" / "agent" / "sessions"
    total = 0
    for i in range(n):
        project = root / f"--home-dev-project{i % 12}--"
        project.mkdir(parents=True, exist_ok=True)
        buf = io.StringIO()
        Gen(1_000_000 + h * 10_000 + i, out=buf).run(entries + (i * 7) % entries)
        text = buf.getvalue()
        if i % 50 == 7:
            lines = text.splitlines()
            lines.insert(len(lines) // 2, lines[-1].replace('"text":"', f'"text":"{RARE} ', 1))
            text = "\n".join(lines) + "\n"
        path = project / f"2026-01-01T00-00-00-000Z_{h:02d}{i:04d}.jsonl"
        path.write_text(text)
        total += path.stat().st_size
    return total


def home_env(home):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STREE_", "PI_CODING_AGENT"))}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"))
    return env


def check(proc, what):
    if proc.returncode not in (0, 1):
        sys.exit(f"{what} failed ({proc.returncode}): {proc.stderr[-2000:]}")


def percentile(times, p):
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main(argv):
    hosts, n = arg(argv, "--hosts", 20), arg(argv, "--sessions", 500)
    entries, runs = arg(argv, "--entries", 40), arg(argv, "--runs", 20)
    bindir = pgkit.binaries()
    if bindir is None:
        sys.exit("team_sim.py: PostgreSQL's server programs are not installed (apt-get install postgresql)")
    tmp = Path(tempfile.mkdtemp(prefix="stree-team-sim-"))
    os.chmod(tmp, 0o755)
    base = tmp / "pg"
    base.mkdir()
    server = pgkit.Server(bindir, str(base))
    server.init()
    server.start()
    stree = [sys.executable, "-m", "stree"]
    started = time.perf_counter()
    try:
        homes = [tmp / f"host{h:02d}" for h in range(hosts)]
        with ProcessPoolExecutor(os.cpu_count() or 2) as pool:
            size = sum(pool.map(make_host, [(str(home), h, n, entries) for h, home in enumerate(homes)]))
        made = time.perf_counter() - started
        url = server.fresh_db("team")
        check(subprocess.run(stree + ["--catalog", url, "catalog", "migrate"], capture_output=True, text=True,
                             env=home_env(tmp)), "migrate")
        empty = server.sql("SELECT pg_database_size('team')", db="team")[0][0]
        for h in range(hosts):
            server.sql(f"CREATE ROLE host{h:02d} LOGIN; GRANT stree_pusher TO host{h:02d}", db="team")
        server.sql("CREATE ROLE reader LOGIN; GRANT stree_reader TO reader", db="team")
        for home in homes:  # (each machine's own catalogue first: what is measured is the push)
            check(subprocess.run(stree + ["catalog", "--update"], capture_output=True, text=True,
                                 env=home_env(home)), "catalog --update")
        start = time.perf_counter()
        procs = [subprocess.Popen(stree + ["--catalog", server.url("team", f"host{h:02d}"), "catalog", "push",
                                           "--json"], env=home_env(home), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for h, home in enumerate(homes)]
        ends, sent = [], 0
        for p in procs:
            out, err = p.communicate()
            ends.append(time.perf_counter() - start)
            check(p, f"push ({err})")
            sent += json.loads(out)["pushed"]
        pushed = max(ends)
        assert sent == hosts * n, sent
        counts = {t: server.sql(f"SELECT count(*) FROM {t}", db="team")[0][0]
                  for t in ("sessions", "entries", "usage", "vocab")}
        db_size = server.sql("SELECT pg_database_size('team')", db="team")[0][0]
        tables = {t: server.sql(f"SELECT pg_total_relation_size('{t}')", db="team")[0][0]
                  for t in ("sessions", "entries", "usage", "vocab")}
        reader = stree + ["--catalog", server.url("team", "reader")]
        env = home_env(homes[0])
        questions = [("grep -c " + RARE, ["grep", "-c", RARE]), ("grep -l 'parse_line(rows'", ["grep", "-l", "parse_line(rows"]),
                     ("stats --all", ["stats", "--all"])]
        times = {}
        for label, args in questions:
            times[label] = []
            for _ in range(runs):
                t0 = time.perf_counter()
                proc = subprocess.run(reader + args, env=env, capture_output=True, text=True)
                times[label].append(time.perf_counter() - t0)
                check(proc, label)
        total = time.perf_counter() - started
        gb = size / 1e9
        print(f"\n## Team scale by simulation (tools/bench/team_sim.py)\n\n{hosts} hosts × {n} sessions "
              f"(about {entries}–{2 * entries} entries each, {size / 1e6:.0f} MB), each host its own HOME and "
              f"PostgreSQL role (stree_pusher, row-level security on), pushing at once; PostgreSQL "
              f"{bindir.split('/')[4]} on a Unix socket (fsync off), {os.cpu_count()} cores shared with the "
              f"other work of the machine; {runs} runs of each question as a stree_reader. Whole run "
              f"{total / 60:.1f} min ({made:.0f} s generating).\n")
        print("| measurement | value |")
        print("| --- | --- |")
        print(f"| rows | {counts['sessions']} sessions, {counts['entries']} entries, {counts['usage']} usage, "
              f"{counts['vocab']} words |")
        print(f"| database size | {db_size / 1e6:.0f} MB, {(db_size - empty) / 1e6:.0f} MB more than the empty "
              f"schema's ({(db_size - empty) / 1e6 / gb:.0f} MB per GB of sessions; "
              f"entries {tables['entries'] / 1e6:.0f} MB, usage {tables['usage'] / 1e6:.0f} MB, "
              f"sessions {tables['sessions'] / 1e6:.0f} MB, words {tables['vocab'] / 1e6:.0f} MB) |")
        print(f"| {hosts} pushes at once, wall (first done / median / last done) | {min(ends):.1f} s / "
              f"{statistics.median(ends):.1f} s / {pushed:.1f} s |")
        print(f"| push rate, all hosts together | {hosts * n / pushed:.0f} sessions/s, "
              f"{size / 1e6 / pushed:.1f} MB/s |")
        for label, got in times.items():
            print(f"| `{label}` p50 / p99 | {percentile(got, 50):.2f} s / {percentile(got, 99):.2f} s |")
    finally:
        server.stop("immediate")
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
