"""The catalogue: a row per session file and an index of entry text, so `ls --all`,
completion and `grep` answer without reading every session. One interface, two backends:

    stree.storage.catalog.sqlite     <cache>/catalog.sqlite, this user's (the default)
    stree.storage.catalog.postgres   a PostgreSQL database a team shares (--catalog URL);
                                     grep reads it through stree.storage.catalog.libpq

A session row holds what `ls` shows and what `grep` filters on, plus the identity it was
read at (device, inode, size, mtime, ctime, the CRCs of the file's first bytes and of the
bytes before where it stopped, and of the whole file when it was read in the same tick of
the clock as a change: the racy rule of the per-session index, stree.storage.index.racy).

The same concept higher up: stree.core.catalog_refresh keeps it up to date, stree.core.catalog_shared
pushes to and reads a shared one, stree.commands.catalog is the command.

What is common to both backends is here: the columns of a session row, how values that
SQL cannot take are kept, the errors, and the one-line warnings a command prints."""

from .common import (JSON_COLUMNS, NAME, ROW_BITS, SESSION_COLUMNS, Busy, Unavailable, db_path,  # noqa: F401
                     own_names, sqlite3, warn)
from .sqlite import Catalog  # noqa: F401  (the default backend; SQLite itself is imported when opened: common.sqlite3)


def is_own(path):
    """True when the file at `path` is a catalogue stree made (by its content, not its name)."""
    from .identity import probe

    return probe(path)[0] == "own"
