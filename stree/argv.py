"""A command line read without click, for the fast paths (stree.entrypoint, stree.fastread,
stree.fastwrite, stree.fastgrep, stree.fastpush), from the grammar generated from the click
definitions (stree/argv_table.py, written with the completion table by
tools/gen_complete_table.py; a test fails when it is stale): the same spellings, dests,
choices and operand counts as click's, so a plain command line gives what click would give
the command.

Only plain spellings are read: `--opt VALUE`, `--opt=VALUE`, `-o VALUE`, flags alone. Anything
else (another option, an option given twice, a value click would refuse, `--`, `-oVALUE`,
--help) is None: click reads the command line again and does the whole job, errors included.
The global options read here are those stree.globalopts marks `fast`, or those the caller
answers (fastgrep: --catalog, --agent-dir, --session-dir). Imports no click, nor json."""


def grammar(command):
    """({spelling: [dest, takes, choices]} of the global options, {"options": {...}, "operands":
    most or None} of `command`, or None when there is no such command). `takes`: flag, off (a
    flag's --no- spelling), value, count (a number, 0 or more)."""
    from .argv_table import COMMANDS, GLOBAL

    return GLOBAL, COMMANDS.get(command)


def parse(argv, commands, answered=None):
    """(command, {dest: value}, operands) of a plain `[global options] COMMAND [options]
    [operands]` (global options may also follow the command, as click takes them), or None.
    `commands`: {command: the dests of its options the caller answers}; `answered`: the dests
    of the global options it answers (default: those stree.globalopts marks `fast`)."""
    i = 0
    got = {}
    start = [w for w in argv if w in commands][:1]
    if not start:
        return None
    globals_, spec = grammar(start[0])
    if answered is None:
        from .globalopts import fast_dests

        answered = fast_dests()
    fast = answered
    globals_ = {s: row for s, row in globals_.items() if row[0] in fast}
    while i < len(argv) and argv[i] not in commands:
        i = _option(argv, i, globals_, got)
        if i is None:
            return None
    if i >= len(argv):
        return None
    command = argv[i]
    if command != start[0]:  # (the first command word was an option's value)
        globals_, spec = grammar(command)
        globals_ = {s: row for s, row in globals_.items() if row[0] in fast}
    if spec is None:
        return None
    known = {s: row for s, row in spec["options"].items() if row[0] in commands[command]}
    known.update(globals_)
    operands = []
    i += 1
    while i < len(argv):
        arg = argv[i]
        if arg.startswith("-") and arg != "-":
            i = _option(argv, i, known, got)
            if i is None:
                return None
        else:
            operands.append(arg)
            i += 1
    most = spec["operands"]
    if most is not None and len(operands) > most:
        return None
    return command, got, operands


def _option(argv, i, known, got):
    """The index after the option at argv[i], its value in `got`; None when it is not plain."""
    arg = argv[i]
    name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
    row = known.get(name)
    if row is None:
        return None
    dest, takes, choices = row
    if takes == "flag":
        if eq:
            return None
        got[dest] = True
        return i + 1
    if takes != "value" and takes != "count":
        return None
    if not eq:
        if i + 1 >= len(argv):
            return None
        i += 1
        value = argv[i]
    if dest in got or (choices is not None and value not in choices):
        return None  # (given twice, or a value click refuses: click says so)
    if takes == "count":
        if not (value.isascii() and value.isdigit()):
            return None
        value = int(value)
    got[dest] = value
    return i + 1
