import os

import click

from .options import output_options
from ..errors import StreeError
from ..output.fields import SESSION_FIELDS, describe
from ..output.dates import date_option, show as show_date
from ..output.modes import fit, terminal_width
from ..format.terminal import inert
from ..output.progress import Progress
from ..core.listing import session_paths, session_records
from ..core.store import shortest_prefixes


@click.command("ls", epilog=f"""\b
Examples:
  stree ls                           this project's sessions, newest first; * marks the one stree opens
  stree ls --date=relative           last activity as "3 hours ago" (also iso, unix, utc)
  stree ls --all --format '{{modified}}\\t{{cwd}}\\t{{name}}'
  stree -s "$(stree ls --format '{{path}}' | sed -n 2p)" log --graph   the second newest
  stree ls -z --format '{{path}}' | xargs -0 -n1 stree fsck -s

\b
Session ids are shown as their shortest unique prefix (8+ characters; pi's ids are
time-ordered, so their first characters often agree): each one works with -s.
Fields for --json / --format:
{describe(SESSION_FIELDS)}""")
@click.option("-a", "--all", "all_", is_flag=True, help="Sessions of every project, not only this directory's.")
@date_option
@output_options(SESSION_FIELDS)
@click.pass_obj
def command(env, all_, date_style, json_mode, fmt, nul):
    """List sessions, newest first (by last activity, as pi's session picker sorts them)."""
    paths, listed, where = session_paths(env.cwd, env.agent_dir, env.session_dir, all_, env.agent)
    try:  # the session a bare `stree log` opens here
        current = os.path.abspath(str(env.session_path()))
    except (StreeError, OSError):
        current = None
    with Progress("reading sessions", total=len(paths), enabled=not (json_mode or fmt)) as progress:
        infos = session_records(paths, listed, current, progress.advance, env.no_cache, everything=all_)
    if not infos:
        click.echo(inert(f"stree: no sessions found in {where}", oneline=True), err=True)
    short = shortest_prefixes([info["id"] or "" for info in infos])
    out = env.output(json_mode, fmt, nul, SESSION_FIELDS)
    rows = []
    for info in infos:
        rows.append((info, short.get(info["id"] or "", "?"), show_date(info["modified"], date_style)))
    id_width = max((len(r[1]) for r in rows), default=8)
    when_width = max((len(r[2]) for r in rows), default=0)
    width = terminal_width() if out.tty else None
    for info, abbrev, when in rows:
        human = None
        if not out.machine:
            title = inert(info["name"] or info["firstMessage"], True)
            where = inert(info["cwd"] or "", True) if all_ else ""
            mark = "*" if info["current"] else " "
            kind = "" if info["agent"] == "pi" else \
                f"  [{info['agent']}{'' if info['state'] == 'live' else ', ' + info['state']}]"
            head = f"{mark} {abbrev.ljust(id_width)}  {when.ljust(when_width)}  {info['entries']:>5} entries  "
            if width is not None:  # one terminal line per session: cut the title (and cwd)
                room = max(1, width - len(head) - (len(where) + 2 if where else 0) - len(kind))
                title = "".join(text for _, text in fit([("", title)], room))
            human = (f"{out.style('accent', mark)} {out.style('id', abbrev.ljust(id_width))}  "
                     f"{out.style('muted', when.ljust(when_width))}  {info['entries']:>5} entries  {title}"
                     + (f"  {out.style('muted', where)}" if where else "") + (out.style("muted", kind) if kind else ""))
        out.record(info, human)
    out.close()


