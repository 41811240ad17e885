"""A read question offered as a command of its own (stree.questions: a Question with `cli`),
made from its arguments: a required string or a positional one is an argument, the others options (--max-count N,
--files-only, a choice, a repeatable one for a list); the session is -s's. Its records are
printed as every read command prints them: --json, --format, -z, and for people each record's
fields on one line (or the question's own line). The table of commands names it
`stree.commands.ask:NAME` (NAME with _ for -)."""

import click

from .options import output_options
from ..errors import UsageError
from ..output.fields import describe


class _Place:
    """The CLI's session (-s, the directory's newest) as a question's place."""

    def __init__(self, env):
        self._env = env

    def load(self, session=None):
        return self._env.load()

    def path(self, session=None):
        return str(self._env.session_path())

    def __getattr__(self, name):
        return getattr(self._env, name)


def _spelled(arg):
    return "--" + arg.name.replace("_", "-")


def command_of(question):
    """The click command of `question`."""
    name, summary, fields, human, examples = question.cli
    args = [a for a in question.offered("cli") if a.name != "session"]  # (the session: -s)

    def run(env, json_mode, fmt, nul, **given):
        from ..questions.base import Refused

        given = {k: (list(v) if isinstance(v, tuple) else v) for k, v in given.items()
                 if v is not None and v != () and v is not False}
        if question.check is not None:
            spell = {a.name: _spelled(a) for a in args}
            try:
                question.check(given)
            except Refused as e:
                raise UsageError(e.spelled(spell.get)) from None
        data = question.answer(_Place(env), **given)
        out = env.output(json_mode, fmt, nul, fields)
        for rec in data if isinstance(data, list) else [data]:
            line = None
            if not out.machine:
                from ..format.terminal import inert

                line = human(rec) if human is not None else "\t".join(inert(str(rec.get(f)), oneline=True)
                                                                      for f in fields)
            out.record(rec, line)
        out.close()

    f = click.pass_obj(run)
    f = output_options(fields)(f)
    for arg in reversed(args):
        if arg.positional:
            many = arg.kind is list
            f = click.argument(arg.name, required=arg.required, nargs=-1 if many else 1,
                               default=None if many else arg.default)(f)
            continue
        attrs = {"help": arg.doc}
        if arg.kind is bool:
            attrs["is_flag"] = True
        elif arg.kind is int:
            attrs.update(type=click.IntRange(min=arg.minimum), metavar="N")
        elif arg.choices is not None:
            attrs["type"] = click.Choice(arg.choices)
        if arg.kind is list:
            attrs["multiple"] = True
        f = click.option(_spelled(arg), arg.name, **attrs)(f)
    width = max(len(line) for line, _ in examples) + 2
    shown = "\n".join(f"  {line:<{width}} {what}" for line, what in examples)
    return click.command(name, help=summary, epilog=f"\b\nExamples:\n{shown}\n\n\b\nFields for --json / --format:\n"
                                                    f"{describe(fields)}")(f)


def __getattr__(name):
    """The command of the question named `name` (stree.commands.load reads it by name)."""
    from ..questions import questions

    for question in questions():
        if question.cli is not None and question.cli[0].replace("-", "_") == name:
            return command_of(question)
    raise AttributeError(name)
