"""The catalogue: one SQLite database (standard library) in stree's cache directory with a
row per session file and a full-text index of entry text, so `ls --all`, completion and
`grep` answer without reading every session.

    <cache>/catalog.sqlite          (+ -wal, -shm while open)

A session row holds what `ls` shows and what `grep` filters on, plus the identity it was
read at (device, inode, size, mtime, the CRCs of the file's first bytes and of the bytes
before where it stopped): a file whose identity is unchanged is not read, a file that only
grew has only its new entries read (stree.core.catalog), anything else is read again.

The text index is FTS5, contentless and without positions (`detail=none`): it holds which
entries contain which words and nothing else, so it stays small; the text itself is read
again from the session file (by the offset kept per entry) to show and confirm a match.
A contentless table cannot forget a row, so the rows of a session read again are left in
it, unreachable: every entry row is numbered <generation> << 32 | <row>, and only the
entries table (an ordinary table) says which numbers are alive. When dead rows outnumber
the living, the catalogue is rebuilt.

Concurrent stree processes: WAL and a busy timeout; each file is updated in one
IMMEDIATE transaction that checks the row again first. A damaged database (not SQLite, a
wrong schema, malformed pages) is removed and built again; if that fails too the caller
reads the files directly (Unavailable)."""

import os

SCHEMA = 7  # bump when a table or the meaning of a column changes: the database is rebuilt
NAME = "catalog.sqlite"
BUSY_MS = 60_000
ROW_BITS = 32

SESSION_COLUMNS = (
    "path", "root", "agent", "state", "gen", "dev", "ino", "size", "mtime_ns", "covered", "head_crc",
    "window_crc", "ok", "rows", "id", "cwd", "name", "first_message", "created", "activity", "entries",
    "messages", "branch_points", "labels", "models", "input", "output", "cache_read", "cache_write",
    "cost", "parent_session", "headerless", "path_rows", "error",
)

# columns kept as JSON text: any value a header may hold (a number for a timestamp, a string
# with a lone surrogate, which SQLite's UTF-8 cannot take), read back exactly as it was
JSON_COLUMNS = ("path", "root", "id", "cwd", "name", "first_message", "created", "parent_session", "error")


def _enc(value):
    import json

    return None if value is None else json.dumps(value)


def _dec(text):
    import json

    return None if text is None else json.loads(text)


def _text(value):
    """A string SQLite can take as it is (TEXT), or its bytes (a BLOB) when it holds a lone
    surrogate; _untext reads either back."""
    if value.__class__ is not str:
        return value
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass")


def _untext(value):
    return value.decode("utf-8", "surrogatepass") if value.__class__ is bytes else value


def _fts_text(text):
    """Text the index can take: a lone surrogate becomes U+FFFD (a separator for the
    tokenizer, as a character that is not a letter or digit: the index still narrows)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        import re

        return re.sub("[\ud800-\udfff]", "\ufffd", text)


_DDL = [
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value)",
    "CREATE TABLE sessions(path TEXT PRIMARY KEY, root TEXT, agent TEXT, state TEXT, gen INTEGER, dev INTEGER,"
    " ino INTEGER, size INTEGER, mtime_ns INTEGER, covered INTEGER, head_crc INTEGER, window_crc INTEGER,"
    " ok INTEGER, rows INTEGER, id TEXT, cwd TEXT, name TEXT, first_message TEXT, created TEXT,"
    " activity INTEGER, entries INTEGER, messages INTEGER, branch_points INTEGER, labels TEXT, models TEXT,"
    " input INTEGER, output INTEGER, cache_read INTEGER, cache_write INTEGER, cost REAL,"
    " parent_session TEXT, headerless INTEGER, path_rows BLOB, error TEXT)",
    "CREATE INDEX sessions_gen ON sessions(gen)",
    "CREATE TABLE entries(rowid INTEGER PRIMARY KEY, off INTEGER, len INTEGER, kind TEXT, ts INTEGER, id TEXT)",
    "CREATE VIRTUAL TABLE fts USING fts5(text, content='', detail=none,"
    " tokenize='unicode61 remove_diacritics 0')",
    "CREATE VIRTUAL TABLE vocab USING fts5vocab(fts, 'row')",
]


class Unavailable(Exception):
    """No catalogue this time (SQLite without FTS5, a database that cannot be repaired, an
    unwritable cache): the caller reads the session files as before."""


def db_path():
    from .cachedir import cache_dir

    return os.path.join(cache_dir(), NAME)


def own_names():
    return (NAME, NAME + "-wal", NAME + "-shm", NAME + "-journal")


def _errors():
    import sqlite3

    return (sqlite3.DatabaseError, OSError)


class Catalog:
    """An open catalogue. Use as a context manager; every method may raise Unavailable."""

    def __init__(self, path=None):
        self.path = path or db_path()
        self.db = None
        self.rebuilt = False

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc):
        self.close()

    def open(self):
        import sqlite3

        try:
            self._connect()
            return
        except (sqlite3.DatabaseError, _Damaged) as e:
            from .cachedir import debug

            debug(f"catalogue {self.path} damaged ({e}): rebuilt")
        except OSError as e:
            raise Unavailable(f"cannot open the catalogue {self.path}: {e}") from None
        self.close()
        self.remove_files()
        self.rebuilt = True
        try:
            self._connect()
        except (sqlite3.DatabaseError, _Damaged, OSError) as e:
            self.close()
            raise Unavailable(f"cannot build the catalogue {self.path}: {e}") from None

    def _connect(self):
        import sqlite3

        from .cachedir import cache_dir

        directory = os.path.dirname(self.path)
        if not os.path.isdir(directory):
            os.makedirs(directory, mode=0o700, exist_ok=True)
        cache_dir()  # refused when another user's or writable by others
        if os.path.lexists(self.path) and not os.path.isfile(self.path):
            raise OSError(f"{self.path} is not a regular file")
        old = os.umask(0o077)
        try:
            db = sqlite3.connect(self.path, timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False)
        finally:
            os.umask(old)
        self.db = db
        db.execute(f"PRAGMA busy_timeout={BUSY_MS}")
        mode = db.execute("PRAGMA journal_mode=WAL").fetchone()
        if not mode or str(mode[0]).lower() != "wal":
            raise _Damaged("not in WAL mode")
        db.execute("PRAGMA synchronous=NORMAL")
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
        if not tables:
            self._create()
            return
        if not {"meta", "sessions", "entries", "fts", "vocab"} <= tables:
            raise _Damaged("tables missing")
        row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if row is None or row[0] != SCHEMA:
            raise _Damaged(f"schema {row[0] if row else None}, expected {SCHEMA}")
        cols = [r[1] for r in db.execute("PRAGMA table_info(sessions)")]
        if tuple(cols) != SESSION_COLUMNS:
            raise _Damaged("sessions table of another shape")
        db.execute("SELECT count(*) FROM sessions").fetchone()

    def _create(self):
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                db.execute("ROLLBACK")  # another process made it meanwhile
                return self._connect()
            for ddl in _DDL:
                db.execute(ddl)
            db.execute("INSERT INTO meta VALUES ('schema', ?), ('next_gen', 1), ('dead', 0), ('updated', 0)",
                       (SCHEMA,))
            db.execute("COMMIT")
        except Exception:
            db.execute("ROLLBACK")
            raise

    def close(self):
        if self.db is not None:
            try:
                self.db.close()
            except Exception:
                pass
            self.db = None

    def remove_files(self):
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(self.path + suffix)
            except FileNotFoundError:
                pass
            except OSError as e:
                raise Unavailable(f"cannot remove the damaged catalogue {self.path}: {e}") from None

    # -- reading ------------------------------------------------------------

    def guard(self, fn, *args):
        """fn(*args), with a damaged database (found only now, in a page read) reported as
        Unavailable so the caller can rebuild or fall back."""
        try:
            return fn(*args)
        except _errors() as e:
            raise Unavailable(f"catalogue {self.path}: {e}") from None

    def rows(self, paths=None):
        """path -> session row (a dict of SESSION_COLUMNS), for `paths` or all."""
        def read():
            cur = self.db.execute(f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions")
            out = {}
            wanted = None if paths is None else set(paths)
            for values in cur:
                row = _row(values)
                if wanted is None or row["path"] in wanted:
                    out[row["path"]] = row
            return out
        return self.guard(read)

    def meta(self, key, default=None):
        row = self.guard(lambda: self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone())
        return default if row is None else row[0]

    def counts(self):
        def read():
            db = self.db
            sessions = db.execute("SELECT count(*) FROM sessions WHERE ok=1").fetchone()[0]
            entries = db.execute("SELECT count(*) FROM entries").fetchone()[0]
            return sessions, entries
        return self.guard(read)

    # -- writing ------------------------------------------------------------

    def begin(self):
        self.guard(self.db.execute, "BEGIN IMMEDIATE")

    def commit(self):
        self.guard(self.db.execute, "COMMIT")

    def rollback(self):
        try:
            self.db.execute("ROLLBACK")
        except Exception:
            pass

    def current(self, path):
        """The row of `path` as the database holds it now (inside a transaction), or None."""
        cur = self.db.execute(f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions WHERE path=?", (_enc(path),))
        values = cur.fetchone()
        return None if values is None else _row(values)

    def new_gen(self):
        db = self.db
        gen = db.execute("SELECT value FROM meta WHERE key='next_gen'").fetchone()[0]
        db.execute("UPDATE meta SET value=? WHERE key='next_gen'", (gen + 1,))
        return gen

    def forget(self, row):
        """Drop a session row and its entries (their text rows stay in the index, dead)."""
        db = self.db
        gen = row.get("gen")
        if gen is not None:
            lo = gen << ROW_BITS
            n = db.execute("DELETE FROM entries WHERE rowid >= ? AND rowid < ?", (lo, lo + (1 << ROW_BITS))).rowcount
            if n > 0:
                db.execute("UPDATE meta SET value=value+? WHERE key='dead'", (n,))
        db.execute("DELETE FROM sessions WHERE path=?", (_enc(row["path"]),))

    def put_session(self, row):
        cols = ", ".join(SESSION_COLUMNS)
        marks = ", ".join("?" for _ in SESSION_COLUMNS)
        self.db.execute(f"INSERT OR REPLACE INTO sessions({cols}) VALUES ({marks})",
                        [_enc(row.get(c)) if c in JSON_COLUMNS else row.get(c) for c in SESSION_COLUMNS])

    def put_entries(self, gen, items):
        """items: (row, offset, length, kind, ts ms or None, entry id, text)."""
        db = self.db
        base = gen << ROW_BITS
        db.executemany("INSERT OR REPLACE INTO entries(rowid, off, len, kind, ts, id) VALUES (?, ?, ?, ?, ?, ?)",
                       [(base + row, off, length, _text(kind), ts, _text(id)) for row, off, length, kind, ts, id, _ in items])
        db.executemany("INSERT INTO fts(rowid, text) VALUES (?, ?)",
                       [(base + row, _fts_text(text)) for row, _, _, _, _, _, text in items])

    def touch(self):
        import time

        self.db.execute("UPDATE meta SET value=? WHERE key='updated'", (int(time.time() * 1000),))

    def garbage(self):
        """(dead text rows, living ones): a rebuild is due when the dead outnumber the living."""
        def read():
            dead = self.db.execute("SELECT value FROM meta WHERE key='dead'").fetchone()[0]
            live = self.db.execute("SELECT count(*) FROM entries").fetchone()[0]
            return dead, live
        return self.guard(read)

    # -- the text index -----------------------------------------------------

    def terms(self, needle, where, limit, fold_i=False):
        """The indexed words that are `needle` ('exact'), start with it ('prefix'), end with it
        ('end') or contain it ('in'), or None when more than `limit` do (too many to narrow by).
        With `fold_i`, a dotted or dotless I (İ, ı) counts as i (Python's -i matches them)."""
        def read():
            term = "replace(replace(term, 'İ', 'i'), 'ı', 'i')" if fold_i else "term"
            test = {"exact": f"{term} = ?1", "prefix": f"substr({term}, 1, length(?1)) = ?1",
                    "end": f"substr({term}, -length(?1)) = ?1", "in": f"instr({term}, ?1) > 0"}[where]
            found = [r[0] for r in self.db.execute(f"SELECT term FROM vocab WHERE {test} LIMIT ?2",
                                                   (needle, limit + 1))]
            return None if len(found) > limit else found
        return self.guard(read)

    def matching(self, query, gens):
        """(gen, row, offset, length, kind, ts, id) of the living entries the FTS5 `query`
        matches (every living entry when query is None), in the sessions of `gens`."""
        def read():
            if query is None:
                cur = self.db.execute("SELECT rowid, off, len, kind, ts, id FROM entries ORDER BY rowid")
            else:
                cur = self.db.execute("SELECT e.rowid, e.off, e.len, e.kind, e.ts, e.id FROM fts JOIN entries e "
                                      "ON e.rowid = fts.rowid WHERE fts MATCH ? ORDER BY e.rowid", (query,))
            mask = (1 << ROW_BITS) - 1
            out = []
            for rowid, off, length, kind, ts, id in cur:
                gen = rowid >> ROW_BITS
                if gen in gens:
                    out.append((gen, rowid & mask, off, length, _untext(kind), ts, _untext(id)))
            return out
        return self.guard(read)


def _row(values):
    row = dict(zip(SESSION_COLUMNS, values))
    for c in JSON_COLUMNS:
        row[c] = _dec(row[c])
    return row


class _Damaged(Exception):
    pass
