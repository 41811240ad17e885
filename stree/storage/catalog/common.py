"""What both catalogue backends share (stree.storage.catalog): the columns of a session row,
how values SQL cannot take are kept, the errors, and the one-line warnings."""

import os
import sys

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


def row_of(values):
    import json

    row = dict(zip(SESSION_COLUMNS, values))
    texts = [row[c] for c in JSON_COLUMNS]  # (one JSON array decoded, not one text a column)
    for c, value in zip(JSON_COLUMNS, json.loads("[" + ",".join("null" if t is None else t for t in texts) + "]")):
        row[c] = value
    return row


def rows_of(many):
    """row_of for many rows: their JSON columns decoded in one json.loads (the catalogue's
    freshness check reads every session row on each command)."""
    import json

    many = list(many)
    jsons = [SESSION_COLUMNS.index(c) for c in JSON_COLUMNS]
    text = ",".join("null" if values[i] is None else values[i] for values in many for i in jsons)
    decoded = json.loads("[" + text + "]")
    if len(decoded) != len(many) * len(jsons):  # (a damaged column holding two values: row by row,
        return [row_of(values) for values in many]  # so that it shifts no other row's columns)
    decoded = iter(decoded)
    out = []
    for values in many:
        row = dict(zip(SESSION_COLUMNS, values))
        for c, value in zip(JSON_COLUMNS, decoded):
            row[c] = value
        out.append(row)
    return out


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
