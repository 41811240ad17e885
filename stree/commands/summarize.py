import re
import sys

import click

from ..errors import NEGATIVE, UsageError
from ..format.terminal import inert
from ..output.modes import to_json
from ..output.progress import Waiting
from ..core.revs import Resolver
from .options import model_options, resolve

LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@click.command("summarize", epilog="""\b
Examples:
  stree summarize --to bug-found                   what `checkout bug-found` would abandon
  stree summarize main..@ --provider extractive    exactly these entries, offline
  stree summarize --to X --prompt | some-llm | stree checkout X --summary -
  stree summarize --to X --model gpt-4o-mini --instructions "focus on the failing tests"
  stree summarize --to X --json | jq -r .modifiedFiles[]

\b
What is summarized:
  --to TARGET    the entries from @ back to (not including) the merge base of @ and TARGET,
                 as pi's /tree summarizes the branch it leaves (one of RANGE or --to is needed)
  A..B           the entries on B's path that are not on A's
  REV            the whole path root..REV

\b
The model (first that is set):
  1. --provider, --model, --base-url
  2. STREE_PROVIDER, STREE_MODEL, STREE_BASE_URL (also STREE_TIMEOUT, STREE_MAX_TIME)
  3. the config file: provider, model, base_url, timeout, max_time, context_window, stream,
     api_key_env, max_retries, retry_max_time, max_tokens_field, reasoning, thinking_level,
     and [openai]/[anthropic] tables for per-provider settings
  4. the session's current model, if it is an openai or anthropic model and its key is set
Keys: OPENAI_API_KEY, ANTHROPIC_API_KEY (never printed), sent only to api.openai.com /
api.anthropic.com over https; another server gets the variable named by api_key_env in
the config, or no key. Base URLs: OPENAI_BASE_URL (with /v1), ANTHROPIC_BASE_URL
(without). --provider extractive needs no model.

\b
As pi 1.6.0: thinking is left out, context edits among the entries apply, images
(4800 characters) and system messages count in the budget. A reasoning model (known
names, or reasoning = true) gets the session's thinking level as its reasoning effort.
The answer may use 4096 tokens (plus the thinking budget); one that calls a tool or
stops at that cap is an error (exit 5).

\b
Output: pi's preamble, the model's text, then <read-files>/<modified-files> blocks:
exactly what `checkout --summarize` stores. --json prints
{summary, readFiles, modifiedFiles, model, usage}; --prompt prints the request
(system prompt, a blank line, the user text; --json: {system, user, maxTokens,
reasoning, ...}).
An answer over 64 bytes per token asked for (256 KiB for 4096), a response over 16 times
that plus 1 MiB, or a request past max_time (default 600 s) exits 5: nothing is stored.""")
@click.argument("range_", required=False, metavar="[RANGE]")
@click.option("--to", "target", metavar="REV", help="Summarize what `checkout REV` would abandon.")
@model_options
@click.option("--instructions", metavar="TEXT", help='Add "Additional focus: TEXT" to pi\'s instructions.')
@click.option("--replace-instructions", is_flag=True, help="Use --instructions instead of pi's instructions.")
@click.option("--prompt", "prompt_only", is_flag=True, help="Print the request instead of sending it.")
@click.option("--json", "json_mode", is_flag=True, help="Print one JSON object.")
@click.pass_obj
def command(env, range_, target, provider, model, base_url, timeout, context_window, stream, instructions,
            replace_instructions, prompt_only, json_mode):
    """Print a branch summary of entries, the way pi's /tree writes one. Writes nothing.

    The conversation text, the token budget, the prompts and the file lists follow
    pi's branch summarizer exactly, so `--prompt` output can go to any other model.
    """
    from ..providers import Options
    from ..core.summary import build_request, prepare_branch_entries, session_thinking_level, summarize_branch, token_budget

    session, tree = env.load()
    entries, what = _entries(tree, range_, target)
    if not entries:
        click.echo(inert(f"stree: nothing to summarize: {what} holds no entries", oneline=True), err=True)
        return NEGATIVE
    if replace_instructions and not instructions:
        raise UsageError("--replace-instructions needs --instructions TEXT")

    if prompt_only:
        try:
            options = resolve(env, tree, provider, model, base_url, timeout, context_window, stream)
        except UsageError:  # no model needed to print a request; the window may still be given
            options = Options(model=model, context_window=context_window, thinking_level=session_thinking_level(tree))
        prepared = prepare_branch_entries(tree, entries, token_budget(options))
        request = build_request(prepared.conversation, instructions, replace_instructions, options)
        system, user = request.system, request.user
        if json_mode:
            click.echo(to_json({"system": system, "user": user, "maxTokens": request.max_tokens,
                                "reasoning": request.reasoning,
                                "readFiles": prepared.read_files, "modifiedFiles": prepared.modified_files,
                                "tokenBudget": token_budget(options), "totalTokens": prepared.total_tokens,
                                "entryIds": [_id(e) for e in entries]}))
        else:
            click.echo(_shown(f"{system}\n\n{user}"))
        return

    options = resolve(env, tree, provider, model, base_url, timeout, context_window, stream)
    with Waiting(f"Summarizing {len(entries)} entries with {options.label}", enabled=not json_mode):
        result = summarize_branch(tree, entries, custom_instructions=instructions,
                                  replace_instructions=replace_instructions, options=options)
    if json_mode:
        click.echo(to_json(result))
    else:
        click.echo(_shown(result["summary"]))


def _entries(tree, range_, target):
    """(entries oldest first, a description for messages)."""
    resolver = Resolver(tree)
    if range_ is not None and target is not None:
        raise UsageError("give either RANGE or --to TARGET, not both")
    if range_ is None and target is None:
        raise UsageError("nothing to summarize: give --to TARGET (what checkout TARGET would abandon) or a RANGE",
                         hint="stree summarize --to REV, or stree summarize A..B")
    if target is not None:
        from ..core.leaf import Checkout

        plan = Checkout(tree, resolver.resolve(target))  # the same entries checkout would leave behind
        return plan.abandoned, f"the branch from @ to its merge base with {target}"
    kind, *ids = resolver.resolve_range(range_)
    if kind == "symmetric":
        raise UsageError(f"{range_}: A...B spans two branches; summarize one side with A..B")
    if kind == "range":
        return tree.range(ids[0], ids[1]), range_
    return tree.path(ids[0]), f"the path to {range_}"


def _id(entry):
    return entry.get("id") if isinstance(entry, dict) else entry.id


def _shown(text):
    """Model and session text: made inert on a terminal, byte-exact into a pipe
    (but for lone surrogates, which UTF-8 cannot carry; pi drops them too)."""
    text = LONE_SURROGATE.sub("", text)
    return inert(text) if sys.stdout.isatty() else text

