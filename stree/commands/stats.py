import click

from .options import output_options
from ..errors import UsageError
from ..output.fields import describe

STATS_FIELDS = {
    "group": "total, inherited, path, abandoned, branch, session, model or day",
    "key": "what the row counts: the session id or range (total), the parent session (inherited), "
           "the last entry (path, branch), provider/model, or YYYY-MM-DD (local time)",
    "input": "input tokens",
    "output": "output tokens",
    "cacheRead": "tokens read from the prompt cache",
    "cacheWrite": "tokens written to the prompt cache",
    "tokens": "input + output + cacheRead + cacheWrite",
    "cost": "cost in dollars, as pi recorded it (usage.cost.total)",
    "count": "entries that recorded usage",
    "entries": "entries in the group (total, path, abandoned, branch, session)",
    "path": "the session file (total, session)",
    "name": "the session's display name, or null (session)",
    "cwd": "the session's working directory (session)",
    "first": "the branch's first entry (branch)",
    "active": "true for the branches of the active path (branch)",
    "label": "the label on the branch's last entry, or null (branch)",
}


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
@click.argument("revision", required=False, metavar="[REV|RANGE]")
@click.option("-a", "--all", "all_", is_flag=True,
              help="Every session of every project, of the agents --agent selects, as ls --all lists them (no REV).")
@click.option("--since", metavar="DATE", help="Only usage recorded on or after DATE (YYYY-MM-DD or ISO time).")
@click.option("--until", metavar="DATE", help="Only usage recorded up to DATE (a date: the whole day).")
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
    from ..core import usage_totals as usage

    since_ms = usage.parse_bound(since, option="--since") if since else None
    until_ms = usage.parse_bound(until, end=True, option="--until") if until else None
    out = env.output(json_mode, fmt, nul, STATS_FIELDS)
    if all_:
        if revision:
            raise UsageError("--all sums every session; it takes no REV",
                             hint="'stree stats REV' for a path or range of one session")
        sections = _all(env, out, usage, since_ms, until_ms)
    else:
        sections = _one(env, usage, revision, since_ms, until_ms)
    if out.machine:
        for _, items in sections:
            for _, rec in items:
                out.record(rec)
    else:
        from ..output.usage_tables import table

        from ..output.modes import terminal_width

        for line in table(out, sections, terminal_width() if out.tty else None):
            out.line(line)
    out.close()


def _one(env, usage, revision, since, until):
    import os

    session, tree = env.load()
    path = os.path.abspath(str(session.path))
    sid = session.header.get("id")
    if revision:
        from ..core.revs import Resolver

        rows = {tree.row_of(n) for n in Resolver(tree).nodes_of(revision)}
        usages = [u for u in usage.entry_usages(tree, raw=session.raw)
                  if u.row in rows and usage.within(u, since, until)]
        t = usage.total(usages)
        t.entries = len(rows)
        kind = Resolver(tree).resolve_range(revision)[0]
        title = f"path root -> {revision}" if kind == "single" else f"range {revision}"
        sections = [(title, [("in all", t.record("total", revision, path=path))])]
    else:
        every = [u for u in usage.entry_usages(tree, raw=session.raw) if usage.within(u, since, until)]
        inherited_ids = usage.inherited_ids(session.header, session.path, tree.nodes.col("id"))
        own = [u for u in every if tree.id_of(u.row) not in inherited_ids]
        t = usage.total(own)
        copied = sum(1 for i in tree.nodes.col("id") if i in inherited_ids) if inherited_ids else 0
        t.entries = len(tree.nodes) - copied
        rows = [("session" + (" (its own)" if inherited_ids else ""), t.record("total", sid, path=path))]
        if inherited_ids:
            inherited = usage.total(u for u in every if tree.id_of(u.row) in inherited_ids)
            inherited.entries = copied
            parent = usage.parent_path(session.header, session.path)
            rows.append(("inherited from parent", inherited.record("inherited", parent)))
        path_t, abandoned, branches = usage.session_split(tree, every)
        rows.append(("active path", path_t.record("path", tree.leaf)))
        rows.append(("abandoned", abandoned.record("abandoned", None)))
        sections = [("session " + str(sid)[:8], rows)]
        labels = tree.labels
        branch_rows = []
        for first, tip, active, bt in branches:
            label = labels.get(tip)
            name = ("* " if active else "  ") + tip + (f" ({label})" if label else "") + \
                f", {bt.entries} {'entry' if bt.entries == 1 else 'entries'}"
            branch_rows.append((name, bt.record("branch", tip, first=first, active=active, label=label)))
        sections.append(("branches (* active)", branch_rows))
        usages = every  # (by model and day: every turn of the file, inherited ones too)
    sections += _by_model_and_day(usage, usages)
    return sections


def _by_model_and_day(usage, usages):
    models = usage.grouped(usages, lambda u: u.key)
    days = usage.grouped(usages, lambda u: usage.day_of(u.ms))
    return _model_day_sections(models, days)


def _model_day_sections(models, days):
    by_cost = sorted(models.items(), key=lambda kv: (-kv[1].cost, -kv[1].tokens, kv[0]))
    return [("by model", [(k, t.record("model", k)) for k, t in by_cost]),
            ("by day", [(k, t.record("day", k)) for k, t in sorted(days.items())])]


def _all(env, out, usage, since, until):
    from ..core.catalog_refresh import enabled
    from ..core.listing import session_paths
    from ..core.catalog_shared import across as shared_across, configured
    from ..output.progress import Progress

    url = None if env.no_cache else configured()  # a shared catalogue (--catalog): every session pushed there
    if url:
        across = shared_across(url, since, until)
    else:
        # the sessions `ls --all` lists: every project's, of every agent --agent selects
        found, listed = session_paths(env.cwd, env.agent_dir, env.session_dir, all_=True, agent=env.agent)[:2]
        across = None
        if enabled(env.no_cache):  # from the catalogue: only the files changed since are read
            from ..core.stats_catalog import across as from_catalogue

            with Progress("reading sessions", total=len(found), enabled=not out.machine) as progress:
                across = from_catalogue(found, listed, since, until, progress.advance)
        if across is None:  # (--no-cache, or no catalogue to be had)
            across = _read_all(out, usage, [p for p, _, _ in found], since, until)
    sessions = sorted(across.sessions, key=lambda s: (-s[2].cost, -s[2].tokens, s[1]))
    rows = [(f"{str(sid)[:8]}  {title}",
             t.record("session", sid, path=path, name=name, cwd=cwd)) for sid, path, t, name, cwd, title in sessions]
    return ([("all sessions", [(f"{len(sessions)} session" + ("" if len(sessions) == 1 else "s"), across.total.record("total", None))]),
             ("by session", rows)] + _model_day_sections(across.models, across.days))


def _read_all(out, usage, found, since, until):
    """usage.Across of the session files `found`, each parsed (--no-cache)."""
    import os

    from ..core.loading import open_session
    from ..errors import StreeError
    from ..output.progress import Progress

    paths = [os.path.abspath(str(p)) for p in found]
    across = usage.Across(since, until)
    headers = {}
    with Progress("reading sessions", total=2 * len(paths), enabled=not out.machine) as progress:
        for path in paths:  # first their headers: which are forks of which
            headers[path] = usage.header_of(path)
            progress.advance(1 if headers[path] is not None else 2)
        listed = {p for p, h in headers.items() if h is not None}  # (not a session: skipped, as ls does)
        links = usage.links_of(listed, headers.get)
        for family in usage.counting_order(links, listed):
            counted = set() if len(family) > 1 else None  # the ids counted in the family so far
            for path in family:
                try:
                    session, tree, _ = open_session(path, no_cache=True)  # (parsed: no index written per file)
                except StreeError:
                    progress.advance()
                    continue
                try:
                    across.add(session, tree, counted)
                finally:
                    session.close()
                progress.advance()
    return across
