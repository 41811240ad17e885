"""The shared catalogue on PostgreSQL (psycopg 3, the `pg` extra; imported only when a
postgresql:// URL is used): the sessions many machines push (`stree catalog push`), which
`ls`, `grep` and `stats` answer from when --catalog / STREE_CATALOG / the config name it.
grep's reads go through libpq by ctypes instead (stree.storage.catalog.libpq, `light`): the
same statements, the same errors, and no psycopg to import.

A session row is keyed by who pushed it (the PostgreSQL role), the host and the path it came
from; it holds the columns of the SQLite catalogue's row plus the session id. Entries are
kept with their text (another machine's files cannot be read again). A search is narrowed
by the literals a pattern must contain: to the sessions whose word index (the words of their
entries) holds their words, found in `vocab` by a trigram index over the words pushed (not
over every entry's text: that cost a push most of its time), then to the entries whose text
holds them (strpos, or ILIKE); every candidate is then matched by the pattern itself, as on
SQLite, so the index never decides.

Who sees what: row-level security. `stree_pusher` may insert, change and delete its own
rows only (the `owner` column, current_user); `stree_reader` reads every row. The schema is
versioned (stree_schema): an older one is upgraded in place by MIGRATIONS, a newer one is
refused."""

import os

from .common import JSON_COLUMNS, SESSION_COLUMNS, Unavailable, enc, from_text, index_text, row_of
from .pgerrors import describe, failure, has_psycopg, load_psycopg

SCHEMA = 4
UNDEFINED_TABLE = "42P01"  # (the SQLSTATE of a table not there: no stree catalogue yet)

_COLTYPES = {"path": "text", "root": "text", "agent": "text", "state": "text", "gen": "bigint", "dev": "numeric",
             "ino": "numeric", "size": "bigint", "mtime_ns": "bigint", "ctime_ns": "bigint", "racy_crc": "bigint",
             "covered": "bigint", "head_crc": "bigint", "window_crc": "bigint", "ok": "integer", "rows": "integer",
             "entries": "integer", "messages": "integer", "branch_points": "integer", "activity": "bigint",
             "input": "bigint", "output": "bigint", "cache_read": "bigint", "cache_write": "bigint",
             "cost": "double precision", "headerless": "integer", "path_rows": "bytea"}

# each migration takes the schema from its index to the next version (0: an empty database)
MIGRATIONS = [
    # 1: sessions and entries, keyed by owner, host and path; the trigram index
    ["CREATE EXTENSION IF NOT EXISTS pg_trgm",
     "CREATE TABLE stree_schema(version integer NOT NULL)",
     "INSERT INTO stree_schema VALUES (0)",
     "CREATE TABLE sessions(owner name NOT NULL DEFAULT current_user, host text NOT NULL, "
     + ", ".join(f"{c} {_COLTYPES.get(c, 'text')}" + (" NOT NULL" if c == "path" else "") for c in SESSION_COLUMNS)
     + ", PRIMARY KEY (owner, host, path))",
     "CREATE SEQUENCE sessions_gen",
     "CREATE TABLE entries(owner name NOT NULL DEFAULT current_user, host text NOT NULL, path text NOT NULL, "
     "row integer NOT NULL, off bigint, len integer, kind text, ts bigint, id text, text text NOT NULL, "
     "raw text, PRIMARY KEY (owner, host, path, row))",
     "CREATE INDEX entries_text ON entries USING gin (text gin_trgm_ops)"],
    # 2: the session id on its own (one session pushed from two machines), and who may see what
    ["ALTER TABLE sessions ADD COLUMN sid text",
     "CREATE INDEX sessions_sid ON sessions(sid)",
     "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'stree_pusher') THEN "
     "CREATE ROLE stree_pusher NOLOGIN; END IF; IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'stree_reader') "
     "THEN CREATE ROLE stree_reader NOLOGIN; END IF; END $$",
     "GRANT SELECT, INSERT, UPDATE, DELETE ON sessions, entries TO stree_pusher",
     "GRANT USAGE, SELECT ON SEQUENCE sessions_gen TO stree_pusher",
     "GRANT SELECT ON sessions, entries, stree_schema TO stree_reader, stree_pusher",
     "ALTER TABLE sessions ENABLE ROW LEVEL SECURITY",
     "ALTER TABLE entries ENABLE ROW LEVEL SECURITY",
     "CREATE POLICY own_or_reader ON sessions FOR SELECT USING "
     "(owner = current_user OR pg_has_role(current_user, 'stree_reader', 'MEMBER'))",
     "CREATE POLICY own_rows ON sessions FOR ALL USING (owner = current_user) WITH CHECK (owner = current_user)",
     "CREATE POLICY own_or_reader ON entries FOR SELECT USING "
     "(owner = current_user OR pg_has_role(current_user, 'stree_reader', 'MEMBER'))",
     "CREATE POLICY own_rows ON entries FOR ALL USING (owner = current_user) WITH CHECK (owner = current_user)"],
    # 3: usage per entry (what `stats --all` sums), a session's own entries (a fork's copied prefix left out)
    ["CREATE TABLE usage(owner name NOT NULL DEFAULT current_user, host text NOT NULL, path text NOT NULL, "
     "row integer NOT NULL, model text, ms bigint, input bigint, output bigint, cache_read bigint, "
     "cache_write bigint, cost double precision, PRIMARY KEY (owner, host, path, row))",
     "ALTER TABLE sessions ADD COLUMN own_entries integer",
     "GRANT SELECT, INSERT, UPDATE, DELETE ON usage TO stree_pusher",
     "GRANT SELECT ON usage TO stree_reader",
     "ALTER TABLE usage ENABLE ROW LEVEL SECURITY",
     "CREATE POLICY own_or_reader ON usage FOR SELECT USING "
     "(owner = current_user OR pg_has_role(current_user, 'stree_reader', 'MEMBER'))",
     "CREATE POLICY own_rows ON usage FOR ALL USING (owner = current_user) WITH CHECK (owner = current_user)"],
    # 4: a word index per session in place of the trigram index per entry (which cost a push ~4/5 of
    #    its time: every entry's text cut into trigrams); the words each owner pushed, for the
    #    word-parts a pattern's literal holds (a trigram index over words, not over text). Rows
    #    of an older push (words NULL) are candidates of every search until pushed again.
    ["ALTER TABLE sessions ADD COLUMN words text[]",
     "CREATE INDEX sessions_words ON sessions USING gin (words)",
     "CREATE INDEX sessions_unworded ON sessions (gen) WHERE words IS NULL",
     "CREATE TABLE vocab(owner name NOT NULL DEFAULT current_user, word text NOT NULL, PRIMARY KEY (owner, word))",
     "CREATE INDEX vocab_word ON vocab USING gin (word gin_trgm_ops)",
     "GRANT SELECT, INSERT, DELETE ON vocab TO stree_pusher",
     "GRANT SELECT ON vocab TO stree_reader",
     "ALTER TABLE vocab ENABLE ROW LEVEL SECURITY",
     "CREATE POLICY own_or_reader ON vocab FOR SELECT USING "
     "(owner = current_user OR pg_has_role(current_user, 'stree_reader', 'MEMBER'))",
     "CREATE POLICY own_rows ON vocab FOR ALL USING (owner = current_user) WITH CHECK (owner = current_user)",
     "DROP INDEX IF EXISTS entries_text"],
]
assert len(MIGRATIONS) == SCHEMA

COLUMNS = SESSION_COLUMNS + ("sid", "own_entries")


def hostname():
    """This machine's name, as socket.gethostname() says it (on POSIX its uname's nodename,
    without importing socket: ~8 ms of a grep)."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket

    return socket.gethostname()


def is_url(value):
    return isinstance(value, str) and value.startswith(("postgresql://", "postgres://"))


class Catalog:
    """A shared catalogue. Every method may raise Unavailable (one line, with a hint)."""

    kind = "postgres"
    stale = ()
    copy = None  # may this role COPY into the tables (not under row-level security)? (asked once)
    errors = ()  # the errors of the client connected with (psycopg's, or libpq's)

    def __init__(self, url, migrate=True, light=False):
        """`light`: a reader that only asks what grep asks (heads, candidates, a few rows):
        connected through libpq by ctypes where it loads (stree.storage.catalog.libpq), not
        psycopg, whose import costs a one-shot grep more than its search."""
        self.url = url
        self.migrate = migrate
        self.light = light
        self.db = None
        self.host = hostname()

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc):
        self.close()

    def describe(self):
        return describe(self.url)

    def open(self):
        try:
            self.db = self._connect()
            try:  # (one statement where the catalogue is there: a new backend's first look at the system
                # catalogues, which pg_tables takes, costs more than all of a grep's other questions)
                self.user, version = self.db.execute("SELECT current_user, (SELECT version FROM stree_schema)"
                                                     ).fetchone()
            except self.errors as e:
                if e.sqlstate != UNDEFINED_TABLE:
                    raise
                self.user, version = self.db.execute("SELECT current_user").fetchone()[0], 0
            self._schema(version or 0)
        except self.errors as e:
            self.close()
            raise failure(e, self.url) from None

    def _connect(self):
        """A connection through libpq (light, where it loads), else through psycopg. A
        connection libpq cannot make is tried again by psycopg where it is installed, which says
        why in its own words (as without libpq: it tries each address of a host on its own)."""
        if self.light:
            from . import libpq

            try:
                db = libpq.connect(self.url, connect_timeout=10)
                self.errors = libpq.Error
                return db
            except libpq.Missing:
                pass
            except libpq.Error:
                if not has_psycopg():
                    self.errors = libpq.Error
                    raise
        psycopg = load_psycopg()
        self.errors = psycopg.Error
        return psycopg.connect(self.url, connect_timeout=10, autocommit=True)

    def _schema(self, version):
        if version > SCHEMA:
            raise Unavailable(f"catalogue {self.describe()}: schema version {version}, newer than this stree's "
                              f"({SCHEMA})", hint="upgrade stree on this machine")
        if version == SCHEMA:
            return
        if not self.migrate:
            what = "no stree catalogue there yet" if version == 0 else \
                f"schema version {version}, this stree needs {SCHEMA}"
            raise Unavailable(f"catalogue {self.describe()}: {what}",
                              hint="run `stree catalog migrate` (or `stree catalog push`) as a role that may "
                                   "create tables")
        db = self.db
        with db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(7307350)")  # (one migrating process at a time)
            version = self._version()  # (as another process may have left it meanwhile)
            for step in range(version, SCHEMA):
                for sql in MIGRATIONS[step]:
                    db.execute(sql)
                db.execute("UPDATE stree_schema SET version = %s", (step + 1,))

    def _version(self):
        have = self.db.execute("SELECT EXISTS (SELECT FROM pg_tables WHERE tablename = 'stree_schema' "
                               "AND schemaname = current_schema())").fetchone()[0]
        return self.db.execute("SELECT version FROM stree_schema").fetchone()[0] if have else 0

    def version(self):
        return self.db.execute("SELECT version FROM stree_schema").fetchone()[0]

    def close(self):
        if self.db is not None:
            try:
                self.db.close()
            except Exception:
                pass
            self.db = None

    def guard(self, fn, *args):
        try:
            return fn(*args)
        except self.errors as e:
            raise failure(e, self.url) from None

    # -- reading ------------------------------------------------------------

    def rows(self, paths=None, host=None, owner=None, gens=None):
        """path -> session row of every row this role may see (this host's, or `owner`'s; of the
        generations of `gens`)."""
        def read():
            sql = f"SELECT {', '.join(COLUMNS)}, host, owner FROM sessions"
            where, args = [], []
            if host is not None:
                where.append("host = %s")
                args.append(host)
            if owner is not None:
                where.append("owner = %s")
                args.append(owner)
            if gens is not None:
                where.append("gen = ANY(%s::bigint[])")
                args.append(sorted(gens))
            if where:
                sql += " WHERE " + " AND ".join(where)
            out = {}
            wanted = None if paths is None else set(paths)
            for values in self.db.execute(sql, args):
                row = row_of(values[:len(SESSION_COLUMNS)])
                row["sid"], row["own_entries"], row["host"], row["owner"] = values[len(SESSION_COLUMNS):]
                if row["path_rows"] is not None:
                    row["path_rows"] = bytes(row["path_rows"])
                for c in ("dev", "ino"):
                    row[c] = int(row[c]) if row[c] is not None else None
                if wanted is None or row["path"] in wanted:
                    out[(row["owner"], row["host"], row["path"])] = row
            return out
        return self.guard(read)

    def heads(self, path=None):
        """gen -> {gen, id, cwd} of every session row this role may see that was read whole (ok),
        or with `path` of that file of this host only: what grep reads of every session (short
        ids, --cwd); the rest of a row is read (rows(gens=...)) for the sessions with candidates.
        One row of one JSON text from the server, decoded at once (not a row per session)."""
        def read():
            import json

            sql = ("SELECT string_agg(concat('[', gen, ',', coalesce(id, 'null'), ',', coalesce(cwd, 'null'), ']'), "
                   "',') FROM sessions WHERE ok <> 0")
            args = []
            if path is not None:
                sql += " AND host = %s AND path = %s"
                args += [self.host, enc(path)]
            text = self.db.execute(sql, args).fetchone()[0]
            return {gen: {"gen": gen, "id": id, "cwd": cwd} for gen, id, cwd in json.loads(f"[{text or ''}]")}
        return self.guard(read)

    def counts(self):
        def read():
            sessions = self.db.execute("SELECT count(*) FROM sessions WHERE ok=1").fetchone()[0]
            entries = self.db.execute("SELECT count(*) FROM entries").fetchone()[0]
            return sessions, entries
        return self.guard(read)

    def usage(self):
        """(owner, host, path) -> [(row, model, ms, (input, output, cacheRead, cacheWrite, cost))],
        in file order, of every row this role may see."""
        def read():
            out = {}
            for owner, host, path, row, model, ms, i, o, r, w, c in self.db.execute(
                    "SELECT owner, host, path, row, model, ms, input, output, cache_read, cache_write, cost "
                    "FROM usage ORDER BY owner, host, path, row"):
                out.setdefault((owner, host, _dec(path)), []).append((row, model, ms, (i, o, r, w, c)))
            return out
        return self.guard(read)

    def candidates(self, pattern, gens):
        """(gen, row, offset, length, kind, ts, id, text) of the entries of the sessions of
        `gens` that may match `pattern`: the sessions narrowed by the words the literals it must
        contain hold (each session's word index), the entries by their text; confirmed by the caller
        against the text."""
        def read():
            literals = narrowing(pattern)
            having = []  # (an array of words, one of which the session must hold) per word-part
            for literal in literals:
                for part, where in word_parts(literal):
                    words = self._words(part, where, pattern.ignore_case)
                    if words is not None:
                        having.append(words)
            # (a candidate as two values, its text and the rest as one JSON text made by the server, where the
            # kind, id and raw text are kept as JSON already: two values a row for the client to read, not nine)
            sql = ("SELECT concat('[', s.gen, ',', e.row, ',', coalesce(e.off::text, 'null'), ',', "
                   "coalesce(e.len::text, 'null'), ',', coalesce(e.kind, 'null'), ',', coalesce(e.ts::text, 'null'), "
                   "',', coalesce(e.id, 'null'), ',', coalesce(e.raw, 'null'), ']'), e.text FROM entries e "
                   "JOIN {} s ON s.owner = e.owner AND s.host = e.host AND s.path = e.path")
            args = []
            if having:
                narrowed = ("(SELECT owner, host, path, gen FROM sessions WHERE "
                            + " AND ".join(["words && %s::text[]"] * len(having))
                            + " UNION ALL SELECT owner, host, path, gen FROM sessions WHERE words IS NULL)")
                sql = sql.format(narrowed)
                args.extend(having)
            else:
                sql = sql.format("sessions")
            where = []
            for literal in literals:  # (strpos: the same test as LIKE '%literal%', in half its time)
                where.append("e.text ILIKE %s" if pattern.ignore_case else "strpos(e.text, %s) > 0")
                args.append("%" + _like(literal) + "%" if pattern.ignore_case else literal)
            if where:
                sql += " WHERE " + " AND ".join(where)
            sql += " ORDER BY s.gen, e.row"
            out = []
            from json import loads

            with self.db.transaction():
                if having:  # (the word index, not a scan of every session's words; no workers, no JIT: a
                    # few sessions' rows are wanted, which the planner's estimate of a small table misses)
                    self.db.execute("SET LOCAL enable_seqscan = off")
                    self.db.execute("SET LOCAL max_parallel_workers_per_gather = 0")
                    self.db.execute("SET LOCAL jit = off")
                for values, text in self.db.execute(sql, args):
                    gen, row, off, length, kind, ts, id, raw = loads(values)
                    if gen in gens:
                        out.append((gen, row, off, length, from_text(kind), ts, from_text(id),
                                    text if raw is None else raw))
            return out
        return self.guard(read)

    def _words(self, part, where, fold):
        """The pushed words that are `part` ('exact'), start with it ('prefix'), end with it
        ('end') or contain it ('in') (case folded with `fold`), or None when that does not
        narrow (too many, or too short a part for the trigram index to find)."""
        if where == "exact" and not fold:
            return [part]
        if len(part) < 3:
            return None
        like = {"exact": "{}", "prefix": "{}%", "end": "%{}", "in": "%{}%"}[where].format(_like(part))
        found = [w for (w,) in self.db.execute(
            f"SELECT DISTINCT word FROM vocab WHERE word {'ILIKE' if fold else 'LIKE'} %s LIMIT {WORDS_LIMIT + 1}",
            (like,))]
        return None if len(found) > WORDS_LIMIT else found


WORDS_LIMIT = 2000  # more pushed words than this for one word-part of a literal: it does not narrow
WORD_CHUNK = 200  # a longer word is indexed as overlapping pieces of twice this (any part <= this is in one)
_WORD = None
# ASCII text: every byte that is not a word character (Python's \w: letters, digits, _) made a
# space, then split: the same words as the pattern finds, at about a third of its cost
_NOT_WORD = bytes(c if chr(c).isalnum() or c == 95 else 32 for c in range(128)) + b" " * 128


def words_of(texts):
    """The words of `texts` (indexed text, as entry_values keeps it) a session's word index
    holds: the runs of Python's \\w, as they are (case kept); a run longer than 2 x WORD_CHUNK
    as overlapping pieces, which hold its start, its end, and any part up to WORD_CHUNK long."""
    global _WORD
    if _WORD is None:
        import re

        _WORD = re.compile(r"\w+")
    plain, other = [], []
    for text in texts:
        (plain if text.isascii() else other).append(text)
    out = {w.decode() for w in set("\n".join(plain).encode().translate(_NOT_WORD).split())}
    if other:
        out.update(_WORD.findall("\n".join(other)))
    size = 2 * WORD_CHUNK
    for word in [w for w in out if len(w) > size]:
        out.discard(word)
        out.update(word[i:i + size] for i in range(0, len(word) - size, WORD_CHUNK))
        out.add(word[-size:])
    return out


def word_parts(literal):
    """(part, where) per run of word characters in `literal`: where a text holding the literal
    holds it ('exact': a whole word; 'prefix', 'end': the start or end of one; 'in': inside
    one), as words_of cut the text. A part longer than WORD_CHUNK does not narrow."""
    import re

    out = []
    for m in re.finditer(r"\w+", literal):
        if m.end() - m.start() > WORD_CHUNK:
            continue
        where = {(False, False): "exact", (True, False): "end", (False, True): "prefix", (True, True): "in"}[
            (m.start() == 0, m.end() == len(literal))]
        out.append((m.group(), where))
    return out


def _dec(text):
    import json

    return None if text is None else json.loads(text)


def _like(text):
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# Characters Python's re.IGNORECASE matches with others that PostgreSQL's ILIKE may not fold the
# same way (K and the Kelvin sign, s and the long s, i and the dotted/dotless I, ...): a literal
# holding one is not used to narrow (the search reads more, never less).
_FOLDS = set("kKsSiIµμΜΩωåÅſıİ") | {"\u212a", "\u212b", "\u2126"}


def narrowing(pattern):
    """The literals of `pattern` (stree.core.grep_match.Pattern) an entry's indexed text must contain
    for the pattern to match it, as PostgreSQL compares them."""
    out = []
    for literal in pattern.literals:
        if not literal or index_text(literal) != literal:
            continue  # (NUL, a lone surrogate: the indexed text holds U+FFFD there)
        if pattern.ignore_case and (set(literal) & _FOLDS or not literal.isascii()):
            continue
        out.append(literal)
    return out


def entry_values(owner, host, path, items):
    """Rows of the entries table for `items` ((row, off, len, kind, ts, id, text) each)."""
    out = []
    for row, off, length, kind, ts, id, text in items:
        indexed = index_text(text)
        out.append((host, enc(path), row, off, length, enc(kind), ts, enc(id), indexed,
                    None if indexed == text else enc(text)))
    return out


def session_values(host, row):
    values = [enc(row.get(c)) if c in JSON_COLUMNS else row.get(c) for c in SESSION_COLUMNS]
    return [host] + values + [row.get("id") if isinstance(row.get("id"), str) else None]
