"""Every request the service answers, by type, and the one place a request becomes a response.

A request that only reads (or writes a new file whole, export_html) runs under its deadline
(STREE_REQUEST_TIMEOUT, default 300 s) and can be cancelled by `abort` (core.budget: a timer
tick raises in it); it then fails alone (errorCode timeout / cancelled), as it does when it
runs out of memory (too_large), and the server answers the next request. A write is never
cut short: appends are quick, and navigate_tree's summary has abort_branch_summary."""

from ..errors import REPORTED
from . import browse, navigate_tree, pi, queries
from .protocol import UNSET, RequestError, error_code, failure, success

# type -> handler(served, request) -> data (UNSET: no data)
HANDLERS = dict(pi.HANDLERS)
HANDLERS.update(browse.HANDLERS)
HANDLERS["abort_branch_summary"] = navigate_tree.abort_branch_summary
HANDLERS.update(queries.HANDLERS)

HANDLERS["abort"] = lambda served, request: UNSET  # (answered by the server's reader: see server.py)

# handlers that may answer later, from a worker thread: handler(served, request, reply)
LATER = {"navigate_tree": navigate_tree.navigate_tree}

# the requests that may be stopped anywhere: they read, or write a whole new file atomically
INTERRUPTIBLE = {"get_state", "get_messages", "get_entries", "get_tree", "get_session_stats", "export_html",
                 "list_sessions", *queries.HANDLERS}  # (stree's read questions: all of them)


def names():
    return sorted(list(HANDLERS) + list(LATER))


def handle(served, request, reply, cancelled=None):
    """The response to `request` (a dict), or None when `reply` will be called with it later.
    `cancelled`: a threading.Event the client's abort sets."""
    id = request.get("id", UNSET)
    kind = request.get("type", UNSET)
    if not isinstance(kind, str) or (kind not in HANDLERS and kind not in LATER):
        shown = kind if isinstance(kind, str) else "undefined" if kind is UNSET else str(kind)
        return failure(id, kind, f"Unknown command: {shown}", "unknown_command")
    try:
        with served.io:
            if kind in LATER:
                data = LATER[kind](served, request, reply)
                if data is None:
                    return None
            elif kind in INTERRUPTIBLE:
                from ..core.budget import request as budget

                with budget(kind, served.request_timeout, cancelled):
                    data = HANDLERS[kind](served, request)
            else:
                data = HANDLERS[kind](served, request)
        return success(id, kind, data)
    except (RequestError, *REPORTED) as e:
        return failure(id, kind, str(e), error_code(e), getattr(e, "hint", None))
    except MemoryError:
        return failure(id, kind, f"{kind}: the answer did not fit in memory", "too_large",
                       "ask for less (maxCount, a narrower revision or pattern)")
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as e:  # a bug: the client gets an error and the server goes on
        if served.debug:
            import traceback

            traceback.print_exc()
        return failure(id, kind, f"internal error: {e.__class__.__name__}: {e}", "internal",
                       "a bug in stree: run 'stree --debug serve' and report it")
