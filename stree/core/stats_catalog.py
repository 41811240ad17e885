"""`stats --all` from the catalogue: the same sums as reading every file (stree.core.usage_totals,
`--no-cache`), from the usage the catalogue keeps per entry and the ids of every entry
(stree.storage.catalog.usage), with only the files changed since read (stree.core.catalog_refresh).

What `stats --all` asks of a file is what the catalogue keeps: whether it is a session (its
header) and its parentSession link, its usages in file order (model key, time, values), its
entries' ids (read only for a family of several sessions: a single session counts them all),
its name, cwd and first message. A file the catalogue could not take (changed while another
process wrote the catalogue, or unreadable) is read as `--no-cache` reads it."""

import os

from . import catalog_refresh as catalog, usage_sums
from .usage_totals import Across, Totals, Usage, counting_order, header_of, links_of


def across(files, listed_dirs, since=None, until=None, progress=None):
    """A usage.Across of the sessions of `files` ((path, agent, state) each, as `ls --all` lists
    them), or None when there is no catalogue (the caller reads the files)."""
    from ..storage.catalog import Unavailable
    from ..storage.cachedir import debug

    try:
        cat, rows = catalog.sync([(p, kind, state, os.path.dirname(os.path.abspath(p))) for p, kind, state in files],
                                 prune_roots=listed_dirs, progress=progress, content=True)
    except Unavailable as e:
        debug(f"no catalogue: {e}")
        return None
    try:
        return _count(cat, rows, [os.path.abspath(p) for p, _, _ in files], since, until)
    except Unavailable as e:
        debug(f"no catalogue: {e}")
        return None
    finally:
        cat.close()


def _count(cat, rows, paths, since, until):
    stale = {os.path.abspath(p) for p, *_ in cat.stale}
    kept = {p: rows[p] for p in paths if p in rows and rows[p]["ok"] and p not in stale}
    headers = {}
    for path in paths:  # which are sessions, and which are forks of which
        row = kept.get(path)
        if row is None:
            headers[path] = header_of(path)
        else:
            headers[path] = None if row["headerless"] else {"parentSession": row["parent_session"]}
    listed = {p for p, h in headers.items() if h is not None}
    window = since is not None or until is not None
    sums = {} if window else cat.sums({row["gen"] for row in kept.values()})
    out = Across(since, until)
    for family in counting_order(links_of(listed, headers.get), listed):
        counted = set() if len(family) > 1 else None  # the ids counted in the family so far
        for path in family:
            row = kept.get(path)
            if row is None:
                _read(out, path, counted)
                continue
            if counted is None:
                found = usage_sums.decode(sums.get(row["gen"]))
                if found is not None and usage_sums.days_hold(found):  # (the sums the file's usages make)
                    _add_sums(out, row, found)
                    continue
            found = [Usage(*u) for u in cat.usage(row["gen"])]
            if counted is None:
                ids = range(row["entries"])  # (only their number)
            else:
                ids = cat.ids_of(row["gen"])
                if counted:
                    found = [u for u in found if ids[u.row] not in counted]
            out.count(row["id"], path, found, ids, counted, lambda row=row: _describe(row))
    return out


def _add_sums(out, row, kept):
    """Across.count of a whole session (no time window, no family) from its kept sums."""
    t = _totals(kept["t"])
    t.entries = row["entries"]
    out.sessions.append((row["id"], row["path"], t, *_describe(row)))
    for target, groups in ((out.models, kept["m"]), (out.days, kept["d"])):
        for key, vector in groups.items():
            target.setdefault(key, Totals()).merge(_totals(vector))
    out.total.merge(t)


def _describe(row):
    return row["name"], row["cwd"], row["name"] or row["first_message"] or "(no messages)"


def _read(out, path, counted):
    """A file the catalogue does not hold as it is: read as `--no-cache` reads it."""
    from ..errors import StreeError
    from .loading import open_session

    try:
        session, tree, _ = open_session(path, no_cache=True)  # (parsed: no index written per file)
    except StreeError:
        return
    try:
        out.add(session, tree, counted)
    finally:
        session.close()


def _totals(vector):
    t = Totals()
    t.input, t.output, t.cacheRead, t.cacheWrite, t.cost, t.count = vector[:6]
    return t
