"""What every MCP tool is made of: a name, a description, a JSON Schema for its arguments and a
function (Workspace, arguments) -> a JSON object, the data the CLI's --json gives for the same
question; and the Workspace the server was started with. No MCP SDK here."""

import json
import os

from ..core import workspace as core_workspace
from ..errors import UsageError
from ..output.modes import to_json
from ..questions.table import REVISION_DOC, SESSION_DOC


class Workspace(core_workspace.Workspace):
    """What the server was started with (stree.core.workspace: the global options, the default
    session: -s, else the newest of the directory), whether writes are offered, and the sessions
    read, kept warm between tool calls."""

    def __init__(self, allow_writes=False, **where):
        super().__init__(**where)
        self.allow_writes = allow_writes
        from ..core.warm import Kept

        self._kept = Kept(self.no_cache)  # the sessions read, kept warm between tool calls
        self.pages = None  # (arguments, Tree, drawing) of the tree tool's last page (mcp.reads)
        self.ahead = None  # the tree's page after the last one answered, begun (mcp.reads.Page)
        self.pages_reused = 0  # pages answered from a kept drawing (counted for STREE_DEBUG_STATS)
        self.pages_ahead = 0  # pages begun ahead of their call (counted for STREE_DEBUG_STATS)

    def path(self, session=None):
        """The file of `session` (PATH or id prefix, as -s), by default the server's session."""
        return str(self.session_path(session))

    def load(self, session=None):
        """(Session, Tree) of a session as it is now: read through the index, as the CLI reads it,
        and kept between tool calls with the entries decoded for them (core.warm)."""
        return self._kept.load(os.path.abspath(self.path(session)))


ANSWER_MAX = 32 << 20  # bytes of JSON one tool answer may be (STREE_MCP_ANSWER_MAX)
PAGE_BYTES = 4 << 20  # bytes of records on one page of the tree tool (STREE_MCP_PAGE_BYTES)


def _env_bytes(name, default):
    value = os.environ.get(name, "")
    return int(value) if value.isdigit() and int(value) > 0 else default


def answer_max():
    return _env_bytes("STREE_MCP_ANSWER_MAX", ANSWER_MAX)


def page_bytes():
    return _env_bytes("STREE_MCP_PAGE_BYTES", PAGE_BYTES)


class Encoded:
    """A tool's result given as its JSON text, made already with to_json (the tree tool's page,
    made of its records' texts)."""

    def __init__(self, text):
        self.text = text


class Tool:
    def __init__(self, name, title, description, properties, required, run, result, write=False):
        self.name = name
        self.title = title
        self.description = description
        self.input_schema = {"type": "object", "properties": properties, "required": list(required),
                             "additionalProperties": False}
        self.run = run
        # the result's shape: {key: [records]} (or an object) with each record field described; None:
        # the answer is its JSON text alone, sent once (content; no structuredContent): the tree's pages
        self.output_schema = result
        self.write = write

    def call(self, workspace, arguments):
        """(the tool's result as plain JSON data, what the CLI's --json would print, parsed, or None
        for a tool without output_schema; its JSON text). An answer over ANSWER_MAX is refused: ask
        for less, or page (tree's cursor)."""
        args = _checked(self.input_schema, arguments or {})
        data = self.run(workspace, **args)
        # through the CLI's own JSON writer: non-finite numbers become null, as --json prints them
        text = data.text if data.__class__ is Encoded else to_json(data)
        del data
        if len(text) > answer_max():
            raise UsageError(f"the {self.name} answer is {len(text) >> 20} MiB, over the {answer_max() >> 20} MiB "
                             "an MCP answer may be",
                             hint="ask for less: max_count, filter, search, fewer revisions (tree pages by itself)")
        if self.output_schema is None:  # (text only: never parsed back into objects for the SDK to walk)
            return None, text
        return json.loads(text), text  # (json: msgspec was measured slower on a page, string-heavy)


def _checked(schema, arguments):
    """The arguments, checked against the tool's schema (a client may skip that): a UsageError
    for an unknown name, a missing one or a value of the wrong type."""
    props = schema["properties"]
    # null for an optional argument: as if it were not given (what some clients send)
    arguments = {k: v for k, v in arguments.items() if v is not None or k in schema["required"]}
    for name in arguments:
        if name not in props:
            raise UsageError(f"unknown argument '{name}'; arguments are: {', '.join(props)}")
    for name in schema["required"]:
        if name not in arguments:
            raise UsageError(f"missing argument '{name}'")
    kinds = {"string": str, "boolean": bool, "integer": int, "array": list}
    for name, value in arguments.items():
        spec = props[name]
        kind = kinds[spec["type"]]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise UsageError(f"argument '{name}' must be a{'n' if spec['type'][0] in 'aeiou' else ''} {spec['type']}")
        if kind is list and not all(isinstance(v, str) for v in value):
            raise UsageError(f"argument '{name}' must be a list of strings")
        if "enum" in spec and value not in spec["enum"]:
            raise UsageError(f"argument '{name}' must be one of: {', '.join(spec['enum'])}")
        if kind is int and value < spec.get("minimum", value):
            raise UsageError(f"argument '{name}' must be at least {spec['minimum']}")
    return arguments


SESSION = {"type": "string", "description": SESSION_DOC}
REVISION = REVISION_DOC
