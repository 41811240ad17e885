#!/usr/bin/env python3
"""Benchmark `stats --all` and the first `ls --all` over many sessions against their peers
(issue 28), in a temporary HOME; prints markdown rows, ratios measured in the same run.

    python3 tools/bench/stats_all.py [--sessions 300] [--runs 5] [--keep DIR] [--base DIR]

Sessions: tools/bench/gen.py (about 100 MB at 300), one in ten a fork of another (a copied
prefix and its parentSession), as `fork` and pi's /fork leave them. Rows:
  - warm `stats --all` (the catalogue) vs `--no-cache stats --all` (every file parsed) and vs
    ccusage's `pi session` (ccusage 20.0.24, tools/bench/peers, which reads pi's sessions:
    --offline, its bundled prices; run in a namespace without a network where `unshare -rn` can;
    BENCH_CCUSAGE=path/to/ccusage/src/cli.js to use another install);
  - the first `ls --all` (the catalogue built from nothing) vs pi 1.6.0's SessionManager.listAll()
    (tools/bench/pi_list.mjs, Node 22) over the same sessions, and a plain parse (`--no-cache ls --all`);
    with `--base DIR` (another stree's code, e.g. `git archive main stree | tar -x -C DIR`), against
    that code's first `ls --all` too (A/B, in the same rounds). Twice: the files as just written
    (every one within the last day: each gets its per-session index, stree.core.catalog_read
    LIVE_NS), then dated as a history is (one session an hour, the newest written now).
Bytecode compiled first (as an installed stree has it)."""

import io
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
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

from gen import Gen  # noqa: E402

NODE22 = ROOT / "tests" / "pi" / "node22" / "bin" / "node"
CCUSAGE = Path(os.environ.get("BENCH_CCUSAGE") or HERE / "peers" / "node_modules" / "ccusage" / "src" / "cli.js")


def offline():
    """A prefix that runs a peer without a network (a user namespace of its own), or []."""
    try:
        ok = subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode == 0
    except OSError:
        ok = False
    return ["unshare", "-rn"] if ok else []


def make(home, n):
    root = home / ".pi" / "agent" / "sessions"
    total = 0
    made = []
    for i in range(n):
        project = root / f"--home-dev-project{i % 12}--"
        project.mkdir(parents=True, exist_ok=True)
        path = project / f"2026-01-01T00-00-00-000Z_{i:04d}.jsonl"
        if i % 10 == 9:  # a fork of an earlier session: its header names it, a prefix copied
            parent = made[(i * 7) % len(made)]
            lines = parent.read_text().splitlines()
            head = json.loads(lines[0])
            head.update(id=f"0199c0de-f0f0-7abc-8def-{i:012x}", parentSession=str(parent))
            keep = lines[1:1 + len(lines) // 2]
            buf = io.StringIO()
            Gen(3000 + i, out=buf).run(100)
            own = buf.getvalue().splitlines()[1:]
            last = json.loads(keep[-1])["id"]
            first = json.loads(own[0])
            first["parentId"] = last
            own[0] = json.dumps(first)
            path.write_text("\n".join([json.dumps(head)] + keep + own) + "\n")
        else:
            buf = io.StringIO()
            Gen(1000 + i, out=buf).run(300 + (i * 37) % 240)
            path.write_text(buf.getvalue())
        made.append(path)
        total += path.stat().st_size
    return root, total


CPU = {}  # name -> median CPU seconds (user + system) of its last rounds()


def timed(cmd, env, before=None, cpu=None):
    if before:
        before()
    used = os.times()
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    took = time.perf_counter() - start
    if cpu is not None:
        after = os.times()
        cpu.append(after.children_user - used.children_user + after.children_system - used.children_system)
    if proc.returncode != 0:
        sys.exit(f"{cmd} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return took


def rounds(cmds, runs):
    """{name: median seconds} of commands run in turns (one untimed round first); their median
    CPU times in CPU."""
    times = {name: [] for name in cmds}
    cpus = {name: [] for name in cmds}
    for timed_round in [False] + [True] * runs:
        for name, (cmd, env, before) in cmds.items():
            t = timed(cmd, env, before, cpus[name] if timed_round else None)
            if timed_round:
                times[name].append(t)
    CPU.update({name: statistics.median(v) for name, v in cpus.items()})
    return {name: statistics.median(v) for name, v in times.items()}


def row(name, s, base_name, base, target=None):
    ratio = s / base
    met = "" if target is None else " ✓" if ratio <= target else " ✗"
    return (f"| {name} | {s:.3f} s | {base_name} {base:.3f} s | {ratio:.3f} | "
            f"{'' if target is None else f'≤ {target}'}{met} |")


def main(argv):
    n = int(argv[argv.index("--sessions") + 1]) if "--sessions" in argv else 300
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 5
    keep = argv[argv.index("--keep") + 1] if "--keep" in argv else None
    base = Path(argv[argv.index("--base") + 1]).resolve() if "--base" in argv else None
    if not NODE22.exists():
        sys.exit(f"bench: {NODE22} is missing: run `make test` (it installs the pis and Node 22)")
    for code in [ROOT] + ([base] if base else []):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(code / "stree")], check=True)
    tmp = Path(keep or tempfile.mkdtemp(prefix="stree-stats-bench-"))
    home = tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STREE_", "PI_CODING_AGENT", "CLAUDE"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"),
               PYTHONPATH=str(ROOT), NO_COLOR="1", TZ=os.environ.get("TZ", "UTC"))
    stree = [sys.executable, "-m", "stree"]
    cache = home / ".cache" / "stree"
    try:
        if not any(home.glob(".pi/agent/sessions/*/*.jsonl")):
            make(home, n)
        files = sorted(home.glob(".pi/agent/sessions/*/*.jsonl"))
        size = sum(f.stat().st_size for f in files)
        root = home / ".pi" / "agent" / "sessions"

        def wipe():
            shutil.rmtree(cache, ignore_errors=True)

        for f in files:  # (as just written: a kept directory's files dated by an earlier run)
            os.utime(f)
        firsts = {"build": (stree + ["ls", "--all"], env, wipe),
                  "pi": ([NODE22, HERE / "pi_list.mjs", "--pi", "1.6.0"], env, None),
                  "plain": (stree + ["--no-cache", "ls", "--all"], env, None)}
        if base:
            # (-P: not the current directory's stree first, PYTHONPATH's)
            firsts["base"] = ([sys.executable, "-P", "-m", "stree", "ls", "--all"], {**env, "PYTHONPATH": str(base)},
                              wipe)
        first = rounds(firsts, runs)
        first_cpu = dict(CPU)
        cmds = {"warm": (stree + ["stats", "--all"], env, None),
                "nocache": (stree + ["--no-cache", "stats", "--all"], env, None)}
        if CCUSAGE.exists():
            cmds["ccusage"] = (offline() + ["node", CCUSAGE, "pi", "session", "--offline", "--json", "--pi-path", root],
                               env, None)
        timed(stree + ["stats", "--all"], env)  # (the catalogue brought up to date)
        warm = rounds(cmds, runs)
        now = time.time()
        for i, f in enumerate(reversed(files)):  # (a history: one session an hour, the newest now)
            os.utime(f, (now - i * 3600, now - i * 3600))
        aged = rounds(firsts, runs)
        aged_cpu = dict(CPU)
        print(f"\n## `stats --all` and the first `ls --all` against their peers (tools/bench/stats_all.py)\n\n"
              f"{len(files)} sessions ({n // 10} forks), {size / 1e6:.1f} MB, median of {runs} runs, in turns "
              f"({os.cpu_count()} cores)\n")
        print("| measurement | stree | baseline | ratio | target |")
        print("| --- | --- | --- | --- | --- |")
        print(row("warm `stats --all` vs `--no-cache stats --all`", warm["warm"], "--no-cache", warm["nocache"], 0.1))
        if "ccusage" in warm:
            print(row("warm `stats --all` vs ccusage `pi session`", warm["warm"], "ccusage", warm["ccusage"], 0.2))
            print(row("`--no-cache stats --all` vs ccusage `pi session`", warm["nocache"], "ccusage",
                      warm["ccusage"]))
        else:
            print("| ccusage | (not installed: `make bench` installs tools/bench/peers) | | | |")
        for how, times, cpu in (("files just written", first, first_cpu), ("files dated one an hour", aged, aged_cpu)):
            print(row(f"first `ls --all` (builds the catalogue) vs pi 1.6.0 `listAll`, {how}", times["build"],
                      "pi", times["pi"], 1.0))
            print(row(f"the same in CPU time (user + system), {how}", cpu["build"], "pi", cpu["pi"]))
            print(row(f"first `ls --all` vs a plain parse (`--no-cache ls --all`), {how}", times["build"], "plain",
                      times["plain"]))
            if base:
                print(row(f"first `ls --all` vs the same of {base.name} (A/B), {how}", times["build"], base.name,
                          times["base"]))
                print(row(f"the same in CPU time, {how}", cpu["build"], base.name, cpu["base"]))
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
