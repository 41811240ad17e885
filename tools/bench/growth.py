"""`make bench`, the parts about size: the growth table (cold, warm, graph at 1k to 1M
entries), every command on the largest file, and the append case (one entry appended, then
the commands a user watching a live session runs)."""

import json
import os
import secrets
import shutil
import statistics
import sys
import time

from measure import DATA, STATS_ENV, STREE, clear_cache, clear_graphs, mib, run

GROWTH_RUNS = int(os.environ.get("BENCH_GROWTH_RUNS", "3"))  # 1M: fewer (below)


def growth(files):
    """[(name, entries, bytes, {kind: (median s, peak KiB)}, graph output bytes)] for each size:
    cold = `log -n 20` with no index (the cache emptied first); warm = the same with it;
    graph = `log --graph` into a pipe, drawn whole (the index warm, no kept output)."""
    table = []
    for name, (path, n) in files.items():
        runs = 1 if n >= 1_000_000 else GROWTH_RUNS
        cold = STREE + ["-s", path, "log", "-n", "20"]
        graph = STREE + ["-s", path, "log", "--graph"]
        untimed = 1 if runs > 1 else 0  # a first run warms the OS caches; 1M: one run of each
        drawn = _runs(graph, runs, untimed, clear_graphs)
        got = {"cold": _median(_runs(cold, runs, untimed, clear_cache)),
               "warm": _median(_runs(cold, GROWTH_RUNS, 1)),
               "graph": _median(drawn)}
        table.append((name, n, path.stat().st_size, got, (drawn[-1].out_bytes, drawn[-1].cut)))
        print(f"bench: growth {name}: " + ", ".join(f"{k} {s * 1000:.0f} ms {mib(r):.0f} MiB"
                                                      for k, (s, r) in got.items()), file=sys.stderr)
    return table


def _runs(argv, runs, untimed, before=None):
    out = []
    for _ in range(untimed + runs):
        if before:
            before()
        out.append(run(argv, STATS_ENV))
    return out[untimed:]


def _median(results):
    return statistics.median(r.seconds for r in results), max(r.rss_kib for r in results)


def growth_lines(table):
    lines = ["| entries | file | cold `log -n 20` | peak RSS | warm `log -n 20` | peak RSS | "
             "`log --graph` (pipe, drawn) | peak RSS | graph output | cold ms per 1k entries |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, n, size, got, (out, cut) in table:
        (cs, cr), (ws, wr), (gs, gr) = got["cold"], got["warm"], got["graph"]
        first = f"first {out / 2**30:.1f} GiB: " if cut else ""
        lines.append(f"| {name} | {size / 2**20:.1f} MiB | {cs * 1000:.0f} ms | {mib(cr):.0f} MiB | "
                     f"{ws * 1000:.0f} ms | {mib(wr):.0f} MiB | {first}{gs * 1000:.0f} ms | {mib(gr):.0f} MiB | "
                     f"{'≥ ' if cut else ''}{out / 2**20:.1f} MiB | {cs * 1000 / (n / 1000):.2f} |")
    return lines


def every_command(path, n):
    """Every read command (and two writes, on a copy) on the largest file, the index warm:
    [(command, seconds, peak KiB, exit code, is the graph)]. One cold run first."""
    work = DATA / f"work-{path.stem}.jsonl"  # label and checkout append: their own copy
    shutil.copyfile(path, work)
    s = ["-s", path]
    cmds = [
        ("cold `log -n 20` (no index)", s + ["log", "-n", "20"], True),
        ("`log -n 20`", s + ["log", "-n", "20"], False),
        ("`log --graph` (pipe, drawn)", s + ["log", "--graph"], False),
        ("`log --graph` (pipe, kept output)", s + ["log", "--graph"], False),
        ("`log --json -n 100`", s + ["log", "--json", "-n", "100"], False),
        ("`show @`", s + ["show", "@"], False),
        ("`rev-parse @~100`", s + ["rev-parse", "@~100"], False),
        ("`merge-base @ @~50`", s + ["merge-base", "@", "@~50"], False),
        ("`context`", s + ["context"], False),
        ("`context --json @~50`", s + ["context", "--json", "@~50"], False),
        ("`label` (list)", s + ["label"], False),
        ("`name`", s + ["name"], False),
        ("`reflog`", s + ["reflog"], False),
        ("`summarize --prompt --to @~40`", s + ["summarize", "--prompt", "--to", "@~40"], False),
        ("`fsck`", s + ["fsck"], False),
        ("completion of revisions", ["__complete", "bash", "", "--"] + s + ["log", ""], False),
        ("`label -f x @` (appends)", ["-s", work, "label", "-f", "x", "@"], False),
        ("`checkout --exact @~2` (appends)", ["-s", work, "checkout", "--exact", "@~2"], False),
    ]
    clear_cache()
    out = []
    cut = False
    for name, args, cold in cmds:
        if "drawn" in name:
            clear_graphs()
        if "kept" in name:
            if cut:
                continue  # a drawing cut short keeps nothing
            run(STREE + args, STATS_ENV, check=False)  # keeps its output for the next one
        r = run(STREE + args, STATS_ENV, check=False)
        if r.cut:
            cut = True
            name += f" (first {r.out_bytes / 2**30:.1f} GiB of output)"
        out.append((name, r.seconds, r.rss_kib, r.code, "graph" in name, cold))
        print(f"bench: {n:,}: {name}: exit {r.code}, {r.seconds * 1000:.0f} ms, {mib(r.rss_kib):.0f} MiB",
              file=sys.stderr)
        if cold:
            run(STREE + ["-s", work, "log", "-n", "1"], STATS_ENV)  # the copy's index
    work.unlink()
    return out


def every_command_lines(results, size, label, targets=True):
    """The table of every_command; `targets`: the 1M targets apply (not to a small file, whose
    peak is Python's own)."""
    lines = [f"| command, {label} | exit | time | peak RSS | target | met |", "| --- | ---: | ---: | ---: | ---: | :---: |"]
    for name, seconds, rss, code, graph, cold in results:
        if not targets:
            target, ok = "", None
        elif cold:
            target, ok = "≤ 2× file", rss * 1024 <= 2 * size
        elif graph and "drawn" in name:
            target, ok = "(pipe: not bounded)", None
        else:
            target, ok = "≤ 150 MiB", mib(rss) <= 150
        met = ("✓" if ok and code in (0, 1) else "✗") if ok is not None else ("✗" if code not in (0, 1) else "")
        lines.append(f"| {name} | {code} | {seconds * 1000:.0f} ms | {mib(rss):.0f} MiB | {target} | {met} |")
    return lines


# -- the append case ---------------------------------------------------------------------

APPEND_RUNS = int(os.environ.get("BENCH_APPEND_RUNS", "5"))


def append_entry(path):
    """Append one user message under the leaf (the last entry), as pi does."""
    size, back = os.path.getsize(path), 1 << 16
    with open(path, "rb") as f:
        while True:  # back from the end until the last line is whole
            f.seek(max(0, size - back))
            tail = f.read().rstrip(b"\n")
            if b"\n" in tail or back >= size:
                break
            back *= 4
        last = json.loads(tail.rsplit(b"\n", 1)[-1])
    ms = int(time.time() * 1000)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"
    entry = {"type": "message", "id": secrets.token_hex(4), "parentId": last.get("id"), "timestamp": stamp,
             "message": {"role": "user", "content": [{"type": "text", "text": "And now the tests, please."}],
                         "timestamp": ms}}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, separators=(",", ":")) + "\n")


def append_case(path, label):
    """{what: median seconds} on a copy of `path`: the whole drawing (index warm, no kept
    output), then rounds of: one entry appended, `log --graph` (pipe), `log -n 20`, `context`."""
    work = DATA / f"append-{path.stem}.jsonl"
    shutil.copyfile(path, work)
    s = STREE + ["-s", work]
    graph = s + ["log", "--graph"]
    run(s + ["log", "-n", "1"])
    whole = []
    for _ in range(APPEND_RUNS + 1):
        clear_graphs()
        whole.append(run(graph).seconds)
    log, context = s + ["log", "-n", "20"], s + ["context"]
    still = {"log": [], "context": []}  # the same commands with nothing appended
    for i in range(APPEND_RUNS + 1):
        for what, argv in (("log", log), ("context", context)):
            r = run(argv)
            if i:
                still[what].append(r.seconds)
    run(graph)  # kept output of the file as it is: what an incremental drawing starts from
    got = {"graph": [], "log": [], "context": []}
    for i in range(APPEND_RUNS + 1):
        append_entry(work)
        time.sleep(0.06)  # past the racy window: a file changed this close to a write is not trusted
        for what, argv in (("graph", graph), ("log", log), ("context", context)):
            r = run(argv)
            if i:
                got[what].append(r.seconds)
    work.unlink()
    result = {"whole": statistics.median(whole[1:]), "log still": statistics.median(still["log"]),
              "context still": statistics.median(still["context"])}
    result.update({what: statistics.median(v) for what, v in got.items()})
    print(f"bench: append {label}: " + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in result.items()),
          file=sys.stderr)
    return result
