"""The plain write commands answered without click: `label [-f] NAME [REV]`, `label -d NAME|REV`
and `checkout [--exact] REV` (click's import is a third of a warm write).

Only those spellings (read by stree.argv), with the global options stree.fastread reads. Everything is checked
before anything is written, with the code the command runs: anything unusual (another option
or spelling, an error of any kind, a warning the command would give, a session with warnings
or one to migrate, a headerless or read-only file, checkout hooks, a message pi appended
moments ago, STREE_NO_FAST/STREE_DEBUG/STREE_NO_CACHE) returns None before a byte is written,
and click does the whole job. The write itself is the command's (stree.writing.label,
stree.writing.moves: the lock, the locked re-read, fsync); what it prints and its exit codes
are click's, which tests/cli/test_fastwrite.py compares this with. The read commands go on to
stree.fastread.
"""

import os
import sys

from . import fastread

WRITES = {  # command: the dests of the options answered here (their spellings: stree.argv's table)
    "label": {"delete", "force"},
    "checkout": {"exact"},
}
GRAMMAR = dict(fastread.GRAMMAR, **WRITES)  # what stree.entrypoint hands to run()


def run(argv, session_path):
    """The exit code of a command answered here or by stree.fastread, or None: click answers it.
    `session_path(got)` is the session file the options name, or None."""
    if any(os.environ.get(name) for name in fastread.ENV_OFF):
        return None
    from .argv import parse

    parsed = parse(argv, WRITES)
    if parsed is None or not (parsed[2] or "delete" in parsed[1]):  # (`label` alone lists: a read)
        return fastread.run(argv, session_path)
    command, got, operands = parsed
    if "delete" in got and (operands or "force" in got or got["delete"].startswith("-")):
        return None  # (-d takes nothing else: click says so)
    if _names_a_session(operands[-1] if operands else ""):
        return None
    ready = []

    def check():  # Ctrl-C: said by the one boundary (nothing written); anything else: click says it
        try:
            path = session_path(got)
            if path is None:
                return
            from pathlib import Path

            path = str(Path(path))  # as click's path names it (in messages)
            found = _check(path) and (_label if command == "label" else _checkout)(path, got, operands)
            if found:
                ready.append(found)
        except Exception:  # an error, a warning, anything unusual
            pass
    code = fastread.guarded(check)
    if code is not None:
        return code
    if not ready:
        return None
    session, work = ready[0]
    code = fastread.guarded(work)
    if code is not None:
        return code
    fastread.finish(session)
    return 0


def _names_a_session(revision):
    """SESSION:ENTRY (stree.cli.session_revisions): click sorts it out."""
    from .core.grep_sessions import split_rev

    return split_rev(revision) is not None


def _check(path):
    """True when the file is one the command would write to without a word: a regular file,
    writable, not the bundled demo (and STREE_LOCK_TIMEOUT, if set, is a number of seconds)."""
    import stat

    from .errors import env_seconds
    from .writing.append import LOCK_TIMEOUT
    from .writing.atomic import refuse_bundled, refuse_read_only

    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode) or not os.access(path, os.W_OK):
        return False
    refuse_bundled(path)
    refuse_read_only(path, st)
    env_seconds("STREE_LOCK_TIMEOUT", LOCK_TIMEOUT)  # (a value it refuses: click says so)
    return True


def _usable(session):
    return not (session.malformed or session.headerless or session.needs_migration or not len(session.nodes))


def _label(path, got, operands):
    """(None, the write) of `label [-f] NAME [REV]` or `label -d NAME|REV`, or None. The changes
    are worked out once on the session as it is now (an error or a surprise: None); the write
    works them out again under the lock, as the command does."""
    from .core.loading import COMMAND, open_session
    from .writing.label import delete_changes, set_changes, write_labels

    if "delete" in got:
        changes = delete_changes(got["delete"])
    else:
        name, revision = operands[0], operands[1] if len(operands) > 1 else None
        changes = set_changes(name, revision, bool(got.get("force")))
    # (read as the write's first read reads it: stree.writing.append)
    session, tree, _ = open_session(path, previews=False, report=COMMAND)
    if not _usable(session):
        return None
    changes(tree, [])

    def work():
        for line in write_labels(path, changes, say=_warn):
            print(line, file=sys.stderr)
    return None, work


def _checkout(path, got, operands):
    """(session, the write) of `checkout [--exact] REV` when no hook is configured, or None."""
    from .core import hooks
    from .core.loading import COMMAND, open_session
    from .writing.moves import (LIVE_PI_SECONDS, editor_text, live_pi_age, moved_line, noop_line, plan_checkout,
                                write_checkout)

    directory = hooks.hooks_dir()
    if any(os.path.lexists(directory / name) for name in (hooks.BEFORE_TREE, hooks.TREE)):
        return None
    session, tree, _ = open_session(path, defer=True, freeze=True, report=COMMAND)  # (as stree.cli's Env.load)
    if not _usable(session):
        return None
    plan = plan_checkout(tree, operands[0], bool(got.get("exact")))
    text = plan.editor_text
    tty = sys.stdout.isatty()
    if text is not None:
        if not tty and "\x1b" in text:
            return None  # (click.echo takes escape sequences out of what goes into a pipe)
        text = editor_text(text, tty)
        text.encode(sys.stdout.encoding or "utf-8")  # (what cannot be printed: click says it)
    age = live_pi_age(tree)
    if not plan.noop and age is not None and age <= LIVE_PI_SECONDS:
        return None  # (the command warns that pi may be running the session)

    def work():
        if plan.noop:
            print(noop_line(), file=sys.stderr)
        else:
            done = write_checkout(plan, tree, path, say=_warn, note=_note)
            if done.cancelled:  # (a hook that came meanwhile)
                from .errors import CONFLICT, StreeError

                raise StreeError("checkout cancelled by the before-tree hook; nothing written", code=CONFLICT)
            print(moved_line(plan, done.summary_entry), file=sys.stderr)
            # (no live_pi_warning: the message's age, over LIVE_PI_SECONDS above, only grew)
        if text is not None:
            print(text)
        sys.stdout.flush()
    return session, work


def _warn(message):
    """As stree.commands.options.warn_user says it."""
    from .format.terminal import inert

    print(f"stree: warning: {inert(message)}", file=sys.stderr)


def _note(text):
    print(f"stree: {text}", file=sys.stderr)
