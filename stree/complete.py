"""Tab completion for bash and zsh, answered from a table of the click definitions.

The scripts in completions/ call, on every TAB:

    stree __complete SHELL CUR -- WORD...     words after `stree`, the last one being completed
    stree __complete SHELL CUR --line LINE    bash: the line up to the cursor, split here

CUR is the word as the shell will replace it (bash splits words at `:` and `=`;
candidates are cut to fit it). The answer, on stdout: a first line naming what
the shell should add itself (`plain`, `files`, `dirs`, `jsonl`: session files),
then one candidate per line: GROUP TAB VALUE TAB DESCRIPTION, in display order.

It runs outside click's parser, and without click: the commands, their options and
what their values are come from stree/data/complete_table.json, generated from the
click definitions by stree.complete_click (`make complete-table`; a test fails when
it is stale). STREE_NO_FAST=1 reads click's definitions instead (the reference the
table is compared with). The session is read through revs.list_revisions and
store.session_candidates.
"""

import os
import re
import shlex
import sys

DESCRIPTION_WIDTH = 72
TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "complete_table.json")
PROVIDERS = ("extractive", "openai", "anthropic")
SPECIAL_REVISIONS = (("@", "the leaf: the current position"), ("root", "the first entry on the path to @"),
                     (":/", ":/TEXT, the newest entry containing TEXT"))


def main(argv):
    """Entry point of `stree __complete`; prints candidates, never fails loudly."""
    source = _source()
    if len(argv) < 3 or argv[0] not in source.shells:
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
        kind, items = complete(words, source)
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
        self.command = None  # the command being completed (the root: the group)
        self.path = []  # subcommand names
        self.values = {}  # option dest -> value, for the global session options
        self.positionals = []


def complete(words, source=None):
    """(kind, [(group, value, description)]) for the last of `words`."""
    src = source or _source()
    cur = words[-1]
    line = Line()
    command = src.root
    params = src.option_map(command)
    expecting = None
    only_args = False
    for word in words[:-1]:
        if expecting is not None:
            _remember(src, line, expecting, word)
            expecting = None
            continue
        if word == "--" and not only_args:
            only_args = True
            continue
        if word.startswith("-") and len(word) > 1 and not only_args:
            param, value = _split_option(src, params, word)
            if param is not None and src.takes_value(param):
                if value is None:
                    expecting = param
                else:
                    _remember(src, line, param, value)
            continue
        if src.is_group(command) and not line.positionals:
            sub = src.subcommand(command, word)
            if sub is None:
                return "plain", []
            command = sub
            line.path.append(word)
            params = src.option_map(command)
            only_args = False
            continue
        line.positionals.append(word)
    line.command = command

    if expecting is not None:
        return _values(src, line, expecting, cur)
    if cur.startswith("--") and "=" in cur and not only_args:
        name, _, value = cur.partition("=")
        param = params.get(name)
        if param is None or not src.takes_value(param):
            return "plain", []
        kind, items = _values(src, line, param, value)
        return kind, [(g, f"{name}={v}", d) for g, v, d in items]
    if cur.startswith("-") and not only_args:
        return "plain", [("option", opt, desc) for opt, desc in src.options(command) if opt.startswith(cur)]
    if src.is_group(command) and not line.positionals:
        return "plain", _subcommands(src, command, cur)
    param = src.argument_at(command, len(line.positionals))
    if param is None:
        return "plain", []
    return _values(src, line, param, cur)


def _source():
    if not os.environ.get("STREE_NO_FAST"):
        try:
            return TableSource()
        except (OSError, ValueError, KeyError, TypeError):  # no table (a broken install): click's definitions
            pass
    from .complete_click import ClickSource

    return ClickSource()


class TableSource:
    """The commands and their parameters, from stree/data/complete_table.json (the same
    answers as stree.complete_click.ClickSource, without loading click)."""

    def __init__(self, path=None):
        import json

        with open(path or TABLE, encoding="utf-8") as f:
            table = json.load(f)
        self.shells = tuple(table["shells"])
        self.root = table["root"]

    def is_group(self, command):
        return "subcommands" in command

    def option_map(self, command):
        return {opt: param for param in command["options"] for opt in param["opts"]}

    def takes_value(self, param):
        return param["value"]

    def dest(self, param):
        return param["dest"]

    def choices(self, param):
        return param["choices"]

    def kind(self, param, command):
        return param["kind"]

    def subcommand(self, group, name):
        return group["subcommands"].get(name)

    def subcommands(self, group):
        return group["commands"]

    def options(self, command):
        return [(opt, param["help"]) for param in command["options"] if not param["hidden"]
                for opt in param["opts"]]

    def argument_at(self, command, index):
        consumed = 0
        for param in command["arguments"]:
            if param["nargs"] < 0 or index < consumed + param["nargs"]:
                return param
            consumed += param["nargs"]
        return None


def _split_option(src, params, word):
    if word.startswith("--"):
        name, eq, value = word.partition("=")
        return params.get(name), (value if eq else None)
    if word in params:
        return params[word], None
    param = params.get(word[:2])  # -sVALUE, or a cluster of flags
    if param is not None and src.takes_value(param):
        return param, word[2:]
    return None, None


def _remember(src, line, param, value):
    from .globalopts import session_dests  # (the global options that change which session is completed)

    if src.dest(param) in session_dests():  # before or after the subcommand
        line.values[src.dest(param)] = value


def _subcommands(src, group, cur):
    return [("command", name, summary) for name, summary in src.subcommands(group) if name.startswith(cur)]


# -- what a parameter takes ------------------------------------------------------

def _values(src, line, param, cur):
    kind = src.kind(param, line.command)
    if kind == "choice":
        return "plain", [("choice", c, "") for c in src.choices(param) if c.startswith(cur)]
    if kind == "provider":
        return "plain", [("choice", p, "") for p in PROVIDERS if p.startswith(cur)]
    if kind == "agent":
        from .format.agents import choices

        return "plain", [("choice", a, "") for a in choices() if a.startswith(cur)]
    if kind == "shell":
        return "plain", [("choice", s, "") for s in src.shells if s.startswith(cur)]
    if kind == "command":
        return "plain", _subcommands(src, src.root, cur)
    if kind == "session":
        return "jsonl", _sessions(line, cur)
    if kind in ("rev", "label"):
        return "plain", _revisions(line, cur, labels_only=kind == "label")
    if kind in ("dir", "file"):
        return kind + "s", []
    return "plain", []


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
