"""Faults: SIGKILL at random points of every write, a full or failing disk, concurrent
writers (pi-style appenders and stree), and API keys that must never leak.

After every fault the session is either the original or a valid session pi reads,
never something in between. Sizes grow under `make soak`.
"""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from builders import SessionBuilder, branchy, dumps
from pi_harness import VERSIONS, pi_batch

from stree.storage.session import parse
from stree.core.tree import Tree

FAULTY = Path(__file__).resolve().parents[1] / "lib" / "faulty_stree.py"
KILLS = 200
SOAK_KILLS = 2000


def big_session(path, entries=600):
    """A v3 session big enough that parsing and writing take a while (kills land inside)."""
    b = branchy()
    for n in range(entries):
        b.user(f"message {n} " + "x" * 200) if n % 2 == 0 else b.assistant(f"reply {n}")
    return b.write(path)


def v1_session(path, entries=600):
    lines = [{"type": "session", "id": "5b1c0e8e-2f0a-4e4b-9d7e-6a2c1b0f3e11",
              "timestamp": "2025-01-02T03:04:05.678Z", "cwd": "/home/dev/old"}]
    for n in range(entries):
        lines.append({"type": "message", "timestamp": "2025-01-02T03:04:06.000Z",
                      "message": {"role": "user" if n % 2 == 0 else "hookMessage", "content": f"m{n} " + "y" * 200,
                                  "timestamp": 1735787046000}})
    path.write_text("".join(dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def stree_cmd(*args):
    return [sys.executable, "-m", "stree", *map(str, args)]


def _valid(path):
    """A session that parses without a single skipped line; returns (Session, Tree)."""
    s = parse(str(path))
    assert not s.malformed, (path, s.malformed)
    assert path.read_bytes().endswith(b"\n")
    return s, Tree(s.nodes, s.load)


class KillRun:
    """One operation on its own copy of a file (killed by tests/kill_runner.py)."""

    ARGS = {"append": ["label", "kill-{n}", "root"], "checkout": ["checkout", "--exact", "root"],
            "fork": ["fork", "@~3", "-o", "{out}"], "migrate": ["migrate"]}

    def __init__(self, tmp, n, op, sources):
        self.dir = tmp / f"k{n}"
        self.dir.mkdir()
        self.op = op
        self.path = self.dir / "s.jsonl"
        self.path.write_bytes(sources[op])
        self.before = sources[op]
        self.out = self.dir / "fork.jsonl"
        self.argv = ["-s", str(self.path)] + [a.format(n=n, out=self.out) for a in self.ARGS[op]]

    def check(self, expected_ids):
        """'original' or 'done'; asserts the state is one of the two."""
        data = self.path.read_bytes()
        leftovers = [p.name for p in self.dir.iterdir() if p.name.endswith(".tmp")]
        if self.op == "fork":
            assert data == self.before
            if not self.out.exists():
                return "original", leftovers
            s, tree = _valid(self.out)
            assert [n.id for n in s.nodes if n.type != "label"] == expected_ids["fork"]
            return "done", leftovers
        if data == self.before:
            return "original", leftovers
        s, tree = _valid(self.path)
        if self.op == "migrate":
            assert s.version == 3 and [n.id for n in s.nodes] == expected_ids["migrate"]
        else:
            assert data.startswith(self.before)
            new = [json.loads(line) for line in data[len(self.before):].splitlines()]
            assert len(new) == 1 and new[0]["type"] in ("label", "custom"), new
        return "done", leftovers


def _run_jobs(jobs):
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve().parents[1] / "lib" / "kill_runner.py")],
                          input="".join(json.dumps(j) + "\n" for j in jobs), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _kill_loop(tmp_path, iterations, seed):
    rng = random.Random(seed)
    sources = {"append": big_session(tmp_path / "big.jsonl").read_bytes(),
               "migrate": v1_session(tmp_path / "v1.jsonl").read_bytes()}
    sources["checkout"] = sources["fork"] = sources["append"]
    s, tree = _valid(tmp_path / "big.jsonl")
    expected = {"fork": [n.id for n in tree.path(tree.path_ids(tree.leaf)[-4]) if n.type != "label"],
                "migrate": [n.id for n in parse(str(tmp_path / "v1.jsonl")).nodes]}
    # time whole runs of each operation, then kill anywhere from start to just after the end
    ops = list(KillRun.ARGS)
    (tmp_path / "timing").mkdir()
    timing = [KillRun(tmp_path / "timing", n, op, sources) for n, op in enumerate(ops * 3)]
    span = {}
    for run, result in zip(timing, _run_jobs([{"argv": r.argv, "delay": None} for r in timing])):
        assert result["status"] == 0 and run.check(expected)[0] == "done"
        span[run.op] = max(span.get(run.op, 0), result["seconds"])
    # batches until `iterations` runs were killed mid-run (timings vary with the machine's load)
    runs, results = [], []
    while sum(1 for r in results if r["killed"]) < iterations and len(runs) < iterations * 3:
        batch = [KillRun(tmp_path, len(runs) + n, rng.choice(ops), sources) for n in range(100)]
        results += _run_jobs([{"argv": r.argv, "delay": span[r.op] * rng.uniform(0.0, 1.2)} for r in batch])
        runs += batch
    outcomes = {}
    leftover_tmp = 0
    done = []
    for run, result in zip(runs, results):
        state, leftovers = run.check(expected)
        if not result["killed"]:
            assert result["status"] == 0 and state == "done", (run.op, result)
        outcomes[(run.op, state)] = outcomes.get((run.op, state), 0) + 1
        leftover_tmp += len(leftovers)
        if state == "done":
            done.append(run.out if run.op == "fork" else run.path)
    # pi (each version) reads a sample of the finished results (every kind)
    sample = done[::max(1, len(done) // 40)]
    for version in VERSIONS:
        for path, seen in zip(sample, pi_batch([["inspect", p] for p in sample], version=version)):
            s, tree = _valid(path)
            assert seen["leafId"] == tree.leaf and len(seen["entries"]) == len(s.nodes) and not seen["rewritten"], \
                (version, path)
    killed = sum(1 for r in results if r["killed"])
    return outcomes, leftover_tmp, killed


def test_sigkill_at_random_points_never_leaves_a_half_written_session(tmp_path):
    outcomes, leftover_tmp, killed = _kill_loop(tmp_path, KILLS, seed=11)
    print(f"{sum(outcomes.values())} runs, {killed} killed mid-run: {outcomes}; temp files left: {leftover_tmp}")
    assert killed >= KILLS
    # kills landed both before and after the write of each kind of operation
    for op in ("append", "fork", "migrate"):
        assert outcomes.get((op, "original"), 0) > 0 and outcomes.get((op, "done"), 0) > 0, outcomes


@pytest.mark.soak
def test_sigkill_soak(tmp_path):
    outcomes, leftover_tmp, killed = _kill_loop(tmp_path, SOAK_KILLS, seed=12)
    print(f"{sum(outcomes.values())} runs, {killed} killed mid-run: {outcomes}; temp files left: {leftover_tmp}")
    assert killed >= SOAK_KILLS


# -- a full or failing disk ---------------------------------------------------------

WRITES = [["label", "disk-full"], ["name", "new name"], ["checkout", "00000006"], ["label", "-d", "start"],
          ["checkout", "00000006", "--summary", "-"], ["fork", "@~2", "-o", "{dir}/fork.jsonl"], ["migrate"]]


@pytest.mark.parametrize("fault", ["enospc", "enospc-half", "eio-fsync"])
@pytest.mark.parametrize("command", WRITES, ids=lambda c: "-".join(c[:2]).replace("/", ""))
def test_disk_faults_give_a_clear_error_and_leave_the_file_as_it_was(tmp_path, fault, command):
    from test_write_commands import v1_file

    path = v1_file(tmp_path / "s.jsonl") if command == ["migrate"] else branchy().write(tmp_path / "s.jsonl")
    before = path.read_bytes()
    args = [a.replace("{dir}", str(tmp_path)) for a in command]
    proc = subprocess.run([sys.executable, str(FAULTY), "-s", path, *args], input=b"a summary\n",
                          capture_output=True, env=dict(os.environ, FAULT=fault), timeout=60)
    err = proc.stderr.decode()
    assert proc.returncode == 6, (proc.returncode, err)
    assert "Traceback" not in err and "internal error" not in err
    errors = [line for line in err.splitlines() if line.startswith("stree: error:")]
    assert len(errors) == 1 and ("No space left" in errors[0] or "Input/output error" in errors[0]), err
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "s.jsonl"]  # no temp file, no fork


def test_unreadable_file_is_a_clear_error(tmp_path):
    path = branchy().write(tmp_path / "s.jsonl")
    for args in (["log"], ["label", "x"], ["fsck"]):
        proc = subprocess.run([sys.executable, str(FAULTY), "-s", path, *args], capture_output=True,
                              env=dict(os.environ, FAULT="eio-read"), timeout=60)
        err = proc.stderr.decode()
        assert proc.returncode == 4 and err.startswith("stree: error:") and "Input/output error" in err, err


# -- concurrent writers -----------------------------------------------------------

PI_APPENDER = """
import json, os, sys, time
from datetime import datetime, timezone
path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
parent = None
for n in range(count):
    # pi's _persist: appendFileSync(file, JSON.stringify(entry) + "\\n"), no lock, leaf in memory
    ts = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    entry = {"type": "message", "id": f"{name}{n:05x}", "parentId": parent, "timestamp": ts,
             "message": {"role": "user", "content": [{"type": "text", "text": f"{name} says {n} " + "z" * 300}],
                         "timestamp": 0}}
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    os.write(fd, (json.dumps(entry, separators=(",", ":")) + "\\n").encode())
    os.close(fd)
    parent = entry["id"]
"""

STREE_WRITER = """
import sys
from stree.cli import run
from stree.entrypoint import main
path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
if int(name[1:]) % 2 == 0:  # half the writers through the fast path (stree.fastwrite), half through click
    run = main
for n in range(count):
    sys.argv = ["stree", "-s", path, "label", f"{name}-{n}", "root"]
    try:
        run()
    except SystemExit as e:
        assert e.code in (0, None), e.code
"""


def _concurrent(tmp_path, pi_writers, pi_appends, stree_writers, stree_appends):
    path = branchy().write(tmp_path / "busy.jsonl")
    before = path.read_bytes()
    procs = [subprocess.Popen([sys.executable, "-c", PI_APPENDER, str(path), f"p{w}", str(pi_appends)])
             for w in range(pi_writers)]
    procs += [subprocess.Popen([sys.executable, "-c", STREE_WRITER, str(path), f"s{w}", str(stree_appends)],
                               stdout=subprocess.DEVNULL) for w in range(stree_writers)]
    assert [p.wait(timeout=600) for p in procs] == [0] * len(procs)
    data = path.read_bytes()
    assert data.startswith(before) and data.endswith(b"\n")
    new = [json.loads(line) for line in data[len(before):].decode().splitlines()]  # every line whole
    assert len(new) == pi_writers * pi_appends + stree_writers * stree_appends
    for w in range(pi_writers):
        mine = [e for e in new if e["id"].startswith(f"p{w}")]
        assert [e["id"] for e in mine] == [f"p{w}{n:05x}" for n in range(pi_appends)]
    labels = sorted(e["label"] for e in new if e["type"] == "label")
    assert labels == sorted(f"s{w}-{n}" for w in range(stree_writers) for n in range(stree_appends))
    s, tree = _valid(path)
    for version in VERSIONS:
        seen = pi_batch([["inspect", path]], version=version)[0]
        assert seen["leafId"] == tree.leaf == new[-1]["id"] and len(seen["entries"]) == len(s.nodes), version
    return len(new)


def test_pi_appenders_and_stree_writers_on_one_file(tmp_path):
    assert _concurrent(tmp_path, pi_writers=4, pi_appends=150, stree_writers=4, stree_appends=40) == 760


@pytest.mark.soak
def test_concurrent_soak(tmp_path):
    print(_concurrent(tmp_path, pi_writers=8, pi_appends=2000, stree_writers=8, stree_appends=300), "appends")


# -- secrets ------------------------------------------------------------------------

SECRETS = {"OPENAI_API_KEY": "sk-proj-FAKE0penAiKey0000000000000000000000LEAKCHECK",
           "ANTHROPIC_API_KEY": "sk-ant-api03-FAKEanthropicKey000000000000000LEAKCHECK",
           "OPENROUTER_API_KEY": "sk-or-v1-FAKEopenrouter000000000000000000LEAKCHECK",
           "STREE_API_KEY": "FAKEstreeKey0000000000000000000000000LEAKCHECK"}


class _EchoKeyServer:
    """A model server that answers 401 and echoes the credentials it got (the worst case)."""

    def __enter__(self):
        import http.server
        import threading

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length") or 0))
                auth = self.headers.get("authorization") or self.headers.get("x-api-key") or ""
                body = json.dumps({"error": {"message": f"Incorrect API key provided: {auth}"}}).encode()
                self.send_response(401)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __exit__(self, *exc):
        self.server.shutdown()


def test_api_keys_never_reach_output_logs_or_the_session(tmp_path, stree):
    path = branchy().write(tmp_path / "s.jsonl")
    commands = [["log"], ["log", "--graph"], ["show", "--json"], ["context", "--as", "openai"], ["label", "k"],
                ["name", "n"], ["checkout", "00000006"], ["checkout", "00000003", "--summarize"],
                ["checkout", "00000003", "--summarize", "--provider", "openai"],
                ["checkout", "00000003", "--summarize", "--provider", "anthropic"],
                ["checkout", "00000003", "--summarize", "--provider", "extractive"],
                ["summarize", "--to", "root"], ["summarize", "--to", "root", "--prompt"],
                ["summarize", "--to", "root", "--provider", "anthropic"],
                ["summarize", "--to", "root", "--provider", "extractive", "--json"],
                ["fork", "@", "-o", tmp_path / "f.jsonl"], ["show", "nope"], ["fsck"], ["reflog"], ["migrate"]]
    leaked = []
    ran = 0
    with _EchoKeyServer() as url:
        env = dict(SECRETS, STREE_BASE_URL=url + "/v1", OPENAI_BASE_URL=url + "/v1", ANTHROPIC_BASE_URL=url)
        for args in commands:
            for debug in ([], ["--debug"]):
                r = stree("-s", path, *debug, *args, env=env, timeout=120)
                ran += 1
                assert "internal error" not in r.err, (args, r)
                for name, value in SECRETS.items():
                    for where, text in (("stdout", r.out), ("stderr", r.err)):
                        if value in text or value[-20:] in text:
                            leaked.append((args, debug, name, where))
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    for p in files:
        content = p.read_bytes()
        for name, value in SECRETS.items():
            if value.encode() in content or value[-20:].encode() in content:
                leaked.append((str(p), name))
    assert ran == len(commands) * 2 and len(files) >= 2
    assert leaked == []
