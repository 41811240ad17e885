"""Tokens and cost: the usage pi records (format.usage), summed over a session, its active
path, its branches, a range, or every session (by session, model and day). One concept at three
depths: stree.format.usage (one entry's usage), this module (the totals, pi's usage-totals.ts),
stree.output.usage_tables (the tables `stree stats` prints).

A fork's copied prefix is counted once. In one session's stats, the entries of a session
whose header's `parentSession` holds an entry with the same id are shown apart, as
inherited. Across sessions (`stats --all`), sessions joined by parentSession links are a
family and an entry id they share is one entry, counted in the first listed member holding
it, parents first (counting_order): never twice, never nowhere."""

import os
from datetime import datetime, timezone

from ..errors import StreeError, UsageError
from ..format.timestamp import local_day as day_of, ts_millis  # noqa: F401  (day_of: the commands')
from ..format.usage import FIELDS
from .entrytypes import may_have_usage, usage_of


COST_DIGITS = 15  # significant digits of a cost: a float sum's noise (0.1 + 0.2) is in the 17th


class Totals:
    """Summed usage: input, output, cacheRead, cacheWrite, cost; `count` = entries with usage."""

    __slots__ = ("input", "output", "cacheRead", "cacheWrite", "cost", "count", "entries")

    def __init__(self):
        self.input = self.output = self.cacheRead = self.cacheWrite = 0
        self.cost = 0.0
        self.count = 0
        self.entries = 0

    def add(self, values):
        i, o, r, w, c = values
        self.input += i
        self.output += o
        self.cacheRead += r
        self.cacheWrite += w
        self.cost += c
        self.count += 1

    def merge(self, other):
        for name in FIELDS + ("count", "entries"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def tokens(self):
        return self.input + self.output + self.cacheRead + self.cacheWrite

    def record(self, group, key=None, **extra):
        rec = {"group": group, "key": key}
        for name in FIELDS:
            rec[name] = getattr(self, name)
        rec["cost"] = float(f"{self.cost:.{COST_DIGITS}g}")  # (a sum of floats: 0.1 + 0.2 is 0.30000000000000004)
        rec["tokens"] = self.tokens
        rec["count"] = self.count
        rec["entries"] = self.entries
        rec.update(extra)
        return rec


class Usage:
    """One entry's usage: its row in the file, model key, day and values."""

    __slots__ = ("row", "key", "ms", "values")

    def __init__(self, row, key, ms, values):
        self.row = row
        self.key = key
        self.ms = ms
        self.values = values


def entry_usages(tree, skip_ids=frozenset(), raw=None):
    """The usage of every entry of the file (duplicates and unreachable entries included, as
    pi's getSessionStats counts them), in file order; entries whose id is in `skip_ids` left out.
    `raw` (node -> the line's bytes): lines that cannot hold a usage key are not decoded."""
    nodes = tree.nodes
    types = nodes.col("type") if hasattr(nodes, "col") else [n.type for n in nodes]
    roles = nodes.col("role") if hasattr(nodes, "col") else [n.role for n in nodes]
    out = []
    for row, (etype, role) in enumerate(zip(types, roles)):
        if not may_have_usage(etype, role):
            continue
        node = tree.node(row)
        if skip_ids and node.id in skip_ids:
            continue
        if raw is not None:
            line = raw(node)
            if b"usage" not in line and b"\\u" not in line:  # (a key may be written \u0075sage)
                continue
        found = usage_of(tree.load(node))
        if found is not None:
            out.append(Usage(row, found[0], ts_millis(node.ts), found[1]))
    return out


def parse_bound(text, end=False, option="--since"):
    """--since / --until: a date (YYYY-MM-DD, local; --until takes the whole day) or an ISO
    date and time. Epoch milliseconds."""
    value = text.strip()
    try:
        if len(value) == 10:
            day = datetime.strptime(value, "%Y-%m-%d")
            ms = int(day.timestamp() * 1000)
            return ms + 86400000 - 1 if end else ms
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"{option} {text!r}: not a date", hint="give YYYY-MM-DD or an ISO time "
                         "like 2026-01-31T14:00") from None
    if dt.tzinfo is None:
        dt = dt.astimezone()
    return int(dt.astimezone(timezone.utc).timestamp() * 1000)


def within(usage, since=None, until=None):
    if since is None and until is None:
        return True
    if usage.ms is None:
        return False
    return (since is None or usage.ms >= since) and (until is None or usage.ms <= until)


def grouped(usages, by):
    """{key: Totals} of usages grouped by `by(usage)`, keys in first-seen order."""
    out = {}
    for u in usages:
        k = by(u)
        t = out.get(k)
        if t is None:
            t = out[k] = Totals()
        t.add(u.values)
    return out


def total(usages):
    t = Totals()
    for u in usages:
        t.add(u.values)
    return t


# -- one session: the active path, its branches, abandoned entries -------------

def session_split(tree, usages):
    """{path, abandoned, branches}: the active path (root -> the last entry, pi's branch),
    the entries off it, and each branch (core.outline) with its totals."""
    leaf = tree.leaf
    on_path = set(tree.path_rows(leaf)) if leaf is not None else set()
    by_row = {u.row: u for u in usages}
    path, abandoned = Totals(), Totals()
    for u in usages:
        (path if u.row in on_path else abandoned).add(u.values)
    path.entries = len(on_path)
    abandoned.entries = len(tree.nodes) - len(on_path)
    from .outline import branches as outline, walk

    branches = []
    for branch in walk(outline(tree)):
        rows, active = branch.rows, branch.active
        t = Totals()
        for r in rows:
            u = by_row.get(r)
            if u is not None:
                t.add(u.values)
        t.entries = len(rows)
        branches.append((tree.id_of(rows[0]), tree.id_of(rows[-1]), active, t))
    return path, abandoned, branches


# -- forks ----------------------------------------------------------------------

def parent_path(header, path):
    """The file a session's header names as `parentSession` (relative to the session's
    directory when relative), or None."""
    parent = header.get("parentSession") if isinstance(header, dict) else None
    if not isinstance(parent, str) or not parent:
        return None
    parent = os.path.expanduser(parent)
    if not os.path.isabs(parent):
        parent = os.path.join(os.path.dirname(os.path.abspath(str(path))), parent)
    parent = os.path.abspath(parent)
    if parent == os.path.abspath(str(path)):
        return None
    return parent


class ParentIds:
    """The entry ids of parent sessions, read once each (a missing or unreadable parent: none)."""

    def __init__(self):
        self._ids = {}

    def of(self, header, path):
        parent = parent_path(header, path)
        if parent is None:
            return frozenset()
        ids = self._ids.get(parent)
        if ids is None:
            ids = self._ids[parent] = _ids_of(parent)
        return ids


def inherited_ids(header, path, ids):
    """The ids of a session's entries (`ids`) that its parentSession holds too: what a fork
    inherited (all of them for a whole copy: fork --full, pi --fork)."""
    parent = ParentIds().of(header, path)
    return parent.intersection(ids) if parent else frozenset()


def _ids_of(path):
    from .loading import open_session

    try:
        session = open_session(path, no_cache=True).session
    except (StreeError, OSError):
        return frozenset()
    try:
        nodes = session.nodes
        return frozenset(nodes.col("id") if hasattr(nodes, "col") else (n.id for n in nodes))
    finally:
        session.close()


# -- every session ------------------------------------------------------------

def header_of(path):
    """The header of the session file at `path`, or None (missing, unreadable, not a session):
    its first lines only (store.read_header), as pi reads a header."""
    from .store import read_header

    header = read_header(path)
    return header if isinstance(header, dict) else None


def counting_order(links, listed):
    """The `listed` sessions in the order `stats --all` counts them, in families:
    [[path, ...], ...]. `links` maps a session's path to its parentSession's path (or None),
    for the listed sessions and the files their links reach.

    Sessions joined by parentSession links, directly or through files not listed, are a family:
    an entry id held by several of them is one entry (copied by fork or pi --fork), counted in
    the first member that holds it, in this order: nearest to the family's root first (a
    parent before its forks), then by path. A cycle of links is ordered by path; its members
    come before what hangs off it. Nothing is lost: an entry whose parent is not listed counts
    in the fork."""
    family = {p: p for p in links}

    def find(p):
        while family[p] != p:
            family[p] = family[family[p]]
            p = family[p]
        return p

    for child, parent in links.items():
        if parent is not None and parent in links:
            a, b = find(child), find(parent)
            if a != b:
                family[max(a, b)] = min(a, b)
    depth = {}
    for start in links:
        chain, at = [], {}
        p = start
        while p is not None and p in links and p not in depth and p not in at:
            at[p] = len(chain)
            chain.append(p)
            p = links[p]
        if p is not None and p in at:  # a cycle: its members are the family's roots
            for q in chain[at[p]:]:
                depth[q] = 0
            chain = chain[:at[p]]
            base = 0
        else:
            base = depth.get(p, -1) if p is not None else -1
        for q in reversed(chain):
            base += 1
            depth[q] = base
    families = {}
    for p in sorted(listed, key=lambda p: (depth[p], p)):
        families.setdefault(find(p), []).append(p)
    return sorted(families.values(), key=lambda members: members[0])


def links_of(listed, header):
    """{path: its parentSession's path or None} for the `listed` sessions and every file their
    links reach; `header(path)` gives a listed session's header (others are read here)."""
    links = {}
    todo = list(listed)
    while todo:
        path = todo.pop()
        h = header(path) if path in listed else header_of(path)
        parent = parent_path(h, path) if h is not None else None
        links[path] = parent
        if parent is not None and parent not in links and parent not in todo:
            todo.append(parent)
    return links


class Across:
    """Usage summed over many sessions: by session, by model, by day, and in all."""

    def __init__(self, since=None, until=None):
        self.since = since
        self.until = until
        self.sessions = []  # (header id, path, Totals, display name, cwd, title: the name or first message)
        self.models = {}
        self.days = {}
        self.total = Totals()

    def add(self, session, tree, counted=None):
        """Count `session`, less the entries whose ids are in `counted` (its family's, counted
        already); its own ids are added to `counted`."""
        usages = entry_usages(tree, counted or frozenset(), session.raw)

        def describe():
            name = tree.name()
            return name, session.header.get("cwd"), name or first_message(session)
        self.count(session.header.get("id"), os.path.abspath(str(session.path)), usages, tree.nodes.col("id"),
                   counted, describe)

    def count(self, sid, path, usages, ids, counted, describe):
        """Count one session: `usages` of its entries (those of ids in `counted` left out
        already), `ids` of every entry by row (with `counted`, added to it; else only their
        number is read), describe() -> (display name, cwd, title) when it is listed."""
        usages = [u for u in usages if within(u, self.since, self.until)]
        t = total(usages)
        if counted is not None:
            own = 0
            for i in ids:
                if i not in counted:
                    own += 1
                    counted.add(i)
            t.entries = own  # its own entries
        else:
            t.entries = len(ids)
        if t.count or (self.since is None and self.until is None):  # a time window: only sessions with usage in it
            self.sessions.append((sid, path, t, *describe()))
        for target, by in ((self.models, lambda u: u.key), (self.days, lambda u: day_of(u.ms))):
            for key, part in grouped(usages, by).items():
                target.setdefault(key, Totals()).merge(part)
        self.total.merge(t)


def first_message(session):
    """The text of a session's first user message, as `ls` titles an unnamed session."""
    from ..format.text import full_text, normalize

    for node in session.nodes:
        if node.type == "message" and node.role == "user":
            message = session.load(node).get("message")
            if isinstance(message, dict) and "content" in message:
                text = normalize(full_text(message.get("content")))
                if text:
                    return text
    return "(no messages)"
