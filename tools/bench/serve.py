#!/usr/bin/env python3
"""The server rows of the bench: warm `stree serve` against the real `pi --mode rpc` (pi 1.6.0,
Node 22, offline as tests/pi/harness.mjs runs it) on the same generated session, each a
long-lived process; a request is timed from the line written to its response read, after
one request of each kind has warmed the server. Prints a markdown table (the Makefile's
bench target appends it to bench/results.md).

    python tools/bench/serve.py [ENTRIES] [--file F] [--mcp-only | --keep-ab | --mcp-breakdown]
    (default: bench/data's 100k session)

Rows: get_entries (all), get_entries since 1k from the end (the page a client asks after an
append), get_tree lightweight against stree's plain get_tree (pi's get_tree overflows its
stack on a long session); each the median of ROUNDS. get_state as the median of STEADY
requests after those (Node's JIT has compiled pi's path by then), to both servers in turns
(a request takes tens of microseconds: whatever else runs weighs on one side only otherwise).
Then MCP:
the tree tool paged through (a server that has read the session, not drawn it) against
`stree log --graph --json` into a pipe (index warm, drawn: no kept output), time and peak RSS, in
turns, the median of BENCH_MCP_ROUNDS (3) each (--mcp-only: that row alone). --keep-ab: get_entries (all) and the peak RSS of pi and of stree with STREE_SERVE_KEEP at 64
and 256 MiB, in one run. --mcp-breakdown: where the MCP tree's time goes (the client's own parse of
the answers, the wait on the server, and stree's pages made in-process)."""

import json
import os
import resource
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
STEADY = int(os.environ.get("BENCH_SERVE_STEADY", "300"))
MCP_ROUNDS = int(os.environ.get("BENCH_MCP_ROUNDS", "3"))


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


def steady(clients, block=100):
    """[median seconds] of STEADY get_state requests to each of `clients`, all alive and warm, in
    turns of `block` requests (a few tens of microseconds each: what the other process or the
    last large answer left running would otherwise weigh on one side only)."""
    seconds = [[] for _ in clients]
    for _ in range(max(1, STEADY // block)):
        for client, got in zip(clients, seconds):
            got += [client.request("get_state")[0] for _ in range(block)]
    return [statistics.median(got) for got in seconds]


def peak_kib(pid):
    """A live process's peak RSS (VmHWM), KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def mcp_tree(path, home, parsed=None):
    """(seconds, pages, peak RSS KiB, the peak after the first page, the server's CPU seconds while
    paging) of the tree tool paged through
    by `stree serve --mcp`, the session read first (a `context` call, untimed), each page's rows
    parsed as a client reads them. `parsed`: a list given the seconds the client spent parsing."""
    env = dict(ENV)  # (bench/data's cache: the index the CLI's runs built)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen([PY, "-m", "stree", "-s", str(path), "serve", "--mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=home)
    n = [0]

    def call(method, params):
        n[0] += 1
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": n[0], "method": method, "params": params}) + "\n")
                         .encode())
        proc.stdin.flush()
        while True:
            raw = proc.stdout.readline()
            if not raw:
                sys.exit(f"bench: stree serve --mcp ended before answering {method}")
            begun = time.perf_counter()
            answer = json.loads(raw)
            if answer.get("id") == n[0]:
                if "result" not in answer or answer["result"].get("isError"):
                    sys.exit(f"bench: MCP {method} failed: {raw[:500]!r}")
                result = answer["result"]
                # the answer's data, as a client reads it: structuredContent, else the JSON text
                data = result.get("structuredContent")
                if data is None and method == "tools/call":
                    data = json.loads(result["content"][0]["text"])
                if parsed is not None:
                    parsed.append(time.perf_counter() - begun)
                return data

    call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench",
                                                                                           "version": "0"}})
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    call("tools/call", {"name": "context", "arguments": {}})
    if parsed is not None:
        parsed.clear()
    start, cpu = time.perf_counter(), cpu_seconds(proc.pid)
    cursor, pages = None, 0
    while True:
        data = call("tools/call", {"name": "tree", "arguments": {"cursor": cursor} if cursor else {}})
        pages += 1
        if pages == 1:
            first = peak_kib(proc.pid)
        cursor = data.get("nextCursor")
        if cursor is None:
            break
    seconds = time.perf_counter() - start
    rss, cpu = peak_kib(proc.pid), cpu_seconds(proc.pid) - cpu
    proc.stdin.close()
    proc.wait(120)
    return seconds, pages, rss, first, cpu


def cpu_seconds(pid):
    """A live process's CPU time (user + system), seconds: less swayed by a loaded machine than
    the time by the clock."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def mcp_rows(file, entries):
    """The MCP tree row: the tool paged through against the CLI's drawing as JSON, in turns
    (MCP_ROUNDS of each: the median of each, on a loaded machine the ratio of one run is noise)."""
    from measure import clear_graphs, run

    env = dict(ENV)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    cli_argv = [PY, "-m", "stree", "-s", str(file), "log", "--graph", "--json"]
    run(cli_argv, env, cap=None)  # (the index built, untimed)
    clis, mcps, cli_cpus = [], [], []
    for _ in range(MCP_ROUNDS):
        clear_graphs()  # (drawn, not the kept output of the run before printed again)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        clis.append(run(cli_argv, env, cap=None))
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cli_cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        with tempfile.TemporaryDirectory(prefix="stree-bench-mcp-") as home:
            mcps.append(mcp_tree(file, home))
    cli = sorted(clis, key=lambda r: r.seconds)[len(clis) // 2]
    seconds, pages, rss, first, _ = sorted(mcps)[len(mcps) // 2]
    ratio = seconds / cli.seconds
    print(f"\n### MCP `tree`, paged through ({entries:,} entries; the median of {MCP_ROUNDS} runs each, in turns; "
          "`python tools/bench/serve.py`)\n")
    print("| path | time | peak RSS | against | ratio | target |")
    print("|---|---|---|---|---|---|")
    print(f"| MCP tree ({pages} pages) | {seconds:.2f} s | {rss / 1024:.0f} MiB | stree log --graph --json "
          f"{cli.seconds:.2f} s, {cli.rss_kib / 1024:.0f} MiB, {cli.out_bytes / 2**20:.0f} MiB out | {ratio:.2f}× "
          f"| ≤ 1.2× {'✓' if ratio <= 1.2 else '✗'} |")
    print(f"\nRuns (MCP / CLI, s): {', '.join(f'{m[0]:.2f} / {c.seconds:.2f}' for m, c in zip(mcps, clis))}. "
          f"The server's peak RSS after the first page {first / 1024:.0f} MiB, after all {pages} {rss / 1024:.0f} MiB "
          "(a page is about 4 MiB of records; the session is read first, by a `context` call). "
          f"CPU (the server's while paging / the CLI's whole run, s): "
          f"{', '.join(f'{m[4]:.2f} / {c:.2f}' for m, c in zip(mcps, cli_cpus))}; "
          f"medians {statistics.median(m[4] for m in mcps):.2f} / {statistics.median(cli_cpus):.2f}.")


def keep_ab(file):
    """get_entries (all) of pi and of stree at two STREE_SERVE_KEEP budgets, with peak RSS."""
    with tempfile.TemporaryDirectory(prefix="stree-bench-keep-") as home:
        path = prepared(file, home)
        request = {"get_entries": ("get_entries", {})}
        pi = pi_client(path, home)
        theirs = timed(pi, request)["get_entries"]
        pi_rss = peak_kib(pi.proc.pid)
        pi.close()
        print("\n| server | get_entries | vs pi | peak RSS | vs pi |\n|---|---|---|---|---|")
        print(f"| pi {PI_VERSION} --mode rpc | {theirs * 1000:.0f} ms | | {pi_rss / 1024:.0f} MiB | |")
        for keep in (64 << 20, 256 << 20):
            ENV["STREE_SERVE_KEEP"] = str(keep)
            try:
                ours = stree_client(path, home)
                seconds = timed(ours, request)["get_entries"]
                rss = peak_kib(ours.proc.pid)
                ours.close()
            finally:
                del ENV["STREE_SERVE_KEEP"]
            print(f"| stree serve, STREE_SERVE_KEEP={keep >> 20} MiB | {seconds * 1000:.0f} ms | "
                  f"{seconds / theirs:.2f}× | {rss / 1024:.0f} MiB | {rss / pi_rss:.2f}× |")


def mcp_breakdown(file):
    """The MCP tree's time split: the client's parse, the wait on the server, stree's own pages."""
    from stree.mcp.reads import READ_TOOLS
    from stree.mcp.server import answer
    from stree.mcp.stdio import line_of
    from stree.mcp.tools import Workspace

    parsed = []
    with tempfile.TemporaryDirectory(prefix="stree-bench-mcp-") as home:
        seconds, pages, _, _, _ = mcp_tree(file, home, parsed)
    os.environ.setdefault("STREE_CACHE_DIR", ENV["STREE_CACHE_DIR"])
    ws = Workspace(session=str(file))
    ws.load(None)
    tree = next(t for t in READ_TOOLS if t.name == "tree")
    import mcp_types
    from mcp_types import methods

    own = sdk = 0.0
    cursor, made = None, 0
    while True:
        start = time.perf_counter()
        data, text = tree.call(ws, {"cursor": cursor} if cursor else {})  # (as stree.mcp.server's Job)
        own += time.perf_counter() - start
        start = time.perf_counter()  # what the SDK does with the answer (stree.mcp.server: a dict)
        result = methods.serialize_server_result("tools/call", "2025-11-25", answer(data, text))
        line_of(mcp_types.JSONRPCResponse(jsonrpc="2.0", id=1, result=result))  # (stree.mcp.stdio writes it)
        sdk += time.perf_counter() - start
        made += 1
        at = text.rfind('"nextCursor":"')
        if at < 0:
            break
        cursor = text[at + 14:text.index('"', at + 14)]
    print(f"\nMCP tree, {pages} pages: {seconds:.2f} s in all; the client's parse {sum(parsed):.2f} s; "
          f"stree's {made} pages made in-process {own:.2f} s (a structured copy parsed included, when sent); "
          f"the SDK's checks and dumps of them in-process {sdk:.2f} s; the rest (the SDK's loop, the pipe, less "
          "what overlapped: the server makes the next page while the client parses) "
          f"{seconds - sum(parsed) - own - sdk:.2f} s")


def main(argv):
    file = None
    if "--file" in argv:
        file = Path(argv[argv.index("--file") + 1])
    if not (NODE22.exists() and PI_CLI.exists()) and not {"--mcp-only", "--mcp-breakdown"} & set(argv):
        sys.exit(f"bench: pi {PI_VERSION} or Node 22 is missing; run `make bench` (it installs tests/pi first)")
    if file is None:
        from measure import data_file

        n = int(argv[0]) if argv and argv[0].isdigit() else 100_000
        file = data_file(f"{n // 1000}k" if n < 1_000_000 else f"{n // 1_000_000}M", n)
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "stree")], check=True)
    if "--mcp-only" in argv:
        with open(file, "rb") as f:
            mcp_rows(file, sum(1 for _ in f) - 1)
        return
    if "--keep-ab" in argv:
        return keep_ab(file)
    if "--mcp-breakdown" in argv:
        sys.path.insert(0, str(ROOT))
        return mcp_breakdown(file)
    with tempfile.TemporaryDirectory(prefix="stree-bench-serve-") as home:
        path = prepared(file, home)
        with open(path, "rb") as f:
            ids = [json.loads(line).get("id") for line in f]
        since = ids[max(1, len(ids) - 1000)]
        requests = {"get_entries": ("get_entries", {}), "get_entries (last 1k)": ("get_entries", {"since": since})}
        pi = pi_client(path, home)
        theirs = timed(pi, requests)  # (not get_tree: pi's recursion overflows its stack on a long chain)
        ours_client = stree_client(path, home)
        ours = timed(ours_client, requests)
        theirs["get_state"], ours["get_state"] = steady([pi, ours_client])
        pi.close()
        ours.update(timed(ours_client, {"get_tree": ("get_tree", {}),
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
    print(f"\nget_state: the median of {STEADY} requests to each after the rounds of get_entries, both servers "
          f"alive, in turns of 100 (the first few after a large answer are slower on both sides).")
    mcp_rows(file, entries)


if __name__ == "__main__":
    main(sys.argv[1:])
