"""Whose file a catalogue is, from its first 100 bytes (SQLite's header: the magic, and the
application id stree sets when it makes one), read without SQLite, which might write: stree's
own, an older stree's (no application id yet, its schema compared), or another program's,
which stree never writes nor deletes (stree.storage.catalog.sqlite)."""

import os
import stat

APP_ID = 0x73747265  # "stre": PRAGMA application_id, bytes 68-71 of the file
MAGIC = b"SQLite format 3\x00"

# how a catalogue of stree before the application id (schema 7 and older) begins: stree's too
LEGACY = ("CREATE TABLE meta(key TEXT PRIMARY KEY, value)",
          "CREATE TABLE sessions(path TEXT PRIMARY KEY, root TEXT, agent TEXT, state TEXT, gen INTEGER")


def probe(path):
    """('absent' | 'own' | 'legacy' | 'foreign', why): whose file `path` is, from its first
    100 bytes (SQLite's header), read without SQLite (which might write)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "absent", None
    except OSError as e:
        return "foreign", str(e)
    if not stat.S_ISREG(st.st_mode):
        return "foreign", "not a regular file"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        return "foreign", str(e)
    try:
        head = os.pread(fd, 100, 0)
    finally:
        os.close(fd)
    if not head:
        return "foreign", "an empty file"
    if len(head) < 100 or not head.startswith(MAGIC):
        return "foreign", "not an SQLite database"
    app = int.from_bytes(head[68:72], "big")
    if app == APP_ID:
        return "own", None
    if app == 0 and legacy(path):
        return "legacy", None
    if app:
        return "foreign", f"an SQLite database of another program, application id 0x{app:08x}"
    return "foreign", "an SQLite database stree did not make (no application id)"


def legacy(path):
    """True for a catalogue of an older stree (no application id yet): read-only, immutable
    (no lock, no -shm made), its schema compared with what that stree wrote."""
    from urllib.parse import quote

    from .common import sqlite3 as stdlib_sqlite

    sqlite3 = stdlib_sqlite()
    try:
        db = sqlite3.connect(f"file:{quote(path)}?mode=ro&immutable=1", uri=True)
        try:
            sql = {r[0]: r[1] or "" for r in db.execute("SELECT name, sql FROM sqlite_master WHERE type='table'")}
        finally:
            db.close()
    except sqlite3.Error:
        return False
    return sql.get("meta") == LEGACY[0] and sql.get("sessions", "").startswith(LEGACY[1])
