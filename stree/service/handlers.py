"""Every request the service answers, by type, and the one place a request becomes a response."""

from ..errors import StreeError
from . import browse, navigate, pi, queries
from .protocol import UNSET, RequestError, error_code, failure, success

# type -> handler(served, request) -> data (UNSET: no data)
COMMANDS = dict(pi.COMMANDS)
COMMANDS.update(browse.COMMANDS)
COMMANDS["abort_branch_summary"] = navigate.abort_branch_summary
COMMANDS.update(queries.COMMANDS)

# handlers that may answer later, from a worker thread: handler(served, request, reply)
LATER = {"navigate_tree": navigate.navigate_tree}


def names():
    return sorted(list(COMMANDS) + list(LATER))


def handle(served, request, reply):
    """The response to `request` (a dict), or None when `reply` will be called with it later."""
    id = request.get("id", UNSET)
    kind = request.get("type", UNSET)
    if not isinstance(kind, str) or (kind not in COMMANDS and kind not in LATER):
        shown = kind if isinstance(kind, str) else "undefined" if kind is UNSET else str(kind)
        return failure(id, kind, f"Unknown command: {shown}", "unknown_command")
    try:
        with served.io:
            if kind in LATER:
                data = LATER[kind](served, request, reply)
                if data is None:
                    return None
            else:
                data = COMMANDS[kind](served, request)
        return success(id, kind, data)
    except (RequestError, StreeError) as e:
        return failure(id, kind, str(e), error_code(e), getattr(e, "hint", None))
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as e:  # a bug: the client gets an error and the server goes on
        if served.debug:
            import traceback

            traceback.print_exc()
        return failure(id, kind, f"internal error: {e.__class__.__name__}: {e}", "internal",
                       "a bug in stree: run 'stree --debug serve' and report it")
