#!/usr/bin/env python3
"""`make bench`: time stree against its baselines and write bench/results.md.

Every figure is the median of several runs of a fresh process, measured in this
run in turns with its baselines (each round runs every command of a group once):

  - `python -c "import click"`: the floor for any click program's startup;
  - tools/bench/jsonl_baseline.py: a plain json.loads per line of the file;
  - tools/bench/pi_load.mjs: pi's own SessionManager.open + getTree +
    buildSessionContext, the loader pi runs when it opens a session.

"cold" = no index (the cache is emptied before each run; the file is in the OS
page cache, as it is right after pi wrote it); a cold parse is shared among one
process per core (stree.storage.parallel), and the same command with STREE_JOBS=1 is
reported next to it. "warm" = the index is present (after one untimed run of the
same command, which also fills cached previews and keeps a `log --graph`
output, stree.storage.graphcache); the graph is also timed with its kept output removed.
Peak RSS comes from STREE_DEBUG_STATS: the stree process plus, for a cold parse,
its parse workers (their peaks added: an upper bound of what they held at once).
"""

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
RUNS = int(os.environ.get("BENCH_RUNS", "9"))
SLOW_RUNS = int(os.environ.get("BENCH_SLOW_RUNS", "7"))


def sh(cmd, env=ENV, check=True):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    if check and proc.returncode != 0:
        sys.exit(f"bench: {' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stderr.decode()[-2000:]}")
    return proc


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


def rounds(cmds, runs):
    """{name: median seconds} of commands run in turns: each round runs every command once,
    so the machine's drift and noise fall on a measurement and its baseline alike. A first
    round is not timed (caches, CPU frequency). cmds: {name: (argv, before or None, env or None)}."""
    times = {name: [] for name in cmds}
    for timed in [False] + [True] * runs:
        for name, (argv, before, env) in cmds.items():
            if before:
                before()
            t = time.perf_counter()
            sh(argv, env or ENV)
            if timed:
                times[name].append(time.perf_counter() - t)
    return {name: statistics.median(values) for name, values in times.items()}


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

    pi_load = ["node", str(ROOT / "tools/bench/pi_load.mjs")]

    # startup, next to `import click`
    t = rounds({"click": ([PY, "-c", "import click"], None, None),
                "version": (STREE + ["--version"], None, None),
                "help": (STREE + ["--help"], None, None),
                "complete": (STREE + ["__complete", "bash", "lo", "--", "lo"], None, None)}, RUNS)
    click_s = t["click"]
    row("stree --version", t["version"], "click", click_s, 1.3)
    row("stree --help", t["help"], "click", click_s, 1.3)
    row("completion: command name (`__complete`)", t["complete"], "click", click_s, 1.3)

    # cold, 100k, next to a plain json.loads loop and pi's loader
    cold = STREE + ["-s", str(big), "log", "-n", "20"]
    t = rounds({"json": ([PY, str(ROOT / "tools/bench/jsonl_baseline.py"), str(big)], None, None),
                "pi": (pi_load + [str(big)], None, None),
                "cold": (cold, clear_cache, None),
                "one": (cold, clear_cache, dict(ENV, STREE_JOBS="1"))}, SLOW_RUNS)
    jsonl_s, pi_big = t["json"], t["pi"]
    cold_rss = peak_rss_kib(cold, before=clear_cache)
    shared = f"parsed by {cold_rss[1] + 1} processes (one per core)" if cold_rss[1] else "parsed by one process"
    row("cold `log -n 20`, 100k", t["cold"], "pi", pi_big, 0.6, shared)
    row("cold `log -n 20`, 100k", t["cold"], "json.loads", jsonl_s, 1.0, shared)
    row("cold `log -n 20`, 100k, `STREE_JOBS=1`", t["one"], "json.loads", jsonl_s, None,
        "for comparison: the same parse in one process")

    # warm, 100k
    sh(cold)
    sh(STREE + ["-s", str(work), "log", "-n", "1"])  # index the copy the write commands append to
    warm = {"warm `log -n 20`, 100k": cold,
            "warm `rev-parse @~100`, 100k": STREE + ["-s", str(big), "rev-parse", "@~100"],
            "warm completion of revisions, 100k": STREE + ["__complete", "bash", "", "--", "-s", str(big), "log", ""],
            "warm `label x @`, 100k": STREE + ["-s", str(work), "label", "-f", "x", "@"],
            "warm `checkout @~2`, 100k": STREE + ["-s", str(work), "checkout", "--exact", "@~2"]}
    for cmd in warm.values():
        sh(cmd)  # previews kept in the index
    t = rounds({name: (cmd, None, None) for name, cmd in warm.items()}, RUNS)
    appends = ("each run appends an entry; the next runs parse the lines appended since the index was written "
               "(it is rewritten after 16 lines or 1 MiB)")
    notes = {"warm completion of revisions, 100k": "`stree __complete` on the 100k session",
             "warm `label x @`, 100k": appends, "warm `checkout @~2`, 100k": appends}
    for name in warm:
        row(name, t[name], "pi", pi_big, 0.05, notes.get(name, ""))
    warm_rss = peak_rss_kib(cold)

    # graph, 10k, next to pi's loader on the same file
    graph = STREE + ["-s", str(small), "log", "--graph"]
    sh(graph)
    sh(graph)
    t = rounds({"pi": (pi_load + [str(small)], None, None),
                "graph": (graph, None, None),
                "drawn": (graph, clear_graphs, None)}, RUNS)
    pi_small = t["pi"]
    row("warm `log --graph`, 10k", t["graph"], "pi 10k", pi_small, 0.2,
        "the output kept by the untimed runs is printed again, before click loads (stree.storage.graphcache, stree.fast)")
    row("warm `log --graph`, 10k, drawn", t["drawn"], "pi 10k", pi_small, None,
        "for comparison: index warm, no kept output (every row rendered)")

    bases = [("python -c \"import click\"", click_s), (f"json.loads per line, 100k ({big_mb:.0f} MB)", jsonl_s),
             ("pi loader, 100k", pi_big), ("pi loader, 10k", pi_small)]
    write_results(rows, bases, cold_rss, warm_rss, big)


def write_results(rows, bases, cold_rss, warm_rss, big):
    cpu, cores, py, node, system, load = machine()
    size = big.stat().st_size
    lines = ["# stree benchmark", "",
             "Written by `make bench` (tools/bench/run.py); every time is the median of "
             f"{RUNS} fresh processes ({SLOW_RUNS} for the 100k cold runs and their baselines), "
             "run in turns with its baselines (round after round, each command once a round).", "",
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
