"""`stree replay`: re-ask a model at each turn and compare, or serve the recording. The same
concept one layer down, what it prints: stree.output.replay; the replay itself:
stree.core.replay_*."""

import json
import signal
import sys

import click

from ..errors import INTERRUPTED, NEGATIVE, MODEL, UsageError
from ..format.terminal import inert
from ..core.leaf import position
from ..core.replay_compare import DEFAULT_THRESHOLD
from ..core.revs import Resolver
from .options import resolve

EPILOG = """\b
Examples:
  stree replay --dry-run                            build the request of every assistant turn, send none
  stree replay --model gpt-5-mini --junit replay.xml    re-ask the model at every turn of the path to @
  stree replay @~6..@ --json | jq -r '[.entryId, .tools, .similarity] | @tsv'
  stree replay --model candidate -o replayed.jsonl  keep the new answers as siblings, in a new file
  stree replay --serve --idle-timeout 1 --report replay.json    serve the recording (here: 1 s idle)

\b
In CI (see examples/replay-ci.sh):
  stree replay --provider openai --model candidate --check --junit replay.xml
  cd scratch-checkout && stree -s ../session.jsonl replay --serve --drive 'pi --mode rpc' --report replay.json

\b
Teacher forcing (without --serve): for each assistant message on RANGE (default: the path
to @), the request pi would send at its parent goes to the model (--provider, --model,
--base-url, keys and config as `stree summarize`), and the new answer is compared with the
recorded one. A turn diverges when its tools differ, its stop reason differs, or its
similarity is below --threshold (default 0.5); --check exits 1 when any turn diverges.
--write keeps the new answers as siblings of the recorded ones in a fork of the path (-o);
--in-place appends them to the session and moves the leaf back where it was (pi too).

\b
Compared:
  tools        same when the tool calls have the same names in the same order and equal
               arguments (compared as JSON values); else differ
  stop         the stop reason (stop, length, toolUse)
  similarity   difflib's ratio (0..1) of the two texts after lower-casing and collapsing
               whitespace (two empty texts: 1)

\b
Cassette mode (--serve): a model server on 127.0.0.1 answers each request with the
RECORDED assistant message for that point of the session, matched on the structure of the
conversation so far: the user texts (whitespace collapsed; of a !command, the command), the
assistant messages' tool calls (names and call ids) and the tool results' call ids. System prompts, tool
definitions and the contents of tool results are not compared (they carry times and
paths). A request that matches no recorded turn is a divergence: it gets an HTTP 400 error
that the agent shows, and --report lists it with the nearest recorded turn and what
differs. --drive CMD starts the agent (pi's RPC mode) with a temporary agent dir whose
models.json points it at the server, sends it the recorded user messages (and !commands)
one by one, and
stops when the session is replayed, when it diverges, or when a turn takes longer than
--turn-timeout. THE AGENT RUNS THE RECORDED TOOL CALLS FOR REAL (bash commands, edits,
writes) in the directory it is started in: replay in a scratch checkout.

\b
Exit: 0 all turns agree; 1 a turn diverged (--check) or a request diverged (--serve);
5 model or agent failure; 130 interrupted (what is complete is written)."""


@click.command("replay", epilog=EPILOG)
@click.argument("range_", required=False, metavar="[RANGE]")
@click.option("--provider", type=click.Choice(["openai", "anthropic"]),
              help="The API of the model asked: OpenAI chat completions (any compatible server) or Anthropic.")
@click.option("--model", metavar="ID", help="The model asked (default: STREE_MODEL, the config, the session's model).")
@click.option("--base-url", metavar="URL",
              help="API base URL, e.g. http://localhost:11434/v1 (default: OPENAI_BASE_URL / ANTHROPIC_BASE_URL).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="Give up on a request when the server is silent this long (default 120).")
@click.option("--stream/--no-stream", default=None, help="Stream the answers (SSE; the default).")
@click.option("--max-tokens", type=click.IntRange(min=1), metavar="N",
              help="The model's output limit sent in each request (default 16384, pi's for an unknown model).")
@click.option("--retries", type=click.IntRange(min=0), metavar="N",
              help="Retry a failed request N times (default 3; 429 and 5xx answers, lost connections).")
@click.option("--system-prompt", "system_prompt", type=click.Path(dir_okay=False), metavar="FILE",
              help="The instructions to send (text file; default: the config's system_prompt, else none: "
                   "the session does not store pi's).")
@click.option("--tools", "tools_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Tool definitions to send, a JSON array (default: the config's tools, else pi's built-in).")
@click.option("--threshold", type=click.FloatRange(0, 1), default=DEFAULT_THRESHOLD, show_default=True,
              help="A turn whose text similarity is below this diverges.")
@click.option("--check", is_flag=True, help="Exit 1 when any turn diverges.")
@click.option("--junit", "junit_file", metavar="FILE", help="Write a JUnit XML report (one test case per turn).")
@click.option("--write", is_flag=True, help="Keep each new answer as a sibling of the recorded one, in a new "
                                            "session file (-o, default: next to the session).")
@click.option("-o", "--output", metavar="FILE", help="With --write: the new session file (a fork of the path).")
@click.option("--in-place", is_flag=True,
              help="Append the siblings to the session itself; its leaf stays where it was.")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Requests in flight at once.")
@click.option("--max-turns", type=click.IntRange(min=1), metavar="N", help="Replay at most the first N turns.")
@click.option("--max-cost", type=click.FloatRange(min=0), metavar="USD",
              help="Send no more requests once this much is spent (needs --price).")
@click.option("--price", metavar="IN,OUT", help="USD per million input and output tokens, for the cost column.")
@click.option("--dry-run", is_flag=True, help="Build every request and send nothing: print their count "
                                              "(--json: the requests).")
@click.option("--serve", is_flag=True, help="Answer an agent from the recording (cassette mode).")
@click.option("--drive", metavar="CMD", help="With --serve: run CMD (e.g. 'pi --mode rpc'; split as a shell would, "
                                              "not run by one) and feed it the recorded user messages over pi's "
                                              "RPC protocol.")
@click.option("--api", type=click.Choice(["openai", "anthropic"]), default="openai", show_default=True,
              help="With --drive: the API the agent is told to speak to the server.")
@click.option("--port", type=click.IntRange(0, 65535), default=0,
              help="With --serve: the port (default: any free one).")
@click.option("--report", "report_file", metavar="FILE", help="With --serve: write the run's report (JSON) to FILE.")
@click.option("--turn-timeout", type=click.FloatRange(min=0, min_open=True), default=600.0, metavar="SECONDS",
              show_default=True, help="With --drive: give up when the agent takes longer for one user message.")
@click.option("--idle-timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="With --serve and no --drive: stop after no request came for this long.")
@click.option("--keep-going", is_flag=True, help="With --drive: go on sending user messages after a divergence.")
@click.option("--session-out", metavar="FILE", help="With --drive: keep the session the agent wrote as FILE.")
@click.option("--json", "json_mode", is_flag=True, help="Print JSON Lines: one record per turn (--serve: the report).")
@click.pass_obj
def command(env, range_, provider, model, base_url, timeout, stream, max_tokens, retries, system_prompt,
            tools_file, threshold, check, junit_file, write, output, in_place, jobs, max_turns, max_cost, price,
            dry_run, serve, drive, api, port, report_file, turn_timeout, idle_timeout, keep_going, session_out,
            json_mode):
    """Re-ask a model at each assistant turn and compare with the recording, or (--serve)
    answer an agent from the recording so that it re-runs the session with no key.
    """
    session, tree = env.load()
    if serve:
        given = [n for n, v in (("--provider", provider), ("--model", model), ("--write", write), ("-o", output),
                                ("--in-place", in_place), ("--check", check), ("--junit", junit_file),
                                ("--dry-run", dry_run), ("--max-cost", max_cost), ("--max-turns", max_turns)) if v]
        if given:
            raise UsageError(f"{given[0]} is for teacher forcing, not --serve")
        return _serve(env, session, tree, _leaf(tree, range_), drive, api, port, report_file, turn_timeout,
                      idle_timeout, keep_going, session_out, json_mode)
    for name, value in (("--drive", drive), ("--report", report_file), ("--idle-timeout", idle_timeout),
                        ("--session-out", session_out), ("--keep-going", keep_going), ("--port", port)):
        if value:
            raise UsageError(f"{name} needs --serve")
    if in_place and (write or output):
        raise UsageError("--in-place appends to the session itself; it takes no --write or -o")
    write = write or bool(output)
    if dry_run and (write or in_place or junit_file or check):
        raise UsageError("--dry-run sends nothing: it takes no --write, --in-place, --junit or --check")
    price = _price(price)
    if max_cost is not None and price is None:
        raise UsageError("--max-cost needs --price IN,OUT (stree knows no model prices)",
                         hint="e.g. --price 0.15,0.60 for USD 0.15 / 0.60 per million input / output tokens")
    _writable(output, junit_file)
    leaf, only = _turns(tree, range_)
    request = _request_options(system_prompt, tools_file)
    if max_tokens:
        request["max_tokens"] = max_tokens
    if dry_run:
        return _dry_run(tree, leaf, only, max_turns, request, provider, model, base_url, json_mode)
    try:
        options = resolve(env, tree, provider, model, base_url, timeout, None, stream)
    except UsageError as e:
        if not str(e).startswith("no model to summarize"):
            raise
        raise UsageError("no model to replay with: none given and the session's model is not reachable",
                         hint="pass --provider openai|anthropic --model ID (keys: OPENAI_API_KEY / "
                              "ANTHROPIC_API_KEY), or set STREE_PROVIDER and STREE_MODEL") from None
    if options.provider not in ("openai", "anthropic"):
        raise UsageError(f"replay needs a model: --provider {options.provider} does not answer requests",
                         hint="pass --provider openai|anthropic --model ID")
    if retries is not None:
        options.max_retries = retries
    from ..core.replay_force import forcing_jobs

    jobs_list = forcing_jobs(tree, leaf, api=options.provider, only=only, max_turns=max_turns, model=options.model,
                             provider=options.provider, base_url=options.base_url, **request)
    if not jobs_list:
        raise UsageError(f"{range_ or '@'}: no assistant message to replay on this path",
                         hint="give a range or revision whose path holds model answers")
    return _force(env, session, tree, leaf, jobs_list, options, jobs, threshold, price, max_cost, check, junit_file, write,
           output, in_place, json_mode)


def _leaf(tree, rev):
    """The end of the replayed path: REV (default @)."""
    if rev is None:
        return position(tree)
    if ".." in rev:
        raise UsageError(f"{rev}: --serve replays a path: give one revision (its end), not a range")
    return Resolver(tree).resolve(rev)


def _turns(tree, range_):
    """(the path's end, the set of ids to replay or None for all of its turns)."""
    if range_ is None:
        return position(tree), None
    kind, *ids = Resolver(tree).resolve_range(range_)
    if kind == "symmetric":
        raise UsageError(f"{range_}: A...B spans two branches; replay one side with A..B")
    if kind == "range":
        return ids[1], {n.id for n in tree.range(ids[0], ids[1])}
    return ids[0], None


def _writable(output, junit_file):
    """Refuse, before any request is paid for, what could not be written at the end."""
    import os

    from ..errors import CONFLICT, StreeError

    if output and os.path.lexists(os.path.expanduser(output)):
        raise StreeError(f"{output}: already exists; nothing sent", code=CONFLICT,
                         hint="choose another path with -o, or remove it first")
    for path, option in ((output, "-o"), (junit_file, "--junit")):
        if path:
            directory = os.path.dirname(os.path.abspath(os.path.expanduser(path)))
            if not os.path.isdir(directory):
                raise UsageError(f"{option} {path}: no such directory {directory}")


def _price(text):
    if text is None:
        return None
    try:
        values = tuple(float(v) for v in text.split(","))
        if len(values) != 2 or not all(0 <= v < float("inf") for v in values):
            raise ValueError
    except ValueError:
        raise UsageError(f"--price {text!r}: give IN,OUT in USD per million tokens, e.g. 0.15,0.60") from None
    return values


def _request_options(system_prompt, tools_file):
    """The system prompt and tools of the requests (files, else the config: as context --as)."""
    from ..core.request.inputs import request_inputs

    text, tools = request_inputs(system_prompt, tools_file)
    return {"system_prompt": text, "tools": tools}


def _dry_run(tree, leaf, only, max_turns, request, provider, model, base_url, json_mode):
    from ..core.replay_force import forcing_jobs
    from ..output.modes import to_json

    api = provider if provider in ("openai", "anthropic") else "openai"
    jobs_list = forcing_jobs(tree, leaf, api=api, only=only, max_turns=max_turns, model=model, provider=provider,
                             base_url=base_url, **request)
    if json_mode:
        for job in jobs_list:
            click.echo(to_json({"turn": job.turn, "entryId": job.entry_id, "parentId": job.parent_id,
                                "api": api, "request": job.body}))
        return
    messages = sum(len(job.body.get("messages") or []) for job in jobs_list)
    click.echo(f"{len(jobs_list)} requests built ({api}, {messages} messages in all); nothing sent")


def _force(env, session, tree, leaf, jobs_list, options, jobs, threshold, price, max_cost, check, junit_file, write,
           output, in_place, json_mode):
    from ..core.replay_client import send
    from ..core.replay_force import run
    from ..output import replay as show
    from ..output.modes import to_json
    from ..output.progress import Progress

    records, skipped, interrupted = [], [], False
    if not json_mode:
        click.echo(show.header())
    progress = Progress(f"replaying {len(jobs_list)} turns with {options.label}", total=len(jobs_list),
                        enabled=not json_mode)
    try:
        for record in run(jobs_list, lambda body: send(options, body), workers=jobs, threshold=threshold,
                          price=price, max_cost=max_cost, skipped=skipped):
            records.append(record)
            progress.close()
            click.echo(to_json(_public(record)) if json_mode else show.line(record))
            sys.stdout.flush()  # a row as soon as it is known, in a CI log too
            progress.update(len(records) + len(skipped))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        progress.close()
    written = _keep(env, session, tree, leaf, records, write, output, in_place)
    if written:
        _note(f"kept {len(written)} new answers as siblings in {written.path}")
    if junit_file:
        from ..writing.atomic import write_atomic

        suite = f"stree replay {session.path}"
        write_atomic(junit_file, show.junit_xml(records, suite, threshold, skipped), mode=0o644)
    if not json_mode:
        click.echo(show.summary(records, threshold, len(skipped), interrupted))
    if interrupted:
        return INTERRUPTED
    if any(r.get("error") for r in records):
        _note("some turns were not answered (the error is in their row)")
        return MODEL
    if check and any(r.get("diverged") for r in records):
        return NEGATIVE


def _public(record):
    return {k: v for k, v in record.items() if k != "message"}


class _Written(dict):
    path = None


def _keep(env, session, tree, leaf, records, write, output, in_place):
    """Write the answered turns' new messages as siblings (all of them, or none)."""
    answers = [(r["entryId"], r["message"]) for r in records if r.get("message")]
    if not answers or not (write or in_place):
        return None
    import os

    written = _Written()
    if in_place:
        from ..writing.replay_siblings import append_siblings

        written.update(append_siblings(str(session.path), answers, say=_note))
        written.path = str(session.path)
    else:
        from pathlib import Path

        from ..writing.atomic import NEW_FILE_MODE
        from ..writing.entries import session_file_name, session_header
        from ..writing.replay_siblings import fork_with_siblings
        from ..core.store import demo_path

        source = os.path.abspath(str(session.path))
        header = session_header(session.header.get("cwd"), source)
        target = Path(os.path.expanduser(output)) if output else Path(source).parent / session_file_name(header)
        is_demo = Path(source).resolve() == demo_path()
        if is_demo and not output:
            raise UsageError("the bundled demo cannot have a file written next to it", hint="give -o FILE")
        mode = NEW_FILE_MODE if is_demo else os.stat(source).st_mode & 0o777
        written.update(fork_with_siblings(session, tree, leaf, header, answers, target, mode))
        written.path = os.path.abspath(str(target))
    for record in records:
        if record["entryId"] in written:
            record["newEntryId"] = written[record["entryId"]]
    return written


def _serve(env, session, tree, leaf, drive, api, port, report_file, turn_timeout, idle_timeout, keep_going,
           session_out, json_mode):
    import os
    import shlex
    import threading

    from ..service.replay_serve import CassetteRun

    if (keep_going or session_out) and not drive:
        raise UsageError("--keep-going and --session-out need --drive CMD")
    argv = None
    if drive is not None:
        try:
            argv = shlex.split(drive)
        except ValueError as e:
            raise UsageError(f"--drive: {e}") from None
        if not argv:
            raise UsageError("--drive needs a command, e.g. --drive 'pi --mode rpc'")
    run = CassetteRun(tree, leaf, api=api, port=port, session_path=str(session.path))
    if not run.turns:
        raise UsageError(f"{session.path}: the path to {leaf or '@'} holds no assistant message to serve",
                         hint="give the revision of a path that has model answers")
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set() if argv is None else _raise_interrupt())
    try:
        run.start()
    except OSError as e:
        raise UsageError(f"cannot listen on 127.0.0.1:{port}: {e.strerror}") from None
    try:
        if argv is None:
            click.echo(run.url)  # the first line, for scripts: where to point the agent
            sys.stdout.flush()
            _note(f"serving {len(run.turns)} recorded turns of {session.path} at {run.url} "
                  f"(OpenAI: {run.url}/v1, Anthropic: {run.url}); Ctrl-C stops")
            run.wait(idle_timeout, stop)
        else:
            _note(f"serving {len(run.turns)} recorded turns at {run.url}; driving {drive!r} through "
                  f"{len(run.prompts)} user messages (the agent runs the recorded tool calls for real)")
            cwd = env.cwd or os.getcwd()
            recorded_cwd = session.header.get("cwd") if isinstance(session.header, dict) else None
            named = run.calls_naming(recorded_cwd) if isinstance(recorded_cwd, str) else []
            if named and os.path.realpath(cwd) != os.path.realpath(recorded_cwd):
                _note(f"warning: {len(named)} recorded tool call(s) name {recorded_cwd} by absolute path "
                      f"(first: {named[0][1]} in {named[0][0]}): replayed, they act there, not in {cwd}")
            run.drive(argv, cwd, turn_timeout, keep_going,
                      progress=lambda n, total, text: _note(f"user message {n}/{total}: {_short(text)}"))
    except KeyboardInterrupt:
        run.interrupted = True
    finally:
        signal.signal(signal.SIGTERM, previous)
        try:
            run.finish(session_out)
        except KeyboardInterrupt:
            run.interrupted = True
    report = run.report()
    if report_file:
        from ..writing.atomic import write_atomic

        write_atomic(report_file, (json.dumps(report, indent=2, ensure_ascii=False) + "\n").encode("utf-8"),
                     mode=0o644)
    _print_report(report, json_mode)
    if run.interrupted:
        return INTERRUPTED
    if run.failure and not run.server.divergences:
        click.echo(inert(f"stree: error: {run.failure}", oneline=True), err=True)
        return MODEL
    if run.diverged():
        return NEGATIVE


def _raise_interrupt():
    raise KeyboardInterrupt


def _note(text):
    click.echo(inert(f"stree: {text}", oneline=True), err=True)


def _short(text, width=60):
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 3] + "..."


def _print_report(report, json_mode):
    from ..service.replay_serve import report_lines

    if json_mode:
        click.echo(json.dumps(report, ensure_ascii=False))
        return
    click.echo("\n".join(inert(line, oneline=True) for line in report_lines(report)))
