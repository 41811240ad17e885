import click
from click.core import ParameterSource

from .adapter import Place, parameters, question
from .options import output_options
from ..output.fields import SESSION_FIELDS, describe
from ..output.dates import date_option, show as show_date
from ..output.modes import display_width, fit, terminal_width
from ..format.agents import PI
from ..format.terminal import inert
from ..output.progress import Progress
from ..core.store import shortest_prefixes
from ..questions.answers import listed

LIST = question("list_sessions")


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
@parameters(LIST)
@date_option
@output_options(SESSION_FIELDS)
@click.pass_obj
def command(env, all_, date_style, json_mode, fmt, nul):
    """List sessions, newest first (by last activity, as pi's session picker sorts them)."""
    def progress(total):
        return Progress("reading sessions", total=total, enabled=not (json_mode or fmt))

    infos, where = listed(Place(env), all_, progress)
    if not infos:
        click.echo(inert(f"stree: no sessions found in {where}", oneline=True), err=True)
    short = shortest_prefixes([info["id"] or "" for info in infos])
    out = env.output(json_mode, fmt, nul, SESSION_FIELDS)
    width = terminal_width() if out.tty and not out.machine else None
    # on a terminal, rows that would leave the titles too little drop what they can: the
    # default dates shorten (to the minute, then the day), then the dates and the entry counts go
    chosen = click.get_current_context().get_parameter_source("date_style") != ParameterSource.DEFAULT
    forms = [(date_style, True)]
    if width is not None:  # (a --date asked for is kept)
        forms += [(date_style, False)] if chosen else [("minutes", True), ("day", True), (None, True), (None, False)]
    for date_form, counts in forms:
        rows = [(info, short.get(info["id"] or "", "?"), _when(info["modified"], date_style, date_form))
                for info in infos]
        id_width = max((len(r[1]) for r in rows), default=8)
        when_width = max((len(r[2]) for r in rows), default=0)
        used = 2 + id_width + (2 + when_width if when_width else 0) + (2 + 13 if counts else 0) + 2
        if width is None or width - used >= TITLE_MIN:
            break
    for info, abbrev, when in rows:
        human = None
        if not out.machine:
            title = inert(info["name"] or info["firstMessage"], True)
            where = inert(info["cwd"] or "", True) if all_ else ""
            mark = "*" if info["current"] else " "
            kind = "" if info["agent"] == PI else \
                f"  [{info['agent']}{'' if info['state'] == 'live' else ', ' + info['state']}]"
            shown_when = f"{when.ljust(when_width)}  " if when_width else ""
            count = f"{info['entries']:>5} {'entry' if info['entries'] == 1 else 'entries':<7}  " if counts else ""
            head = f"{mark} {abbrev.ljust(id_width)}  {shown_when}{count}"
            if width is not None:  # one terminal line per session: cut the title and the cwd
                title, where = _fitted(title, where, width - display_width(head) - display_width(kind))
            human = (f"{out.style('accent', mark)} {out.style('id', abbrev.ljust(id_width))}  "
                     f"{out.style('muted', shown_when)}{count}{title}"
                     + (f"  {out.style('muted', where)}" if where else "") + (out.style("muted", kind) if kind else ""))
        out.record(info, human)
    out.close()




TITLE_MIN = 20  # columns a title keeps on a terminal before the dates shorten


def _when(value, style, form):
    """A session's last activity as --date shows it, or shorter on a narrow terminal: to the
    minute without the zone ('minutes'), the day alone ('day'), or not at all (None)."""
    if form is None:
        return ""
    if form in ("minutes", "day"):
        from ..output.dates import millis

        ms = millis(value)
        if ms is not None:
            from datetime import datetime

            try:
                return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M" if form == "minutes" else "%Y-%m-%d")
            except (OverflowError, OSError, ValueError):
                pass
    return show_date(value, style)


def _fitted(title, where, room):
    """(title, cwd) cut to `room` columns together: the title first, the cwd (--all) in what it
    leaves but no more than half, left out below 8 columns."""
    cut = lambda text, n: "".join(t for _, t in fit([("", text)], max(1, n)))  # noqa: E731
    if where:
        title_w, where_w = display_width(title), display_width(where)
        if title_w + 2 + where_w > room:
            keep = min(where_w, max(0, room - 2 - title_w), max(0, (room - 2) // 2))
            if keep < 8:
                where = ""
            else:
                where = where if where_w <= keep else cut(where, keep)
    room -= display_width(where) + 2 if where else 0
    if display_width(title) > room:
        title = cut(title, room)
    return title, where
