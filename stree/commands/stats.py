"""`stree stats`: the stats question's command, drawn as tables (stree.output.usage_tables). The
same concept one layer down, the sections themselves: stree.questions.stats."""

import click

from .adapter import Place, checked, parameters, question
from .options import output_options
from ..output.fields import describe
from ..questions.stats import STATS_FIELDS, sections

STATS = question("stats")


@click.command("stats", epilog=f"""\b
Examples:
  stree stats                        this session: in all, active path, abandoned, each branch
  stree stats @                      the active path root -> @
  stree stats main..@                the entries on @'s branch since it left main
  stree stats --all --since 2026-01-01   every session, by session, model and day
  stree stats --all --json | jq 'select(.group == "model")'

\b
Usage is read as pi 1.6.0 sums it: the `usage` of assistant messages (by provider and
response model), of `usage` entries (calls such as cache warming), and of tool results,
compactions and branch summaries that carry one ("Tools/summaries"). Entries a fork copied
from its parentSession (same ids) are shown on their own row ("inherited from parent"); the
model and day rows count them. With --all, each entry counts once: sessions joined by
parentSession links share the ids they copied, counted in the parent when it is listed,
else in the fork (a cycle of links: in the first by path). Days are local (TZ). --all answers
from the catalogue (`stree catalog`: only the session files changed since are read); with
--no-cache every file is read.
Fields for --json / --format:
{describe(STATS_FIELDS)}""")
@parameters(STATS)
@output_options(STATS_FIELDS)
@click.pass_obj
def command(env, revision, all_, since, until, json_mode, fmt, nul):
    """Show tokens and cost: of a session, a path or range in it (REV|RANGE), or every session (--all).

    Without REV: the session in all (less what a fork inherited from its parent, shown on its
    own row), then the whole tree split three ways: the active path (root -> the last entry),
    the abandoned entries off it, and each branch (a chain from a root or a branch point to
    the next one or a leaf); then by model and by day. With REV: the entries on the path
    root -> REV; with A..B or A...B, that range.
    """
    given = checked(STATS, {"revision": revision, "all_": all_, "since": since, "until": until})
    out = env.output(json_mode, fmt, nul, STATS_FIELDS)
    found = sections(Place(env), **given, shown=not out.machine)
    if out.machine:
        for _, items in found:
            for _, rec in items:
                out.record(rec)
    else:
        from ..output.usage_tables import table

        from ..output.modes import terminal_width

        for line in table(out, found, terminal_width() if out.tty else None):
            out.line(line)
    out.close()
