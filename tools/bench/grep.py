#!/usr/bin/env python3
"""Benchmark a warm `stree grep` against ripgrep over the same session files (issue 28):
generated sessions (tools/bench/gen.py) in a temporary HOME, the catalogue built and warm
(one untimed grep first), stree's bytecode compiled as an install has it. Prints markdown
rows, ratios measured in the same run (stree and rg in turns, median of --runs).

    python3 tools/bench/grep.py [--sessions 339] [--runs 7] [--keep DIR]

Words: a rare one (RARE, put into a few sessions: a handful of lines), a common one (COMMON,
put into one text entry in COMMON_EVERY: a few thousand lines), and, for information, one
of the generator's own words (VERY_COMMON: in a third of all entries, tens of thousands of
lines, where printing the lines is most of the work). Both print every matching line into
a pipe: stree its SESSION:ENTRY ROLE: LINE, rg the whole JSONL line (`rg WORD DIR`). The
ripgrep peer is Debian's `ripgrep` (`make bench` installs it when it may: see the Makefile);
without it the rows say so.

stree runs as a user runs it: the `stree` command pip made beside this Python (`python -m
stree` where there is none, which also pays runpy's imports). Two floors, for information,
each timed in the same turns: the interpreter alone (`python -c pass`), and the least a
process answering from the catalogue does: the interpreter, SQLite, the catalogue opened and
the word index asked for the candidate entries with their text (stree's own query,
Catalog.matching), nothing checked, confirmed or printed. And stree with its grep server
(STREE_GREP_SERVER=1, stree.grepserver: a resident process answers the plain grep), started
and warmed by two untimed greps.
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
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

from gen import Gen  # noqa: E402
from measure import stree_command  # noqa: E402

RARE = "zanzibarquux"
COMMON = "quokkamarker"
COMMON_EVERY = 40
VERY_COMMON = "timeout"
TARGET = 2.0


def make(home, n):
    """n sessions of 300 to 540 entries under home's pi session directory; (root, bytes)."""
    root = home / ".pi" / "agent" / "sessions"
    total = 0
    for i in range(n):
        project = root / f"--home-dev-project{i % 12}--"
        project.mkdir(parents=True, exist_ok=True)
        buf = io.StringIO()
        Gen(1000 + i, out=buf).run(300 + (i * 37) % 240)
        lines = buf.getvalue().splitlines()
        planted = 0
        for k, line in enumerate(lines):
            if '"text":"' in line and (k + i) % COMMON_EVERY == 0:
                lines[k] = line.replace('"text":"', f'"text":"{COMMON} ', 1)
                planted += 1
        if i % 60 == 7:
            lines.insert(len(lines) // 2, lines[-1].replace('"text":"', f'"text":"{RARE} ', 1))
        path = project / f"2026-01-01T00-00-00-000Z_{i:04d}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        total += path.stat().st_size
    return root, total


# the word index's answer alone (what a warm grep cannot do without): argv[1] is the FTS5 query
FLOOR = """import os, sys
from stree.storage.catalog import Catalog
cat = Catalog(quiet=True)
cat.open()
found = cat.matching(sys.argv[1], range(1 << 20))
os._exit(0 if found else 1)
"""


def timed(commands, env, runs):
    """Median seconds of each command (argv, or (argv, extra environment)), all run in turns;
    and the lines the first printed."""
    times = [[] for _ in commands]
    lines = 0
    for _ in range(runs):
        for k, cmd in enumerate(commands):
            cmd, extra = cmd if isinstance(cmd, tuple) else (cmd, {})
            start = time.perf_counter()
            proc = subprocess.run(cmd, env={**env, **extra}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            times[k].append(time.perf_counter() - start)
            if proc.returncode not in (0, 1):
                sys.exit(f"{cmd} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
            if k == 0:
                lines = proc.stdout.count(b"\n")
    return [statistics.median(t) for t in times], lines


SERVER = {"STREE_GREP_SERVER": "1", "STREE_GREP_SERVER_IDLE": "120"}  # (ends 2 minutes after the bench)


def _wait_for_socket(home, deadline=30.0):
    end = time.monotonic() + deadline
    while not list((home / ".cache").rglob("grep-*.sock")) and time.monotonic() < end:
        time.sleep(0.05)


def main(argv):
    n = int(argv[argv.index("--sessions") + 1]) if "--sessions" in argv else 339
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 7
    keep = argv[argv.index("--keep") + 1] if "--keep" in argv else None
    rg = shutil.which("rg")
    tmp = Path(keep or tempfile.mkdtemp(prefix="stree-grep-bench-"))
    home = tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("STREE_", "PI_CODING_AGENT")) and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"),
               PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "stree")], env=env, check=True)
    stree = stree_command()
    try:
        root = home / ".pi" / "agent" / "sessions"
        if not any(root.rglob("*.jsonl")):
            make(home, n)
        size = sum(p.stat().st_size for p in root.rglob("*.jsonl"))
        count = len(list(root.rglob("*.jsonl")))
        print(f"\n## grep against ripgrep (tools/bench/grep.py)\n\n{count} sessions, {size / 1e6:.1f} MB, warm "
              f"catalogue, bytecode compiled, median of {runs} runs in turns ({os.cpu_count()} cores); "
              f"rg {_version(rg)}\n")
        print(f"stree: `{' '.join(Path(part).name for part in stree)} grep WORD`. Floors (info): the "
              "interpreter alone; the interpreter with the word index's answer (SQLite, the catalogue "
              "opened, the candidates and their text read; nothing confirmed or printed).\n")
        print("| measurement | stree | rg | ratio | target | with the grep server (× rg) "
              "| floors: interpreter, word index (× rg) |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for word, what, target in ((RARE, "a rare word", f"≤ {TARGET:g}"),
                                   (COMMON, f"a common word (1 text entry in {COMMON_EVERY})", f"≤ {TARGET:g}"),
                                   (VERY_COMMON, "a word in a third of all entries", "(info)")):
            subprocess.run(stree + ["grep", word], env=env, stdout=subprocess.DEVNULL, check=False)  # (warm)
            for _ in range(2):  # (the first starts the server, the next is its first answer)
                subprocess.run(stree + ["grep", word], env={**env, **SERVER}, stdout=subprocess.DEVNULL, check=False)
                _wait_for_socket(home)
            if rg is None:
                print(f"| `grep {word}` ({what}) | | rg not installed | | {target} | | |")
                continue
            (mine, theirs, served, bare, index), lines = timed(
                [stree + ["grep", word], [rg, word, str(root)], (stree + ["grep", word], SERVER),
                 [sys.executable, "-c", "pass"], [sys.executable, "-c", FLOOR, f'"{word}"']], env, runs)
            print(f"| `grep {word}` ({what}; {lines} lines) | {mine * 1000:.0f} ms | {theirs * 1000:.0f} ms "
                  f"| {mine / theirs:.2f} | {target} | {served * 1000:.0f} ms ({served / theirs:.2f}) "
                  f"| {bare * 1000:.0f} ms ({bare / theirs:.2f}), {index * 1000:.0f} ms ({index / theirs:.2f}) |")
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def _version(rg):
    if rg is None:
        return "(not installed)"
    out = subprocess.run([rg, "--version"], stdout=subprocess.PIPE, text=True).stdout.split("\n")[0]
    return out.split()[1] if len(out.split()) > 1 else out


if __name__ == "__main__":
    main(sys.argv[1:])
