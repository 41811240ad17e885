#!/usr/bin/env python3
"""The server rows of the bench: warm `stree serve` against the real `pi --mode rpc` (pi 1.6.0,
Node 22, offline as tests/pi/harness.mjs runs it) on the same generated session, each a
long-lived process; a request is timed from the line written to its response read, after
one request of each kind has warmed the server. Prints a markdown table (the Makefile's
bench target appends it to bench/results.md).

    python tools/bench/serve.py [ENTRIES] [--file F]   (default: bench/data's 100k session)

Rows: get_state, get_entries (all), get_entries since 1k from the end (the page a client
asks after an append), get_tree lightweight against stree's plain get_tree (pi's get_tree
overflows its stack on a long session); each the median of ROUNDS."""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import ENV, PY, ROOT  # noqa: E402

NODE22 = ROOT / "tests/pi/node22/bin/node"
PI_VERSION = "1.6.0"
PI_CLI = ROOT / "tests/pi/versions" / PI_VERSION / "dist/bundle/cli.js"
ROUNDS = int(os.environ.get("BENCH_SERVE_ROUNDS", "5"))


class Client:
    """A JSON Lines RPC process: request() -> (seconds, response)."""

    def __init__(self, argv, env, cwd):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self.n = 0

    def request(self, type, **fields):
        self.n += 1
        id = f"b{self.n}"
        line = (json.dumps({"id": id, "type": type, **fields}) + "\n").encode()
        start = time.perf_counter()
        self.proc.stdin.write(line)
        self.proc.stdin.flush()
        while True:
            raw = self.proc.stdout.readline()
            if not raw:
                sys.exit(f"bench: {self.proc.args[0]} ended before answering {type}")
            head = raw[:300]  # (not decoded whole: a tree nests deeper than Python's json goes)
            if b'"type":"response"' in head and b'"id":"%s"' % id.encode() in head:
                seconds = time.perf_counter() - start
                if b'"success":true' not in head:
                    sys.exit(f"bench: {type} failed: {raw[:500]!r}")
                return seconds, raw

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(120)


def prepared(source, home):
    """A copy of `source` whose header's cwd exists (pi refuses a session whose cwd does not)."""
    path = Path(home) / "session" / "bench.jsonl"
    path.parent.mkdir(parents=True)
    cwd = Path(home) / "cwd"
    cwd.mkdir()
    with open(source, "rb") as f, open(path, "wb") as out:
        header = json.loads(f.readline())
        header["cwd"] = str(cwd)
        out.write((json.dumps(header, separators=(",", ":")) + "\n").encode())
        while True:
            block = f.read(1 << 20)
            if not block:
                break
            out.write(block)
    return path


def pi_client(path, home):
    agent = Path(home) / "home" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(Path(home) / "home"),
           "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1",
           "PI_TELEMETRY": "0", "TZ": "UTC", "LANG": "C.UTF-8", "NO_COLOR": "1"}
    return Client([str(NODE22), str(PI_CLI), "--mode", "rpc", "--session", str(path)], env, home)


def stree_client(path, home):
    env = dict(ENV, STREE_CACHE_DIR=str(Path(home) / "cache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # (bytecode compiled, as a user's install has it)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return Client([PY, "-m", "stree", "-s", str(path), "serve"], env, home)


def timed(client, requests):
    """{name: median seconds} over ROUNDS of each request, after one warming round."""
    for name, (type, fields) in requests.items():
        client.request(type, **fields)
    out = {}
    for name, (type, fields) in requests.items():
        out[name] = statistics.median(client.request(type, **fields)[0] for _ in range(ROUNDS))
    return out


def main(argv):
    file = None
    if "--file" in argv:
        file = Path(argv[argv.index("--file") + 1])
    if not (NODE22.exists() and PI_CLI.exists()):
        sys.exit(f"bench: pi {PI_VERSION} or Node 22 is missing; run `make bench` (it installs tests/pi first)")
    if file is None:
        from measure import data_file

        n = int(argv[0]) if argv and argv[0].isdigit() else 100_000
        file = data_file(f"{n // 1000}k" if n < 1_000_000 else f"{n // 1_000_000}M", n)
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "stree")], check=True)
    with tempfile.TemporaryDirectory(prefix="stree-bench-serve-") as home:
        path = prepared(file, home)
        with open(path, "rb") as f:
            ids = [json.loads(line).get("id") for line in f]
        since = ids[max(1, len(ids) - 1000)]
        requests = {"get_state": ("get_state", {}), "get_entries": ("get_entries", {}),
                    "get_entries (last 1k)": ("get_entries", {"since": since})}
        pi = pi_client(path, home)
        theirs = timed(pi, requests)  # (not get_tree: pi's recursion overflows its stack on a long chain)
        pi.close()
        ours_client = stree_client(path, home)
        ours = timed(ours_client, dict(requests, **{"get_tree": ("get_tree", {}),
                                                    "get_tree lightweight": ("get_tree", {"lightweight": True})}))
        ours_client.close()
    entries = len(ids) - 1
    print(f"\n### Server, warm ({entries:,} entries; median of {ROUNDS}; `python tools/bench/serve.py`)\n")
    print("| request | stree serve | against | ratio | target |")
    print("|---|---|---|---|---|")
    for name, target in (("get_state", 0.5), ("get_entries", 0.5), ("get_entries (last 1k)", 0.5)):
        ratio = ours[name] / theirs[name]
        print(f"| {name} | {ours[name] * 1000:.2f} ms | pi {PI_VERSION} --mode rpc {theirs[name] * 1000:.2f} ms "
              f"| {ratio:.2f}× | ≤ {target}× {'✓' if ratio <= target else '✗'} |")
    ratio = ours["get_tree lightweight"] / ours["get_tree"]
    print(f"| get_tree lightweight | {ours['get_tree lightweight'] * 1000:.1f} ms | stree get_tree "
          f"{ours['get_tree'] * 1000:.1f} ms | {ratio:.2f}× | ≤ 1.5× {'✓' if ratio <= 1.5 else '✗'} |")


if __name__ == "__main__":
    main(sys.argv[1:])
