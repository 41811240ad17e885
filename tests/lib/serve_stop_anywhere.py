"""A stop (stree.core.budget's cancellation) raised at every line of stree's code that a read
request of a long-running server runs, one attempt per line, in ONE server whose warm state
(the sessions kept read, their decoded entries, the per-session indexes loaded, the answers
and drawings kept) lives on from attempt to attempt; before each attempt a line is appended
to the served session, so the stopped request was also bringing that state current. After
each stop, the next requests (the same one and two others) must answer exactly what a server
started afresh answers for the file as it is (its own empty cache directory; the kept
get_state answer too), the same request must decode no more entries than it does unstopped
(what was kept warm is not lost), and the server must hold no lock, no shield, no more
descriptors than before and no temporary file.

The stop is raised by the budget's own timer handler (budget._tick), called from a trace
function at the chosen line, with the request's cancellation Event set there: what a client's
cancel arriving there would do, deterministically (tests/lib/stop_anywhere.py, the same for
the catalogue). A line is chosen by its first run in an uninterrupted request; a stop chosen at
a `try` line's NOP waits for the next line (see NOP below).

    python serve_stop_anywhere.py HOME FRONT STRIDE [KIND...]

HOME: an empty temporary home (the sessions are written here); FRONT: `rpc` (`stree serve`:
its request handler, stree.service.handlers.handle, as the server's main loop calls it) or
`mcp` (`stree serve --mcp`: its tool calls, stree.mcp.server.Job, as its main loop runs them);
STRIDE: every STRIDE-th line is tried; KIND: the requests (tools) tried (default: every read
request that runs under the budget). stdout: one JSON object, {"kinds": {kind: {"lines": tried,
"stopped": n}}, "files": the modules the tried lines are in, "wrong": [{"kind", "line", "stopped at",
"outcome", "problem"}]} (the first 20)."""

import dis
import gc
import json
import os
import shutil
import signal
import sys
import threading
from contextlib import contextmanager

home, front, stride = sys.argv[1], sys.argv[2], int(sys.argv[3])
only = sys.argv[4:]
os.environ["HOME"] = home
os.environ.pop("STREE_CACHE_DIR", None)
os.environ.pop("STREE_SERVE_KEEP", None)  # (every entry decoded stays kept: the count after a stop is exact)
os.chdir(home)

from builders import SessionBuilder, dumps  # noqa: E402  (tests/lib, on the path the test gives)
from clock import past_the_tick  # noqa: E402
from stree.core import budget  # noqa: E402
from stree.storage import index  # noqa: E402
from stree.storage.scan import STATS  # noqa: E402

WORD = "zebra"
d = os.path.join(home, ".pi", "agent", "sessions", "--home-dev-proj--")
os.makedirs(d)


def session(name, id, turns, branch=False):
    """A session of `turns` question-answer pairs (a label, a branch, a name)."""
    b = SessionBuilder(cwd="/home/dev/proj", id=id)
    fork = None
    for i in range(turns):
        b.user(f"{WORD} question {i} " + "filler words " * 20)
        b.assistant(f"answer {i} " + "more text here " * 20)
        if i % 10 == 5:
            b.tool_round("read", {"path": f"src/f{i}.py"}, f"contents of f{i}")
        if i == turns // 3:
            fork = b.leaf
    if branch and fork is not None:
        b.at(fork)
        b.user(f"{WORD} another way")
        b.assistant("the other answer")
        b.append("label", targetId=fork, label="fork")
        b.append("session_info", name="the served one")
    for entry in b.entries:
        if entry.get("message", {}).get("role") == "assistant":  # (a cost, as pi writes it)
            entry["message"]["usage"]["cost"] = {"input": 3e-05, "output": 7.5e-05, "cacheRead": 0, "cacheWrite": 0,
                                                 "total": 0.000105}
    return b.write(os.path.join(d, name))


served_path = str(session("served.jsonl", "0199aaaa-0000-7000-8000-000000000001", 80, branch=True))
session("other.jsonl", "0199aaaa-0000-7000-8000-000000000002", 5)
grown = [0]


def grow():
    """A user message appended to the served session, as pi appends it; then past its tick of
    the clock (the index can prove it current: the incremental path is the one taken)."""
    with open(served_path, "rb") as f:
        last = json.loads(f.read().splitlines()[-1])
    grown[0] += 1
    with open(served_path, "a", encoding="utf-8") as f:
        f.write(dumps({"type": "message", "id": f"a{grown[0]:07x}", "parentId": last["id"],
                       "timestamp": "2027-01-01T00:00:00.000Z",
                       "message": {"role": "user", "content": f"{WORD} again {grown[0]}",
                                   "timestamp": 1798761600000}}) + "\n")
    past_the_tick(served_path)


where = {"session": served_path, "cwd": home}
fresh_caches = [0]


@contextmanager
def afresh():
    """As a server started afresh: a cache directory of its own, empty (nothing the stopped
    server wrote is read), and nothing of the sessions this process loaded."""
    fresh_caches[0] += 1
    os.environ["STREE_CACHE_DIR"] = os.path.join(home, "fresh", str(fresh_caches[0]))
    loaded = dict(index._LOADED)
    index._LOADED.clear()
    try:
        yield
    finally:
        index._LOADED.clear()
        index._LOADED.update(loaded)
        del os.environ["STREE_CACHE_DIR"]
        shutil.rmtree(os.path.join(home, "fresh"), ignore_errors=True)


out_dir = os.path.join(home, "out")
os.makedirs(out_dir)

if front == "rpc":
    from stree.errors import Stopped
    from stree.service.handlers import INTERRUPTIBLE, handle
    from stree.service.protocol import encode, error_code, failure
    from stree.service.state import Served

    REQUESTS = {"get_state": {}, "get_messages": {}, "get_entries": {}, "get_tree": {}, "get_session_stats": {},
                "export_html": {"overwrite": True}, "list_sessions": {}, "log": {}, "show": {"revisions": ["@~2", "@"]},
                "rev_parse": {"revisions": ["@", "fork"]}, "context": {}, "grep": {"pattern": WORD}, "stats": {}}
    assert set(REQUESTS) == INTERRUPTIBLE, set(REQUESTS) ^ INTERRUPTIBLE
    OTHERS = ["get_entries", "get_state", "log"]

    def start():
        server = Served(served_path, **where)
        server.load()  # (as `stree serve` does before its first request)
        return server

    def request(server, kind, cancelled, output="server.html"):
        """The response (a dict) to a `kind` request, as the server's main loop makes it."""
        req = {"id": "1", "type": kind, **REQUESTS[kind]}
        if kind == "export_html":
            req["outputPath"] = os.path.join(out_dir, output)
        try:
            record = handle(server, req, lambda record: None, cancelled)
        except Stopped as e:  # (server.serve: a tick that fired as the request ended)
            record = failure("1", kind, str(e), error_code(e))
        finally:
            budget.settle()
        return record

    def close(server):
        server.close()

    def answer(server, kind, output="server.html"):
        record = request(server, kind, None, output)
        if kind == "export_html" and record.get("success"):
            with open(record["data"]["path"], "rb") as f:
                record = dict(record, data={"html": f.read().decode()})
        record = encode(record)  # (what the client reads)
        kept = server.answers.answer({"type": "get_state"}, served_path)  # (sent by the reader when current)
        return record, kept

    def stopped(record):
        return not record.get("success") and record.get("errorCode") == "cancelled"

    def answered(got):
        return b'"success":true' in got[0]

    def fresh_answer(kind):
        with afresh():
            server = start()
            try:
                record, _ = answer(server, kind, "fresh.html")
                request(server, "get_state", None)
                return record, server.answers.answer({"type": "get_state"}, served_path)
            finally:
                close(server)

    def matches(kind, got, fresh):
        (record, kept), (expected, state_line) = got, fresh
        if record != expected:
            return f"{kind} answered {record[:300]!r}; a fresh server: {expected[:300]!r}"
        if kept is not None and kept != state_line:
            return f"the kept get_state answer is {kept[:300]!r}; a fresh server's: {state_line[:300]!r}"
        return None

    def held(server):
        if server.io.main_depth:
            return "the server's io lock is held"
        if server._kept._lock.locked():
            return "the warm sessions' lock is held"
        return None
else:
    from stree.mcp.reads import READ_TOOLS
    from stree.mcp.server import Job
    from stree.mcp.tools import Workspace

    TOOLS = {t.name: t for t in READ_TOOLS}
    REQUESTS = {"list_sessions": {"all": True}, "log": {}, "tree": {}, "show": {"revisions": ["@~2", "@"]},
                "context": {}, "labels": {}, "grep": {"pattern": WORD}, "stats": {}}
    assert set(REQUESTS) == set(TOOLS), set(REQUESTS) ^ set(TOOLS)
    OTHERS = ["tree", "show", "log"]

    def start():
        return Workspace(False, **where)

    def request(server, kind, cancelled):
        job = Job(TOOLS[kind], server, dict(REQUESTS[kind]))
        if cancelled is not None:
            job.cancelled = cancelled
        job.run(None)
        return job

    def close(server):
        server._kept.close()

    def answer(server, kind):
        job = request(server, kind, None)
        return job.result[1] if job.error is None else f"{type(job.error).__name__}: {job.error}"

    def stopped(job):
        return isinstance(job.error, budget.Cancelled)

    def answered(got):
        return got.startswith("{")

    def fresh_answer(kind):
        with afresh():
            server = start()
            try:
                return answer(server, kind)
            finally:
                close(server)

    def matches(kind, got, fresh):
        if got != fresh:
            return f"{kind} answered {got[:300]!r}; a fresh server: {fresh[:300]!r}"
        return None

    def held(server):
        return "the warm sessions' lock is held" if server._kept._lock.locked() else None


def descriptors():
    """The files this process holds open, by name (a descriptor's number changes when a session
    is read again; a session's index file is held while its Session maps it, and let go when the
    index is written again: not counted)."""
    gc.collect()
    fds = "/proc/self/fd"
    out = []
    for fd in os.listdir(fds):
        try:
            target = os.readlink(os.path.join(fds, fd))
        except OSError:
            continue  # (the listing's own)
        if ".idx" not in target:
            out.append(os.path.basename(target))
    return sorted(out)


def strays():
    """Temporary files left under the home (an atomic write's, cut short and not removed)."""
    return sorted(os.path.relpath(os.path.join(dirpath, name), home) for dirpath, _, names in os.walk(home)
                  for name in names if name.endswith(".tmp"))


def stop_state():
    s = budget._state
    if s.shield or s.depth or s.cancelled is not None or s.deadline is not None:
        return f"the budget is left set: shield {s.shield}, depth {s.depth}"
    return None


# No tick comes at a NOP (a `try` line's): the interpreter acts on a signal at a call or a jump
# back, never there; and what a trace function raises at one escapes every handler of the frame
# (the NOP is in no range of its exception table), which no code could defend against.
NOP = dis.opmap["NOP"]
count = [0]
at = [None]  # the line event the stop is raised at (None: only counting)
event = [None]  # the request's cancellation Event
first = {}  # (file, line) -> the line event it first ran at
stop = [None]  # (file, line) where the last tick was raised at


def local(frame, evt, arg):
    if evt == "line":
        count[0] += 1
        if at[0] is None:
            first.setdefault((frame.f_code.co_filename, frame.f_lineno), count[0])
        elif count[0] >= at[0] and budget._state.cancelled is not None and frame.f_code.co_code[frame.f_lasti] != NOP:
            event[0].set()  # (the client's cancel, arrived here)
            stop[0] = (frame.f_code.co_filename, frame.f_lineno)
            budget._tick(signal.SIGALRM, frame)  # (a tick here; inside a finalizer it waits for the next line)
    return local


def calls(frame, evt, arg):
    return local if f"{os.sep}stree{os.sep}" in frame.f_code.co_filename else None


def attempt(server, kind, line_event):
    count[0] = 0
    at[0] = line_event
    event[0] = threading.Event()
    sys.settrace(calls)
    try:
        return request(server, kind, event[0])
    finally:
        sys.settrace(None)


root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(budget.__file__))))
server = start()
for kind in REQUESTS:  # (every request answered once: the warm state as a day of serving leaves it)
    assert answered(answer(server, kind)), (kind, answer(server, kind))  # (each compared below is an answer)
baseline = descriptors()
report = {"kinds": {}, "files": set(), "wrong": []}
for kind in only or REQUESTS:
    grow()
    first.clear()
    decoded = STATS["decoded"]
    attempt(server, kind, None)  # (counting: the lines it runs, the file grown since it last read it)
    warm = STATS["decoded"] - decoded  # (the entries it decodes: the appended one, what is not kept)
    chosen = sorted(set(first.values()))[::stride]
    shown = {n: f"{os.path.relpath(f, root)}:{line}" for (f, line), n in first.items()}
    stops = 0
    for n in chosen:
        report["files"].add(shown[n].split(":")[0])
        grow()
        outcome = "stopped" if stopped(attempt(server, kind, n)) else "finished"
        stops += outcome == "stopped"
        problem = stop_state() or held(server)
        decoded = STATS["decoded"]
        got = answer(server, kind)
        if problem is None and STATS["decoded"] - decoded > warm:
            problem = (f"{kind} decoded {STATS['decoded'] - decoded} entries after the stop, one not stopped "
                       f"{warm}: what the server kept warm was lost")
        if problem is None:
            problem = matches(kind, got, fresh_answer(kind))
        for other in [k for k in OTHERS if k != kind][:2]:
            if problem is None:
                problem = matches(other, answer(server, other), fresh_answer(other))
        if problem is None and strays():
            problem = f"temporary files left: {strays()}"
        if problem is None and descriptors() != baseline:
            problem = f"descriptors open: {descriptors()}, before: {baseline}"
        if problem is not None:
            at_line = f"{os.path.relpath(stop[0][0], root)}:{stop[0][1]}" if outcome == "stopped" else None
            report["wrong"].append({"kind": kind, "line": shown[n], "stopped at": at_line, "outcome": outcome,
                                    "problem": problem})
            close(server)  # (a server started afresh for the next attempts: each defect found once per line)
            server = start()
            for k in REQUESTS:
                answer(server, k)
            baseline = descriptors()
    report["kinds"][kind] = {"lines": len(chosen), "stopped": stops}
close(server)
report["files"] = sorted(report["files"])
report["wrong"] = report["wrong"][:20]
print(json.dumps(report))
