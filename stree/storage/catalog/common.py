"""What both catalogue backends share (stree.storage.catalog): the columns of a session row,
how values SQL cannot take are kept, the errors, and the one-line warnings."""

import os
import sys

from ...format.stdlib import sqlite_core

NAME = "catalog.sqlite"
ROW_BITS = 32

SESSION_COLUMNS = (
    "path", "root", "agent", "state", "gen", "dev", "ino", "size", "mtime_ns", "ctime_ns", "racy_crc", "covered",
    "head_crc", "window_crc", "ok", "rows", "id", "cwd", "name", "first_message", "created", "activity", "entries",
    "messages", "branch_points", "labels", "models", "input", "output", "cache_read", "cache_write",
    "cost", "parent_session", "headerless", "path_rows", "error",
)

# columns kept as JSON text: any value a header may hold (a number for a timestamp, a string
# with a lone surrogate, which UTF-8 cannot take), read back exactly as it was
JSON_COLUMNS = ("path", "root", "id", "cwd", "name", "first_message", "created", "parent_session", "error")


class Unavailable(Exception):
    """No catalogue this time (SQLite without FTS5, a database that cannot be repaired, an
    unwritable cache, a file that is not stree's): the caller reads the session files.
    `hint`: what the user can do about it, when there is something."""

    def __init__(self, message, hint=None):
        super().__init__(message)
        self.hint = hint


class Busy(Exception):
    """Another process is writing the catalogue: the caller answers from what it holds."""


def sqlite3():
    """The standard library's SQLite: its C core `_sqlite3`, which holds `connect`, the
    connection and the error classes (the very objects the `sqlite3` package exports), without
    the package's `dbapi2`, whose default adapters of dates import `datetime` and `math`
    (2-3 ms of a warm grep's 40: stree binds only numbers, text and bytes), nor the functools it
    takes one function of (stree.format.stdlib). The package itself where the core lacks
    `connect` (another Python)."""
    try:
        module = sqlite_core()
    except ImportError:
        module = None
    if module is None or not hasattr(module, "connect") or not hasattr(module, "DatabaseError"):
        import sqlite3 as module
    return module


def db_path():
    from ..cachedir import cache_dir

    return os.path.join(cache_dir(), NAME)


def own_names():
    return (NAME, NAME + "-wal", NAME + "-shm", NAME + "-journal")


def enc(value):
    import json

    return None if value is None else json.dumps(value)


def as_text(value):
    """A string SQL can take as it is (TEXT), or its bytes when it holds a lone surrogate;
    from_text reads either back."""
    if value.__class__ is not str:
        return value
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass")


def from_text(value):
    if value.__class__ in (bytes, memoryview):
        return bytes(value).decode("utf-8", "surrogatepass")
    return value


def index_text(text):
    """Text an index can take: a lone surrogate (and NUL, which PostgreSQL's text refuses)
    becomes U+FFFD, a separator for the tokenizers: the index still narrows."""
    try:
        text.encode("utf-8")
        ok = True
    except UnicodeEncodeError:
        ok = False
    if ok and "\x00" not in text:
        return text
    import re

    return re.sub("[\ud800-\udfff\x00]", "\ufffd", text)


def row_of(values, columns=SESSION_COLUMNS):
    """The session row of the values of `columns` as the database holds them."""
    return rows_of([values], columns)[0]


def rows_of(many, columns=SESSION_COLUMNS):
    """row_of for many rows (the catalogue's freshness check reads every session row on each
    command): a JSON column holding a plain string is read as it is, the others decoded in one
    json.loads (json is not even imported when there are none)."""
    jsons = [(i, c) for i, c in enumerate(columns) if c in JSON_COLUMNS]
    out, rest = [], []  # rest: (row, [(column, text)]) of what was left to json
    for values in many:
        row = dict(zip(columns, values))
        left = []
        for i, c in jsons:
            text = values[i]
            if text is None:
                continue
            inner = text[1:-1] if text.__class__ is str and len(text) > 1 and text[0] == '"' == text[-1] else None
            if inner is not None and inner.isprintable() and '"' not in inner and "\\" not in inner:
                row[c] = inner  # (a string without escapes: enc writes every other one with a backslash)
            else:
                left.append((c, text))
        if left:
            rest.append((row, left))
        out.append(row)
    if rest:
        import json

        texts = [text for _, left in rest for _, text in left]
        decoded = json.loads("[" + ",".join(texts) + "]")
        if len(decoded) != len(texts):  # (a damaged column holding two values: row by row,
            for row, left in rest:      # so that it shifts no other row's columns)
                _decoded(row, left, json.loads("[" + ",".join(text for _, text in left) + "]"))
        else:
            decoded = iter(decoded)
            for row, left in rest:
                _decoded(row, left, decoded)
    return out


def _decoded(row, left, values):
    for (c, _), value in zip(left, values):
        row[c] = value


def values_of(row):
    return [enc(row.get(c)) if c in JSON_COLUMNS else row.get(c) for c in SESSION_COLUMNS]


_SAID = set()


def warn(message, hint=None):
    """A warning on stderr, once per process (a command may open the catalogue twice)."""
    if message in _SAID:
        return
    _SAID.add(message)
    from ...format.terminal import inert

    print(f"stree: warning: {inert(message, oneline=True)}", file=sys.stderr)
    if hint:
        print(f"hint: {inert(hint, oneline=True)}", file=sys.stderr)
