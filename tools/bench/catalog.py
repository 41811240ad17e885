#!/usr/bin/env python3
"""Benchmark the catalogue (issue 15): 300 generated sessions (about 100 MB) in a temporary
HOME; prints markdown rows, ratios measured in the same run.

    python3 tools/bench/catalog.py [--sessions 300] [--runs 5] [--keep DIR]

Rows: `ls --all` warm vs a fresh parse of every file (`--no-cache ls --all`), after one
session grew by one line, `grep` of a word warm vs `grep -r` over the files, cold grep
(building the catalogue), and the catalogue's size over the sessions' size.
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

RARE = "zanzibarquux"  # put into a few sessions: a search that finds a handful of lines


def grower(root, n):
    """A function that appends one user message to the middle session of `root` (of `n`) at each
    call: the "one session grew by one line" case of the catalogue's rows."""
    import json

    grown_file = sorted(root.rglob("*.jsonl"))[n // 2]
    counter = [0]

    def grow():
        last = json.loads(grown_file.read_text().splitlines()[-1])
        counter[0] += 1
        with open(grown_file, "a") as f:
            f.write(json.dumps({"type": "message", "id": f"b{counter[0]:07x}", "parentId": last["id"],
                                "timestamp": "2026-12-01T00:00:00.000Z",
                                "message": {"role": "user", "content": "one more line"}}) + "\n")

    return grow


def make(home, n):
    root = home / ".pi" / "agent" / "sessions"
    total = 0
    for i in range(n):
        project = root / f"--home-dev-project{i % 12}--"
        project.mkdir(parents=True, exist_ok=True)
        buf = io.StringIO()
        Gen(1000 + i, out=buf).run(300 + (i * 37) % 240)  # (gen.py writes its entries as it makes them)
        lines = buf.getvalue().splitlines()
        if i % 60 == 7:
            lines.insert(len(lines) // 2, lines[-1].replace('"text":"', f'"text":"{RARE} ', 1))
        path = project / f"2026-01-01T00-00-00-000Z_{i:04d}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        total += path.stat().st_size
    return root, total


def timed(cmd, env, runs, before=None):
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


def main(argv):
    n = int(argv[argv.index("--sessions") + 1]) if "--sessions" in argv else 300
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 5
    keep = argv[argv.index("--keep") + 1] if "--keep" in argv else None
    tmp = Path(keep or tempfile.mkdtemp(prefix="stree-catalog-bench-"))
    home = tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STREE_", "PI_CODING_AGENT"))}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"))
    stree = [sys.executable, "-m", "stree"]
    try:
        root, size = make(home, n)
        cache = home / ".cache" / "stree" / "index"

        def wipe():
            shutil.rmtree(cache, ignore_errors=True)

        cold_grep = timed(stree + ["grep", RARE], env, 1, before=wipe)
        fresh = timed(stree + ["--no-cache", "ls", "--all"], env, runs)
        timed(stree + ["ls", "--all"], env, 1)
        warm = timed(stree + ["ls", "--all"], env, runs)
        grown = timed(stree + ["ls", "--all"], env, runs, before=grower(root, n))
        timed(stree + ["grep", RARE], env, 1)
        grep_warm = timed(stree + ["grep", RARE], env, runs)
        grep_r = timed(["grep", "-r", RARE, str(root)], env, runs)
        grep_common = timed(stree + ["grep", "-c", "timeout"], env, runs)
        grep_r_common = timed(["grep", "-rc", "timeout", str(root)], env, runs)
        db = sum(p.stat().st_size for p in cache.glob("catalog.sqlite*"))
        idx = sum(p.stat().st_size for p in cache.glob("*.idx"))
        print(f"\n## Across sessions: the catalogue and grep (tools/bench/catalog.py)\n\nCatalogue bench: {n} sessions, {size / 1e6:.1f} MB, median of {runs} runs "
              f"({os.cpu_count()} cores)\n")
        print("| measurement | stree | baseline | ratio | target |")
        print("| --- | --- | --- | --- | --- |")
        print(f"| `ls --all` warm vs `--no-cache ls --all` (fresh parse) | {warm:.3f} s | {fresh:.3f} s "
              f"| {warm / fresh:.3f} | ≤ 0.15 |")
        print(f"| `ls --all` after one session grew by one line | {grown:.3f} s | {fresh:.3f} s "
              f"| {grown / fresh:.3f} | ≤ 0.2 |")
        print(f"| `grep {RARE}` warm vs `grep -r` | {grep_warm:.3f} s | {grep_r:.3f} s "
              f"| {grep_warm / grep_r:.3f} | ≤ 0.1 |")
        print(f"| `grep -c timeout` (a common word) warm vs `grep -rc` | {grep_common:.3f} s | {grep_r_common:.3f} s "
              f"| {grep_common / grep_r_common:.3f} | (info) |")
        print(f"| `grep {RARE}` cold (builds the catalogue and the indexes) | {cold_grep:.3f} s | {grep_r:.3f} s "
              f"| {cold_grep / grep_r:.1f} | (report) |")
        print(f"| catalogue size / sessions' size | {db / 1e6:.1f} MB | {size / 1e6:.1f} MB | {db / size:.3f} | ≤ 1.0 (it keeps the entries' text: issue 28) |")
        print(f"| per-session indexes (.idx) / sessions' size | {idx / 1e6:.1f} MB | {size / 1e6:.1f} MB "
              f"| {idx / size:.3f} | (info) |")
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
