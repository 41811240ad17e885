"""The stree command group: global options, the command table, the error boundary."""

import os
import sys

import click

from . import __version__
from .commands import SUBCOMMANDS, load
from .commands.options import warn_user
from .core.workspace import Workspace
from .errors import EXIT_CODES, StreeError
from .format import agents
from .globalopts import OPTIONS

ENV_HELP = f"""\
  STREE_SESSION                default for -s/--session
  STREE_AGENT                  default for --agent ({', '.join(agents.choices())})
  PI_CODING_AGENT_DIR          pi's agent dir (default ~/.pi/agent)
  PI_CODING_AGENT_SESSION_DIR  flat directory of sessions, overrides the per-project one
                               (its sessions of this directory's cwd, as pi 1.6.0 takes them)
  NO_COLOR                     disable colour; PAGER / STREE_PAGER choose the pager
  STREE_NO_CACHE               do not use the index cache (same as --no-cache)
  STREE_CATALOG                a shared catalogue, postgresql://... (same as --catalog)
  STREE_LIBPQ                  the libpq file grep reads a shared catalogue with (default: psycopg[binary]'s,
                               else libpq.so.5; one that does not load, e.g. none: psycopg)
  STREE_GREP_SERVER            1: a resident process answers plain greps into a pipe (0: not; default: the
                               config's grep_server); it ends after STREE_GREP_SERVER_IDLE seconds idle (600)
  STREE_CACHE_DIR              where indexes and kept graphs live (default: <platform cache dir>/stree/index)
  STREE_JOBS                   processes that parse a file without an index (default: one per core; 1: no workers)
  STREE_JSON                   pure: never decode with msgspec (the `fast` extra); msgspec: even a short file
  STREE_DEBUG                  show tracebacks (same as --debug)
  STREE_DEBUG_STATS            print parse statistics on stderr
  STREE_NO_FAST                1: every command through click (no fast path for plain reads, writes)
  STREE_HOOKS_DIR              directory of checkout hooks (default <config dir>/stree/hooks)
  STREE_HOOK_TIMEOUT           seconds a hook may run (default 30)
  STREE_HOOK_KEYS              1: pass the whole environment on to hooks (default: an allow-list)
  STREE_LINE_MAX               bytes: a longer line is skipped with a warning (default 256 MiB)
  STREE_REGEX_TIMEOUT          seconds grep -E may spend matching one line (default 5)
  STREE_REQUEST_TIMEOUT        seconds a serve / serve --mcp read request may run (default 300)
  STREE_SERVE_KEEP             bytes of entries serve / serve --mcp keep decoded between requests (256 MiB)
  STREE_LOCK_TIMEOUT           seconds to wait for another stree's lock on a file (default 30)
  STREE_TIMEOUT                seconds a model may stay silent before a summary fails (default 120)
  STREE_MAX_TIME               seconds a model request may take in all, retries included (default 600)"""


LIMITS_HELP = """\
  a session must be a regular file: a FIFO, device or socket is refused (exit 4)
  a session that is cut short or rewritten while read: exit 4 (run the command again)
  a line longer than 256 MiB is skipped with a warning naming the file and line
  a hook may print at most 16 MiB: more fails it (exit 6, nothing written)
  a log --graph output over 4 times its session file (64 MiB at least, 512 MiB at most) is not kept"""


def _exit_help():
    return "\n".join(f"  {code:<4} {text}" for code, text in EXIT_CODES)


class Env(Workspace):
    """The CLI's workspace (stree.core.workspace: the global options and the session they
    select), shared by every command, with how it prints (colour, pager) and --debug."""

    def __init__(self, session, agent_dir, session_dir, cwd, color, pager, debug, no_cache=False):
        super().__init__(session, cwd, agent_dir, session_dir, no_cache=no_cache)
        self.color = color
        self.pager = pager
        self.debug = debug
        self._loaded = None

    def load(self, warn=True, keep=None):
        """(Session, Tree) of the selected session; warns once about skipped lines. `keep`: handed
        every entry a parse of the whole file decodes (core.loading.open_session)."""
        if self._loaded is None:
            from .core.loading import COMMAND, finish

            session, tree, _ = self.open(defer=True, freeze=True, report=COMMAND, keep=keep)
            click.get_current_context().call_on_close(lambda: finish(session))
            if warn and session.headerless:
                warn_user(f"{session.path}: no session header (OpenClaw keeps some): read-only; "
                          "entries whose parent is missing are shown as roots")
            if warn and session.malformed:
                lines = ", ".join(str(n) for n, _ in session.malformed[:10])
                more = f" and {len(session.malformed) - 10} more" if len(session.malformed) > 10 else ""
                warn_user(f"{session.path}: skipped {len(session.malformed)} malformed line(s): "
                          f"{lines}{more} (run 'stree fsck' for details)")
            self._loaded = (session, tree)
        return self._loaded

    @property
    def report(self):
        """The command's load report (STREE_DEBUG_STATS: stree.core.loading.COMMAND)."""
        from .core.loading import COMMAND

        return COMMAND

    def output(self, json_mode=False, fmt=None, nul=False, fields=None):
        from .output.modes import Output

        return Output(json_mode, fmt, nul, self.color, self.pager, fields)


class ReaderGone(Exception):
    """stdout's reader went away (`stree log | head -1`), or stdout was closed: not an error.
    (click itself would turn the BrokenPipeError into exit 1.)"""


class LazyGroup(click.Group):
    def make_context(self, info_name, args, parent=None, **extra):
        try:  # --help and --version print while the arguments are parsed
            return super().make_context(info_name, args, parent, **extra)
        except BrokenPipeError:
            raise ReaderGone() from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise ReaderGone() from None
        except click.UsageError as e:  # (click's parser raises some, e.g. "requires an argument", bare)
            name = ctx.invoked_subcommand
            if e.ctx is None and name in SUBCOMMANDS:  # the command's usage goes with it as a hint
                e.ctx = self.get_command(ctx, name).make_context(name, [], parent=ctx, resilient_parsing=True)
            raise

    def list_commands(self, ctx):
        return list(SUBCOMMANDS)

    def resolve_command(self, ctx, args):
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in SUBCOMMANDS:
            import difflib

            close = difflib.get_close_matches(name, list(SUBCOMMANDS), n=3, cutoff=0.6)
            hint = (f"did you mean {' or '.join(repr(c) for c in close)}?\n" if close else "") + \
                "'stree --help' lists the commands"
            raise StreeError(f"unknown command '{name}'", code=2, hint=hint)
        return super().resolve_command(ctx, args)

    def get_command(self, ctx, name):
        if name not in SUBCOMMANDS:
            return None
        return with_global_options(load(name))

    def format_commands(self, ctx, formatter):
        rows = [(name, summary) for name, (_, summary) in SUBCOMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _terminal_columns():
    """shutil.get_terminal_size().columns without importing shutil (for click's help width)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def _click_option(option, hidden=False):
    """(declarations, attributes) of the click option of a global option (stree.globalopts)."""
    attrs = {"is_flag": True} if option.flag else {}
    if option.metavar:
        attrs["metavar"] = option.metavar
    if option.choices:
        attrs["type"] = click.Choice(option.choices)
    if not hidden:
        attrs.update(help=option.help, envvar=option.envvar)
        if option.default is not None:
            attrs.update(default=option.default, show_default=True)
    return [*option.spellings, option.dest], attrs


def global_options(f):
    """The group's global options with their help (stree.globalopts.OPTIONS, in that order)."""
    for option in reversed(OPTIONS):  # (click lists the options of stacked decorators top first)
        decls, attrs = _click_option(option)
        f = click.option(*decls, **attrs)(f)
    return f


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100,
                      "terminal_width": _terminal_columns()},
    epilog=f"""\b
Revisions: an id, an id prefix (4+ chars), a label, @ (the leaf, also HEAD; seen through
stree's checkout markers and label/name entries), root,
:/text (newest entry containing text), REV~N, REV^, ranges A..B and A...B.
See stree(1) for details; 'stree COMMAND --help' for each command.

\b
Exit codes:
{_exit_help()}

\b
Environment:
{ENV_HELP}

\b
Limits:
{LIMITS_HELP}""",
)
@global_options
@click.version_option(__version__, "--version", prog_name="stree")
@click.pass_context
def main(ctx, session, agent_dir, session_dir, agent, chdir, color, no_pager, no_cache, catalog, debug):
    """stree: git-style plumbing for pi coding-agent sessions.

    A pi session is an append-only JSONL file whose entries form a tree; the last
    entry is the current position (the leaf, @). stree reads that tree, and moves,
    labels, summarizes and forks it, from the shell: for people (coloured, paged)
    and for scripts (--json, --format, -z), leaving files pi resumes as they are.
    The reference is pi 1.6.0; files older pis wrote (0.73.1 on) read as before.

    \b
    Examples:
      stree log --graph                 the whole tree, as pi's /tree draws it
      stree -s demo log -n 5            the last five entries of the bundled demo
      stree rev-parse @~2               the id two entries above the leaf
      stree log --json | jq -r .preview  entries as JSON Lines

    Global options may come before or after the command: stree log -s demo.
    """
    cwd = _chdir(chdir) if chdir else os.getcwd()
    if no_cache:  # as STREE_NO_CACHE=1, for every layer (the writer's locked re-read, revisions)
        os.environ["STREE_NO_CACHE"] = "1"
    if catalog:  # as STREE_CATALOG, for every layer (stree.core.catalog_shared.configured)
        os.environ["STREE_CATALOG"] = catalog
    ctx.obj = Env(session, agent_dir, session_dir, cwd, color, not no_pager, debug, no_cache)
    ctx.obj.agent = agent
    ctx.obj.catalog = catalog
    if os.environ.get("STREE_DEBUG_STATS"):
        ctx.call_on_close(_print_stats)


def _apply_global(ctx, param, value):
    from click.core import ParameterSource

    if ctx.get_parameter_source(param.name) != ParameterSource.COMMANDLINE:
        return
    env = ctx.find_object(Env)
    if env is None:
        return
    name = param.name
    if name == "session":
        env.session_arg = value
    elif name == "chdir":
        env.cwd = _chdir(value)
    elif name == "no_pager":
        env.pager = False
    elif name in ("no_cache", "debug"):
        setattr(env, name, True)
    elif name == "catalog":
        os.environ["STREE_CATALOG"] = value
        env.catalog = value
    else:
        setattr(env, name, value)


def with_global_options(command):
    """`command` (and the commands of a group command) also accepting the global options."""
    if getattr(command, "stree_globals", False):
        return command
    for option in OPTIONS:  # again on every command, hidden, so they may follow it (`stree log -s demo`):
        decls, attrs = _click_option(option, hidden=True)  # each one given there updates the Env
        command.params.append(click.Option(decls, hidden=True, expose_value=False, callback=_apply_global,
                                           is_eager=option.dest == "chdir", **attrs))
    command.stree_globals = True
    if not getattr(command, "commands", None):
        invoke = command.invoke

        def invoke_with_sessions(ctx):
            session_revisions(ctx)
            return invoke(ctx)
        command.invoke = invoke_with_sessions
    for sub in getattr(command, "commands", {}).values():
        with_global_options(sub)
    return command


_REV_PARAMS = ("revision", "revisions", "range_", "target", "a", "b")


def session_revisions(ctx):
    """SESSION:ENTRY (as `stree grep` prints them) in a command's revision arguments: the
    session part selects the session (as -s does) when it names one; the entry part is
    the revision. With -s naming another session, a usage error."""
    from .core.grep_sessions import split_rev

    env = ctx.find_object(Env)
    if env is None:
        return
    for param in ctx.command.params:
        if param.name not in _REV_PARAMS or param.name not in ctx.params:
            continue
        value = ctx.params[param.name]
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        changed = False
        for i, v in enumerate(values):
            parts = split_rev(v) if isinstance(v, str) else None
            if parts is None:
                continue
            sid, entry, encoded = parts
            path = _session_named(env, sid, encoded)
            if path is None:
                continue
            if env.session_arg is None:
                env.session_arg = str(path)
            elif os.path.abspath(str(env.session_path())) != os.path.abspath(str(path)):
                raise StreeError(f"{v}: names session {v.partition(':')[0]}, but -s selects {env.session_arg}",
                                 code=2, hint=f"drop -s, or give the entry alone: {entry}")
            values[i] = entry
            changed = True
        if changed:
            ctx.params[param.name] = tuple(values) if isinstance(value, (list, tuple)) else values[0]


def _session_named(env, name, encoded=False):
    """The session file an id (prefix) names, or None (a label may hold a colon too). A
    percent-encoded one is an id whatever it holds ('/' included), never a path."""
    from .core.store import looks_like_path, resolve_session

    if not encoded and (looks_like_path(name) or os.path.exists(name)):
        return None
    try:
        return resolve_session(name, env.cwd, env.agent_dir, env.session_dir, agents=env.agent, by_id=encoded)
    except StreeError:
        return None


def _chdir(directory):
    try:
        os.chdir(directory)
    except OSError as e:
        raise StreeError(f"-C {directory}: {e.strerror}", code=2)
    return os.getcwd()


def _print_stats():
    """The command's load report (its first read: the fast path's, before click took over, the
    Env's, or a writer's), as STREE_DEBUG_STATS prints it."""
    from .core.loading import COMMAND
    from .output.debug_stats import stats_line

    click.echo(stats_line(COMMAND), err=True)


def run():
    """Console entry point: click, then stree's one error boundary (stree.errors.guarded)."""
    from .errors import guarded

    def inert(text, oneline=False):
        from .format.terminal import inert  # (only when there is an error to say)

        return inert(text, oneline)

    status = []  # what the command returned: its exit status (None: 0)

    def work():
        try:
            status.append(main.main(prog_name="stree", standalone_mode=False))
            sys.stdout.flush()  # here, not at exit: a reader gone is then not an error
        except click.exceptions.Exit as e:
            _flush()
            sys.exit(e.exit_code)
        except ReaderGone:
            raise BrokenPipeError from None
        except click.ClickException as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # bare `stree`: the help, as click prints it
                e.show()
                sys.exit(e.exit_code)
            raise _stree_error(e) from None  # said by the boundary, as every error
        except click.exceptions.Abort:
            raise KeyboardInterrupt from None

    code = guarded(work, inert, debug="--debug" in sys.argv[1:] or bool(os.environ.get("STREE_DEBUG")))
    if code is None and status:
        code = status[0]
    if code is not None:  # the status a command returned, or the error's code: the click path's exit
        sys.exit(code)


def _flush():
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _reader_gone()
    except OSError:
        pass


def _reader_gone():
    """The reader of stdout went away (stree log | head -1), or stdout is closed: exit 0,
    quietly, with nothing left to flush into the broken pipe at exit."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.close(fd)
    except OSError:
        pass
    sys.exit(0)


def _stree_error(e):
    """click's usage error as a StreeError (`stree: error: ...`, then `hint:` lines: said by the one
    boundary), with click's exit code."""
    hints = []
    if isinstance(e, click.exceptions.NoSuchOption):
        message = f"unknown option '{e.option_name}'"
        if e.possibilities:
            hints.append(f"did you mean {' or '.join(sorted(e.possibilities))}?")
    else:
        message = e.format_message()
        if message[:1].isupper() and message[1:2].islower():
            message = message[0].lower() + message[1:]
    ctx = getattr(e, "ctx", None)
    if isinstance(e, click.UsageError) and ctx is not None:
        hints.append(f"usage: {ctx.command_path} {' '.join(ctx.command.collect_usage_pieces(ctx))}".rstrip())
        hints.append(f"see '{ctx.command_path} --help'")
    error = StreeError(message, code=e.exit_code, hint="\n".join(hints) or None)
    error.traceback = False  # (--debug: where click's parser raised it is no help)
    return error
