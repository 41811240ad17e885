#!/usr/bin/env python3
"""`make bench`: time stree against its baselines and peers, and write bench/results.md.

Every figure is the median of several runs of a fresh process, measured in this run in
turns with its baselines (each round runs every command of a group once):

  - `python -c "import click"`: the floor for any click program's startup;
  - tools/bench/jsonl_baseline.py: a plain json.loads per line of the file;
  - pi 1.6.0 (the reference) under Node 22 (tools/bench/pi_load.mjs, tests/pi/ installs both): its
    SessionManager.open + getTree + buildSessionContext (the loader pi runs when it opens a
    session), open + buildSessionContext alone (`--context`), and opening `/tree`
    (`--tree`: getTree and its TreeSelectorComponent drawn once);
  - oh-my-pi on Bun (tools/bench/peers, pinned; `make bench` installs it): its
    SessionManager.open + buildSessionContext.

"cold" = no index (the cache is emptied before each run; the file is in the OS page cache,
as it is right after pi wrote it); a cold parse is shared among one process per core
(stree.storage.parallel), and the same command with STREE_JOBS=1 is reported next to it.
"warm" = the index is present (after one untimed run of the same command, which also fills
cached previews and keeps a `log --graph` output, stree.storage.keptgraph). Peak RSS: see
tools/bench/measure.py. Then the growth table (tools/bench/growth.py) from 1k to 1M entries,
every command on the largest file, and the append case.

    BENCH_MAX=10k python3 tools/bench/run.py     sizes up to 10k only (1k, 10k, 100k, 1M; default 1M)
    BENCH_RUNS, BENCH_SLOW_RUNS, BENCH_GRAPH_RUNS, BENCH_GROWTH_RUNS, BENCH_APPEND_RUNS: runs per median
"""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from growth import append_case, every_command, every_command_lines, growth, growth_lines  # noqa: E402
from measure import (DATA, ENV, OUTPUT_CAP, PY, ROOT, STATS_ENV, STREE, clear_cache, clear_graphs, data_file,  # noqa: E402
                     machine, mib, rounds, run, sizes_up_to)

RESULTS = ROOT / "bench" / "results.md"
PI_DIR = ROOT / "tests" / "pi"
NODE22 = PI_DIR / "node22" / "bin" / "node"
PI_VERSION = "1.6.0"
PEERS = ROOT / "tools" / "bench" / "peers"
OMP = PEERS / "node_modules" / "@oh-my-pi" / "pi-coding-agent" / "package.json"
RUNS = int(os.environ.get("BENCH_RUNS", "9"))
SLOW_RUNS = int(os.environ.get("BENCH_SLOW_RUNS", "7"))
GRAPH_RUNS = int(os.environ.get("BENCH_GRAPH_RUNS", "5"))


def bun():
    for path in sorted((PEERS / "node_modules" / "@oven").glob("bun-*/bin/bun")):
        return path
    return None


class Rows:
    def __init__(self):
        self.rows = []

    def add(self, name, seconds, base_name, base, target=None, note=""):
        ratio = seconds / base
        ok = "" if target is None else ("✓" if ratio <= target else "✗")
        self.rows.append((name, f"{seconds * 1000:.0f} ms", f"{ratio:.2f}× {base_name}",
                          f"≤ {target}×" if target is not None else "", ok, note))
        print(f"bench: {name}: {seconds * 1000:.0f} ms ({ratio:.2f}× {base_name})", file=sys.stderr)


def main():
    started = time.time()
    bundle = PI_DIR / "versions" / PI_VERSION / "dist" / "bundle" / "index.js"
    if not (NODE22.exists() and bundle.exists()):
        sys.exit(f"bench: pi {PI_VERSION} or Node 22 is missing; run `make bench` (it installs tests/pi first)")
    bun_bin = bun()
    if not (OMP.exists() and bun_bin):
        sys.exit("bench: oh-my-pi or Bun is missing; run `make bench` (it installs tools/bench/peers first)")
    at_start = machine()
    sizes = sizes_up_to(os.environ.get("BENCH_MAX"))
    files = {name: (data_file(name, n), n) for name, n in sizes.items()}
    big_name = max((name for name, n in sizes.items() if n <= 100_000), key=sizes.get)
    small_name = max((name for name, n in sizes.items() if n <= 10_000), key=sizes.get)
    big, small = files[big_name][0], files[small_name][0]
    run([PY, "-m", "compileall", "-q", ROOT / "stree"])
    clear_cache()
    rows = Rows()
    pi = [NODE22, ROOT / "tools/bench/pi_load.mjs", "--pi", PI_VERSION]
    home = DATA / "home"  # oh-my-pi keeps state under ~/.omp
    home.mkdir(parents=True, exist_ok=True)
    omp = ([bun_bin, PEERS / "omp_load.ts"], dict(ENV, HOME=str(home)))
    pi_name = f"pi {PI_VERSION}"

    # startup, next to `import click`
    t = rounds({"click": ([PY, "-c", "import click"], None, None),
                "version": (STREE + ["--version"], None, None),
                "help": (STREE + ["--help"], None, None),
                "complete": (STREE + ["__complete", "bash", "lo", "--", "lo"], None, None)}, RUNS)
    click_s = t["click"][0]
    rows.add("stree --version", t["version"][0], "click", click_s, 1.3)
    rows.add("stree --help", t["help"][0], "click", click_s, 1.3)
    rows.add("completion: command name (`__complete`)", t["complete"][0], "click", click_s, 1.3)

    # cold, next to a plain json.loads loop and pi's loader
    cold = STREE + ["-s", big, "log", "-n", "20"]
    t = rounds({"json": ([PY, ROOT / "tools/bench/jsonl_baseline.py", big], None, None),
                "pi": (pi + [big], None, None),
                "cold": (cold, clear_cache, STATS_ENV),
                "one": (cold, clear_cache, dict(STATS_ENV, STREE_JOBS="1")),
                "pure": (cold, clear_cache, dict(STATS_ENV, STREE_JOBS="1", STREE_JSON="pure"))}, SLOW_RUNS)
    jsonl_s, pi_big = t["json"][0], t["pi"][0]
    cold_s, cold_rss = t["cold"]
    rows.add(f"cold `log -n 20`, {big_name}", cold_s, pi_name, pi_big, 0.6, "parsed by one process per core")
    rows.add(f"cold `log -n 20`, {big_name}", cold_s, "json.loads", jsonl_s, 1.0, "parsed by one process per core")
    rows.add(f"cold `log -n 20`, {big_name}, `STREE_JOBS=1`", t["one"][0], "json.loads", jsonl_s, None,
             "for comparison: the same parse in one process")
    rows.add(f"cold `log -n 20`, {big_name}, `STREE_JOBS=1 STREE_JSON=pure`", t["pure"][0], "json.loads", jsonl_s,
             None, "for comparison: one process, without msgspec (the `fast` extra)")

    # warm, next to pi and to `import click`
    work = DATA / "work.jsonl"  # write commands append: they get their own copy
    work.write_bytes(big.read_bytes())
    run(cold)
    run(STREE + ["-s", work, "log", "-n", "1"])
    warm = {f"warm `log -n 20`, {big_name}": cold,
            f"warm `rev-parse @~100`, {big_name}": STREE + ["-s", big, "rev-parse", "@~100"],
            f"warm completion of revisions, {big_name}": STREE + ["__complete", "bash", "", "--", "-s", big, "log", ""],
            f"warm `label x @`, {big_name}": STREE + ["-s", work, "label", "-f", "x", "@"],
            f"warm `checkout @~2`, {big_name}": STREE + ["-s", work, "checkout", "--exact", "@~2"]}
    for cmd in warm.values():
        run(cmd)  # previews kept in the index
    t = rounds({"click": ([PY, "-c", "import click"], None, None),
                **{name: (cmd, None, STATS_ENV) for name, cmd in warm.items()}}, RUNS)
    appends = ("each run appends an entry; the next runs parse the lines appended since the index was written "
               "(it is rewritten after 16 lines or 1 MiB)")
    notes = {f"warm completion of revisions, {big_name}": f"`stree __complete` on the {big_name} session",
             f"warm `label x @`, {big_name}": appends, f"warm `checkout @~2`, {big_name}": appends}
    for name in warm:
        rows.add(name, t[name][0], pi_name, pi_big, 0.05, notes.get(name, ""))
    for name in list(warm)[:4]:
        rows.add(name, t[name][0], "click", t["click"][0], 1.4)
    warm_rss = t[f"warm `log -n 20`, {big_name}"][1]
    work.unlink()

    # context at @, next to pi and oh-my-pi
    ctx = STREE + ["-s", big, "context"]
    t = rounds({"pi": (pi + ["--context", big], None, None),
                "omp": (omp[0] + [big], None, omp[1]),
                "warm": (ctx, None, STATS_ENV),
                "cold": (ctx, clear_cache, STATS_ENV)}, SLOW_RUNS)
    note = f"pi: SessionManager.open + buildSessionContext; stree decodes only the context's entries"
    rows.add(f"warm `context`, {big_name}", t["warm"][0], pi_name, t["pi"][0], 0.25, note)
    rows.add(f"warm `context`, {big_name}", t["warm"][0], "oh-my-pi", t["omp"][0], 0.5,
             "oh-my-pi: SessionManager.open + buildSessionContext, on Bun")
    rows.add(f"cold `context`, {big_name}", t["cold"][0], pi_name, t["pi"][0], 0.8, "no index: parsed first")
    ctx_bases = [(f"{pi_name} open + buildSessionContext, {big_name}", t["pi"][0]),
                 (f"oh-my-pi open + buildSessionContext, {big_name}", t["omp"][0])]

    # every turn's request of a 1,000-turn path in one `replay --dry-run`
    from replay_case import replay_rows

    replay_rows(rows, SLOW_RUNS)

    # the graph: kept and drawn (small), drawn whole into a pipe (big), next to pi's loader and /tree
    graph = STREE + ["-s", small, "log", "--graph"]
    run(graph)
    run(graph)
    t = rounds({"pi": (pi + [small], None, None),
                "graph": (graph, None, STATS_ENV),
                "drawn": (graph, clear_graphs, STATS_ENV)}, RUNS)
    pi_small = t["pi"][0]
    rows.add(f"warm `log --graph`, {small_name}", t["graph"][0], f"{pi_name} {small_name}", pi_small, 0.2,
             "the output kept by the untimed runs is printed again, before click loads (stree.storage.keptgraph, stree.entrypoint)")
    rows.add(f"warm `log --graph`, {small_name}, drawn", t["drawn"][0], f"{pi_name} {small_name}", pi_small, None,
             "for comparison: index warm, no kept output (every row rendered)")
    big_graph = STREE + ["-s", big, "log", "--graph"]
    run(big_graph)
    t = rounds({"tree": (pi + ["--tree", big], None, None),
                "drawn": (big_graph, clear_graphs, STATS_ENV),
                "first": (big_graph, clear_cache, STATS_ENV)}, GRAPH_RUNS)
    rows.add(f"`log --graph` into a pipe, {big_name}, drawn whole", t["drawn"][0], f"{pi_name} /tree",
             t["tree"][0], 0.5, f"pi: open + getTree + its /tree selector drawn once; peak RSS below")
    rows.add(f"first `log --graph` into a pipe, {big_name}, no index", t["first"][0], f"{pi_name} /tree",
             t["tree"][0], 0.8, "the cache emptied first: parsed, indexed and drawn whole; peak RSS below")
    graph_rss = t["drawn"][1]
    first_rss = t["first"][1]
    tree_s = t["tree"][0]

    # one entry appended, then the commands that follow a live session
    appended = {}
    for name in dict.fromkeys((small_name, big_name)):
        a = appended[name] = append_case(files[name][0], name)
        rows.add(f"after one appended entry, `log --graph`, {name}", a["graph"], "drawn whole", a["whole"], 0.2,
                 "into a pipe; the kept output of the file before the append exists")
        rows.add(f"after one appended entry, `log -n 20`, {name}", a["log"], "no append", a["log still"], None,
                 "the index parses the appended line")
        rows.add(f"after one appended entry, `context`, {name}", a["context"], "no append", a["context still"], None,
                 "the index parses the appended line")

    table = growth(files)
    if "1M" in files and small_name != "1M":  # flat costs: the largest file next to the small one
        from first_screen import first_screen, flat_context

        ctx_small, ctx_large = flat_context(files, small_name, "1M", SLOW_RUNS)
        rows.add(f"warm `context`, 1M", ctx_large, f"warm `context`, {small_name}", ctx_small, 1.5,
                 "the context does not grow with the file: neither should its cost")
        shown = first_screen(files, small_name, "1M", GRAPH_RUNS)
        rows.add("`log --graph` on a terminal, 1M, first row shown", shown["1M"],
                 f"the same, {small_name}", shown[small_name], 1.5,
                 "index warm, no kept output; a pseudo-terminal, pager `less -R`: the time to its first row")
    largest = max(files, key=lambda k: files[k][1])
    everything = every_command(*files[largest])
    bases = [("python -c \"import click\"", click_s),
             (f"json.loads per line, {big_name} ({big.stat().st_size / 1e6:.0f} MB)", jsonl_s),
             (f"{pi_name} loader (open + getTree + buildSessionContext), {big_name}", pi_big),
             (f"{pi_name} loader, {small_name}", pi_small), *ctx_bases,
             (f"{pi_name} opening /tree, {big_name}", tree_s)]
    rss = [(f"cold `log -n 20`, {big_name} (stree + parse workers)", cold_rss, big, 2.0, None),
           (f"warm `log -n 20`, {big_name}", warm_rss, big, None, 80),
           (f"`log --graph` into a pipe, {big_name}, drawn whole", graph_rss, big, 1.5, None),
           (f"first `log --graph` into a pipe, {big_name}, no index (stree + parse workers)", first_rss, big, 1.2,
            None)]
    write_results(rows.rows, bases, rss, table, everything, files[largest], at_start, started)


def write_results(rows, bases, rss, table, everything, largest, at_start, started):
    cpu, cores, py, node, system, load = at_start
    end_load = os.getloadavg()
    lines = ["# stree benchmark", "",
             f"- Machine: {cpu}; nproc {cores}; {system}; Python {py}; Node {node} (pi {PI_VERSION} "
             f"under Node 22: {run([NODE22, '--version']).head.decode().strip()}); Bun {run([bun(), '--version']).head.decode().strip()}",
             f"- Load average (1, 5, 15 min): {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f} at the start; "
             f"{end_load[0]:.2f}, {end_load[1]:.2f}, {end_load[2]:.2f} at the end; "
             f"the run took {(time.time() - started) / 60:.1f} min",
             "", "Written by `make bench` (tools/bench/run.py); every time is the median of "
             f"{RUNS} fresh processes ({SLOW_RUNS} for the cold runs, the context and their baselines, "
             f"{GRAPH_RUNS} for the whole graph, fewer in the growth table: 1M once), run in turns with its "
             "baselines (round after round, each command once a round). Sessions: tools/bench/gen.py.", "",
             "| baseline | median |", "| --- | ---: |"]
    lines += [f"| {name} | {seconds * 1000:.0f} ms |" for name, seconds in bases]
    lines += ["", "| measurement | median | ratio | target | met | note |", "| --- | ---: | ---: | ---: | :---: | --- |"]
    lines += [f"| {' | '.join(r)} |" for r in rows]
    lines += ["", "| peak RSS | MiB | vs file | target | met |", "| --- | ---: | ---: | ---: | :---: |"]
    for name, kib, path, of_file, cap in rss:
        size = path.stat().st_size
        ratio = kib * 1024 / size
        if size < 50 << 20:  # a small file: the peak is Python's own, the targets are for 100k
            target, ok = "(for 100k)", None
        elif of_file is not None:
            target, ok = f"≤ {of_file}× file size", ratio <= of_file
        else:
            target, ok = f"≤ {cap} MiB", mib(kib) <= cap
        met = "" if ok is None else "✓" if ok else "✗"
        lines.append(f"| {name} | {mib(kib):.1f} | {ratio:.2f}× file size | {target} | {met} |")
    lines += ["", "## Growth", "", "cold = `log -n 20` with no index; warm = with it; graph = `log --graph` into "
              "a pipe, drawn whole (index warm, no kept output). Peak RSS of stree and its parse workers. "
              "The drawing of these comb-shaped trees grows with the square of their size (pi's /tree indents "
              f"at each branch point): its reader stops after {OUTPUT_CAP / 2**30:g} GiB (`first ...`), "
              "and stree stops as under `| head`.", ""]
    lines += growth_lines(table)
    per_k = {name: got["cold"][0] / (n / 1000) for name, n, _, got, _ in table}
    if "100k" in per_k and len(per_k) > 3:
        top = table[-1][0]
        grows = per_k[top] / per_k["100k"]
        lines += ["", f"Cold parse per entry, {top} vs 100k: {grows:.2f}× (linear: ≤ 1.3×) "
                  f"{'✓' if grows <= 1.3 else '✗'}"]
    path, n = largest
    lines += ["", f"## Every command on {n:,} entries ({path.stat().st_size / 2**20:.0f} MiB)", "",
              "Warm (the index built by the cold run first); the two writes append to a copy. "
              "Exit 1 is `fsck`'s answer when it finds problems.", ""]
    lines += every_command_lines(everything, path.stat().st_size, f"{n:,} entries", n >= 1_000_000)
    lines.append("")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
