import sys

import click

from .options import warn_user
from ..errors import CONFLICT, StreeError, UsageError
from ..output.modes import to_json
from ..writing.atomic import refuse_bundled
from ..writing.moves import editor_text, live_pi_warning, moved_line, noop_line, plan_checkout, write_checkout
from ..output.progress import Waiting
from .options import MODEL_FLAGS, model_options, resolve


@click.command("checkout", epilog="""\b
Examples:
  stree checkout @~4                 move the leaf four entries up
  stree checkout :/"Change of plan"  back to a user message: its text is printed to re-submit
  stree checkout start --summary notes.md --label csv-attempt
  stree checkout bug-found --summarize
  stree checkout bug-found --summarize --provider openai --model gpt-4o-mini
  stree checkout bug-found --summarize --provider extractive --label tried-csv
  stree checkout @~2 --dry-run       print the entries that would be appended
  stree checkout -                   back to where the leaf was before the last move
  stree checkout @{1}                where the leaf went one move before the last (stree reflog)

\b
A user or custom message moves the leaf to its parent and prints the message's text
on stdout (pi puts it in the editor); a root user message leaves an empty leaf; any
other entry becomes the leaf. --exact puts the leaf on the target itself.

\b
--summarize asks a model as `stree summarize` does (see its --help for how the
model is chosen: flags, STREE_PROVIDER/STREE_MODEL/STREE_BASE_URL, the config
file, the session's model). If it fails (HTTP error, timeout, refusal, empty
answer: exit 5) or is interrupted (Ctrl-C: exit 130), nothing is written.

\b
Hooks (skipped with --no-hooks), executables in $STREE_HOOKS_DIR or
<config dir>/stree/hooks: 'before-tree' gets the preparation as JSON on stdin
(targetId, oldLeafId, commonAncestorId, entriesToSummarize, userWantsSummary,
customInstructions, replaceInstructions, label) and may print {"cancel": true},
{"summary": {"summary": "...", "details": {...}, "usage": {...}}} (used instead of
--summarize), or overrides of customInstructions, replaceInstructions, label. 'tree' gets
{newLeafId, oldLeafId, summaryEntry, fromHook, appendedEntries} afterwards.
A failing, hanging (STREE_HOOK_TIMEOUT, default 30 s) or garbled before-tree
hook cancels the checkout: nothing is written. A hook or hooks dir owned by another
user or writable by group/others is refused. A hook's environment is PATH, HOME,
LANG/LANGUAGE/LC_*, TERM, TMPDIR, TZ, STREE_HOOK, STREE_SESSION_FILE and what the
config names in hook_env = [...]; nothing else (no token) unless STREE_HOOK_KEYS=1.""")
@click.argument("revision", metavar="REV")
@click.option("--exact", is_flag=True, help="Put the leaf on REV itself, whatever its type.")
@click.option("--summary", "summary_file", metavar="FILE|-",
              help="Attach this summary of the abandoned branch (a file, or - for stdin).")
@click.option("--summarize", is_flag=True, help="Summarize the abandoned branch with a model.")
@click.option("--instructions", metavar="TEXT", help="With --summarize: extra focus for the summary.")
@click.option("--replace-instructions", is_flag=True, help="With --instructions: replace pi's prompt.")
@model_options
@click.option("--label", metavar="NAME", help="Label the summary entry, or the target when there is none.")
@click.option("--dry-run", is_flag=True, help="Print the entries that would be appended; write nothing.")
@click.option("--no-hooks", is_flag=True, help="Do not run the before-tree and tree hooks.")
@click.pass_obj
def command(env, revision, exact, summary_file, summarize, instructions, replace_instructions, label,
            dry_run, no_hooks, **model_flags):
    """Move the leaf to REV the way pi's /tree does, and persist it by appending.

    Without a summary a context-free marker entry (custom, stree/checkout) records the
    move; with one, a branch_summary at the new position, as pi 1.6.0's branchWithSummary
    writes it (fromId: the leaf left; usage: the model's). Checking out the current
    position writes nothing.
    """
    if summary_file and summarize:
        raise UsageError("--summary and --summarize cannot be combined")
    given = [f"--{name.replace('_', '-')}" for name in MODEL_FLAGS if model_flags.get(name) is not None]
    if given and not summarize:
        raise UsageError(f"{', '.join(given)} only apply with --summarize")
    if label and label.strip():
        from ..core.revs import check_name

        check_name(label.strip())
    path = env.session_path()
    if not dry_run:
        refuse_bundled(path)
    session, tree = env.load()
    plan = plan_checkout(tree, revision, exact)
    if plan.noop:
        click.echo(noop_line(label), err=True)
        _print_text(plan.editor_text)
        return
    summary = _read_summary(summary_file) if summary_file else None

    def model_summary(instructions, replace_instructions):
        return _summarize(env, tree, plan.abandoned, instructions, replace_instructions, model_flags)

    done = write_checkout(plan, tree, path, say=warn_user, summary=summary,
                          summarize=model_summary if summarize else None, instructions=instructions,
                          replace_instructions=replace_instructions, label=label, run_hooks=not no_hooks,
                          dry_run=dry_run, note=lambda text: click.echo(f"stree: {text}", err=True))
    if done.cancelled:
        raise StreeError("checkout cancelled by the before-tree hook; nothing written", code=CONFLICT)
    if dry_run:
        for entry in done.written:
            click.echo(to_json(entry))
        click.echo("stree: dry run, nothing written", err=True)
    else:
        click.echo(moved_line(plan, done.summary_entry), err=True)
        warning = live_pi_warning(tree, path)
        if warning:
            warn_user(warning)
    _print_text(plan.editor_text)


def _summarize(env, tree, entries, instructions, replace_instructions, model_flags):
    """The model's summary of the abandoned entries: (text, details, usage). Raises (exit 5) when
    the model fails; Ctrl-C propagates. Either way nothing has been written yet."""
    from ..core.summary import summarize_branch

    options = resolve(env, tree, **model_flags)
    with Waiting(f"Summarizing {len(entries)} entries with {options.label}"):
        result = summarize_branch(tree, entries, custom_instructions=instructions,
                                  replace_instructions=replace_instructions, options=options)
    return (result["summary"], {"readFiles": result["readFiles"], "modifiedFiles": result["modifiedFiles"]},
            result["usage"])


def _read_summary(source):
    try:
        if source == "-":
            raw = sys.stdin.buffer.read()
        else:
            with open(source, "rb") as f:
                raw = f.read()
    except OSError as e:
        raise UsageError(f"--summary {source}: {e.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"--summary {source}: not UTF-8 text") from None
    if not text.strip():
        raise UsageError(f"--summary {source}: the summary is empty")
    return text


def _print_text(text):
    if text is None:
        return
    click.echo(editor_text(text, sys.stdout.isatty()))
