"""pi's RPC framing (rpc-mode.ts of pi 1.6.0): one JSON object per LF-terminated line.

A response repeats the request's id (left out when the request had none: pass UNSET) and its type as
`command`; `data` is left out when a command answers nothing (set_label, ...), as pi does.
A failure is `success: false` with `error` (pi's message text), and, stree's addition,
`errorCode` (what kind of failure, for clients to branch on) and sometimes `hint`."""

from ..errors import Ambiguous, NOT_FOUND, USAGE, MODEL, CONFLICT, BAD_FILE, REPORTED

UNSET = object()

# errorCode values: the typed errors a client can branch on
ERROR_CODES = ("parse", "unknown_command", "bad_params", "not_found", "ambiguous", "bad_file", "model",
               "conflict", "busy", "cancelled", "timeout", "too_large", "internal")


class RequestError(Exception):
    """A request that fails with `errorCode` `code` and pi's `message`."""

    def __init__(self, message, code="bad_params", hint=None):
        super().__init__(message)
        self.code = code
        self.hint = hint


def success(id, command, data=UNSET):
    out = {"id": id} if id is not UNSET else {}
    out.update(type="response", command=command, success=True)
    if data is not UNSET:
        out["data"] = data
    return out


def failure(id, command, message, code, hint=None):
    out = {"id": id} if id is not UNSET else {}
    out["type"] = "response"
    if command is not UNSET:  # (pi: the type as sent; left out when the request had none)
        out["command"] = command
    out.update(success=False, error=message, errorCode=code)
    if hint:
        out["hint"] = hint
    return out


def error_code(exc):
    """The errorCode of an exception a command raised."""
    from ..core.budget import Cancelled, DeadlineExceeded

    if isinstance(exc, RequestError):
        return exc.code
    if isinstance(exc, Cancelled):
        return "cancelled"
    if isinstance(exc, DeadlineExceeded):
        return "timeout"
    if isinstance(exc, MemoryError):
        return "too_large"
    if isinstance(exc, Ambiguous):
        return "ambiguous"
    if isinstance(exc, REPORTED):
        return {NOT_FOUND: "not_found", USAGE: "bad_params", MODEL: "model", CONFLICT: "conflict",
                BAD_FILE: "bad_file"}.get(exc.code, "bad_file")
    return "internal"


def parse_line(line):
    """A request object from one line (bytes, without its LF): RequestError('parse') when it is
    not JSON, or not an object with a string `type`."""
    import json

    if line.endswith(b"\r"):
        line = line[:-1]
    try:
        text = line.decode("utf-8")
        request = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise RequestError(f"Failed to parse command: {_reason(e)}", "parse") from None
    if not isinstance(request, dict):
        raise RequestError("Failed to parse command: a command is a JSON object", "parse")
    return request


def _reason(e):
    if isinstance(e, UnicodeDecodeError):
        return "not UTF-8"
    if isinstance(e, RecursionError):
        return "nested too deeply"
    return str(e)


# -- parameters ---------------------------------------------------------------

TYPES = {str: "a string", bool: "true or false", int: "an integer", dict: "an object", list: "an array"}


def param(request, name, kind, required=False, default=None, choices=None):
    """request[name], checked: a missing required field or a value of the wrong type is a
    bad_params error naming the field."""
    if name not in request or request[name] is None:
        if required:
            raise RequestError(f"{request.get('type')}: missing field '{name}' ({TYPES[kind]})")
        return default
    value = request[name]
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        raise RequestError(f"{request.get('type')}: field '{name}' must be {TYPES[kind]}")
    if choices is not None and value not in choices:
        raise RequestError(f"{request.get('type')}: field '{name}' must be one of "
                           + ", ".join(repr(c) for c in choices))
    return value


class Texts:
    """A JSON array whose items are made already, as UTF-8 bytes (kept by a warm server:
    core.warm), put into the answer as they are. A field of a response's data."""

    def __init__(self, texts):
        self.texts = texts


_SPLICE = "\x00stree-texts\x00"


def encode(record):
    """One record as the bytes of its line (JSON as pi's JSON.stringify writes it); a Texts
    field of its data is spliced in as it is."""
    data = record.get("data") if record.__class__ is dict else None
    if not (isinstance(data, dict) and any(v.__class__ is Texts for v in data.values())):
        return (_encode_text(record) + "\n").encode("utf-8", errors="surrogatepass")
    spliced = [v.texts for v in data.values() if v.__class__ is Texts]
    record = dict(record, data={k: (_SPLICE if v.__class__ is Texts else v) for k, v in data.items()})
    mark = json_bytes(_SPLICE)
    parts = json_bytes(record).split(mark)
    out = [parts[0]]
    for texts, part in zip(spliced, parts[1:]):
        items = [b","] * (2 * len(texts) - 1) if texts else []
        items[::2] = texts
        out += [b"["] + items + [b"]", part]
    out.append(b"\n")
    return b"".join(out)  # (one copy of the items)


def json_bytes(value):
    """The JSON text of one value as encode() spells it, in UTF-8."""
    return _encode_text(value).encode("utf-8", errors="surrogatepass")


def _encode_text(record):
    from ..output.modes import to_json

    try:
        return to_json(record)
    except RecursionError:  # a tree nested deeper than Python's stack (get_tree of a long chain)
        return _deep_json(record, to_json)


def _deep_json(value, scalar):
    """JSON text of `value` without recursion, with the same spelling as to_json. The tree's
    nesting is in its nodes ("children"): any other object (an entry) is written whole by
    to_json, fast; only one nested too deeply itself is walked here."""
    out = []
    keys = {}  # key -> its text (a tree has few distinct keys)
    stack = [("v", value)]
    while stack:
        kind, item = stack.pop()
        if kind == "s":  # literal text
            out.append(item)
            continue
        if isinstance(item, dict) and "children" not in item:
            try:
                out.append(scalar(item))
                continue
            except RecursionError:
                pass
        elif isinstance(item, dict) and isinstance(item["children"], list):  # a node: its fields whole,
            rest = {k: v for k, v in item.items() if k != "children"}  # then its children (written last)
            try:
                head = scalar(rest)[:-1]
            except RecursionError:
                head = None
            if head is not None:
                stack.append(("s", "}"))
                stack.append(("v", item["children"]))
                stack.append(("s", head + ("," if rest else "") + '"children":'))
                continue
        if isinstance(item, dict):
            parts = [("s", "}")]
            for n, (k, v) in enumerate(reversed(list(item.items()))):
                parts.append(("v", v))
                text = keys.get(k)
                if text is None:
                    text = keys[k] = scalar(str(k)) + ":"
                parts.append(("s", text))
                if n < len(item) - 1:
                    parts.append(("s", ","))
            parts.append(("s", "{"))
            stack.extend(parts)
        elif isinstance(item, (list, tuple)):
            parts = [("s", "]")]
            for n, v in enumerate(reversed(item)):
                parts.append(("v", v))
                if n < len(item) - 1:
                    parts.append(("s", ","))
            parts.append(("s", "["))
            stack.extend(parts)
        else:
            out.append(scalar(item))
    return "".join(out)
