"""One navigation of the tree with its hooks: what `stree checkout` and `stree serve`'s
navigate_tree share (pi's AgentSession.navigateTree: session_before_tree, the summary, the
move, session_tree). The same concept one layer up is stree.service.navigate_tree (the
request of `stree serve`); where the leaf is and the plan of a move: stree.core.leaf.

The core decides and runs the hooks; the caller brings what lies above it: how a model
summary is asked for (`summarize`) and how the entries are written (`append`, the writing
layer's append under the lock)."""

from ..errors import StreeError
from . import hooks


class Navigation:
    """What a navigation did: cancelled by the before-tree hook, or the entries written."""

    def __init__(self, cancelled=False, written=(), leaf=None, summary_entry=None, from_hook=False,
                 nothing_left=False):
        self.cancelled = cancelled
        self.written = list(written)
        self.leaf = leaf  # where the leaf is now (the new last entry when one was written)
        self.summary_entry = summary_entry
        self.from_hook = from_hook
        self.nothing_left = nothing_left  # a summary was asked for, but the move leaves nothing behind


def file_lists(tree, entries):
    """pi's details for a summary of `entries`: their file operations, context edits applied."""
    from .summary import prepare_branch_entries

    prepared = prepare_branch_entries(tree, entries)
    return {"readFiles": prepared.read_files, "modifiedFiles": prepared.modified_files}


def navigate(plan, tree, path, *, append, warn, summarize=None, summary=None, instructions=None,
             replace_instructions=False, label=None, run_hooks=True, dry_run=False, note=None):
    """Carry out `plan` (a navigate.Checkout) on the session file `path`.

    `summarize(instructions, replace_instructions)` -> (text, details, usage) asks a model
    (None: no model summary); `summary` is a summary text given by the user. The before-tree
    hook sees the preparation first and may cancel (nothing written: Navigation.cancelled),
    answer a summary (used instead of the model's) or override the instructions and the
    label. `append(make_entries)` writes under the lock and returns the entries written.
    The tree hook sees the result; its failure is only warned about (the move is done).
    `note(text)` tells the user that a summary was asked for but nothing is left behind."""
    wants_summary = bool(summary is not None or summarize is not None)
    hook_summary = None
    if run_hooks:
        text = hooks.run(hooks.BEFORE_TREE, plan.preparation(wants_summary, instructions, replace_instructions,
                                                             label), path, warn)
        answer = hooks.parse_answer(hooks.BEFORE_TREE, text) if text is not None else {}
        if answer.get("cancel"):
            return Navigation(cancelled=True)
        if answer.get("summary") and summarize is not None:
            hook_summary = answer["summary"]
        instructions = answer.get("customInstructions", instructions)
        replace_instructions = answer.get("replaceInstructions", replace_instructions)
        label = answer.get("label", label)

    details = usage = None
    nothing_left = False
    if hook_summary is not None:
        summary, details, usage = hook_summary["summary"], hook_summary.get("details"), hook_summary.get("usage")
    elif wants_summary and not plan.abandoned:
        nothing_left = True
        summary = None
        if note is not None:
            note("nothing is left behind by this move, so no summary is stored")
    elif summarize is not None:
        summary, details, usage = summarize(instructions, replace_instructions)
    elif summary is not None:
        details = file_lists(tree, plan.abandoned)

    from_hook = hook_summary is not None
    written = append(lambda s, t, new: plan.entries(t, new, summary, details, from_hook, label, usage))
    if dry_run:
        return Navigation(written=written, nothing_left=nothing_left)
    summary_entry = written[0] if summary else None
    leaf = written[-1]["id"] if (summary or len(written) > 1) else plan.new_leaf
    result = Navigation(written=written, leaf=leaf, summary_entry=summary_entry, from_hook=from_hook,
                        nothing_left=nothing_left)
    if run_hooks:
        payload = {"newLeafId": leaf, "oldLeafId": plan.old_leaf, "summaryEntry": summary_entry,
                   "fromHook": from_hook if summary_entry else None, "appendedEntries": written}
        try:
            hooks.run(hooks.TREE, payload, path, warn)
        except StreeError as e:
            warn(f"{e} (the checkout itself is done)")
    return result
