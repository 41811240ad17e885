"""Completion read from the click definitions, and the table generated from them.

`stree __complete` answers from stree/data/complete_table.json (stree.complete), so that
a TAB loads neither click nor the command modules. This module is where that table comes
from (`make complete-table`, tools/gen_complete_table.py; tests/cli/test_completion_table.py
fails when it is stale), and the reference the table path is compared with: with
STREE_NO_FAST=1, stree.complete reads click's definitions through ClickSource instead.
"""

import json
import re

import click

from .commands.completion import SHELLS

_REV_NAMES = {"rev", "revs", "revision", "revisions", "range", "target", "a", "b", "base", "start", "end"}
TABLE_VERSION = 1


class ClickSource:
    """What stree.complete needs to know about commands and their parameters, from click."""

    shells = SHELLS

    def __init__(self):
        from .cli import main

        self.root = main

    def is_group(self, command):
        return isinstance(command, click.Group)

    def option_map(self, command):
        out = {}
        for param in _params(command):
            if isinstance(param, click.Option):
                for opt in param.opts + param.secondary_opts:
                    out[opt] = param
        return out

    def takes_value(self, param):
        return not (param.is_flag or param.count)

    def dest(self, param):
        return param.name

    def choices(self, param):
        return [str(c) for c in param.type.choices]

    def kind(self, param, command):
        return kind_of(param, command)

    def subcommand(self, group, name):
        from .commands import SUBCOMMANDS
        from .cli import with_global_options

        if group is self.root:
            if name not in SUBCOMMANDS:
                return None
            from .commands import load

            return with_global_options(load(name))
        ctx = click.Context(group, info_name=group.name)
        return group.get_command(ctx, name)

    def subcommands(self, group):
        """[(name, summary)] of the commands of `group` a user sees, in order."""
        from .commands import SUBCOMMANDS

        if group is self.root:
            return [(name, summary) for name, (_, summary) in SUBCOMMANDS.items()]
        ctx = click.Context(group, info_name=group.name)
        rows = []
        for name in group.list_commands(ctx):
            sub = group.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                rows.append((name, sub.get_short_help_str(80)))
        return rows

    def options(self, command):
        """[(option, description)] of the options of `command` a user sees, in order."""
        items = []
        for param in _params(command):
            if not isinstance(param, click.Option) or param.hidden:
                continue
            desc = _first_sentence(param.help or "")
            for opt in param.opts + param.secondary_opts:
                items.append((opt, desc))
        return items

    def argument_at(self, command, index):
        consumed = 0
        for param in _params(command):
            if not isinstance(param, click.Argument):
                continue
            if param.nargs < 0:
                return param
            if index < consumed + param.nargs:
                return param
            consumed += param.nargs
        return None


def _params(command):
    ctx = click.Context(command, info_name=command.name, help_option_names=["-h", "--help"])
    return command.get_params(ctx)


def _first_sentence(text):
    text = " ".join(text.split())
    m = re.match(r"(.+?\.)(\s|$)", text)
    return m.group(1) if m else text


def kind_of(param, command=None):
    """The kind of value a click parameter takes, read from its definition:
    choice, agent, rev, label, session, command, provider, shell, dir, file or None."""
    name = (param.name or "").lower()
    metavar = (param.metavar or "").upper()
    tokens = set(re.findall(r"[A-Z]+", metavar))
    if name == "agent":  # the agents' records (stree.format.agents), not a list in the table
        return "agent"
    if isinstance(param.type, click.Choice):
        return "choice"
    if name == "session":
        return "session"
    if name == "provider":
        return "provider"
    if name == "shell":
        return "shell"
    if "LABEL" in tokens or name in ("label", "labels") or (
            command is not None and command.name == "label" and ("NAME" in tokens or name == "name")):
        return "label"
    if name in ("command", "topic") or "COMMAND" in tokens:
        return "command"
    if tokens & {"REV", "REVS", "RANGE", "REVISION"} or name in _REV_NAMES:
        return "rev"
    if isinstance(param.type, click.Path):
        return "dir" if param.type.dir_okay and not param.type.file_okay else "file"
    if "DIR" in tokens:
        return "dir"
    if tokens & {"FILE", "PATH"}:
        return "file"
    return None


# -- the table -------------------------------------------------------------------------

def table():
    """The completion table of stree's commands, as stree.complete.TableSource reads it."""
    source = ClickSource()
    return {"version": TABLE_VERSION, "shells": list(SHELLS), "root": _command_table(source, source.root)}


def table_text():
    """The text of stree/data/complete_table.json."""
    return json.dumps(table(), indent=1, ensure_ascii=False) + "\n"


def _command_table(source, command):
    out = {"options": [], "arguments": []}
    shown = dict(source.options(command))
    for param in _params(command):
        if not isinstance(param, click.Option):
            continue
        names = param.opts + param.secondary_opts
        row = {"opts": names, "dest": param.name, "value": source.takes_value(param), "hidden": bool(param.hidden)}
        if not param.hidden:
            row["help"] = shown[names[0]]
        _value_kind(source, row, param, command)
        out["options"].append(row)
    for param in _params(command):
        if isinstance(param, click.Argument):
            row = {"dest": param.name, "nargs": param.nargs}
            _value_kind(source, row, param, command)
            out["arguments"].append(row)
    if source.is_group(command):
        out["commands"] = [list(row) for row in source.subcommands(command)]
        names = list(dict.fromkeys([name for name, _ in out["commands"]] + _all_names(source, command)))
        out["subcommands"] = {name: _command_table(source, source.subcommand(command, name)) for name in names}
    return out


def _all_names(source, group):
    if group is source.root:
        return []
    return list(group.list_commands(click.Context(group, info_name=group.name)))


def _value_kind(source, row, param, command):
    kind = source.kind(param, command)
    row["kind"] = kind
    if kind == "choice":
        row["choices"] = source.choices(param)


# -- the command line's grammar, for the fast paths (stree.argv: stree/argv_table.py) ----------------------

def argv_table():
    """What stree.argv reads a command line with, without click: each option's spelling ->
    [dest, what it takes (flag, off: a flag's --no- spelling, value, count: a number of 0 or
    more), its choices]: the global options, and each command's own with how many operands it
    takes at most (null: any number)."""
    source = ClickSource()

    def spellings(params, skip=()):
        out = {}
        for param in params:
            if not isinstance(param, click.Option) or param.name in skip or param.name == "_click_default_help":
                continue
            takes = "value" if source.takes_value(param) else "flag"
            if takes == "value" and isinstance(param.type, click.IntRange) and param.type.min == 0 \
                    and param.type.max is None:
                takes = "count"
            choices = source.choices(param) if isinstance(param.type, click.Choice) else None
            for opt in param.opts:
                out[opt] = [param.name, takes, choices]
            for opt in param.secondary_opts:
                out[opt] = [param.name, "off", None]
        return out

    root = source.root
    globals_ = spellings(_params(root))
    skip = {dest for dest, _, _ in globals_.values()}
    commands = {}
    for name, _ in source.subcommands(root):
        command = source.subcommand(root, name)
        params = _params(command)
        nargs = [p.nargs for p in params if isinstance(p, click.Argument)]
        commands[name] = {"options": spellings(params, skip), "operands": None if -1 in nargs else sum(nargs)}
    return {"version": TABLE_VERSION, "global": globals_, "commands": commands}


def argv_table_text():
    """The source of stree/argv_table.py: the grammar as Python literals, a command a line (a
    module: its bytecode is cached, and reading it needs no json, which the plainest grep does
    without)."""
    table = argv_table()
    lines = ['"""The command line\'s grammar the fast paths read (stree.argv), generated from the click',
             "definitions by tools/gen_complete_table.py (`make complete-table`; a test fails when it is",
             'stale). Do not edit."""', "",
             f"GLOBAL = {table['global']!r}", "COMMANDS = {"]
    lines += [f"    {name!r}: {grammar!r}," for name, grammar in table["commands"].items()]
    return "\n".join(lines + ["}"]) + "\n"
