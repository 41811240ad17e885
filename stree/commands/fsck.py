import click

from .options import output_options
from ..errors import NEGATIVE
from ..output.fields import describe
from ..core.integrity import KINDS, check
from ..format.terminal import inert

FSCK_FIELDS = {
    "line": "line number in the session file (null when the file has no line to point at)",
    "kind": "problem kind: " + ", ".join(KINDS),
    "id": "the entry id concerned, or null",
    "message": "the problem, in words",
}


@click.command("fsck", epilog=f"""\b
Examples:
  stree fsck                         check the newest session of this project
  stree -s broken.jsonl fsck --json | jq -r 'select(.kind=="cycle") | .id'
  for f in ~/.pi/agent/sessions/*/*.jsonl; do stree -s "$f" fsck >/dev/null || echo "$f"; done

\b
Exit status 0 when the file is clean, 1 when problems were found.
Problem kinds:
{describe(KINDS)}

\b
Fields for --json / --format:
{describe(FSCK_FIELDS)}""")
@output_options(FSCK_FIELDS)
@click.pass_obj
def command(env, json_mode, fmt, nul):
    """Check a session file: malformed lines, header, duplicate ids, missing parents,
    cycles, unreachable entries, dangling labels and firstKeptEntryId, timestamps."""
    path = env.session_path()
    problems, session = check(str(path), no_cache=env.no_cache)
    out = env.output(json_mode, fmt, nul, FSCK_FIELDS)
    for problem in problems:
        out.record(problem.record(), out.segments([("", str(problem))]))
    out.close()
    if problems:
        click.echo(inert(f"stree: {path}: {len(problems)} problem(s) found", oneline=True), err=True)
        return NEGATIVE
    click.echo(inert(f"stree: {path}: ok ({len(session.nodes)} entries)", oneline=True), err=True)
