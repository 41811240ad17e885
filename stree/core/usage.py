"""Tokens and cost: the usage pi records (format.usage), summed over a session, its active
path, its branches, a range, or every session (by session, model and day).

A fork's copied prefix is counted once: the entries of a session whose header's
`parentSession` holds an entry with the same id belong to that parent."""

import os
from datetime import datetime, timezone

from ..errors import StreeError, UsageError
from ..format.timestamp import ts_millis
from ..format.usage import FIELDS, usage_of
from .entrytypes import may_have_usage


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


def day_of(ms):
    """The local date (TZ) of epoch milliseconds, YYYY-MM-DD; 'unknown' without a time."""
    if ms is None:
        return "unknown"
    try:
        return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d")
    except (OverflowError, OSError, ValueError):
        return "unknown"


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


def _ids_of(path):
    from ..storage.session import parse

    try:
        session = parse(path)
    except (StreeError, OSError):
        return frozenset()
    try:
        nodes = session.nodes
        return frozenset(nodes.col("id") if hasattr(nodes, "col") else (n.id for n in nodes))
    finally:
        session.close()


# -- every session ------------------------------------------------------------

class Across:
    """Usage summed over many sessions: by session, by model, by day, and in all."""

    def __init__(self, since=None, until=None):
        self.since = since
        self.until = until
        self.sessions = []  # (header id, path, Totals, display name, cwd)
        self.models = {}
        self.days = {}
        self.total = Totals()
        self.parents = ParentIds()

    def add(self, session, tree):
        skip = self.parents.of(session.header, session.path)
        usages = [u for u in entry_usages(tree, skip, session.raw) if within(u, self.since, self.until)]
        t = total(usages)
        ids = tree.nodes.col("id") if skip else ()
        t.entries = len(tree.nodes) - sum(1 for i in ids if i in skip)  # its own entries
        if t.count or (self.since is None and self.until is None):  # a time window: only sessions with usage in it
            self.sessions.append((session.header.get("id"), os.path.abspath(str(session.path)), t,
                                  tree.name(), session.header.get("cwd")))
        for target, by in ((self.models, lambda u: u.key), (self.days, lambda u: day_of(u.ms))):
            for key, part in grouped(usages, by).items():
                target.setdefault(key, Totals()).merge(part)
        self.total.merge(t)
