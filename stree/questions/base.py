"""What a read question is made of: its arguments (each declared once: type, default, choices,
minimum, what it means) and the function answering it with the records of the matching
command's --json. The front ends read these: `stree serve` (service/queries.py) takes the
arguments from a request's fields (camelCase), MCP (mcp/reads.py) from a tool call's
arguments (snake_case, with the JSON Schema made from them), the CLI from options
(commands/adapter.py; commands/ask.py for a question with no command of its own). Each front
end says a bad argument its own way (serve: a bad_params error naming the field; MCP: a usage
error naming the argument; the CLI: a usage error naming the option), from the same
declaration."""


class Arg:
    """One argument of a question. `kind`: str, bool, int or list (of strings). `choices`: the
    values it takes (of each item, for a list); `minimum`: of an int; `nonempty`: a list given
    must hold something (serve refuses []); `doc`: what it means (MCP's description of it);
    `serve` / `mcp` / `cli`: whether that front end offers it; `enum`: whether MCP's schema
    lists the choices (else the tool checks them); `positional`: an argument on the command line
    (REV, REV...), as a required string always is. On the command line: `flags`, its spellings
    (default --name-with-dashes); `metavar`; `help`, its line in --help (default `doc`); `dest`,
    the name the command's function and the table of options (stree.argv) know it by (default
    `name`)."""

    def __init__(self, name, kind, doc=None, default=None, choices=None, minimum=None, required=False,
                 nonempty=False, serve=True, mcp=True, cli=True, enum=True, schema=None, positional=False,
                 flags=None, metavar=None, help=None, dest=None):
        self.name = name
        self.kind = kind
        self.doc = doc
        self.default = default
        self.choices = tuple(choices) if choices is not None else None
        self.minimum = minimum
        self.required = required
        self.nonempty = nonempty
        self.serve = serve
        self.mcp = mcp
        self.cli = cli
        self.enum = enum
        self.schema = schema  # MCP's property as it is, when given
        self.positional = positional or (required and kind is str)  # on the CLI: an argument, not an option
        self.flags = tuple(flags) if flags else ("--" + name.replace("_", "-"),)
        self.metavar = metavar
        self.help = help if help is not None else doc
        self.dest = dest or name

    @property
    def wire(self):
        """Its name in a serve request: camelCase (max_count -> maxCount)."""
        head, *rest = self.name.split("_")
        return head + "".join(w.title() for w in rest)

    def mcp_schema(self):
        """The JSON Schema of it in an MCP tool's arguments."""
        if self.schema is not None:
            return self.schema
        spec = {"type": {str: "string", bool: "boolean", int: "integer", list: "array"}[self.kind]}
        if self.kind is str and self.choices is not None and self.enum:
            spec["enum"] = list(self.choices)
        if self.kind is list:
            spec["items"] = {"type": "string"}
        if self.minimum is not None:
            spec["minimum"] = self.minimum
        if self.doc is not None:
            spec["description"] = self.doc
        return spec


class Refused(Exception):
    """Arguments that do not go together: `names` (the arguments, spelled by each front end in
    `message`'s {0}, {1}...); `hint`: what to do instead, on the command line."""

    def __init__(self, message, *names, hint=None):
        super().__init__(message)
        self.message = message
        self.names = names
        self.hint = hint

    def spelled(self, spell):
        return self.message.format(*(spell(n) for n in self.names))


class Question:
    """A read question: `answer(place, **arguments)` gives what the command's --json prints (a
    list of records, or one object), where `place` is the front end's environment (load(session)
    -> (Session, Tree); cwd, agent, agent_dir, session_dir, no_cache). `check(arguments)` raises
    Refused for arguments that do not go together. `serve`: (request type, the data's key: None
    for the object itself) or None; `mcp`: (tool name, result key, title, description, output
    schema) or None; `cli`: (command name, summary, fields of a record, human(record) -> its line
    or None, [(example command line, what it does)]) or None, for a question offered as a
    command of its own by commands/ask.py."""

    def __init__(self, name, answer, args, check=None, serve=None, mcp=None, cli=None):
        self.name = name
        self.answer = answer
        self.args = tuple(args)
        self.check = check
        self.serve = serve
        self.mcp = mcp
        self.cli = cli

    def offered(self, front):
        return [a for a in self.args if getattr(a, front)]


class Loaded:
    """A session already loaded, as a question's place (stree.fastread's)."""

    def __init__(self, session, tree):
        self.loaded = (session, tree)

    def load(self, session=None):
        return self.loaded


def whole(data):
    """A question's answer whole: a list of its records, or its one object."""
    return data if isinstance(data, (list, dict)) else list(data)
