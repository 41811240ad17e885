"""navigate_tree and abort_branch_summary (pi PR #1762): a move of the leaf as pi's /tree makes
it, through the same core as `stree checkout` (core.navigate_tree: hooks, summary, append). The same concept at two depths: this module
is the request, stree.core.navigate_tree the navigation it runs.

With `summarize`, the model is asked on a worker thread, so the server goes on reading
requests: abort_branch_summary answers the navigate_tree at once with {cancelled, aborted}
and nothing is written (the write is checked under the file lock: an abort that comes after
the entries were committed is too late and changes nothing)."""

import threading

from .protocol import UNSET, RequestError, error_code, failure, param, success


class Aborted(Exception):
    pass


class Job:
    """A navigate_tree whose summary is under way: answered exactly once."""

    def __init__(self, request, reply, lock):
        self.request = request
        self.reply = reply  # writes a response record
        self.lock = lock  # the session file's write lock, held until the job ends
        self.path = None  # the session file it moves (the served one when it started)
        self.state = "running"  # -> aborted | committed -> done
        self.guard = threading.Lock()
        self.thread = None

    def answer(self, record):
        with self.guard:
            if self.state == "aborted":
                return  # answered by the abort
            self.state = "done"
        self.reply(record)

    def commit(self):
        """Called under the file lock right before the entries are written."""
        with self.guard:
            if self.state == "aborted":
                raise Aborted()
            self.state = "committed"

    def abort(self):
        """True when the job was stopped before it wrote anything (its answer is sent now)."""
        with self.guard:
            if self.state != "running":
                return False
            self.state = "aborted"
        self.lock.release()  # the file may be written again at once: this job writes nothing now
        self.reply(success(self.request.get("id", UNSET), "navigate_tree", {"cancelled": True, "aborted": True}))
        return True

    def release(self):
        with self.guard:
            aborted = self.state == "aborted"
        if not aborted:
            self.lock.release()


def navigate_tree(served, request, reply):
    """Returns the data, or None when the answer comes later (a summary on a worker thread)."""
    from ..core.leaf import Checkout

    target = param(request, "targetId", str, required=True)
    summarize = param(request, "summarize", bool, default=False)
    instructions = param(request, "customInstructions", str)
    replace = param(request, "replaceInstructions", bool, default=False)
    label = (param(request, "label", str) or "").strip() or None  # the PR: whitespace is no label
    session, tree = served.load()
    if tree.get(target) is None:
        raise RequestError(f"Entry {target} not found", "not_found")
    plan = Checkout(tree, target)
    if plan.target == plan.old_leaf:  # pi: navigating to the leaf itself does nothing
        return {"cancelled": False}
    if plan.noop:  # a user message just below the leaf: nothing moves, its text is for the editor
        return _data(plan, None)
    lock = served.claim()
    job = Job(request, reply, lock)
    job.path = served.path
    if not summarize:
        try:
            return _data(plan, _run(served, job, plan, tree, None, instructions, replace, label))
        finally:
            job.release()
    try:
        model = _model(served, tree, plan)  # (here: it reads the session; the worker reads nothing)
    except BaseException:
        job.release()
        raise
    served.summary = job
    job.thread = threading.Thread(target=_work, args=(served, job, plan, model, instructions, replace, label),
                                  name="stree-summary", daemon=True)
    job.thread.start()
    return None


def _work(served, job, plan, model, instructions, replace, label):
    command = "navigate_tree"
    id = job.request.get("id", UNSET)
    try:
        result = _run(served, job, plan, None, model, instructions, replace, label)
        job.answer(success(id, command, _data(plan, result)))
    except Aborted:
        pass
    except BaseException as e:  # the answer is an error response; the server goes on
        job.answer(failure(id, command, str(e) or e.__class__.__name__, error_code(e), getattr(e, "hint", None)))
    finally:
        if served.summary is job:
            served.summary = None
        job.release()


def _run(served, job, plan, tree, summarize, instructions, replace, label):
    from ..core.navigate_tree import navigate
    from ..writing.append import append_entries

    def append(make):
        def checked(session, current, new):
            entries = make(session, current, new)
            job.commit()
            return entries

        with served.io:  # (the append closes the file's other descriptors: no read may be under way)
            return append_entries(job.path, checked, say=served.warn)

    return navigate(plan, tree, job.path, append=append, warn=served.warn, summarize=summarize,
                    instructions=instructions, replace_instructions=replace, label=label)


def _model(served, tree, plan):
    """summarize(instructions, replace) for core.navigate_tree: the model `stree serve` was started with
    (its --provider/--model/... flags, STREE_*, the config, the session's model)."""
    from ..core.summary import session_thinking_level, summarize_branch
    from ..providers import resolve_options

    flags = dict(served.model_flags)
    session_model = tree.context_model(tree.leaf) if tree.leaf else None
    options = resolve_options(flags, session_model, session_thinking=session_thinking_level(tree))

    def summarize(instructions, replace):
        result = summarize_branch(tree, plan.abandoned, custom_instructions=instructions,
                                  replace_instructions=replace, options=options)
        return (result["summary"], {"readFiles": result["readFiles"], "modifiedFiles": result["modifiedFiles"]},
                result["usage"])

    return summarize


def _data(plan, result):
    """The PR's RpcNavigateTreeResult."""
    if result is not None and result.cancelled:
        return {"cancelled": True}
    data = {"cancelled": False}
    if plan.editor_text is not None:
        data["editorText"] = plan.editor_text
    if result is not None and result.summary_entry is not None:
        entry = result.summary_entry
        data["summaryEntry"] = {"id": entry["id"], "summary": entry["summary"], "fromExtension": result.from_hook}
    return data


def abort_branch_summary(served, request):
    """Stop the summary under way: its navigate_tree answers now; the model's late answer is
    dropped by the worker (left to end on its own; nothing waits for it, not even the end of input)."""
    job = served.summary
    if job is not None and job.abort():
        served.summary = None
    return UNSET
