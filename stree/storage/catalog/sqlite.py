"""The SQLite catalogue (the default): one database (standard library) in stree's cache
directory, this user's.

    <cache>/catalog.sqlite          (+ -wal, -shm while open)

It is stree's by its content, not its name: SQLite's application id (PRAGMA application_id,
APP_ID) is set when stree makes it, and read from the file's header (storage.catalog.identity)
before anything is written to it. A file of that name that is not stree's (another program's database, an
empty file, a directory) is never written, switched to WAL or deleted: the command warns,
names it, and answers from the session files. A new catalogue is made whole under a temp
name (application id, WAL mode, tables) and linked into place, never over a file.

The text index is FTS5, contentless and without positions (`detail=none`): it holds which
entries contain which words and nothing else. Each living entry's text is kept beside it
(table texts), so a candidate is confirmed and its lines shown without reading the session
file again or decoding the entry (what a grep of a common word spends its time on: the
sessions' text is about half their size). A contentless table cannot forget a row, so the
rows of a session read again are left in it, unreachable: every entry row is numbered
<generation> << 32 | <row>, and only the entries table (an ordinary table) says which
numbers are alive. When dead rows outnumber the living, the catalogue is rebuilt.

A session's entries (their text in the index, their usage and ids: stree.storage.catalog.usage)
are read after its row, by the first command that needs them (grep, `stats --all`, a push):
`ls` reads only the rows. The table `indexed` says, by generation, how many of a session's
entries (rows from the first) are in; a session without a line there has none in yet.

The words the index holds are also kept in a plain table (terms), which grep scans for the
indexed words a cut word may stand for, brought up to date by the first grep after the
index grew (stree.storage.catalog.vocabulary).

Concurrent stree processes: WAL, so a reader never waits on a writer. A command that finds
the write lock taken does not wait for it (Busy): it answers from what the catalogue holds
(core.catalog_refresh says so). A damaged stree catalogue (wrong schema, malformed pages) is removed
and built again; if that fails too the caller reads the files directly (Unavailable)."""

import os

from . import resident, usage as usagedb
from .identity import APP_ID, probe
from .vocabulary import fresh
from .common import (ROW_BITS, SESSION_COLUMNS, Busy, Unavailable, as_text, db_path, enc, from_text, index_text,
                     row_of, rows_of, sqlite3 as stdlib_sqlite, values_of, warn)

SCHEMA = 12  # bump when a table or the meaning of a column changes: the database is rebuilt
WAIT_MS = 60_000  # `stree catalog --update` waits this long for another writer
READ_MS = 200  # a reading command: what SQLite itself may take (a checkpoint), never a writer's transaction

_DDL = [
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value)",
    "CREATE TABLE sessions(path TEXT PRIMARY KEY, root TEXT, agent TEXT, state TEXT, gen INTEGER, dev INTEGER,"
    " ino INTEGER, size INTEGER, mtime_ns INTEGER, ctime_ns INTEGER, racy_crc INTEGER, covered INTEGER,"
    " head_crc INTEGER, window_crc INTEGER,"
    " ok INTEGER, rows INTEGER, id TEXT, cwd TEXT, name TEXT, first_message TEXT, created TEXT,"
    " activity INTEGER, entries INTEGER, messages INTEGER, branch_points INTEGER, labels TEXT, models TEXT,"
    " input INTEGER, output INTEGER, cache_read INTEGER, cache_write INTEGER, cost REAL,"
    " parent_session TEXT, headerless INTEGER, path_rows BLOB, error TEXT)",
    "CREATE INDEX sessions_gen ON sessions(gen)",
    "CREATE TABLE entries(rowid INTEGER PRIMARY KEY, off INTEGER, len INTEGER, kind TEXT, ts INTEGER, id TEXT)",
    # each living entry's text and what grep prints with it (a hit is one lookup: fts, then this)
    "CREATE TABLE texts(rowid INTEGER PRIMARY KEY, kind TEXT, ts INTEGER, id TEXT, text TEXT)",
    "CREATE VIRTUAL TABLE fts USING fts5(text, content='', detail=none, columnsize=0,"
    " tokenize='unicode61 remove_diacritics 0')",
    "CREATE VIRTUAL TABLE vocab USING fts5vocab(fts, 'row')",
    "CREATE TABLE terms(term TEXT PRIMARY KEY) WITHOUT ROWID",  # the words of vocab, as a plain table
    "CREATE TABLE fresh(rowid INTEGER PRIMARY KEY, text TEXT)",  # text terms does not hold the words of yet
    "CREATE TABLE indexed(rowid INTEGER PRIMARY KEY, rows INTEGER)",  # by generation: the rows whose text is in
] + usagedb.DDL  # (the usage of each entry, stats --all's; storage/catalog/usage.py)
_TABLES = {"meta", "sessions", "entries", "texts", "fts", "vocab", "terms", "fresh", "indexed"} | usagedb.TABLES
FOREIGN_HINT = ("move it out of stree's cache directory (stree then makes its own there), "
                "or set STREE_CACHE_DIR to another directory")


def _refuse(path, why, quiet):
    if not quiet:
        warn(f"{path}: not stree's catalogue ({why}); left as it is, answering from the session files",
             hint=FOREIGN_HINT)
    raise Unavailable(f"{path}: not stree's catalogue ({why}); left as it is", hint=FOREIGN_HINT)


def _errors():
    sqlite3 = stdlib_sqlite()

    return (sqlite3.DatabaseError, OSError)


class Catalog:
    """An open catalogue. Use as a context manager; every method may raise Unavailable.
    `wait`: a writer that waits for another's transaction (`stree catalog --update`)."""

    kind = "sqlite"

    def __init__(self, path=None, wait=False, quiet=False):
        self.path = path or db_path()
        self.db = None
        self.rebuilt = False
        self.wait = wait
        self.quiet = quiet
        self.words = None  # where terms() reads the indexed words: 'terms' or 'vocab' (once asked)

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc):
        self.close()

    def describe(self):
        return self.path

    def open(self):
        sqlite3 = stdlib_sqlite()

        try:
            self._open()
            return
        except (sqlite3.DatabaseError, _Damaged) as e:
            from ..cachedir import debug

            debug(f"catalogue {self.path} damaged ({e}): rebuilt")
        except OSError as e:
            raise Unavailable(f"cannot open the catalogue {self.path}: {e}") from None
        self.close()
        self.remove_files()
        self.rebuilt = True
        try:
            self._open()
        except (sqlite3.DatabaseError, _Damaged, OSError) as e:
            self.close()
            raise Unavailable(f"cannot build the catalogue {self.path}: {e}") from None

    def _open(self):
        from ..cachedir import cache_dir

        directory = os.path.dirname(self.path)
        if not os.path.isdir(directory):
            os.makedirs(directory, mode=0o700, exist_ok=True)
        cache_dir()  # refused when another user's or writable by others
        for _ in range(3):
            whose, why = probe(self.path)
            if whose == "absent":
                self._make()
                continue
            if whose == "legacy":
                raise _Damaged("made by an older stree")
            if whose == "foreign":
                _refuse(self.path, why, self.quiet)
            return self._connect()
        raise Unavailable(f"{self.path}: made and gone again (another process?)")

    def _make(self):
        """A new catalogue, made whole under a temp name and linked into place (never over
        a file: another process's new catalogue, or a file that is not stree's, stays)."""
        sqlite3 = stdlib_sqlite()

        from ..cachedir import create_temp

        fd, tmp = create_temp(self.path)
        os.close(fd)
        try:
            db = sqlite3.connect(tmp, isolation_level=None)
            try:
                db.execute(f"PRAGMA application_id={APP_ID}")
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("BEGIN")
                for ddl in _DDL:
                    db.execute(ddl)
                db.execute("INSERT INTO meta VALUES ('schema', ?), ('next_gen', 1), ('dead', 0), ('updated', 0),"
                           " ('fresh', 0)", (SCHEMA,))
                db.execute("COMMIT")
            finally:
                db.close()
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                pass
        finally:
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.unlink(tmp + suffix)
                except OSError:
                    pass

    def _connect(self):
        self.db = resident.connection(self.path)  # (a resident process's: storage.catalog.resident)
        if self.db is not None:
            return
        sqlite3 = stdlib_sqlite()

        old = os.umask(0o077)
        try:
            busy = WAIT_MS if self.wait else READ_MS
            db = sqlite3.connect(self.path, timeout=busy / 1000, isolation_level=None, check_same_thread=False)
        finally:
            os.umask(old)
        self.db = db
        db.execute(f"PRAGMA busy_timeout={busy}")
        db.execute("PRAGMA synchronous=NORMAL")
        if db.execute("PRAGMA application_id").fetchone()[0] != APP_ID:
            raise Unavailable(f"{self.path}: changed while opened")
        mode = db.execute("PRAGMA journal_mode").fetchone()
        if not mode or str(mode[0]).lower() != "wal":
            raise _Damaged("not in WAL mode")
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
        if not _TABLES <= tables:
            raise _Damaged("tables missing")
        row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if row is None or row[0] != SCHEMA:
            raise _Damaged(f"schema {row[0] if row else None}, expected {SCHEMA}")
        cols = [r[1] for r in db.execute("PRAGMA table_info(sessions)")]
        if tuple(cols) != SESSION_COLUMNS:
            raise _Damaged("sessions table of another shape")
        db.execute("SELECT count(*) FROM sessions").fetchone()
        resident.keep(self.path, db)

    def close(self):
        if self.db is not None and resident.is_kept(self.path, self.db):  # (left open: storage.catalog.resident)
            if self.db.in_transaction:
                self.rollback()
            self.db = None
        if self.db is not None:
            try:
                self.db.close()
            except Exception:
                pass
            self.db = None

    def remove_files(self):
        """Remove the catalogue: only when its content says stree made it."""
        resident.forget(self.path)
        whose, why = probe(self.path)
        if whose == "foreign":
            _refuse(self.path, why, self.quiet)
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

    def rows(self, paths=None, columns=SESSION_COLUMNS):
        """path -> session row (a dict of `columns`: all of SESSION_COLUMNS unless fewer are
        wanted), for `paths` or all."""
        def read():
            cur = self.db.execute(f"SELECT {', '.join(columns)} FROM sessions")
            out = {}
            wanted = None if paths is None else set(paths)
            for row in rows_of(cur, columns):
                if wanted is None or row["path"] in wanted:
                    out[row["path"]] = row
            return out
        if paths is None and resident.is_kept(self.path, self.db):
            return self.guard(resident.rows, self.path, self.db, columns, read)
        return self.guard(read)

    def path_rows(self, gens):
        """{gen: path_rows} of the sessions of `gens` (the rows of their active paths)."""
        def read():
            wanted, out = sorted(gens), {}
            for i in range(0, len(wanted), 500):  # (SQLite's limit of parameters is far above)
                part = wanted[i:i + 500]
                marks = ",".join("?" * len(part))
                out.update(self.db.execute(f"SELECT gen, path_rows FROM sessions WHERE gen IN ({marks})", part))
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

    def entries_of(self, gen, start=0):
        """(row, offset, length, kind, ts, id) of the living entries of the session `gen`
        from its row `start` on, in order."""
        def read():
            lo = gen << ROW_BITS
            cur = self.db.execute("SELECT rowid, off, len, kind, ts, id FROM entries WHERE rowid >= ? AND rowid < ? "
                                  "ORDER BY rowid", (lo + start, lo + (1 << ROW_BITS)))
            return [(rowid - lo, off, length, from_text(kind), ts, from_text(id)) for rowid, off, length, kind, ts, id
                    in cur]
        return self.guard(read)

    # -- writing ------------------------------------------------------------

    def begin(self):
        """Take the write lock; Busy when another process holds it (a reading command then
        answers from what the catalogue holds rather than wait)."""
        sqlite3 = stdlib_sqlite()

        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:
            if "locked" in str(e) or "busy" in str(e):
                raise Busy(str(e)) from None
            raise Unavailable(f"catalogue {self.path}: {e}") from None
        except _errors() as e:
            raise Unavailable(f"catalogue {self.path}: {e}") from None

    def commit(self):
        self.guard(self.db.execute, "COMMIT")

    def rollback(self):
        try:
            self.db.execute("ROLLBACK")
        except Exception:
            pass

    def current(self, path):
        """The row of `path` as the database holds it now (inside a transaction), or None."""
        cur = self.db.execute(f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions WHERE path=?", (enc(path),))
        values = cur.fetchone()
        return None if values is None else row_of(values)

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
            db.execute("DELETE FROM texts WHERE rowid >= ? AND rowid < ?", (lo, lo + (1 << ROW_BITS)))
            if n > 0:
                db.execute("UPDATE meta SET value=value+? WHERE key='dead'", (n,))
            usagedb.forget(db, gen)
            db.execute("DELETE FROM indexed WHERE rowid = ?", (gen,))
        db.execute("DELETE FROM sessions WHERE path=?", (enc(row["path"]),))

    def put_session(self, row):
        cols = ", ".join(SESSION_COLUMNS)
        marks = ", ".join("?" for _ in SESSION_COLUMNS)
        self.db.execute(f"INSERT OR REPLACE INTO sessions({cols}) VALUES ({marks})", values_of(row))

    def put_entries(self, gen, items):
        """items: (row, offset, length, kind, ts ms or None, entry id, text)."""
        db = self.db
        base = gen << ROW_BITS
        db.executemany("INSERT OR REPLACE INTO entries(rowid, off, len, kind, ts, id) VALUES (?, ?, ?, ?, ?, ?)",
                       [(base + row, off, length, as_text(kind), ts, as_text(id))
                        for row, off, length, kind, ts, id, _ in items])
        db.executemany("INSERT OR REPLACE INTO texts(rowid, kind, ts, id, text) VALUES (?, ?, ?, ?, ?)",
                       [(base + row, as_text(kind), ts, as_text(id), as_text(text))
                        for row, _, _, kind, ts, id, text in items])
        db.executemany("INSERT INTO fts(rowid, text) VALUES (?, ?)",
                       [(base + row, index_text(text)) for row, _, _, _, _, _, text in items])
        fresh(db, base, items)

    def indexed(self):
        """{gen: how many of the session's entries (from its first row) the catalogue holds the
        text, usage and ids of}; a session not in it has none in yet."""
        return self.guard(lambda: dict(self.db.execute("SELECT rowid, rows FROM indexed")))

    def indexed_rows(self, gen):
        """indexed()'s count of the session `gen`, as the database holds it now (inside a transaction)."""
        found = self.db.execute("SELECT rows FROM indexed WHERE rowid = ?", (gen,)).fetchone()
        return 0 if found is None else found[0]

    def put_indexed(self, gen, rows):
        self.db.execute("INSERT OR REPLACE INTO indexed VALUES (?, ?)", (gen, rows))

    def put_usage(self, gen, start, usages, ids, sums):
        """The usage of a session's entries from row `start` on, their ids, and the session's
        sums now (storage.catalog.usage)."""
        usagedb.put(self.db, gen, start, usages, ids, sums)

    def usage(self, gen):
        """[(row, model key, ms, values)] of the entries of the session `gen` with usage, in file order."""
        return self.guard(usagedb.read, self.db, gen)

    def sums(self, gens):
        """{gen: JSON text or None}: the sums kept of the sessions of `gens` (stree.core.usage_sums)."""
        return self.guard(usagedb.sums, self.db, gens)

    def ids_of(self, gen):
        return self.guard(usagedb.ids_of, self.db, gen)

    def touch(self):
        import time

        self.db.execute("UPDATE meta SET value=? WHERE key='updated'", (int(time.time() * 1000),))

    def garbage(self, least=0):
        """(dead text rows, living ones): a rebuild is due when the dead outnumber the living.
        The living are not counted (None) while the dead are `least` or fewer."""
        def read():
            dead = self.db.execute("SELECT value FROM meta WHERE key='dead'").fetchone()[0]
            if dead <= least:
                return dead, None
            live = self.db.execute("SELECT count(*) FROM entries").fetchone()[0]
            return dead, live
        return self.guard(read)

    # -- the text index -----------------------------------------------------

    def candidates(self, pattern, gens):
        """The entries of the sessions of `gens` that may match `pattern` (stree.core.grep_match
        Pattern): narrowed by the word index, confirmed by the caller."""
        query = pattern.query(self.terms)
        return [] if query is False else self.matching(query, gens)

    def terms(self, needle, where, limit, fold_i=False):
        """The indexed words that are `needle` ('exact'), start with it ('prefix'), end with it
        ('end') or contain it ('in'), or None when more than `limit` do (too many to narrow by).
        With `fold_i`, a dotted or dotless I (İ, ı) counts as i (Python's -i matches them).
        Read from the terms table, brought up to date first (stree.storage.catalog.vocabulary),
        or from fts5vocab when another process is writing the catalogue."""
        if self.words is None:
            from .vocabulary import table

            self.words = self.guard(table, self)

        def read():
            term = "replace(replace(term, 'İ', 'i'), 'ı', 'i')" if fold_i else "term"
            test = {"exact": f"{term} = ?1", "prefix": f"substr({term}, 1, length(?1)) = ?1",
                    "end": f"substr({term}, -length(?1)) = ?1", "in": f"instr({term}, ?1) > 0"}[where]
            found = [r[0] for r in self.db.execute(f"SELECT term FROM {self.words} "
                                                   f"WHERE {test} LIMIT ?2", (needle, limit + 1))]
            return None if len(found) > limit else found
        return self.guard(read)

    def matching(self, query, gens):
        """(gen, row, offset, length, kind, ts, id) of the living entries the FTS5 `query`
        matches, in the sessions of `gens`, each with its text kept (offset and length None: the
        file is not read again); every living entry when query is None, without its text (the
        file read again, a session at a time: the whole catalogue's text is not held at once)."""
        def read():
            mask, out = (1 << ROW_BITS) - 1, []
            if query is None:
                for rowid, off, length, kind, ts, id in self.db.execute("SELECT rowid, off, len, kind, ts, id "
                                                                        "FROM entries ORDER BY rowid"):
                    if rowid >> ROW_BITS in gens:
                        out.append((rowid >> ROW_BITS, rowid & mask, off, length, from_text(kind), ts, from_text(id)))
                return out
            for rowid, kind, ts, id, text in self.db.execute("SELECT t.rowid, t.kind, t.ts, t.id, t.text FROM fts JOIN "
                                                             "texts t ON t.rowid = fts.rowid WHERE fts MATCH ? "
                                                             "ORDER BY fts.rowid", (query,)):
                if rowid >> ROW_BITS in gens:
                    if str is not kind.__class__ or str is not id.__class__ or str is not text.__class__:
                        kind, id, text = from_text(kind), from_text(id), from_text(text)  # (lone surrogates)
                    out.append((rowid >> ROW_BITS, rowid & mask, None, None, kind, ts, id, text))
            return out
        return self.guard(read)


class _Damaged(Exception):
    pass
