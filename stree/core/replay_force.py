"""Teacher forcing: the request at the parent of each recorded assistant message, sent to a
model, and the new answer compared with the recorded one (`stree replay`).

Calling sequence: `jobs = forcing_jobs(tree, leaf, api=..., only=ids, max_turns=N, **request)`
builds every request (the prefix once, stree.core.request.requests_along); then
`for record in run(jobs, send, workers=N, price=..., max_cost=...)` yields one record per
turn, in path order, as soon as it and every turn before it are done. `send(body)` returns
the new pi assistant message or raises StreeError. Workers are daemon threads: an
interrupted run (Ctrl-C in the caller's loop) leaves no thread to wait for.
"""

import queue
import threading
from dataclasses import dataclass, field

from ..errors import StreeError
from .replay_compare import DEFAULT_THRESHOLD, compare


@dataclass
class Job:
    turn: int  # 1-based among the replayed turns
    entry_id: str
    parent_id: str
    recorded: dict = field(repr=False)  # the recorded assistant message
    body: dict = field(repr=False)  # the request at its parent


def forcing_jobs(tree, leaf, *, api, only=None, max_turns=None, **request):
    """The Jobs of the assistant messages on the path to `leaf` (those in `only`, a set of
    ids, when given), at most max_turns of them, oldest first. A message recorded as an
    error or an abort is left out: there is no answer to compare with."""
    from .request import requests_along

    jobs = []
    for entry_id, body in requests_along(tree, leaf, api=api, **request):
        if only is not None and entry_id not in only:
            continue
        if max_turns is not None and len(jobs) >= max_turns:
            break
        entry = tree.load(tree.get(entry_id))
        if (entry.get("message") or {}).get("stopReason") in ("error", "aborted"):
            continue
        jobs.append(Job(len(jobs) + 1, entry_id, entry.get("parentId"), entry.get("message") or {}, body))
    return jobs


def cost_of(usage, price):
    """USD for a usage at `price` (input, output: USD per million tokens; cache reads and
    writes count as input), or 0.0 without a price."""
    if not price or not isinstance(usage, dict):
        return 0.0
    read = usage.get("input", 0) + usage.get("cacheRead", 0) + usage.get("cacheWrite", 0)
    return round((read * price[0] + usage.get("output", 0) * price[1]) / 1e6, 6)


def record_of(job, new, error=None, threshold=DEFAULT_THRESHOLD, price=None):
    """The record of one replayed turn; `new` the new message or None (error)."""
    record = {"turn": job.turn, "entryId": job.entry_id, "parentId": job.parent_id,
              "recordedModel": job.recorded.get("model"), "newModel": None}
    if new is None:
        record.update({"tools": None, "recordedTools": None, "newTools": None, "recordedStop": job.recorded.get(
            "stopReason"), "newStop": None, "similarity": None, "diverged": True, "reasons": [error],
            "tokens": None, "cost": None, "error": error})
        return record
    record["newModel"] = new.get("model")
    record.update(compare(job.recorded, new, threshold))
    usage = new.get("usage") or {}
    record["tokens"] = {"input": usage.get("input", 0), "output": usage.get("output", 0),
                        "cacheRead": usage.get("cacheRead", 0), "cacheWrite": usage.get("cacheWrite", 0)}
    record["cost"] = cost_of(usage, price)
    record["error"] = None
    return record


class _Budget:
    def __init__(self, max_cost):
        self.max_cost = max_cost
        self.spent = 0.0
        self.lock = threading.Lock()

    def exhausted(self):
        with self.lock:
            return self.max_cost is not None and self.spent >= self.max_cost

    def spend(self, cost):
        with self.lock:
            self.spent += cost or 0.0


def run(jobs, send, workers=1, threshold=DEFAULT_THRESHOLD, price=None, max_cost=None, skipped=None):
    """Records of the jobs, in order. A job not sent because the budget was spent is left out
    and appended to `skipped` (a list) when given."""
    budget = _Budget(max_cost)
    todo = queue.Queue()
    for job in jobs:
        todo.put(job)
    done = queue.Queue()

    def work():
        while True:
            try:
                job = todo.get_nowait()
            except queue.Empty:
                return
            if budget.exhausted():
                done.put((job, None, None, True))
                continue
            try:
                new, error = send(job.body), None
            except StreeError as e:
                new, error = None, str(e)
            except Exception as e:  # noqa: BLE001 - one turn's failure is reported in its row
                new, error = None, f"{type(e).__name__}: {e}"
            if new is not None:
                budget.spend(cost_of(new.get("usage"), price))
            done.put((job, new, error, False))

    for _ in range(max(1, min(workers, len(jobs)))):
        threading.Thread(target=work, name="stree-replay", daemon=True).start()
    waiting, next_turn = {}, 1
    for _ in range(len(jobs)):
        while True:
            try:
                job, new, error, over = done.get(timeout=0.2)  # (a timeout: Ctrl-C reaches the caller)
                break
            except queue.Empty:
                continue
        waiting[job.turn] = (job, new, error, over)
        while next_turn in waiting:
            job, new, error, over = waiting.pop(next_turn)
            next_turn += 1
            if over:
                if skipped is not None:
                    skipped.append(job)
                continue
            record = record_of(job, new, error, threshold, price)
            record["message"] = new
            yield record
