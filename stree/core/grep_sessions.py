"""`stree grep` across sessions as data: which session files are searched, the candidate
entries (the catalogue's word index narrows them; without a catalogue every file is read),
and the records `stree grep --json` prints. The CLI, `stree serve`'s grep request and the
MCP grep tool all ask it (stree.core.grep_match holds the pattern and the search itself; the
command is stree.commands.grep: one concept at three depths)."""

import os
import sys

from ..errors import UsageError


class Grep:
    """One grep question. `files_only` (-l) gives a record per matching session, `count` (-c)
    one per session with its number of matching lines; else a record per matching line.
    `max_count` (-m) stops after that many matching lines (not with -l)."""

    def __init__(self, pattern, *, regex=False, ignore_case=False, word=False, roles=(), types=(), since=None,
                 until=None, cwd=None, files_only=False, count=False, max_count=None, session_path=None,
                 agent=None, agent_dir=None, no_cache=False):
        from .grep_match import STATS, Pattern, entry_filter, parse_when

        if files_only and count:
            raise UsageError("-l and -c do not go together")
        self.pattern = Pattern(pattern, regex=regex, ignore_case=ignore_case, word=word)
        # (the dates were checked by the grep question, which names them as each front end spells them)
        self.keep = entry_filter(roles, types, parse_when(since, "--since") if since else None,
                                 parse_when(until, "--until") if until else None)
        self.files_only = files_only
        self.count = count
        self.max_count = max_count
        # the catalogue is brought up to date whole, or not at all: never cut short by a request's
        # deadline or cancellation (stree.core.budget, loaded by whatever watches one: a one-shot
        # grep loads none, and nothing can cut it short)
        budget = sys.modules.get(f"{__package__}.budget")
        if budget is None:
            self.sessions, self.candidates = candidates(session_path, agent, agent_dir, self.pattern, no_cache)
        else:
            with budget.shielded():
                self.sessions, self.candidates = candidates(session_path, agent, agent_dir, self.pattern, no_cache)
        if cwd is not None:
            from .store import resolved

            want = resolved(os.path.expanduser(cwd))
            self.sessions = {g: r for g, r in self.sessions.items()
                             if _cwd_of(r) is not None and resolved(_cwd_of(r)) == want}
        self.ids = sorted({r["id"] or "" for r in self.sessions.values()})  # (short_id's, as ls's shortest_prefixes)
        self.short = {}  # id -> short_id's answer
        self.at = self.shortest = None  # id -> its place in self.ids; sessionfiles.shortest_prefix
        self.stats = STATS  # (the work counted: grep_match.STATS)
        self.found = 0  # matching lines seen

    def hits(self):
        """(session row, hits) of each session with a matching line, as found (grep_match.search:
        hits are (candidate, on the active path, [(line number, line), ...]) per matching
        entry), counted in self.found; -m cuts them after that many lines (not with -l)."""
        from .grep_match import search

        left = 0 if self.files_only else self.max_count or 0  # lines still wanted (0: no limit)
        for row, hits in search(self.pattern, self.sessions, self.candidates, self.keep):
            n = 0
            for hit in hits:
                n += len(hit[2])
            if left:
                if n >= left:
                    self.found += left
                    yield row, _first_lines(hits, left)
                    return
                left -= n
            self.found += n
            yield row, hits

    def records(self):
        """The records of `stree grep --json`, as found: one per matching line, or with -l / -c
        one per matching session (-c: when all are counted)."""
        if self.files_only:
            for row, _ in self.hits():
                yield session_record(row, 1)
            return
        if self.count:
            counted = [(row, sum(len(hit[2]) for hit in hits)) for row, hits in self.hits()]
            for row, n in counted:
                yield session_record(row, n)
            return
        from ..format.timestamp import iso_millis
        from .grep_match import entry_type

        kinds = {}  # a kind (a str: the file may hold anything) -> its role and type
        for row, hits in self.hits():
            sid = row["id"] or ""
            part = session_part(sid)
            session = {"session": sid, "path": row["path"], "agent": row["agent"], "state": row["state"]}
            for c, on_path, lines in hits:
                kind, ts, entry = c[4], c[5], c[6]
                known = kinds.get(kind) if kind.__class__ is str else None
                if known is None:
                    etype = entry_type(kind)
                    known = {"role": kind if etype == "message" else None, "type": etype}
                    if kind.__class__ is str:
                        kinds[kind] = known
                head = {**session, "entry": entry, "rev": f"{part}:{entry}", **known, "onPath": on_path}
                stamp = iso_millis(ts) if ts is not None else None
                for number, line in lines:
                    yield {**head, "lineNumber": number, "line": line, "timestamp": stamp}

    def short_id(self, sid):
        """The shortest prefix of a session id among the sessions searched (worked out for
        the sessions printed only, each once)."""
        short = self.short.get(sid)
        if short is None:
            if self.at is None:  # (the first asked: where each id is, and the helper, once)
                from .sessionfiles import shortest_prefix

                self.at = {id: i for i, id in enumerate(self.ids)}
                self.shortest = shortest_prefix
            self.stats["ids"] += 1
            at = self.at.get(sid)
            short = self.short[sid] = sid if at is None else self.shortest(self.ids, sid, at=at)
        return short


def _first_lines(hits, n):
    """The hits of a session cut after their first `n` lines."""
    out = []
    for c, on_path, lines in hits:
        if len(lines) >= n:
            out.append((c, on_path, lines[:n]))
            return out
        out.append((c, on_path, lines))
        n -= len(lines)
    return out


def session_record(row, n):
    return {"session": row["id"], "path": row["path"], "agent": row["agent"], "state": row["state"], "count": n,
            "rev": row["id"]}


# -- SESSION:ENTRY -------------------------------------------------------------------------
#
# A session id of 4+ characters from [0-9A-Za-z_.-] (starting with a letter or digit: a uuid,
# pi's ids) is written as it is. Any other id (one holding ':', '/', '%', a space, a control
# character, or shorter) is percent-encoded: each byte of its UTF-8 outside [0-9A-Za-z_.-] as
# %XX (a short one: every byte), so the session part never holds ':' and a '%XX' marks it as
# a session. The resolver (split_rev) decodes it; `stree grep` prints it, and its `rev` field
# holds it, so every SESSION:ENTRY grep shows resolves back to its entry.

_SAFE = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_.-")
_SAFE_TEXT = frozenset(map(chr, _SAFE))
_REV = r"([0-9A-Za-z][0-9A-Za-z_.-]{3,}|[0-9A-Za-z_.%-]*%[0-9A-Fa-f]{2}[0-9A-Za-z_.%-]*):([^/].*)"


def session_part(sid):
    """The session id (or its prefix) as SESSION:ENTRY writes it."""
    if len(sid) >= 4 and sid[0] not in "_.-" and _SAFE_TEXT.issuperset(sid):  # (written as it is)
        return sid
    data = sid.encode("utf-8", errors="surrogatepass")
    every = len(sid) < 4
    return "".join(chr(b) if b in _SAFE and not every else f"%{b:02X}" for b in data)


def split_rev(text):
    """(session id or prefix, entry revision, encoded) of a SESSION:ENTRY, or None when `text`
    is not one (a label may hold a colon)."""
    import re

    m = re.fullmatch(_REV, text, re.S)
    if m is None:
        return None
    part = m.group(1)
    if "%" not in part:
        return part, m.group(2), False
    out = bytearray()
    i = 0
    while i < len(part):
        if part[i] == "%":
            digits = part[i + 1:i + 3]
            if len(digits) != 2 or not all(c in "0123456789abcdefABCDEF" for c in digits):
                return None
            out.append(int(digits, 16))
            i += 3
        else:
            out += part[i].encode()
            i += 1
    try:
        return out.decode("utf-8", errors="surrogatepass"), m.group(2), True
    except UnicodeDecodeError:
        return None


def _cwd_of(row):
    cwd = row["cwd"]
    return cwd if isinstance(cwd, str) and cwd else None


def files(session_path=None, agent=None, agent_dir=None):
    """((path, agent, state) of the sessions searched, the directories listed whole): the one
    session `session_path` names, else every session of the agents `agent` selects."""
    from .sessionfiles import agent_files, agent_of, selected_agents

    if session_path is not None:
        path = str(session_path)
        return [(path, *agent_of(path))], set()
    found = agent_files(selected_agents(agent), agent_dir)
    return [(p, a, s) for p, a, s, _ in found], {os.path.dirname(p) for p, *_ in found}


ROW_COLUMNS = ("gen", "id", "cwd", "created", "activity")  # what grep reads of a session row (and path_rows:
#                                                            the active path, of the sessions with candidates)


def candidates(session_path, agent, agent_dir, pattern, no_cache=False):
    """(gen -> session row, newest first; candidate entries) from the catalogue, or from
    the files themselves without one: of the one session `session_path` names, else of every
    session of the agents `agent` selects. A shared catalogue answers for every session this
    role may see, whatever this machine holds (it lists no local directory); see
    stree.core.catalog_shared.grep_candidates for the rows it gives."""
    from . import catalog_refresh as catalog
    from .grep_match import direct

    if not catalog.enabled(no_cache):
        return direct(files(session_path, agent, agent_dir)[0])
    from .catalog_shared import configured

    url = configured()
    if url is not None:  # a shared catalogue: every session pushed (candidates carry their text)
        from .catalog_shared import grep_candidates

        return grep_candidates(url, pattern, None if session_path is None else str(session_path))
    from ..storage.catalog import Unavailable

    found, listed = files(session_path, agent, agent_dir)
    try:
        cat, rows = catalog.sync([(p, a, s, os.path.dirname(os.path.abspath(p))) for p, a, s in found],
                                 prune_roots=listed, content=True, columns=ROW_COLUMNS)
        try:
            live = [r for r in rows.values() if r["ok"]]
            live.sort(key=catalog.last_activity, reverse=True)
            sessions = {r["gen"]: r for r in live}
            found_entries = cat.candidates(pattern, sessions)
            kept = cat.path_rows({c[0] for c in found_entries})  # (only where a line may be printed)
            for gen, blob in kept.items():
                sessions[gen]["path_rows"] = blob
            if cat.stale:  # (changed while another process wrote the catalogue: read directly)
                more, extra = direct(cat.stale)
                sessions.update({-1 - gen: {**row, "gen": -1 - gen} for gen, row in more.items()})
                found_entries += [(-1 - c[0], *c[1:]) for c in extra]
            return sessions, found_entries
        finally:
            cat.close()
    except Unavailable as e:
        from ..storage.cachedir import debug

        debug(f"no catalogue: {e}")
    return direct(found)
