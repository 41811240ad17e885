"""A stop (stree.core.budget's cancellation) raised at every line of stree's code that an update
of the catalogue runs, one attempt per line, each from the same catalogue; after each, the
update run again whole must leave the catalogue the uninterrupted update leaves.

The stop is raised by the budget's own timer handler (budget._tick), called from a trace
function at the chosen line instead of by the timer: what a tick arriving there would do,
deterministically. A line is chosen by its first run in an uninterrupted update.

    python stop_anywhere.py HOME MODE STRIDE

HOME: a temporary home whose pi sessions are already written (tests/reliability/
test_catalog_interrupt.py: test_a_stop_at_any_line_of_an_update...); MODE: `rows` (the
update `ls` makes) or `content` (grep's: entries too); STRIDE: every STRIDE-th line is tried.
stdout: one JSON object, {"lines": tried, "files": the modules they are in, "outcomes":
{"cancelled": n, "finished": n}, "wrong": [{"line": "file:n", "outcome", "sessions": ...}]}."""

import dis
import json
import os
import shutil
import signal
import sqlite3
import sys
import threading

home, mode, stride = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.environ["HOME"] = home
os.environ.pop("STREE_CACHE_DIR", None)

from clock import settle  # noqa: E402  (tests/lib, on the path the test gives)
from stree.core import budget  # noqa: E402
from stree.core.catalog_refresh import sync  # noqa: E402
from stree.core.listing import session_paths  # noqa: E402
from stree.storage import index  # noqa: E402
from stree.storage.catalog.common import ROW_BITS, db_path  # noqa: E402
from stree.storage.cachedir import cache_dir  # noqa: E402

paths, _, _ = session_paths("/", all_=True)
files = [(path, agent, state, os.path.dirname(path)) for path, agent, state in paths]


def update(content):
    catalog, _ = sync(files, content=content)
    catalog.close()


def dump():
    """The catalogue as grep and ls read it: each session's row and its entries' text."""
    db = sqlite3.connect(db_path())
    out = {}
    for path, ok, error, gen, rows, entries, messages, first, activity, models in db.execute(
            "SELECT path, ok, error, gen, rows, entries, messages, first_message, activity, models FROM sessions"):
        texts = sorted((rowid & ((1 << ROW_BITS) - 1), text) for rowid, text in db.execute(
            "SELECT rowid, text FROM texts WHERE rowid >> ? = ?", (ROW_BITS, gen)))
        out[os.path.basename(path)] = [ok, error, rows, entries, messages, first, activity, models, texts]
    db.close()
    return out


cache = cache_dir()
snapshot = cache + ".before"
shutil.rmtree(snapshot, ignore_errors=True)
shutil.copytree(cache, snapshot)


def restore():
    """The catalogue and the per-session indexes as they were before the update; nothing of
    the sessions kept in this process (a new command's start)."""
    shutil.rmtree(cache)
    shutil.copytree(snapshot, cache)
    index._LOADED.clear()
    settle(cache)


count = [0]
at = [None]  # the line event the stop is raised at (None: only counting)
first = {}  # (file, line) -> the line event it first ran at
NOP = dis.opmap["NOP"]


def local(frame, event, arg):
    if event == "line":
        count[0] += 1
        if at[0] is None:
            first.setdefault((frame.f_code.co_filename, frame.f_lineno), count[0])
        elif count[0] >= at[0] and budget._state.cancelled is not None \
                and frame.f_code.co_code[frame.f_lasti] != NOP:  # (a `try:` line: never a signal at its NOP)
            budget._tick(signal.SIGALRM, frame)  # (a tick here; inside a finalizer it waits for the next line)
    return local


def calls(frame, event, arg):
    return local if f"{os.sep}stree{os.sep}" in frame.f_code.co_filename else None


def attempt(line_event):
    restore()
    count[0] = 0
    at[0] = line_event
    cancelled = threading.Event()
    cancelled.set()
    with budget.request("an update", None, cancelled):
        sys.settrace(calls)
        try:
            update(mode == "content")
            return "finished"
        except budget.Cancelled:
            return "cancelled"
        finally:
            sys.settrace(None)


restore()
update(True)
expected = dump()
attempt(None)
chosen = sorted(set(first.values()))[::stride]
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(budget.__file__))))
where = {n: f"{os.path.relpath(f, root)}:{line}"
         for (f, line), n in first.items()}
outcomes = {"cancelled": 0, "finished": 0}
wrong = []
for n in chosen:
    outcome = attempt(n)
    outcomes[outcome] += 1
    update(True)  # (the next grep's update, whole)
    got = dump()
    if got != expected:
        wrong.append({"line": where[n], "outcome": outcome,
                      "sessions": {k: [expected.get(k, [None])[:3], got.get(k, [None])[:3]]
                                   for k in set(expected) | set(got) if expected.get(k) != got.get(k)}})
print(json.dumps({"lines": len(chosen), "files": sorted({where[n].split(":")[0] for n in chosen}),
                  "outcomes": outcomes, "wrong": wrong[:10]}))
