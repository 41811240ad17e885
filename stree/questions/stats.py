"""The stats question (its arguments and checks: table.py), as `stree stats` asks it too: tokens and
cost of a session in all and split (active path, abandoned, branches), of a path or range in
it, or of every session (all; from the catalogue, a shared one, or every file read), then by
model and by day. `sections` gives them as the command's tables are made of ((title, [(row
name, record)])); `stats`, the records alone (what --json prints, serve and MCP answer). The
same concept as commands/stats.py, one level down: that module draws these tables."""

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


def stats(place, session=None, revision=None, all=False, since=None, until=None):
    """The records of `stree stats --json`, section by section."""
    return [rec for _, items in sections(place, session, revision, all, since, until) for _, rec in items]


def sections(place, session=None, revision=None, all=False, since=None, until=None, shown=False):
    """[(title, [(row name, record)])]; `shown`: a progress bar while files are read (stderr,
    on a terminal)."""
    from ..core import usage_totals as usage

    since_ms = usage.parse_bound(since) if since else None
    until_ms = usage.parse_bound(until, end=True) if until else None
    if all:
        return _all(place, shown, usage, since_ms, until_ms)
    return _one(place, session, usage, revision, since_ms, until_ms)


def _one(place, name, usage, revision, since, until):
    import os

    session, tree = place.load(name)
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


def _all(place, shown, usage, since, until):
    from ..core.catalog_refresh import enabled
    from ..core.listing import session_paths
    from ..core.catalog_shared import across as shared_across, configured
    from ..output.progress import Progress

    url = None if place.no_cache else configured()  # a shared catalogue (--catalog): every session pushed there
    if url:
        across = shared_across(url, since, until)
    else:
        # the sessions `ls --all` lists: every project's, of every agent --agent selects
        found, listed = session_paths(place.cwd, place.agent_dir, place.session_dir, all_=True, agent=place.agent)[:2]
        across = None
        if enabled(place.no_cache):  # from the catalogue: only the files changed since are read
            from ..core.budget import shielded
            from ..core.stats_catalog import across as from_catalogue

            with shielded(), Progress("reading sessions", total=len(found), enabled=shown) as progress:
                # (serve's and MCP's deadline or cancellation waits: the catalogue is brought up to date whole)
                across = from_catalogue(found, listed, since, until, progress.advance)
        if across is None:  # (--no-cache, or no catalogue to be had)
            across = _read_all(shown, usage, [p for p, _, _ in found], since, until)
    sessions = sorted(across.sessions, key=lambda s: (-s[2].cost, -s[2].tokens, s[1]))
    rows = [(f"{str(sid)[:8]}  {title}",
             t.record("session", sid, path=path, name=name, cwd=cwd)) for sid, path, t, name, cwd, title in sessions]
    counted = f"{len(sessions)} session" + ("" if len(sessions) == 1 else "s")
    return ([("all sessions", [(counted, across.total.record("total", None))]), ("by session", rows)]
            + _model_day_sections(across.models, across.days))


def _read_all(shown, usage, found, since, until):
    """usage.Across of the session files `found`, each parsed (--no-cache)."""
    import os

    from ..core.loading import open_session
    from ..errors import StreeError
    from ..output.progress import Progress

    paths = [os.path.abspath(str(p)) for p in found]
    across = usage.Across(since, until)
    headers = {}
    with Progress("reading sessions", total=2 * len(paths), enabled=shown) as progress:
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
