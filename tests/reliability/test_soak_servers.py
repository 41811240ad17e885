"""`make soak`: one `stree serve` and one `stree serve --mcp` under a long mixed workload while
the real pi (the newest the harness knows, its `write`) appends to the session they serve and other stree
processes write to it (issue 24, "Done means"). Every request type, hostile regexes, huge
answers (a paged tree, a full log), cancellations (serve's abort, MCP's
notifications/cancelled). Prints: requests served, p99 latency, peak RSS of each server
(sampled, and checked not growing), hangs (a request unanswered in 60 s: must be 0) and lost
appends (an id pi or stree wrote missing from the file: must be 0).

STREE_SOAK_SECONDS sets the length (default 150)."""

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from builders import SessionBuilder
from mcp_kit import McpServer
from pi_harness import VERSIONS, pi_write
from serve_kit import Server

pytestmark = pytest.mark.soak

PI = "1.6.0" if "1.6.0" in VERSIONS else VERSIONS[-1]  # (the newest pi the Python side knows)
SECONDS = float(os.environ.get("STREE_SOAK_SECONDS", "150"))
EVIL = "(a+)+$"
ENV = {"STREE_REGEX_TIMEOUT": "1", "STREE_REQUEST_TIMEOUT": "30"}
ANSWER = 60  # seconds: a request not answered by then is a hang


def _rss(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None


class Stats:
    def __init__(self):
        self.latencies = []
        self.hangs = 0
        self.errors = {}
        self.lock = threading.Lock()

    def add(self, what, seconds, ok, code=None):
        with self.lock:
            self.latencies.append(seconds)
            if not ok:
                self.errors[(what, code)] = self.errors.get((what, code), 0) + 1


def _session(tmp_path):
    b = SessionBuilder(cwd=str(tmp_path))
    for n in range(3000):  # a long session: the full log and the tree are big answers
        b.user(f"question {n}: " + "x" * 200)
        b.assistant(f"answer {n}")
    b.user("backtrack here:\n" + "a" * 30 + "b")
    b.assistant("ok")
    return b.write(tmp_path / "soak.jsonl")


def _serve_load(s, session, stop, stats, tmp_path):
    """Every serve request type, round after round."""
    n = 0
    requests = [
        ("get_state", {}), ("get_messages", {}), ("get_entries", {}), ("get_tree", {}),
        ("get_tree", {"lightweight": True}), ("get_session_stats", {}), ("list_sessions", {"scope": "all"}),
        ("log", {"maxCount": 50}), ("log", {}), ("log", {"graph": True, "maxCount": 200}),
        ("show", {"revisions": ["@", "@~3"]}), ("rev_parse", {"revisions": ["@~2", "root"]}),
        ("context", {}), ("grep", {"pattern": "question 29", "session": str(session)}),
        ("grep", {"pattern": EVIL, "regex": True, "session": str(session)}),  # fails at its 1 s budget
        ("export_html", {"outputPath": str(tmp_path / "page.html"), "overwrite": True}),
        ("export_html", {"outputPath": str(session), "overwrite": True}),  # refused: a session file
        ("rev_parse", {"revisions": ["@" + "~0" * 50_000]}),
    ]
    while not stop.is_set():
        kind, fields = requests[n % len(requests)]
        n += 1
        started = time.monotonic()
        try:
            r = s.request(kind, timeout=ANSWER, **fields)
        except Exception:  # queue.Empty: unanswered
            stats.hangs += 1
            continue
        stats.add(kind, time.monotonic() - started, r["success"], r.get("errorCode"))
        if n % 7 == 0:  # a label through the server: its write path
            started = time.monotonic()
            r = s.request("set_label", timeout=ANSWER, entryId=s.data("get_entries")["leafId"] or "",
                          label=f"s{n}")
            stats.add("set_label", time.monotonic() - started, r["success"], r.get("errorCode"))
        if n % 11 == 0:  # abort a grep that would run for minutes
            s.n += 1
            id = f"c{s.n}"
            started = time.monotonic()
            s.send({"id": id, "type": "grep", "pattern": EVIL, "regex": True, "session": str(session),
                    "ignoreCase": True})
            aborts = 0
            while id not in s.pending and aborts < 1000:
                aborts += 1
                s.send({"id": f"{id}-abort{aborts}", "type": "abort"})
                s.wait(f"{id}-abort{aborts}", timeout=ANSWER)
            r = s.wait(id, timeout=ANSWER)
            stats.add("cancelled grep", time.monotonic() - started, r.get("errorCode") in ("cancelled", "bad_params"),
                      r.get("errorCode"))


def _mcp_load(m, session, stop, stats):
    tools = [("list_sessions", {}), ("log", {"max_count": 100}), ("log", {}), ("show", {"revisions": ["@~1"]}),
             ("context", {}), ("labels", {}), ("grep", {"pattern": "answer 7", "session": str(session)}),
             ("grep", {"pattern": EVIL, "regex": True, "session": str(session)}), ("tree", {}),
             ("set_label", {"name": "mcp-soak", "force": True})]
    n = 0
    while not stop.is_set():
        name, args = tools[n % len(tools)]
        n += 1
        started = time.monotonic()
        try:
            answer = m.wait(m.start(name, **args), timeout=ANSWER)
        except Exception:
            stats.hangs += 1
            continue
        result = answer.get("result", {})
        stats.add(name, time.monotonic() - started, not result.get("isError"))
        if n % 5 == 0:
            started = time.monotonic()
            try:
                assert m.ping(timeout=ANSWER)["result"] == {}
            except Exception:
                stats.hangs += 1
            stats.add("ping", time.monotonic() - started, True)
        if n % 9 == 0:  # a call cancelled while it runs: a ping and the next call must still be answered
            evil = m.start("grep", pattern=EVIL, regex=True, ignore_case=True, session=str(session))
            m.cancel(evil)


def _pi_appends(session, stop, ids):
    n = 0
    while not stop.is_set():
        n += 1
        seen = pi_write(str(session), [["appendMessage", {"role": "user", "content": f"pi says {n}",
                                                          "timestamp": n}]], version=PI)
        ids.extend(i for i in seen["ids"] if i)


def _stree_writes(session, stop, written):
    n = 0
    while not stop.is_set():
        n += 1
        r = subprocess.run([sys.executable, "-m", "stree", "-s", str(session), "name", f"soak {n}"],
                           capture_output=True, timeout=ANSWER)
        if r.returncode == 0:
            written.append(f"soak {n}")


def _sampler(pids, stop, samples):
    while not stop.wait(1.0):
        samples.append([_rss(pid) or 0 for pid in pids])


def test_soak_serve_and_mcp_under_a_mixed_workload(tmp_path):
    session = _session(tmp_path)
    s = Server(session, env=ENV)
    m = McpServer("-s", session, serve_args=["--allow-writes"], env=dict(ENV, STREE_MCP_PAGE_BYTES=str(256 << 10)))
    stop = threading.Event()
    serve_stats, mcp_stats = Stats(), Stats()
    pi_ids, names, samples = [], [], []
    threads = [threading.Thread(target=_mcp_load, args=(m, session, stop, mcp_stats), daemon=True),
               threading.Thread(target=_pi_appends, args=(session, stop, pi_ids), daemon=True),
               threading.Thread(target=_stree_writes, args=(session, stop, names), daemon=True),
               threading.Thread(target=_sampler, args=([s.proc.pid, m.proc.pid], stop, samples), daemon=True)]
    try:
        for t in threads:
            t.start()
        timer = threading.Timer(SECONDS, stop.set)
        timer.start()
        _serve_load(s, session, stop, serve_stats, tmp_path)
        for t in threads:
            t.join(ANSWER * 3)
        assert s.close(timeout=ANSWER) == 0
        assert m.close(timeout=ANSWER) == 0
    finally:
        stop.set()
        s.kill()
        m.kill()
    # 0 lost appends: every id pi reported, every name stree wrote, are in the file
    entries = [json.loads(x) for x in session.read_text().splitlines()]
    in_file = {e.get("id") for e in entries}
    lost = [i for i in pi_ids if i not in in_file]
    file_names = {e.get("name") for e in entries if e.get("type") == "session_info"}
    lost += [n for n in names if n not in file_names]
    lines, checks = [], []
    for label, stats, column in (("serve", serve_stats, 0), ("serve --mcp", mcp_stats, 1)):
        lat = sorted(stats.latencies)
        p99 = lat[max(0, int(len(lat) * 0.99) - 1)] if lat else 0
        rss = [row[column] for row in samples if row[column]] or [0]
        quarter = max(1, len(rss) // 4)
        lines.append(f"{label}: {len(lat)} requests served, p99 {p99:.2f} s, peak RSS {max(rss) >> 20} MiB "
                     f"(first quarter {max(rss[:quarter]) >> 20} MiB, last {max(rss[-quarter:]) >> 20} MiB), "
                     f"{stats.hangs} hangs, failures by kind: {dict(sorted(stats.errors.items(), key=str))}")
        checks.append((stats.hangs == 0 and max(rss) < 1 << 30 and len(lat) >= 10
                       and max(rss[-quarter:]) <= max(rss[:quarter]) * 1.5 + (64 << 20), lines[-1]))  # not growing
    lines.append(f"appends: {len(pi_ids)} by pi {PI}, {len(names)} by stree name; lost: {len(lost)}")
    print("\n" + "\n".join(lines))
    for ok, line in checks:
        assert ok, line
    assert not lost, lost[:5]
    assert len(pi_ids) > 0 and len(names) > 0
