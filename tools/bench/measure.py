"""What `make bench` measures with: fresh processes, their wall time and peak RSS, in rounds.

A command's output is read and thrown away as it comes (a 1M-entry `log --graph` writes
gigabytes into the pipe); its peak RSS comes from wait4 (the process, or its largest child),
or, for stree with STREE_DEBUG_STATS, from its own statistics line: stree plus its parse
workers, their peaks added (an upper bound of what they held at once).
"""

import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "bench" / "data"
CACHE = DATA / "cache"
PY = sys.executable


def stree_command():
    """How a user runs stree: the `stree` script pip made beside this Python, else `python -m
    stree` (which also pays runpy's imports, 5-6 ms of a warm command)."""
    script = Path(PY).parent / "stree"
    return [str(script)] if script.exists() else [PY, "-m", "stree"]


STREE = stree_command()
ENV = dict(os.environ, STREE_CACHE_DIR=str(CACHE), PAGER="cat", NO_COLOR="1")
# PYTHONDONTWRITEBYTECODE would make every run compile stree from source: not how it runs when installed
for var in ("STREE_NO_CACHE", "STREE_DEBUG", "STREE_DEBUG_STATS", "STREE_SESSION", "PYTHONDONTWRITEBYTECODE",
            "STREE_JSON", "STREE_JOBS"):
    ENV.pop(var, None)
STATS_ENV = dict(ENV, STREE_DEBUG_STATS="1")
SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000, "1M": 1_000_000}


class Run:
    """One finished process: seconds, peak RSS in KiB, exit code, stderr, bytes of stdout."""

    def __init__(self, seconds, rss_kib, code, err, out_bytes, head, cut=False):
        self.seconds, self.rss_kib, self.code, self.err, self.out_bytes, self.head, self.cut = \
            seconds, rss_kib, code, err, out_bytes, head, cut


# `log --graph` of a comb-shaped tree grows with the square of its size (pi's /tree indents each
# branch point): 1M generated entries draw tens of GB. Its reader stops after this many bytes
# (stree then ends quietly, as under `| head`): the time to the first OUTPUT_CAP bytes.
OUTPUT_CAP = int(float(os.environ.get("BENCH_OUTPUT_CAP_GIB", "2")) * 2**30)


GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def run(argv, env=None, check=True, stdin=None, cap=OUTPUT_CAP):
    """Run argv once, its stdout read into a pipe and dropped (the first 64 KiB kept in .head),
    up to `cap` bytes: then the pipe is closed (Run.cut)."""
    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as peak:
        # peak RSS through GNU time where there is one: the ru_maxrss wait4 gives a child of this
        # process starts at this process's own RSS (the child is made from its memory), which
        # floors every small command at the bench's ~100 MiB
        wrap = [GNU_TIME, "-f", "%M", "-o", peak.name] if GNU_TIME else []
        t = time.perf_counter()
        proc = subprocess.Popen(wrap + [str(a) for a in argv], stdout=subprocess.PIPE, stderr=err,
                                stdin=subprocess.DEVNULL if stdin is None else stdin, env=env or ENV, cwd=ROOT)
        head, total, cut = b"", 0, False
        while True:
            chunk = proc.stdout.read(1 << 20)
            if not chunk:
                break
            if len(head) < 65536:
                head += chunk[:65536 - len(head)]
            total += len(chunk)
            if cap and total >= cap:
                cut = True
                break
        proc.stdout.close()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
        measured = peak.read().strip().splitlines()
    timed_rss = int(measured[-1]) if measured and measured[-1].isdigit() else None
    rss = stats_rss(text) or timed_rss or usage.ru_maxrss
    r = Run(seconds, rss, proc.returncode, text, total, head, cut)
    if check and r.code != 0:
        sys.exit(f"bench: {' '.join(map(str, argv))} failed ({r.code}):\n{text[-2000:]}")
    return r


def stats_rss(err):
    """stree's peak RSS from its STREE_DEBUG_STATS line, workers added; None without one."""
    m = re.search(r"peak rss (\d+) KiB", err)
    if not m:
        return None
    own = int(m.group(1))
    w = re.search(r"(\d+) parse worker\(s\), peak rss (\d+) KiB", err)
    return own + int(w.group(1)) * int(w.group(2)) if w else own


def rounds(cmds, runs):
    """{name: (median seconds, largest peak RSS KiB)} of commands run in turns: each round runs
    every command once, so the machine's drift and noise fall on a measurement and its baseline
    alike. A first round is not timed (caches, CPU frequency).
    cmds: {name: (argv, before or None, env or None)}."""
    times = {name: [] for name in cmds}
    rss = dict.fromkeys(cmds, 0)
    for timed in [False] + [True] * runs:
        for name, (argv, before, env) in cmds.items():
            if before:
                before()
            r = run(argv, env)
            if timed:
                times[name].append(r.seconds)
                rss[name] = max(rss[name], r.rss_kib)
    return {name: (statistics.median(values), rss[name]) for name, values in times.items()}


def clear_cache():
    shutil.rmtree(CACHE, ignore_errors=True)


def clear_graphs():
    for kept in CACHE.glob("*.graph"):
        kept.unlink()


def sizes_up_to(limit):
    """The growth table's sizes, up to $BENCH_MAX (1k, 10k, 100k or 1M; default 1M)."""
    top = SIZES.get(limit or "1M")
    if top is None:
        sys.exit(f"bench: BENCH_MAX must be one of {', '.join(SIZES)}")
    return {name: n for name, n in SIZES.items() if n <= top}


def data_file(name, n):
    """bench/data/s<name>-g<V>.jsonl, generated once (tools/bench/gen.py; deterministic; V: the
    generator's version, so a changed generator makes new files)."""
    from gen import VERSION

    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"s{name}-g{VERSION}.jsonl"
    if not path.exists():
        print(f"bench: generating {path.relative_to(ROOT)} ({n:,} entries)", file=sys.stderr)
        tmp = path.with_suffix(".tmp")
        subprocess.run([PY, str(ROOT / "tools/bench/gen.py"), str(n), str(tmp)], check=True)
        tmp.rename(path)
    return path


def machine():
    """(CPU model, cores, Python, Node, OS, (1, 5, 15 min load averages))."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    node = subprocess.run(["node", "--version"], capture_output=True).stdout.decode().strip()
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return cpu, os.cpu_count(), platform.python_version(), node, platform.system(), load


def mib(kib):
    return kib / 1024
