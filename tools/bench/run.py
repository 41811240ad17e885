#!/usr/bin/env python3
"""`make bench`: time stree against its baselines and write bench/results.md.

Every figure is the median of several runs of a fresh process, measured in this
run next to its baselines:

  - `python -c "import click"`: the floor for any click program's startup;
  - tools/bench/jsonl_baseline.py: a plain json.loads per line of the file;
  - tools/bench/pi_load.mjs: pi's own SessionManager.open + getTree +
    buildSessionContext, the loader pi runs when it opens a session.

"cold" = no index (the cache is emptied before each run; the file is in the OS
page cache, as it is right after pi wrote it); a cold parse is shared among one
process per core (stree.parallel), and the same command with STREE_JOBS=1 is
reported next to it. "warm" = the index is present (after one untimed run of the
same command, which also fills cached previews and keeps a `log --graph`
output, stree.graphcache); the graph is also timed with its kept output removed.
Peak RSS comes from STREE_DEBUG_STATS: the stree process plus, for a cold parse,
its parse workers (their peaks added: an upper bound of what they held at once).
"""

import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "bench" / "data"
CACHE = DATA / "cache"
RESULTS = ROOT / "bench" / "results.md"
PI = ROOT / "tests" / "pi" / "node_modules" / "@mariozechner" / "pi-coding-agent" / "package.json"
PY = sys.executable
STREE = [PY, "-m", "stree"]
ENV = dict(os.environ, STREE_CACHE_DIR=str(CACHE), PAGER="cat", NO_COLOR="1")
# PYTHONDONTWRITEBYTECODE would make every run compile stree from source: not how it runs when installed
for var in ("STREE_NO_CACHE", "STREE_DEBUG", "STREE_DEBUG_STATS", "STREE_SESSION", "PYTHONDONTWRITEBYTECODE"):
    ENV.pop(var, None)
RUNS = int(os.environ.get("BENCH_RUNS", "7"))
SLOW_RUNS = int(os.environ.get("BENCH_SLOW_RUNS", "5"))


def sh(cmd, env=ENV, check=True):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    if check and proc.returncode != 0:
        sys.exit(f"bench: {' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stderr.decode()[-2000:]}")
    return proc


def timed(cmd, runs, before=None, env=ENV):
    """Median wall time in seconds over `runs` fresh processes."""
    times = []
    for _ in range(runs):
        if before:
            before()
        t = time.perf_counter()
        sh(cmd, env)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def peak_rss_kib(cmd, before=None):
    """(peak RSS of stree plus its parse workers, in KiB; how many workers)."""
    if before:
        before()
    err = sh(cmd, dict(ENV, STREE_DEBUG_STATS="1")).stderr.decode()
    own = int(re.search(r"peak rss (\d+) KiB", err).group(1))
    m = re.search(r"(\d+) parse worker\(s\), peak rss (\d+) KiB", err)
    if not m:
        return own, 0
    workers, largest = int(m.group(1)), int(m.group(2))
    return own + workers * largest, workers


def clear_cache():
    shutil.rmtree(CACHE, ignore_errors=True)


def clear_graphs():
    for kept in CACHE.glob("*.graph"):
        kept.unlink()


def ensure_data():
    DATA.mkdir(parents=True, exist_ok=True)
    files = {}
    for n, name in ((10_000, "s10k.jsonl"), (100_000, "s100k.jsonl")):
        path = DATA / name
        if not path.exists():
            print(f"bench: generating {path.relative_to(ROOT)}", file=sys.stderr)
            sh([PY, str(ROOT / "tools/bench/gen.py"), str(n), str(path)])
        files[n] = path
    return files


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    node = sh(["node", "--version"]).stdout.decode().strip()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return cpu, os.cpu_count(), platform.python_version(), node, platform.system(), load


def has_command(name):
    return sh(STREE + [name, "--help"], check=False).returncode == 0


def main():
    if not PI.exists():
        sys.exit("bench: the real pi is missing; run `make bench` (it installs tests/pi first)")
    files = ensure_data()
    big, small = files[100_000], files[10_000]
    big_mb = big.stat().st_size / 1e6
    work = DATA / "work.jsonl"  # write commands append: they get their own copy
    shutil.copyfile(big, work)
    clear_cache()
    sh([PY, "-m", "compileall", "-q", str(ROOT / "stree")])
    rows = []

    def row(name, seconds, base_name, base, target=None, note=""):
        ratio = seconds / base
        ok = "" if target is None else ("✓" if ratio <= target else "✗")
        rows.append((name, f"{seconds * 1000:.0f} ms", f"{ratio:.2f}× {base_name}",
                     f"≤ {target}×" if target is not None else "", ok, note))
        print(f"bench: {name}: {seconds * 1000:.0f} ms ({ratio:.2f}× {base_name})", file=sys.stderr)

    # baselines
    click_s = timed([PY, "-c", "import click"], RUNS)
    jsonl_s = timed([PY, str(ROOT / "tools/bench/jsonl_baseline.py"), str(big)], SLOW_RUNS)
    pi_big = timed(["node", str(ROOT / "tools/bench/pi_load.mjs"), str(big)], SLOW_RUNS)
    pi_small = timed(["node", str(ROOT / "tools/bench/pi_load.mjs"), str(small)], RUNS)
    bases = [("python -c \"import click\"", click_s), (f"json.loads per line, 100k ({big_mb:.0f} MB)", jsonl_s),
             ("pi loader, 100k", pi_big), ("pi loader, 10k", pi_small)]

    # startup
    row("stree --version", timed(STREE + ["--version"], RUNS), "click", click_s, 1.3)
    row("stree --help", timed(STREE + ["--help"], RUNS), "click", click_s, 1.3)
    comp_env = dict(ENV, _STREE_COMPLETE="bash_complete", COMP_WORDS="stree lo", COMP_CWORD="1")
    if sh(STREE + ["__complete", "bash", "lo", "--", "lo"], check=False).returncode == 0:
        row("completion: command name (`__complete`)", timed(STREE + ["__complete", "bash", "lo", "--", "lo"], RUNS),
            "click", click_s, 1.3)
        rev_complete = STREE + ["__complete", "bash", "", "--", "-s", str(big), "log", ""]
        rev_note = "`stree __complete` on the 100k session"
    else:
        row("completion: command name (click)", timed(STREE, RUNS, env=comp_env), "click", click_s, 1.3,
            "click's own completion protocol (no `stree __complete` on this branch yet)")
        rev_complete = None
        rev_note = ""

    # cold, 100k
    cold = STREE + ["-s", str(big), "log", "-n", "20"]
    cold_s = timed(cold, SLOW_RUNS, before=clear_cache)
    cold_rss = peak_rss_kib(cold, before=clear_cache)
    shared = f"parsed by {cold_rss[1] + 1} processes (one per core)" if cold_rss[1] else "parsed by one process"
    row("cold `log -n 20`, 100k", cold_s, "pi", pi_big, 0.6, shared)
    row("cold `log -n 20`, 100k", cold_s, "json.loads", jsonl_s, 1.0, shared)
    one_s = timed(cold, SLOW_RUNS, before=clear_cache, env=dict(ENV, STREE_JOBS="1"))
    row("cold `log -n 20`, 100k, `STREE_JOBS=1`", one_s, "json.loads", jsonl_s, None,
        "for comparison: the same parse in one process")

    # warm, 100k
    sh(cold)
    warm = {
        "warm `log -n 20`, 100k": STREE + ["-s", str(big), "log", "-n", "20"],
        "warm `rev-parse @~100`, 100k": STREE + ["-s", str(big), "rev-parse", "@~100"],
    }
    for name, cmd in warm.items():
        sh(cmd)
        row(name, timed(cmd, RUNS), "pi", pi_big, 0.05)
    if rev_complete:
        sh(rev_complete)
        row("warm completion of revisions, 100k", timed(rev_complete, RUNS), "pi", pi_big, 0.05, rev_note)
    else:
        row("warm completion of revisions, 100k (proxy: `rev-parse @`)",
            timed(STREE + ["-s", str(big), "rev-parse", "@"], RUNS), "pi", pi_big, 0.05,
            "no revision completion on this branch yet: `rev-parse @` loads the same data")
    sh(STREE + ["-s", str(work), "log", "-n", "1"])  # index the copy
    writes = (("warm `label x @`, 100k", ["label", "-f", "x", "@"]),
              ("warm `checkout @~2`, 100k", ["checkout", "--exact", "@~2"]))
    for name, args in writes:
        if has_command(args[0]):
            row(name, timed(STREE + ["-s", str(work)] + args, RUNS), "pi", pi_big, 0.05,
                "each run appends an entry; the next runs parse the lines appended since the index "
                "was written (it is rewritten after 16 lines or 1 MiB)")
        else:
            rows.append((name, "pending", "", "≤ 0.05×", "", f"`stree {args[0]}` is not on this branch yet"))
    warm_rss = peak_rss_kib(STREE + ["-s", str(big), "log", "-n", "20"])

    # graph, 10k
    graph = STREE + ["-s", str(small), "log", "--graph"]
    sh(graph)
    sh(graph)
    row("warm `log --graph`, 10k", timed(graph, RUNS), "pi 10k", pi_small, 0.2,
        "the output kept by the untimed runs is printed again, before click loads (stree.graphcache, stree.fast)")
    row("warm `log --graph`, 10k, drawn", timed(graph, RUNS, before=clear_graphs), "pi 10k", pi_small, None,
        "for comparison: index warm, no kept output (every row rendered)")

    write_results(rows, bases, cold_rss, warm_rss, big)


def write_results(rows, bases, cold_rss, warm_rss, big):
    cpu, cores, py, node, system, load = machine()
    size = big.stat().st_size
    lines = ["# stree benchmark", "",
             "Written by `make bench` (tools/bench/run.py); every time is the median of "
             f"{RUNS} fresh processes ({SLOW_RUNS} for the 100k cold runs and their baselines), "
             "measured in one run next to its baselines.", "",
             f"- Machine: {cpu}, {cores} cores, {system}; Python {py}; Node {node}; "
             f"load average {load:.2f} when the run started",
             f"- Sessions: tools/bench/gen.py, 10,000 and 100,000 entries "
             f"(100k = {size / 1e6:.1f} MB, {size / 2**20:.1f} MiB)", "",
             "| baseline | median |", "| --- | ---: |"]
    lines += [f"| {name} | {seconds * 1000:.0f} ms |" for name, seconds in bases]
    lines += ["", "| measurement | median | ratio | target | met | note |", "| --- | ---: | ---: | ---: | :---: | --- |"]
    lines += [f"| {' | '.join(r)} |" for r in rows]
    mib = size / 2**20
    cold_rss, workers = cold_rss
    who = f"stree + {workers} parse worker(s)" if workers else "stree"
    warm_rss = warm_rss[0]
    lines += ["", "| peak RSS | KiB | vs file | target | met |", "| --- | ---: | ---: | ---: | :---: |",
              f"| cold `log -n 20`, 100k ({who}) | {cold_rss} | {cold_rss / 1024 / mib:.2f}× file size | "
              f"≤ 2× file size | {'✓' if cold_rss / 1024 <= 2 * mib else '✗'} |",
              f"| warm `log -n 20`, 100k | {warm_rss} | {warm_rss / 1024:.1f} MiB | ≤ 80 MiB | "
              f"{'✓' if warm_rss / 1024 <= 80 else '✗'} |", ""]
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
