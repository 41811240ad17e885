import click

from .adapter import answer, parameters, question
from .options import output_options
from ..errors import NotFound
from ..output.fields import REV_FIELDS, describe
from ..output.reads import rev_line

REV_PARSE = question("rev_parse")


@click.command("rev-parse", epilog=f"""\b
Examples:
  stree rev-parse @                  the leaf's id
  stree rev-parse --short bug-found  the shortest unique prefix of a labelled entry
  stree rev-parse main..@            @'s id, then ^ and main's id (as git prints ranges)
  id=$(stree rev-parse --verify -q ':/flaky test') || echo "no such entry"

\b
Fields for --json / --format:
{describe(REV_FIELDS)}""")
@parameters(REV_PARSE)
@click.option("--short", is_flag=True, help="Print the shortest unique id prefix (4+ chars).")
@click.option("-q", "--quiet", is_flag=True, help="With --verify: no error message, only the exit code.")
@output_options(REV_FIELDS)
@click.pass_obj
def command(env, revisions, verify, short, quiet, json_mode, fmt, nul):
    """Resolve revisions (default @) to full entry ids, one per line.

    A range A..B prints B then ^A; A...B prints A, B and ^ before their merge base.
    """
    records = answer(REV_PARSE, env, warn=not quiet, revisions=revisions, verify=verify)
    out = env.output(json_mode, fmt, nul, REV_FIELDS)
    try:
        for rec in records:
            out.record(rec, None if out.machine else rev_line(rec, env.load()[1], short))
    except NotFound:
        if quiet:
            return 3
        raise
    out.close()
