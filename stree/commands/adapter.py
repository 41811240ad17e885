"""The command line's adapter over the read questions (stree.questions): each read command
(log, show, rev-parse, context, label's list, grep, ls) declares its question's arguments with
`parameters(question)`, so their spellings, types, choices and help are the question's, and gets
its records with `answer(...)`, which checks the arguments as the question does and says a
refusal as a usage error spelled in options. What a command adds (its lines for people, --date,
--follow, a write) stays in its module; a question with no command of its own is made one by
commands/ask.py."""

import click

from ..errors import UsageError


class Place:
    """The CLI's session (-s, the directory's newest) as a question's place; `warn`: whether
    loading it says its warnings (rev-parse -q: not)."""

    def __init__(self, env, warn=True):
        self._env = env
        self._warn = warn

    def load(self, session=None):
        return self._env.load(warn=self._warn)

    def path(self, session=None):
        return str(self._env.session_path())

    def __getattr__(self, name):
        return getattr(self._env, name)


def question(name):
    """The read question called `name`."""
    from ..questions import questions

    return next(q for q in questions() if q.name == name)


def parameters(asked, skip=("session",)):
    """A decorator declaring the command-line arguments of the question `asked` (all it offers
    the CLI but those in `skip`; the session is -s's), in the question's order."""
    args = [a for a in asked.offered("cli") if a.name not in skip]

    def decorate(f):
        for arg in reversed(args):
            f = _parameter(arg)(f)
        return f
    return decorate


def _parameter(arg):
    if arg.positional:
        many = arg.kind is list
        return click.argument(arg.dest, required=arg.required, nargs=-1 if many else 1,
                              default=None if many else arg.default, metavar=arg.metavar)
    attrs = {"help": arg.help}
    if arg.kind is bool:
        attrs["is_flag"] = True
    elif arg.kind is int:
        attrs.update(type=click.IntRange(min=arg.minimum), metavar="N")
    elif arg.choices is not None:
        attrs["type"] = click.Choice(arg.choices)
    if arg.kind is list:
        attrs["multiple"] = True
    elif arg.kind is not bool and arg.default is not None:
        attrs.update(default=arg.default, show_default=True)
    if arg.metavar is not None:
        attrs["metavar"] = arg.metavar
    return click.option(*arg.flags, arg.dest, **attrs)


def checked(asked, given):
    """The arguments `given` by the command line (by their dest; None, () and False: not given)
    as the question takes them (by name), checked: a refusal is a usage error naming the options
    (each by its long spelling: --all, --files-with-matches)."""
    by_dest = {a.dest: a for a in asked.args}
    out = {}
    for dest, value in given.items():
        if value is None or value == () or value is False:
            continue
        out[by_dest[dest].name] = list(value) if isinstance(value, tuple) else value
    if asked.check is not None:
        from ..questions.base import Refused

        spell = {a.name: max(a.flags, key=len) for a in asked.args}
        try:
            asked.check(out)
        except Refused as e:
            raise UsageError(e.spelled(spell.get), hint=e.hint) from None
    return out


def answer(asked, env, warn=True, **given):
    """The question's answer for the command line's arguments `given` (by their dest)."""
    return asked.answer(Place(env, warn), **checked(asked, given))
