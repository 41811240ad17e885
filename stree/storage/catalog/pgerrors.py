"""The errors of the shared catalogue on PostgreSQL (stree.storage.catalog.postgres), of
either client it reads with (psycopg, or libpq by ctypes: stree.storage.catalog.libpq, which
words its errors as psycopg does): each said as one line with a hint (Unavailable)."""

import os
import sys

from .common import Unavailable

HINT = "check the URL (--catalog, STREE_CATALOG or the config's `catalog`) and that the server is running"


def describe(url):
    """The URL without its password (for messages)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        if parts.password:
            netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
            return urlunsplit(parts._replace(netloc=netloc))
    except ValueError:
        pass
    return url


def load_psycopg():
    """psycopg, its log kept off stderr: what went wrong is said once, by stree (failure()). Its
    warnings otherwise reach stderr through logging's last resort: a push whose connection is
    lost in the middle of a COPY printed `error ignored terminating <psycopg.Copy [BAD] at
    0x...>: the connection is lost` above stree's own error. With --debug (or STREE_DEBUG) they
    are printed, as the entry point decides it (stree.entrypoint, stree.cli.run)."""
    try:
        import psycopg
    except ImportError:
        raise Unavailable("a PostgreSQL catalogue needs psycopg 3, which is not installed",
                          hint="pip install 'stree[pg]' (psycopg[binary]), or drop --catalog / STREE_CATALOG") from None
    import logging

    log = logging.getLogger("psycopg")
    if not log.handlers:
        debug = "--debug" in sys.argv[1:] or os.environ.get("STREE_DEBUG")
        log.addHandler(logging.StreamHandler() if debug else logging.NullHandler())
    return psycopg


def failure(e, url):
    """An Unavailable of one line with a hint, for an error of either client (psycopg's, or
    stree.storage.catalog.libpq's, which words it as psycopg does)."""
    text = " ".join(str(e).split()) or e.__class__.__name__
    where = describe(url)
    timeout, denied, lost = kind(e)
    if timeout:
        return Unavailable(f"catalogue {where}: statement timeout ({text})",
                           hint="raise the server's statement_timeout for this role, or push fewer sessions at once "
                                "(--since, --agent)")
    if denied:
        return Unavailable(f"catalogue {where}: permission denied ({text})",
                           hint="ask the catalogue's admin to GRANT stree_pusher (to push) or stree_reader (to read "
                                "every row) to your role")
    if lost:
        return Unavailable(f"catalogue {where}: connection failed or lost ({text})",
                           hint=HINT + "; a push stopped midway is completed by running it again")
    return Unavailable(f"catalogue {where}: {text}", hint=HINT)


def kind(e):
    """(a statement timeout, permission denied, the server or the connection failed) of `e`."""
    from . import libpq

    if isinstance(e, libpq.Error):
        return e.sqlstate == libpq.TIMEOUT_STATE, e.sqlstate == libpq.PRIVILEGE_STATE, e.operational
    psycopg = load_psycopg()
    return (isinstance(e, psycopg.errors.QueryCanceled), isinstance(e, psycopg.errors.InsufficientPrivilege),
            isinstance(e, psycopg.OperationalError))


def has_psycopg():
    import importlib.util

    return importlib.util.find_spec("psycopg") is not None
