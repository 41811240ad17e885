"""`stree grep`, the match: the pattern, how the catalogue's word index narrows it, and the
search. One concept at three depths: stree.commands.grep (the command), stree.core.grep_sessions
(which sessions and entries, the records), this module (the pattern and the search).

A pattern is matched against each line of an entry's text (what `:/TEXT` searches:
stree.core.preview.entry_text), as grep matches lines. A plain pattern is a fixed string
(as `git grep -F`), -E a Python regular expression, -i ignores case, -w wants whole words.

The full-text index only narrows: it holds words (Unicode letters and digits, folded to
lower case), so the words a pattern must contain are looked up (a word cut by the
pattern's ends may be longer in the text: found among the indexed words that end with,
start with or contain it), and every candidate entry is matched by the pattern itself,
against the text the catalogue keeps of it (without one, its text read again from its
session file). A pattern without a word to look for reads them all from their files.

A plain grep (a fixed string, no -i, -w or -E, the catalogue's text) imports neither `re`
nor the entry types' table: both are loaded when a pattern or a candidate needs them."""

from sys import byteorder

from ..errors import UsageError
from ..storage import register_counters

STATS = register_counters("grep", {"paths": 0, "ids": 0})  # active paths read (one per session with a line to
#   show), short ids worked out (one per session printed: core.grep_sessions.Grep.short_id)
TERMS_MAX = 300  # indexed words a cut word may stand for before it is not worth narrowing by
FAST_FROM = 64  # candidates read from files from which the fast decoder is taken at once


class Pattern:
    def __init__(self, text, regex=False, ignore_case=False, word=False):
        if text == "":
            raise UsageError("grep needs a non-empty PATTERN")
        self.text = text
        self.regex = regex
        self.literals = [text]  # what an entry's text must contain to match (-E: grep_literals)
        self.ignore_case = ignore_case
        self.re = None  # a fixed string without -i or -w: found by str.find
        if regex or ignore_case or word:
            import re

            body = text if regex else re.escape(text)
            if word:
                body = rf"(?<!\w)(?:{body})(?!\w)"
            try:
                self.re = re.compile(body, re.IGNORECASE if ignore_case else 0)
            except re.error as e:
                raise UsageError(f"grep -E {text!r}: not a valid regular expression: {e}") from None
            self.ignore_case = bool(self.re.flags & re.IGNORECASE)  # (-i, or (?i) in the pattern)
        if regex:
            from .budget import configure_regex, regex as budget
            from .grep_literals import required_literals

            configure_regex()
            self.literals = required_literals(text)
            self.budget = budget  # (`with budget(text):` a match stopped past its time: _regex_lines)
        # lines(text): (line number from 1, line) of the lines of `text` the pattern matches,
        # chosen once: a fixed string pays for no regular expression, nor -i or -w for -E's
        self.lines = (self._regex_lines if regex else _no_lines if "\n" in text  # (no line holds a newline)
                      else self._plain_lines if self.re is None else self._fixed_lines)

    def _regex_lines(self, text):
        """lines() of -E, line by line, under the pattern's time budget (core.budget: RegexTimeout
        past it)."""
        search = self.re.search
        with self.budget(self.text):
            return [(n, line) for n, line in enumerate(text.split("\n"), 1) if search(line)]

    def _plain_lines(self, text):
        """lines() of a fixed string without -i or -w, found by str.find in the whole text
        rather than line by line (the same lines: the string holds no newline, so a match never
        spans one); after a match, the search goes on from the next line."""
        find, needle = text.find, self.text
        at = find(needle)
        if at < 0:
            return ()
        if "\n" not in text:
            return [(1, text)]  # (a text of one line, as many are)
        out = []
        number = 1
        counted = 0  # (where the newlines before `at` were counted up to)
        while True:
            number += text.count("\n", counted, at)
            stop = find("\n", at)
            if stop < 0:
                out.append((number, text[text.rfind("\n", counted, at) + 1:]))
                return out
            out.append((number, text[text.rfind("\n", counted, at) + 1:stop]))
            counted = stop
            at = find(needle, stop + 1)
            if at < 0:
                return out

    def _fixed_lines(self, text):
        """lines() of a fixed string with -i or -w (its regular expression), as _plain_lines
        finds them: in the whole text (-w's bounds see a newline as a line's end sees nothing:
        neither is a word character)."""
        search = self.re.search
        m = search(text)
        out = []
        number, counted = 1, 0
        while m is not None:
            at = m.start()
            number += text.count("\n", counted, at)
            stop = text.find("\n", at)
            if stop < 0:
                out.append((number, text[text.rfind("\n", counted, at) + 1:]))
                break
            out.append((number, text[text.rfind("\n", counted, at) + 1:stop]))
            counted = stop
            m = search(text, stop + 1)
        return out

    def query(self, terms):
        """The FTS5 query narrowing to entries that may match, None for no narrowing, or
        False when no entry can match. `terms(needle, where, limit, fold_i)` looks words up."""
        parts = []
        for literal in self.literals:
            for kind, word in words(literal):
                fold = self.ignore_case and "i" in word
                if kind == "exact" and not fold:
                    parts.append(_quote(word))
                elif kind == "prefix" and not fold:
                    parts.append(_quote(word) + "*")
                else:
                    if kind == "in" and len(word) < 3:
                        continue  # too many words contain it
                    found = terms(word, kind, TERMS_MAX, fold)
                    if found is None:
                        continue
                    if not found:
                        return False
                    parts.append("(" + " OR ".join(_quote(t) for t in found) + ")")
        return " AND ".join(parts) if parts else None


def _no_lines(text):
    return ()


def _quote(word):
    return '"' + word.replace('"', '""') + '"'


def words(literal):
    """(kind, word) of the ASCII words a text containing `literal` must hold in its index:
    'exact' when the literal bounds the word on both sides with ASCII punctuation or space,
    'prefix' / 'end' when only on the left / right, 'in' when on neither side. Other
    characters (any non-ASCII one) bound nothing: the index may count them as letters."""
    out = []
    n = len(literal)
    a = 0
    while a < n:
        if not _ascii_alnum(literal[a]):
            a += 1
            continue
        b = a + 1
        while b < n and _ascii_alnum(literal[b]):
            b += 1
        left = a > 0 and _separator(literal[a - 1])
        right = b < n and _separator(literal[b])
        kind = "exact" if left and right else "prefix" if left else "end" if right else "in"
        out.append((kind, literal[a:b].lower()))
        a = b
    return out


def _ascii_alnum(ch):
    return ch < "\x80" and ch.isalnum()  # ([A-Za-z0-9]: the ASCII letters and digits)


def _separator(ch):
    return ch < "\x80" and not ch.isalnum()


_AGO = r"(\d+)\s*(s|sec|second|m|min|minute|h|hour|d|day|w|week)s?(?:\s+ago)?"
_UNIT = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600,
         "d": 86400, "day": 86400, "w": 604800, "week": 604800}


def parse_when(value, option, now=None):
    """--since / --until: an ISO date or time (UTC unless it says otherwise), unix seconds,
    or an age ("3d", "2 weeks ago"); milliseconds since the epoch."""
    import re
    import time
    from datetime import datetime, timezone

    text = value.strip()
    m = re.fullmatch(_AGO, text, re.IGNORECASE)
    if m:
        now = time.time() if now is None else now
        return int((now - int(m.group(1)) * _UNIT[m.group(2).lower()]) * 1000)
    if re.fullmatch(r"\d{9,}", text):
        return int(text) * 1000
    try:
        dt = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        raise UsageError(f"{option} {value!r}: not a date (2026-01-31, 2026-01-31T12:00, unix seconds, "
                         "or an age: 3d, 2 weeks ago)") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 1000)


def text_types():
    """What --type takes: the types whose rows say grep searches them (core.entrytypes, imported
    when asked)."""
    from .entrytypes import grepped

    return grepped()


def entry_type(kind):
    """The type of an indexed entry of `kind` (its type; a message's kind is its role)."""
    return kind if kind != "message" and kind in text_types() else "message"


ROLES = ("user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary", "compactionSummary")  # --role


def entry_filter(roles=(), types=(), since=None, until=None):
    """A test of (kind, ts) for --role, --type, --since and --until; None without them."""
    roles, types = set(roles), set(types)
    if not (roles or types or since is not None or until is not None):
        return None

    typed = {}  # a kind (a str: the file may hold anything) -> whether --type keeps it (entry_type, once a kind)

    def keep(kind, ts):
        if roles and kind not in roles:
            return False
        if types:
            kept = typed.get(kind) if kind.__class__ is str else None
            if kept is None:
                kept = entry_type(kind) in types
                if kind.__class__ is str:
                    typed[kind] = kept
            if not kept:
                return False
        if since is not None and (ts is None or ts < since):
            return False
        if until is not None and (ts is None or ts > until):
            return False
        return True
    return keep


def search(pattern, sessions, candidates, keep=None):
    """(session row, hits) of each session of `sessions` (gen -> catalogue row, in the order
    wanted) holding a line `pattern` matches, as found; hits: (candidate, whether it is on the
    session's active path, lines: pattern.lines) of each matching entry, in file order.
    The candidates ((gen, row, offset, length, kind, ts, id) each, and the entry's text when
    the catalogue keeps it; in file order within a session) are those `keep(kind, ts)` keeps
    (entry_filter; None: all), matched against the text kept, else against the text read again
    from the file. A regular expression runs under its time budget (stree.core.budget), which
    a fixed string does not need."""
    by_gen = {}
    for c in candidates:
        if keep is None or keep(c[4], c[5]):
            found = by_gen.get(c[0])
            if found is None:
                by_gen[c[0]] = [c]
            else:
                found.append(c)
    return _watched(pattern, sessions, by_gen) if pattern.regex else _search(pattern, sessions, by_gen)


def _watched(pattern, sessions, by_gen):
    from .budget import watch

    with watch():
        yield from _search(pattern, sessions, by_gen)


def _search(pattern, sessions, by_gen):
    if sum(len(found) for found in by_gen.values() if len(found[0]) < 8) >= FAST_FROM:
        from ..format.decode import fast_decoder

        fast_decoder(now=True)  # (its import costs less than decoding this many entries without it)
    lines = pattern.lines
    for gen, row in sessions.items():
        found = by_gen.get(gen)
        if not found:
            continue
        if len(found[0]) > 7:  # (the text kept)
            hits = [(c, got) for c in found if (got := lines(c[7]))]
        else:
            hits = [(c, got) for c, text in _texts(row, found) if (got := lines(text))]
        if hits:  # (its active path read only for a session with a line to show)
            STATS["paths"] += 1
            yield row, marked(row.get("path_rows") or b"", hits)


_BOM = (0xFEFF).to_bytes(4, byteorder)  # (path_rows's int32s decoded as UTF-32 in the machine's order: the
#   codec Python decodes without importing one, told the order by a mark before them)


def marked(path_rows, hits):
    """(candidate, whether it is on the active path, lines) of each of `hits` ((candidate,
    lines)), by the rows of the path (`path_rows`: int32 each, in the machine's order, as
    array("i") writes them). Read as a text of a character per row, where each entry's row is a
    search in C (chr(row) in it), no Python int made per row of the path; a row past the last
    code point (a session of more than 1,114,111 entries) has them compared as ints."""
    try:
        path = str(_BOM + path_rows, "utf-32", "surrogatepass")
        return [(c, chr(c[1]) in path, lines) for c, lines in hits]
    except (UnicodeDecodeError, ValueError):
        rows = set(memoryview(path_rows).cast("i"))
        return [(c, c[1] in rows, lines) for c, lines in hits]


def _texts(row, found):
    """(candidate, its text) of candidates the catalogue keeps no text of (no catalogue, a
    file changed while another process wrote it, a pattern without a word to narrow by),
    each read again from the file and decoded (format.decode: the fast decoder where it
    agrees); an entry without text, or changed since, is left out. Counted among the entries
    decoded (storage.scan.STATS: the line STREE_DEBUG_STATS prints)."""
    import os

    from ..errors import StreeError
    from ..format.decode import decode_line
    from ..storage.scan import STATS
    from ..storage.session import open_file
    from .preview import entry_text

    try:
        fd = open_file(row["path"])
    except StreeError:
        return
    try:
        for c in found:
            STATS["decoded"] += 1
            try:
                entry = decode_line(os.pread(fd, c[3], c[2]))
            except ValueError:
                continue  # (changed since: the next command reads it again)
            text = entry_text(entry) if isinstance(entry, dict) else None
            if text:  # (not indexed either)
                yield c, text
    finally:
        os.close(fd)


def direct(files):
    """Without a catalogue (--no-cache, no SQLite): (sessions, candidates) as search() takes
    them, by parsing every file; the files that are not sessions are left out."""
    from ..format.stdlib import array

    from ..errors import StreeError
    from ..format.timestamp import ts_millis
    from .loading import open_session

    grepped = text_types()
    sessions, candidates = {}, []
    for gen, (path, agent, state) in enumerate(files):
        try:
            s, tree, _ = open_session(path, no_cache=True)  # (no catalogue: no index either)
        except (StreeError, OSError):
            continue
        try:
            nodes = s.nodes
            try:
                rows = tree.path_rows(tree.leaf) if tree.leaf is not None else []
            except StreeError:
                rows = []
            sessions[gen] = {"gen": gen, "path": path, "agent": agent, "state": state, "id": s.header.get("id"),
                             "cwd": s.header.get("cwd"), "activity": None,
                             "path_rows": array("i", rows).tobytes()}
            for r in range(len(nodes)):
                node = nodes[r]
                if node.type in grepped:
                    kind = node.role if node.type == "message" else node.type
                    candidates.append((gen, r, node.offset, node.length, kind, ts_millis(node.ts), node.id))
        finally:
            s.close()
    return sessions, candidates
