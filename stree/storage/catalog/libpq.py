"""libpq through ctypes: the few calls the shared catalogue's grep reads with
(stree.storage.catalog.postgres, `Catalog(url, light=True)`), so that a grep of a PostgreSQL
catalogue does not import psycopg. libpq is PostgreSQL's own client library, the one psycopg
itself calls; what psycopg adds on top costs a one-shot process more than the whole grep:
`import psycopg` runs its package's __init__, which imports all of it (asyncio and ssl,
importlib.metadata, logging, typing_extensions: ~150 ms of CPU, more than a SQLite grep's
whole process). Here: a connection, statements with text parameters and text results
(PQsendQueryParams), values converted by their type's OID, and errors said as psycopg says them
(the server's message without its severity, the SQLSTATE beside it).

Which libpq: STREE_LIBPQ=PATH names the one file to load (a path that does not load, e.g.
`none`, makes the caller use psycopg); else the one psycopg[binary] bundles (found beside
`psycopg_binary` by importlib's path finder, which runs nothing of it), else the system's
(libpq.so.5). None that loads, or a connection whose client encoding is not UTF-8: Missing,
and the caller uses psycopg, as without this module. Not ctypes.util.find_library: it runs
processes (ldconfig, gcc) to look."""

import os
import sys

KNOB = "STREE_LIBPQ"
TIMEOUT_STATE = "57014"  # query_canceled: a statement timeout
PRIVILEGE_STATE = "42501"  # insufficient_privilege
# the SQLSTATE classes psycopg raises as OperationalError (psycopg.errors._base_exc_map): the
# server or the connection failed, not the statement
_OPERATIONAL = {"08", "27", "28", "2F", "38", "39", "3B", "40", "53", "54", "55", "57", "58"}

_OK, _COMMAND_OK, _TUPLES_OK = 0, 1, 2  # CONNECTION_OK; PGRES_COMMAND_OK, PGRES_TUPLES_OK
_SEVERITY, _SQLSTATE = ord("S"), ord("C")  # PG_DIAG_SEVERITY (localized), PG_DIAG_SQLSTATE
_lib = None  # the loaded library, False when none loads


class Missing(Exception):
    """No libpq to use here: the caller uses psycopg."""


class Error(Exception):
    """A failure, worded as psycopg words it: `sqlstate` (None for a connection that failed or
    was lost without the server saying why); `operational` as psycopg's OperationalError (the
    server or the connection, not the statement)."""

    def __init__(self, message, sqlstate=None):
        super().__init__(message)
        self.sqlstate = sqlstate
        self.operational = sqlstate is None or sqlstate[:2] in _OPERATIONAL or sqlstate[:1] in "FH"


def candidates():
    """The libpq files to try, in order."""
    named = os.environ.get(KNOB)
    if named is not None:
        return [named]
    out = []
    from importlib.machinery import PathFinder  # (importlib.util's find_spec without its imports)

    try:
        spec = PathFinder.find_spec("psycopg_binary")
    except (ImportError, ValueError):
        spec = None
    for where in (spec.submodule_search_locations or []) if spec is not None else []:
        for libs in (where + ".libs", os.path.join(where, ".dylibs")):  # (auditwheel's, delocate's)
            try:
                names = sorted(n for n in os.listdir(libs) if n.startswith("libpq"))
            except OSError:
                continue
            out += [os.path.join(libs, n) for n in names]
    out.append({"darwin": "libpq.5.dylib", "win32": "libpq.dll"}.get(sys.platform, "libpq.so.5"))
    return out


def library():
    """The loaded libpq, its functions typed; Missing when none loads."""
    global _lib
    if _lib is None:
        import ctypes

        found = False
        for path in candidates():
            try:
                found = _typed(ctypes.CDLL(path))
                break
            except (OSError, AttributeError):  # (not there, not a libpq, or too old a one)
                continue
        _lib = found  # (set once loaded: a thread that asks meanwhile loads it too, never sees it missing)
    if not _lib:
        raise Missing(f"no libpq loads ({KNOB}, psycopg[binary]'s, the system's)")
    return _lib


def _typed(lib):
    from ctypes import POINTER, c_char_p, c_int, c_size_t, c_uint, c_void_p

    for name, args, result in (
            ("PQconnectdbParams", [POINTER(c_char_p), POINTER(c_char_p), c_int], c_void_p),
            ("PQstatus", [c_void_p], c_int),
            ("PQerrorMessage", [c_void_p], c_char_p),
            ("PQparameterStatus", [c_void_p, c_char_p], c_char_p),
            ("PQfinish", [c_void_p], None),
            ("PQsendQueryParams", [c_void_p, c_char_p, c_int, c_void_p, POINTER(c_char_p), c_void_p, c_void_p,
                                   c_int], c_int),
            ("PQgetResult", [c_void_p], c_void_p),
            ("PQisBusy", [c_void_p], c_int),
            ("PQconsumeInput", [c_void_p], c_int),
            ("PQsocket", [c_void_p], c_int),
            ("PQgetCancel", [c_void_p], c_void_p),
            ("PQcancel", [c_void_p, c_char_p, c_int], c_int),
            ("PQfreeCancel", [c_void_p], None),
            ("PQresultStatus", [c_void_p], c_int),
            ("PQresultErrorMessage", [c_void_p], c_char_p),
            ("PQresultErrorField", [c_void_p, c_int], c_char_p),
            ("PQntuples", [c_void_p], c_int),
            ("PQnfields", [c_void_p], c_int),
            ("PQftype", [c_void_p, c_int], c_uint),
            ("PQgetvalue", [c_void_p, c_int, c_int], c_char_p),
            ("PQgetisnull", [c_void_p, c_int, c_int], c_int),
            ("PQclear", [c_void_p], None),
            ("PQunescapeBytea", [c_char_p, POINTER(c_size_t)], c_void_p),
            ("PQfreemem", [c_void_p], None)):
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, result
    return lib


def connect(url, connect_timeout):
    """A Connection to `url` (autocommit, as psycopg's with autocommit=True); Error when it
    cannot be made, Missing when there is no libpq or the connection's client encoding is not
    UTF-8 (psycopg decodes the others). libpq's own wait (PQconnectdbParams), at most
    `connect_timeout` seconds per address: a Ctrl-C meanwhile is seen after it."""
    import ctypes

    lib = library()
    words = (ctypes.c_char_p * 3)(b"dbname", b"connect_timeout", None)  # (the URL's connect_timeout overridden,
    values = (ctypes.c_char_p * 3)(url.encode(), str(connect_timeout).encode(), None)  # as psycopg's kwarg does)
    conn = lib.PQconnectdbParams(words, values, 1)
    if not conn:
        raise MemoryError("libpq could not allocate a connection")
    if lib.PQstatus(conn) != _OK:
        message = _text(lib.PQerrorMessage(conn))
        lib.PQfinish(conn)
        raise Error(f"connection failed: {_clean(message)}")
    if lib.PQparameterStatus(conn, b"client_encoding") != b"UTF8":
        lib.PQfinish(conn)
        raise Missing("the connection's client encoding is not UTF-8")
    return Connection(lib, conn)


class Rows(list):
    """A statement's rows (tuples), read whole."""

    def fetchone(self):
        return self[0] if self else None


class Connection:
    """What the catalogue's read path asks of a connection: execute(sql, args) with psycopg's
    `%s` placeholders (sent as parameters, never in the text), transaction(), close()."""

    def __init__(self, lib, conn):
        self.lib = lib
        self.conn = conn

    def execute(self, sql, args=()):
        """The rows of `sql` with `args`; Error as psycopg raises it: from the first failed result
        (a server's FATAL before the connection closed), else the connection's own failure."""
        import ctypes

        lib, conn = self.lib, self.conn
        if conn is None:
            raise Error("the connection is closed")
        sql, n = _numbered(sql)
        if n != len(args):
            raise TypeError(f"the query has {n} placeholders but {len(args)} parameters were passed")
        values = (ctypes.c_char_p * max(n, 1))(*[_param(a) for a in args])
        if not lib.PQsendQueryParams(conn, sql.encode(), n, None, values, None, None, 0):
            raise Error(f"sending query and params failed: {self._said()}")
        rows = failed = None
        try:
            while True:
                try:
                    self._wait()
                except Error:
                    if failed is not None:  # (the server said why before it closed the connection)
                        break
                    raise
                res = lib.PQgetResult(conn)
                if not res:
                    break
                try:
                    status = lib.PQresultStatus(res)
                    if status in (_COMMAND_OK, _TUPLES_OK):
                        rows = _rows(lib, res) if rows is None else rows
                    elif failed is None:
                        failed = _failure(lib, res)
                finally:
                    lib.PQclear(res)
        except KeyboardInterrupt:
            self._cancel()
            raise
        if failed is not None:
            raise failed
        if rows is None:
            raise Error("got no result from the query")
        return rows

    def _wait(self):
        """Until the next result is whole: waiting in select (which Ctrl-C interrupts, where
        libpq's own wait would not), reading what came (PQconsumeInput), as psycopg waits."""
        lib, conn = self.lib, self.conn
        if not lib.PQisBusy(conn):
            return
        import select

        fd = lib.PQsocket(conn)
        while True:
            if fd < 0:
                raise Error(f"consuming input failed: {self._said()}")
            select.select([fd], [], [])
            if not lib.PQconsumeInput(conn):
                raise Error(f"consuming input failed: {self._said()}")
            if not lib.PQisBusy(conn):
                return

    def _cancel(self):
        """Ask the server to stop the statement running (after Ctrl-C, as psycopg does)."""
        import ctypes

        lib = self.lib
        cancel = lib.PQgetCancel(self.conn)
        if cancel:
            said = ctypes.create_string_buffer(256)
            lib.PQcancel(cancel, said, len(said))
            lib.PQfreeCancel(cancel)

    def _said(self):
        return _clean(_text(self.lib.PQerrorMessage(self.conn))) or "no error details available"

    def transaction(self):
        return _Transaction(self)

    def close(self):
        if self.conn is not None:
            conn, self.conn = self.conn, None
            self.lib.PQfinish(conn)

    def __del__(self):
        self.close()


class _Transaction:
    """BEGIN ... COMMIT, or ROLLBACK after an error (psycopg's transaction() on autocommit)."""

    def __init__(self, db):
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN")
        return self

    def __exit__(self, kind, *_):
        if kind is None:
            self.db.execute("COMMIT")
            return
        try:
            self.db.execute("ROLLBACK")
        except Error:  # (the connection lost with it: the first error is the one to say)
            pass


def _numbered(sql):
    """(`sql` with psycopg's %s as $1, $2, ... and %% as %, the number of parameters)."""
    if "%" not in sql:
        return sql, 0
    out, n, i = [], 0, 0
    while True:
        j = sql.find("%", i)
        if j < 0:
            out.append(sql[i:])
            return "".join(out), n
        kind = sql[j + 1:j + 2]
        if kind not in ("s", "%"):
            raise ValueError(f"only %s and %% placeholders: {sql[j:j + 2]!r}")
        n += kind == "s"
        out.append(sql[i:j] + (f"${n}" if kind == "s" else "%"))
        i = j + 2


def _param(value):
    """A parameter as text (the server casts it by where it stands, or by its ::type)."""
    if value is None:
        return None
    if value.__class__ is bool:
        return b"t" if value else b"f"
    if isinstance(value, (int, float, str)):
        return str(value).encode() if not isinstance(value, str) else value.encode()
    if isinstance(value, (list, tuple)):  # an array: every element quoted, as the array input takes it
        items = ("NULL" if v is None else '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'
                 for v in value)
        return ("{" + ",".join(items) + "}").encode()
    raise TypeError(f"cannot send a {value.__class__.__name__} to PostgreSQL here")


def _rows(lib, res):
    getvalue, isnull = lib.PQgetvalue, lib.PQgetisnull
    ntuples, nfields = lib.PQntuples(res), lib.PQnfields(res)
    loads = [_LOADERS.get(lib.PQftype(res, c), _text) for c in range(nfields)]
    columns = list(enumerate((lambda v: _bytea(v, lib)) if load is _bytea else load for load in loads))
    return Rows(tuple([None if not (value := getvalue(res, r, c)) and isnull(res, r, c) else load(value)
                       for c, load in columns]) for r in range(ntuples))


def _text(value):
    return value.decode("utf-8", "replace") if value else ""


def _numeric(value):
    """An int when whole (the catalogue's numeric columns, device and inode numbers, which
    psycopg gives as Decimal and the catalogue makes int), else a Decimal, as psycopg's."""
    if value.lstrip(b"-").isdigit():
        return int(value)
    from decimal import Decimal  # (~5 ms to import: not for a whole number)

    return Decimal(value.decode())


def _bytea(value, lib):
    import ctypes

    size = ctypes.c_size_t()
    ptr = lib.PQunescapeBytea(value, ctypes.byref(size))
    if not ptr:
        raise MemoryError("libpq could not unescape a bytea value")
    try:
        return ctypes.string_at(ptr, size.value)
    finally:
        lib.PQfreemem(ptr)


_LOADERS = {16: lambda v: v == b"t", 17: _bytea, 20: int, 21: int, 23: int, 26: int, 700: float, 701: float,
            1700: _numeric}  # bool, bytea, int8, int2, int4, oid, float4, float8, numeric; any other: text
_LOADERS.update(dict.fromkeys((25, 19, 1042, 1043, 705), bytes.decode))  # text, name, char, varchar, unknown


def _failure(lib, res):
    """The Error of a failed statement, with its SQLSTATE; its message as psycopg says it."""
    state = lib.PQresultErrorField(res, _SQLSTATE)
    message = _text(lib.PQresultErrorMessage(res))
    severity = _text(lib.PQresultErrorField(res, _SEVERITY))
    if severity and message.startswith(severity + ":"):
        message = message[len(severity) + 1:]
    return Error(message.strip() or "no error details available", state.decode() if state else None)


def _clean(message):
    """libpq's message of a connection without its severity ("FATAL:  "), as psycopg says it."""
    head, sep, rest = message.partition(":  ")
    if sep and head.isupper() and head.isalpha():
        message = rest
    return message.strip()
