import json
import signal
import sys

import click

from ..errors import INTERRUPTED, NEGATIVE, MODEL, UsageError
from ..format.terminal import inert
from ..core.revs import Resolver

EPILOG = """\b
Examples:
  stree replay --dry-run                          the request of every assistant turn, counted
  stree replay --provider openai --model gpt-5-mini --check --junit replay.xml
  stree replay main..@ --model qwen2.5-coder --base-url http://localhost:11434/v1 --json
  stree replay --model candidate --write -o replayed.jsonl    keep the new answers as siblings
  stree replay --serve --drive 'pi --mode rpc' --report replay.json    re-run the agent offline
  stree replay --serve --port 8765                serve the recording until Ctrl-C

\b
Teacher forcing (without --serve): for each assistant message on RANGE (default: the path
to @), the request pi would send at its parent goes to the model (--provider, --model,
--base-url, keys and config as `stree summarize`), and the new answer is compared with the
recorded one:
  tools        same when the tool calls have the same names in the same order and equal
               arguments (compared as JSON values); else differ
  stop         the stop reason (stop, length, toolUse)
  similarity   difflib's ratio (0..1) of the two texts after lower-casing and collapsing
               whitespace (two empty texts: 1)
A turn diverges when its tools differ, its stop reason differs, or its similarity is below
--threshold (default 0.5). --check exits 1 when any turn diverges.

\b
Cassette mode (--serve): a model server on 127.0.0.1 answers each request with the
RECORDED assistant message for that point of the session, matched on the structure of the
conversation so far: the user texts (whitespace collapsed), the assistant messages' tool
calls (names and call ids) and the tool results' call ids. System prompts, tool
definitions and the contents of tool results are not compared (they carry times and
paths). A request that matches no recorded turn is a divergence: it gets an HTTP 400 error
that the agent shows, and --report lists it with the nearest recorded turn and what
differs. --drive CMD starts the agent (pi's RPC mode) with a temporary agent dir whose
models.json points it at the server, sends it the recorded user messages one by one, and
stops when the session is replayed, when it diverges, or when a turn takes longer than
--turn-timeout. THE AGENT RUNS THE RECORDED TOOL CALLS FOR REAL (bash commands, edits,
writes) in the directory it is started in: replay in a scratch checkout.

\b
Exit: 0 all turns agree; 1 a turn diverged (--check) or a request diverged (--serve);
5 model or agent failure; 130 interrupted (what is complete is written)."""


@click.command("replay", epilog=EPILOG)
@click.argument("range_", required=False, metavar="[RANGE]")
@click.option("--serve", is_flag=True, help="Answer an agent from the recording (cassette mode).")
@click.option("--drive", metavar="CMD", help="With --serve: run CMD (e.g. 'pi --mode rpc') and feed it the recorded "
                                              "user messages over pi's RPC protocol.")
@click.option("--api", type=click.Choice(["openai", "anthropic"]), default="openai", show_default=True,
              help="With --drive: the API the agent is told to speak to the server.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="With --serve: the port (default: any free one).")
@click.option("--report", "report_file", metavar="FILE", help="With --serve: write the run's report (JSON) to FILE.")
@click.option("--turn-timeout", type=click.FloatRange(min=0, min_open=True), default=600.0, metavar="SECONDS",
              show_default=True, help="With --drive: give up when the agent takes longer for one user message.")
@click.option("--idle-timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="With --serve and no --drive: stop after no request came for this long.")
@click.option("--keep-going", is_flag=True, help="With --drive: go on sending user messages after a divergence.")
@click.option("--session-out", metavar="FILE", help="With --drive: keep the session the agent wrote as FILE.")
@click.option("--json", "json_mode", is_flag=True, help="Print JSON (one record per turn; --serve: the report).")
@click.pass_obj
def command(env, range_, serve, drive, api, port, report_file, turn_timeout, idle_timeout, keep_going, session_out,
            json_mode):
    """Re-ask a model at each assistant turn and compare with the recording, or (--serve)
    answer an agent from the recording so that it re-runs the session with no key.
    """
    session, tree = env.load()
    if serve:
        leaf = _leaf(tree, range_)
        return _serve(env, session, tree, leaf, drive, api, port, report_file, turn_timeout, idle_timeout,
                      keep_going, session_out, json_mode)
    for name, value in (("--drive", drive), ("--report", report_file), ("--idle-timeout", idle_timeout),
                        ("--session-out", session_out)):
        if value:
            raise UsageError(f"{name} needs --serve")
    raise UsageError("teacher forcing is not built yet")


def _leaf(tree, rev):
    """The end of the replayed path: REV (default @)."""
    if rev is None:
        return tree.leaf
    if ".." in rev:
        raise UsageError(f"{rev}: --serve replays a path: give one revision (its end), not a range")
    return Resolver(tree).resolve(rev)


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
        sys.exit(INTERRUPTED)
    if run.failure and not run.server.divergences:
        click.echo(inert(f"stree: error: {run.failure}", oneline=True), err=True)
        sys.exit(MODEL)
    if run.diverged():
        sys.exit(NEGATIVE)


def _raise_interrupt():
    raise KeyboardInterrupt


def _note(text):
    click.echo(inert(f"stree: {text}", oneline=True), err=True)


def _short(text, width=60):
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 3] + "..."


def _print_report(report, json_mode):
    if json_mode:
        click.echo(json.dumps(report, ensure_ascii=False))
        return
    drive = report.get("drive")
    head = f"{report['requests']} requests, {report['answered']} answered from the recording " \
           f"({report['recordedTurns']} recorded turns), {len(report['divergences'])} diverged"
    if drive:
        head = f"replayed {drive['sent']} of {drive['userMessages']} user messages: " + head
    lines = [head]
    for d in report["divergences"]:
        near = d.get("nearestTurn")
        where = f"nearest recorded turn {near['turn']} ({near['entryId']})" if near else "no recorded turn"
        lines.append(f"  request {d['request']} diverged; {where}: {'; '.join(d['differences'])}")
    if drive and report["notReached"] and not report["divergences"]:
        ids = ", ".join(t["entryId"] for t in report["notReached"][:5])
        lines.append(f"  {len(report['notReached'])} recorded turn(s) never asked for: {ids}")
    if report.get("agentError"):
        lines.append(f"  the agent stopped: {report['agentError']}")
    if drive and drive.get("sessionFile"):
        lines.append(f"  the agent's session: {drive['sessionFile']}")
    click.echo("\n".join(inert(line, oneline=True) for line in lines))
