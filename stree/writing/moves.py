"""Moving the leaf: what `stree checkout` plans, writes and says, shared by the click command
and the fast path (stree.fastwrite)."""

from ..errors import StreeError
from ..format.terminal import inert
from .append import append_entries

LIVE_PI_SECONDS = 120  # a message appended this recently: pi may still be running the session


def plan_checkout(tree, revision, exact):
    """The core.leaf.Checkout of REV; '-' is where the leaf was before the last move, exactly
    (as `git checkout -`)."""
    from ..core.leaf import Checkout

    if revision == "-":
        target, exact = previous_position(tree), True
    else:
        from ..core.revs import Resolver

        target = Resolver(tree).resolve(revision)
    return Checkout(tree, target, exact)


def previous_position(tree):
    from ..core.leaf import last_checkout

    move = last_checkout(tree)  # as git: the last checkout, not the commits since
    if move is None:
        raise StreeError("checkout -: the leaf has not moved yet; there is no previous position", code=3,
                         hint="'stree reflog' lists the leaf's moves")
    if move.old is None:
        raise StreeError("checkout -: the leaf was at the empty leaf before the last move, which "
                         "cannot be checked out", code=3)
    return move.old


def noop_line(label=None):
    """What a checkout of the current position says (it writes nothing)."""
    return "stree: already at this point; nothing written" + \
        (" (label it with 'stree label NAME REV')" if label else "")


def write_checkout(plan, tree, path, *, say, dry_run=False, **navigation):
    """Carry out `plan` with its hooks (core.navigate_tree.navigate), the entries appended under the lock;
    `say` tells warnings. Returns the core.navigate_tree.Navigation."""
    from ..core.navigate_tree import navigate

    return navigate(plan, tree, path, append=lambda make: append_entries(path, make, dry_run=dry_run, say=say),
                    warn=say, dry_run=dry_run, **navigation)


def moved_line(plan, summary_entry):
    """What a checkout that wrote says (stderr)."""
    moved = (summary_entry["id"] if summary_entry else plan.new_position) or "(empty leaf)"  # what @ names now
    return (inert(f"stree: now at {moved} (was {plan.old_leaf or '(empty leaf)'})", oneline=True)
            + (f", the summary stored under {plan.new_position or '(empty leaf)'}" if summary_entry else ""))


def live_pi_age(tree):
    """Seconds since the newest message entry was written (its timestamp), or None."""
    from datetime import datetime

    last = None
    for node in reversed(tree.nodes):
        if node.type == "message":
            last = node
            break
    if last is None or not isinstance(last.ts, str):
        return None
    try:
        written = datetime.fromisoformat(last.ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
    import time

    return time.time() - written


def live_pi_warning(tree, path):
    """pi keeps its leaf in memory and leaves no lock or pid file (1.6.0): a running pi's next
    append goes under its own leaf and undoes this checkout. The trace it does leave: a
    message appended moments ago (its timestamp and the file's mtime both recent). The
    warning to give after a checkout, or None."""
    import os
    import time

    age = live_pi_age(tree)
    if age is None:
        return None
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        return None
    if 0 <= age <= LIVE_PI_SECONDS and time.time() - mtime <= LIVE_PI_SECONDS:
        return (f"a message was appended to this session {age:.0f} s ago: if pi is running it, pi's next "
                "append undoes this checkout (pi keeps its leaf in memory); quit pi first, or move "
                "with /tree inside pi")
    return None


def editor_text(text, tty):
    """A re-submitted message's text as checkout prints it on stdout: inert on a terminal."""
    return inert(text) if tty else text
