#!/usr/bin/env python3
"""How fast the HTML export loads in headless Chromium, against pi 1.6.0's own /export page of
the same file, in the same run (issue 27: stree's page must load in <= 0.6 x pi's time).

    PYTHONPATH=. .venv/bin/python tools/bench/export_page.py [ENTRIES] [--runs N]

Generates a session with tools/bench/gen.py (20,000 entries by default), exports it with
`stree export` and with pi's `pi --export` (HOME in a temporary directory), then opens each
page N times (alternating) in a fresh headless Chromium tab and takes the time from the start
of navigation (performance.now()) until the page is usable and painted: stree's script has
run (data-stree="ready"), pi's has filled its tree and messages; then two animation frames.
Prints the medians and the ratio, and for stree's page the time of a first search (it reads
the text of every entry once) and of a filter click."""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "lib"))  # (browser)

import browser  # noqa: E402

PI = ROOT / "tests" / "pi" / "versions" / "1.6.0" / "dist" / "bundle" / "cli.js"
NODE = ROOT / "tests" / "pi" / "node22" / "bin" / "node"
READY = {
    "stree": "document.documentElement.getAttribute('data-stree') === 'ready'",
    "pi": "document.getElementById('messages') && document.getElementById('messages').children.length > 0 "
          "&& document.getElementById('tree-status').textContent.length > 0",
}


def load_time(html, which, profile):
    page = browser.Page(profile)
    try:
        page.open(Path(html).as_uri())
        result = page.call("Runtime.evaluate", {"awaitPromise": True, "returnByValue": True, "expression": f"""
            new Promise(done => {{ const check = () => {{ if ({READY[which]}) {{
                requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now()))); }}
                else {{ setTimeout(check, 10); }} }}; check(); }})"""}, timeout=600)
        loaded = result["result"]["value"] / 1000
        if which != "stree":
            return loaded, None
        result = page.call("Runtime.evaluate", {"awaitPromise": True, "returnByValue": True, "expression": """
            new Promise(done => { const status = document.getElementById('status'), t0 = performance.now();
                new MutationObserver(() => { const t1 = performance.now();
                    document.querySelector('button[data-filter="no-tools"]').click();
                    done([t1 - t0, performance.now() - t1]); }).observe(status, {childList: true});
                const s = document.getElementById('search'); s.value = 'parser error';
                s.dispatchEvent(new Event('input')); })"""}, timeout=600)
        return loaded, result["result"]["value"]
    finally:
        page.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("entries", nargs="?", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="stree-export-bench-") as tmp:
        tmp = Path(tmp)
        session = tmp / "s.jsonl"
        subprocess.run([sys.executable, str(ROOT / "tools" / "bench" / "gen.py"), str(args.entries), str(session)],
                       check=True)
        pages = {"stree": tmp / "stree.html", "pi": tmp / "pi.html"}
        subprocess.run([sys.executable, "-m", "stree", "-s", str(session), "export", "-o", str(pages["stree"])],
                       check=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        (tmp / "home").mkdir()
        subprocess.run([str(NODE), str(PI), "--export", str(session), str(pages["pi"])], check=True,
                       env=dict(os.environ, HOME=str(tmp / "home")), stdout=subprocess.DEVNULL)
        times = {"stree": [], "pi": []}
        search = []
        for run in range(args.runs):
            for which in ("stree", "pi"):
                loaded, extra = load_time(pages[which], which, tmp / f"profile-{which}-{run}")
                times[which].append(loaded)
                if extra:
                    search.append(extra)
        print(f"{args.entries:,} entries; page size: stree {pages['stree'].stat().st_size / 1e6:.1f} MB, "
              f"pi {pages['pi'].stat().st_size / 1e6:.1f} MB")
        for which in ("stree", "pi"):
            print(f"{which:6} load: median {statistics.median(times[which]):.2f} s  "
                  f"({', '.join(f'{t:.2f}' for t in times[which])})")
        print(f"stree search (first, builds the text index; 120 ms typing pause included): "
              f"{statistics.median(x[0] for x in search) / 1000:.2f} s; then a filter click: "
              f"{statistics.median(x[1] for x in search) / 1000:.3f} s")
        ratio = statistics.median(times["stree"]) / statistics.median(times["pi"])
        print(f"ratio stree/pi: {ratio:.2f} (target <= 0.60)")


if __name__ == "__main__":
    main()
