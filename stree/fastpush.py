"""`stree catalog push` answered without click (its import is a fifth of a push that sends
one grown file; psycopg's is most of the rest).

Only `[--catalog URL] catalog push` (--catalog before or after, read by stree.argv), no other
option, into a pipe or a file (a terminal: click's). The push is the command's (stree.core.catalog_shared.push_record) and so is what it
prints (stree.output.catalog_push); errors are said by stree's one boundary
(stree.errors.guarded), as click's path says them. STREE_NO_FAST/STREE_DEBUG/STREE_NO_CACHE/
STREE_DEBUG_STATS: click does the whole job; tests/cli/test_catalog_push_fast.py compares the
two."""

import os
import sys

ENV_OFF = ("STREE_NO_FAST", "STREE_DEBUG", "STREE_NO_CACHE", "STREE_DEBUG_STATS")


def run(argv):
    """The exit code of a push answered here, or None: click answers it."""
    if any(os.environ.get(name) for name in ENV_OFF) or sys.stdout.isatty():
        return None
    from .argv import parse

    parsed = parse(argv, {"catalog": set()}, {"catalog"})  # (stree.argv: the grammar generated from click)
    if parsed is None or parsed[2] != ["push"] or parsed[1].get("catalog") == "":
        return None
    url = parsed[1].get("catalog")
    if url is not None:  # (as click's --catalog sets it, for every layer)
        os.environ["STREE_CATALOG"] = url
    from .core.catalog_shared import configured

    try:
        shared = configured()
    except Exception:  # (not a postgresql:// URL: click says it)
        return None
    if shared is None:  # (no shared catalogue: click says so)
        return None
    from .errors import OK, guarded
    from .format.terminal import inert

    code = guarded(lambda: _push(shared), inert)
    return OK if code is None else code


def _push(url):
    from .core.catalog_shared import push_record
    from .output.catalog_push import pushed
    from .output.modes import Output

    rec = push_record(url)
    out = Output()
    out.record(rec, pushed(rec))
    out.close()
