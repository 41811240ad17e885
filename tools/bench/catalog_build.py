#!/usr/bin/env python3
"""Benchmark the first build of the catalogue over many small sessions (issue 24, item 12):
`ls --all` with an empty cache against a plain read of the same files (`--no-cache ls --all`),
time and peak memory (the child's max RSS), in a temporary HOME.

    python3 tools/bench/catalog_build.py [--sessions 5000] [--entries 20] [--runs 3]

Prints markdown rows with the ratios measured in the same run.
"""

import io
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

from gen import Gen  # noqa: E402


def make(home, n, entries):
    root = home / ".pi" / "agent" / "sessions"
    total = 0
    for i in range(n):
        project = root / f"--home-dev-project{i % 40}--"
        project.mkdir(parents=True, exist_ok=True)
        buf = io.StringIO()
        Gen(5000 + i, out=buf).run(entries)
        path = project / f"2026-01-01T00-00-00-000Z_{i:05d}.jsonl"
        path.write_text(buf.getvalue())
        total += path.stat().st_size
    return total


def run(cmd, env):
    """(seconds, peak RSS in MB) of one child."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - start
    err = proc.stderr.read()
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{cmd} failed ({proc.returncode}): {err.decode()[-2000:]}")
    return took, usage.ru_maxrss / 1024


def main(argv):
    n = int(argv[argv.index("--sessions") + 1]) if "--sessions" in argv else 5000
    entries = int(argv[argv.index("--entries") + 1]) if "--entries" in argv else 20
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 3
    tmp = Path(tempfile.mkdtemp(prefix="stree-catalog-build-"))
    home = tmp / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STREE_", "PI_CODING_AGENT"))}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"))
    stree = [sys.executable, "-m", "stree"]
    cache = home / ".cache" / "stree" / "index"
    try:
        size = make(home, n, entries)
        plain = [run(stree + ["--no-cache", "ls", "--all"], env) for _ in range(runs)]
        built = []
        for _ in range(runs):
            shutil.rmtree(cache, ignore_errors=True)
            built.append(run(stree + ["ls", "--all"], env))
        warm = [run(stree + ["ls", "--all"], env) for _ in range(runs)]
        t = {k: statistics.median(x[0] for x in v) for k, v in (("plain", plain), ("built", built), ("warm", warm))}
        m = {k: statistics.median(x[1] for x in v) for k, v in (("plain", plain), ("built", built), ("warm", warm))}
        print(f"\n## First build of the catalogue (tools/bench/catalog_build.py)\n\n{n} sessions of {entries} "
              f"entries, {size / 1e6:.1f} MB, median of {runs} runs ({os.cpu_count()} cores)\n")
        print("| measurement | time | peak RSS | time ratio | memory ratio |")
        print("| --- | --- | --- | --- | --- |")
        print(f"| `--no-cache ls --all` (plain read) | {t['plain']:.2f} s | {m['plain']:.0f} MB | 1 | 1 |")
        print(f"| first `ls --all` (builds the catalogue) | {t['built']:.2f} s | {m['built']:.0f} MB "
              f"| {t['built'] / t['plain']:.2f} | {m['built'] / m['plain']:.2f} |")
        print(f"| warm `ls --all` | {t['warm']:.2f} s | {m['warm']:.0f} MB "
              f"| {t['warm'] / t['plain']:.2f} | {m['warm'] / m['plain']:.2f} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
