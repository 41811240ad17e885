"""A read question with no command of its own (stree.questions: a Question with `cli`) offered as
one, made from its arguments by the command line's adapter (commands/adapter.py): a required
string or a positional one is an argument, the others options; the session is -s's. Its records
are printed as every read command prints them: --json, --format, -z, and for people each
record's fields on one line (or the question's own line). The table of commands names it
`stree.commands.ask:NAME` (NAME with _ for -)."""

import click

from .adapter import answer, parameters
from ..questions.base import whole
from .options import output_options
from ..output.fields import describe


def command_of(asked):
    """The click command of a question offered as a command of its own (`asked.cli`)."""
    name, summary, fields, human, examples = asked.cli

    def run(env, json_mode, fmt, nul, **given):
        data = whole(answer(asked, env, **given))
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
    f = parameters(asked)(f)
    width = max(len(line) for line, _ in examples) + 2
    shown = "\n".join(f"  {line:<{width}} {what}" for line, what in examples)
    return click.command(name, help=summary, epilog=f"\b\nExamples:\n{shown}\n\n\b\nFields for --json / --format:\n"
                                                    f"{describe(fields)}")(f)


def __getattr__(name):
    """The command of the question named `name` (stree.commands.load reads it by name)."""
    from ..questions import questions

    for asked in questions():
        if asked.cli is not None and asked.cli[0].replace("-", "_") == name:
            return command_of(asked)
    raise AttributeError(name)
