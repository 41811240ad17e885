"""Tab completion for bash and zsh, driven by the click definitions.

The scripts in completions/ call, on every TAB:

    stree __complete SHELL CUR -- WORD...     words after `stree`, the last one being completed
    stree __complete SHELL CUR --line LINE    bash: the line up to the cursor, split here

CUR is the word as the shell will replace it (bash splits words at `:` and `=`;
candidates are cut to fit it). The answer, on stdout: a first line naming what
the shell should add itself (`plain`, `files`, `dirs`, `jsonl`: session files),
then one candidate per line: GROUP TAB VALUE TAB DESCRIPTION, in display order.

It runs outside click's parser and never imports rich or httpx; it imports only
the module of the command being completed, and reads the session through
revs.list_revisions and store.session_candidates.
"""

import os
import re
import shlex
import sys

import click

from .commands.completion import SHELLS

DESCRIPTION_WIDTH = 72
PROVIDERS = ("extractive", "openai", "anthropic")
SPECIAL_REVISIONS = (("@", "the leaf: the current position"), ("root", "the first entry on the path to @"),
                     (":/", ":/TEXT, the newest entry containing TEXT"))
# option values that change which session is completed: click dest -> our name
SESSION_OPTIONS = ("session", "agent_dir", "session_dir", "chdir")
_REV_NAMES = {"rev", "revs", "revision", "revisions", "range", "target", "a", "b", "base", "start", "end"}


def main(argv):
    """Entry point of `stree __complete`; prints candidates, never fails loudly."""
    if len(argv) < 3 or argv[0] not in SHELLS:
        print("usage: stree __complete bash|zsh CUR (-- WORD... | --line LINE)", file=sys.stderr)
        return 2
    shell, cur, mode, rest = argv[0], argv[1], argv[2], argv[3:]
    if mode == "--line":
        words = split_line(rest[0] if rest else "")[1:]
    else:
        words = list(rest)
    if not words:
        words = [""]
    try:
        kind, items = complete(words)
    except Exception:  # a broken file or a bug must not spill into the user's prompt
        if os.environ.get("STREE_DEBUG"):
            raise
        kind, items = "plain", []
    word = words[-1]
    out = [kind]
    for group, value, desc in items:
        if shell == "bash" and cur != word:
            # bash replaces only the part after its last word break (`:`, `=`)
            lead = word[:len(word) - len(cur)] if word.endswith(cur) else None
            if lead is None or not value.startswith(lead):
                continue
            value = value[len(lead):]
        out.append(f"{group}\t{_one_line(value)}\t{_one_line(desc)[:DESCRIPTION_WIDTH]}")
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def split_line(line):
    """Words of a command line as the shell would pass them; an open quote is closed,
    and a trailing space starts a new, empty word."""
    for closing in ("", '"', "'"):
        try:
            words = shlex.split(line + closing)
        except ValueError:
            continue
        if not closing and (not line or line[-1] in " \t\n") and not line.endswith("\\ "):
            words.append("")
        return words or [""]
    return line.split() + [""]


def _one_line(text):
    return re.sub(r"[\x00-\x1f\x7f]", " ", text or "")


# -- reading the command line --------------------------------------------------

class Line:
    """What the words before the cursor say: the command, its options so far, the args."""

    def __init__(self):
        self.command = None  # the click command being completed (None: the group)
        self.path = []  # subcommand names
        self.values = {}  # click dest -> value, for the global session options
        self.positionals = []


def complete(words):
    """(kind, [(group, value, description)]) for the last of `words`."""
    from .cli import main as group

    cur = words[-1]
    line = Line()
    command = group
    params = _option_map(command)
    expecting = None
    only_args = False
    for word in words[:-1]:
        if expecting is not None:
            _remember(line, command, expecting, word)
            expecting = None
            continue
        if word == "--" and not only_args:
            only_args = True
            continue
        if word.startswith("-") and len(word) > 1 and not only_args:
            param, value = _split_option(params, word)
            if param is not None and _takes_value(param):
                if value is None:
                    expecting = param
                else:
                    _remember(line, command, param, value)
            continue
        if isinstance(command, click.Group) and not line.positionals:
            sub = _subcommand(command, word)
            if sub is None:
                return "plain", []
            command = sub
            line.path.append(word)
            params = _option_map(command)
            only_args = False
            continue
        line.positionals.append(word)
    line.command = command

    if expecting is not None:
        return _values(line, expecting, cur)
    if cur.startswith("--") and "=" in cur and not only_args:
        name, _, value = cur.partition("=")
        param = params.get(name)
        if param is None or not _takes_value(param):
            return "plain", []
        kind, items = _values(line, param, value)
        return kind, [(g, f"{name}={v}", d) for g, v, d in items]
    if cur.startswith("-") and not only_args:
        return "plain", _options(command, cur)
    if isinstance(command, click.Group) and not line.positionals:
        return "plain", _subcommands(command, cur)
    param = _argument_at(command, len(line.positionals))
    if param is None:
        return "plain", []
    return _values(line, param, cur)


def _option_map(command):
    out = {}
    for param in _params(command):
        if isinstance(param, click.Option):
            for opt in param.opts + param.secondary_opts:
                out[opt] = param
    return out


def _params(command):
    ctx = click.Context(command, info_name=command.name, help_option_names=["-h", "--help"])
    return command.get_params(ctx)


def _split_option(params, word):
    if word.startswith("--"):
        name, eq, value = word.partition("=")
        return params.get(name), (value if eq else None)
    if word in params:
        return params[word], None
    param = params.get(word[:2])  # -sVALUE, or a cluster of flags
    if param is not None and _takes_value(param):
        return param, word[2:]
    return None, None


def _takes_value(param):
    return not (param.is_flag or param.count)


def _remember(line, command, param, value):
    if param.name in SESSION_OPTIONS:  # before or after the subcommand (global options)
        line.values[param.name] = value


def _subcommand(group, name):
    from .commands import COMMANDS
    from .cli import main, with_global_options

    if group is main:
        if name not in COMMANDS:
            return None
        import importlib

        return with_global_options(importlib.import_module(COMMANDS[name][0]).command)
    ctx = click.Context(group, info_name=group.name)
    return group.get_command(ctx, name)


def _subcommands(group, cur):
    from .commands import COMMANDS
    from .cli import main

    if group is main:
        rows = [(name, summary) for name, (_, summary) in COMMANDS.items()]
    else:
        ctx = click.Context(group, info_name=group.name)
        rows = []
        for name in group.list_commands(ctx):
            sub = group.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                rows.append((name, sub.get_short_help_str(80)))
    return [("command", name, summary) for name, summary in rows if name.startswith(cur)]


def _options(command, cur):
    items = []
    for param in _params(command):
        if not isinstance(param, click.Option) or param.hidden:
            continue
        desc = _first_sentence(param.help or "")
        for opt in param.opts + param.secondary_opts:
            if opt.startswith(cur):
                items.append(("option", opt, desc))
    return items


def _first_sentence(text):
    text = " ".join(text.split())
    m = re.match(r"(.+?\.)(\s|$)", text)
    return m.group(1) if m else text


def _argument_at(command, index):
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


# -- what a parameter takes ------------------------------------------------------

def kind_of(param, command=None):
    """The kind of value a click parameter takes, read from its definition:
    choice, rev, label, session, command, provider, shell, dir, file or None."""
    name = (param.name or "").lower()
    metavar = (param.metavar or "").upper()
    tokens = set(re.findall(r"[A-Z]+", metavar))
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


def _values(line, param, cur):
    kind = kind_of(param, line.command)
    if kind == "choice":
        return "plain", [("choice", c, "") for c in param.type.choices if str(c).startswith(cur)]
    if kind == "provider":
        return "plain", [("choice", p, "") for p in PROVIDERS if p.startswith(cur)]
    if kind == "shell":
        return "plain", [("choice", s, "") for s in SHELLS if s.startswith(cur)]
    if kind == "command":
        return "plain", _subcommands(_root(), cur)
    if kind == "session":
        return "jsonl", _sessions(line, cur)
    if kind in ("rev", "label"):
        return "plain", _revisions(line, cur, labels_only=kind == "label")
    if kind in ("dir", "file"):
        return kind + "s", []
    return "plain", []


def _root():
    from .cli import main

    return main


def _cwd(line):
    chdir = line.values.get("chdir")
    return os.path.abspath(os.path.expanduser(chdir)) if chdir else os.getcwd()


def _session_path(line):
    from .core.store import resolve_session

    cwd = _cwd(line)
    if cwd != os.getcwd():
        os.chdir(cwd)  # as `stree -C DIR` does: a relative -s PATH is relative to DIR
    session = line.values.get("session") or os.environ.get("STREE_SESSION")
    return resolve_session(session, cwd, line.values.get("agent_dir"), line.values.get("session_dir"))


def _revisions(line, cur, labels_only=False):
    from .errors import StreeError
    from .core.revs import list_revisions

    lead, word = "", cur
    if not labels_only:
        m = re.match(r"^(.*?\.\.\.?)(.*)$", cur)
        if m:
            lead, word = m.group(1), m.group(2)
        if word.startswith(":/") or re.search(r"[~^]", word):
            return []  # searching text, or walking up from a revision: nothing to list
    try:
        labels, entries = list_revisions(_session_path(line), word)
    except StreeError:
        labels, entries = [], []
    items = [("label", lead + name, preview) for name, preview in labels]
    if labels_only:
        return items
    items += [("entry", lead + id, preview) for id, preview in entries]
    items += [("special", lead + value, desc) for value, desc in SPECIAL_REVISIONS
              if value.startswith(word) and not (lead and value == ":/")]
    if word.startswith("@") or (word.startswith("H") and "HEAD@{".startswith(word[:6])):
        from .core.revs import list_moves

        head = "HEAD" if word.startswith("H") else ""
        try:
            moves = list_moves(_session_path(line))
        except StreeError:
            moves = []
        items += [("reflog", f"{lead}{head}@{{{n}}}", f"{id}  {preview}") for n, id, preview in moves
                  if f"{head}@{{{n}}}".startswith(word)]
    return items


def _sessions(line, cur):
    from .core.store import DEMO_NAME, looks_like_path, session_candidates

    if looks_like_path(cur) or cur.startswith(("~", ".")):
        return []  # a path: the shell completes files
    items = []
    for id, title, _ in session_candidates(_cwd(line), line.values.get("agent_dir"),
                                           line.values.get("session_dir"), agents=line.values.get("agent")):
        if id.lower().startswith(cur.lower()):
            items.append(("session", id, title))
    if DEMO_NAME.startswith(cur):
        items.append(("session", DEMO_NAME, "the bundled demo session"))
    return items
