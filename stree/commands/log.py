import sys

import click

from .adapter import checked, parameters, question
from .options import output_options
from ..output.dates import date_option
from ..errors import NEGATIVE, UsageError
from ..output.fields import GRAPH_FIELDS, describe, entry_record
from ..output.reads import log_line, path_log
from ..output.records import entry_filter

LOG = question("log")


class LogCommand(click.Command):
    """`log -N` is `log -n N`, as git's (a -N that is an option's value is left alone)."""

    def parse_args(self, ctx, args):
        takes_value = {name for p in self.params if isinstance(p, click.Option) and not p.is_flag
                       for name in p.opts}
        out = []
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                out += args[i:]
                break
            if len(arg) > 1 and arg[0] == "-" and arg[1:].isdigit() and arg[1:].isascii():
                out += ["-n", arg[1:]]
            else:
                out.append(arg)
                if arg in takes_value and i + 1 < len(args):
                    out.append(args[i + 1])
                    i += 1
            i += 1
        return super().parse_args(ctx, out)


@click.command("log", cls=LogCommand, epilog=f"""\b
Examples:
  stree log                          the path root -> @, newest first
  stree log -n 5 bug-found           five entries up from the label bug-found
  stree log main..@                  entries on @'s branch that are not on main's path
  stree log --graph --filter user-only
  stree log --graph --search "csv quote"
  stree log --search pytest          entries on the path whose text holds "pytest"
  stree log --filter user-only -n 3  the last three user messages on the path
  stree log -3 --role assistant      the last three assistant messages (-3 is -n 3, as in git)
  stree log --since "2 hours ago" --model 'gpt-*'   what a model answered lately
  stree log --format '{{id}}\\t{{preview}}' | fzf
  stree log --date=relative -n 3     times as "3 hours ago" (also iso, unix, utc)
  stree log -n 3 --follow --json     the last three, then each entry as pi appends it (NDJSON)
  stree log --graph --follow         the graph, redrawn as pi appends to the session

\b
Fields for --json / --format:
{describe(GRAPH_FIELDS)}""")
@parameters(LOG)
@click.option("-f", "--follow", is_flag=True,
              help="After the path, wait and print each entry pi appends to the file (Ctrl-C ends it, "
                   "exit 130; the file replaced or truncated: exit 4). With --graph: on a terminal the "
                   "graph redrawn in place, ending at the leaf's row; into a pipe (--json: NDJSON) each "
                   "row as it appears. Not with --reverse or a range.")
@click.option("--no-ids", is_flag=True, help="Graph: leave out the id column (rows exactly as pi's).")
@date_option
@output_options(GRAPH_FIELDS)
@click.pass_obj
def command(env, revision, as_graph, filter_, search, max_count, since, until, roles, models, reverse, follow, no_ids,
            date_style, json_mode, fmt, nul):
    """Show the entries on the path to REV (default @), newest first.

    With a range A..B, the entries on B's path that are not on A's; with A...B,
    the entries on either side since their merge base. With --graph, the whole
    session tree as pi's /tree draws it: the branch holding the leaf first, the
    active path marked •, labels inline, and `← active` on the leaf's row. A
    graph is kept in the cache and printed again as it is while the session file
    is unchanged; after entries are appended, only the rows they change are
    drawn (--no-cache draws it anew).
    """
    checked(LOG, {"as_graph": as_graph, "reverse": reverse, "since": since, "until": until})
    only = entry_filter(since, until, roles, models)
    if follow:
        _check_follow(as_graph, reverse, revision)
        if as_graph and only is not None:
            raise UsageError("--since, --until, --role and --model do not go with --graph --follow",
                             hint="'stree log --follow' with them, or 'stree log --graph' with them")
    if as_graph:
        if follow:
            return _graph_follow(env, revision, filter_ or "default", search, max_count, no_ids, json_mode, fmt, nul)
        return _graph(env, revision, filter_ or "default", search, max_count, no_ids, json_mode, fmt, nul, only=only)
    from ..core.preview import Previewer

    session, tree = env.load()
    out = env.output(json_mode, fmt, nul, GRAPH_FIELDS)
    follower = None
    if follow:
        out.pager = False  # (tail -f: the path is printed, not paged, and the entries follow it)
        follower = _follower(session)  # before the path is printed: what changes after it is seen
    previewer = Previewer(tree)

    if not tree.nodes and revision == "@":
        click.echo(_inert(f"stree: {session.path}: the session has no entries yet"), err=True)
        if follow:
            return _follow(follower, session, out, filter_, search, date_style, only)
        return None
    from ..output.records import log_rows

    walk = log_rows(tree, revision, filter_, search, max_count, reverse, only)
    if not walk.matched and search is not None and not follow:
        click.echo("stree: no entry matches", err=True)
        return NEGATIVE
    path_log(out, tree, walk.rows, previewer, date_style, walk.active)
    out.close()
    if follow:
        return _follow(follower, session, out, filter_, search, date_style)
    return None


def _graph(env, revision, filter_, search, max_count, no_ids, json_mode, fmt, nul, follow=False, only=None):
    """log --graph: printed again as kept while the file is unchanged, patched from what was
    kept when the file only grew, else drawn whole (stree.output.keptgraph)."""
    from ..output.keptgraph import consult
    from ..storage import keptgraph as kept_store

    out = None
    options = found = None
    if not follow and only is None and kept_store.applies(env.no_cache, terminal=True):
        # the whole output depends on these and on the file only: a graph drawn before for the
        # same file as it is now is printed again as it was
        options = kept_store.options(revision, filter_, search, max_count, False, no_ids, json_mode, fmt,
                                     nul, env.color)
        if sys.stdout.isatty():
            from ..output.modes import terminal_width

            out = env.output(json_mode, fmt, nul, GRAPH_FIELDS)
            options += ("terminal", terminal_width(), out.color, out.pager)
        found = consult(str(env.session_path()), options)
        if found is not None and found[0] == "same":
            env.report.index = "graph-cache"  # (nothing read)
            if out is None:
                kept_store.write(found[1])
                return
            if _replay(out, found[1]):
                out.close()
                return
            found = None
    patch = found[1] if found is not None else None
    try:
        return _draw(env, out, options, patch, filter_, search, max_count, no_ids, json_mode, fmt, nul, follow, only)
    finally:
        if patch is not None:
            patch.kept.close()


def _draw(env, out, options, patch, filter_, search, max_count, no_ids, json_mode, fmt, nul, follow, only=None):
    from ..core.loading import use_index
    from ..core.preview import ParsedPreviews, Previewer
    from ..output import keptgraph
    from ..output.graph import graph
    from ..storage import keptgraph as kept_store, parallel

    parallel.alone()  # (a parse without an index: the drawing costs more; a worker would double the peak)
    made = ParsedPreviews() if use_index(env.no_cache) else None  # (a parse to index: previews made as it decodes)
    session, tree = env.load(keep=made)
    parsed = made is not None and made.into(session)  # (every row parsed here: no index before)
    if out is None:
        out = env.output(json_mode, fmt, nul, GRAPH_FIELDS)
    if options is not None:
        out.capture = kept_store.Capture(session, options, patch.kept if patch is not None else None)
    try:
        previewer = Previewer(tree)
        if patch is not None and not session.malformed and not session.headerless:
            from ..output.keptgraph.patch import chain

            done = chain(tree, out, patch, filter_, search, no_ids, max_count, previewer)
            if done is not None:  # entries appended under the leaf: the kept output, a few rows drawn
                pieces, state = done
                keptgraph.put(out, pieces, patch.kept)
                out.close()
                kept_store.store(session, options, out.capture, state)
                return
        test = only(tree) if only is not None else None
        # drawn row by row as they are written; laid out whole first where the parse came first anyway
        # (its first row waited for the whole file: laying out every row at once costs less in all)
        rows = graph(tree, filter_, search, previewer=previewer, keep=test, whole=parsed and max_count is None)
        if max_count is not None:
            rows = rows[:max_count]
        if not rows:
            _nothing_shown(tree, filter_, search, test, previewer)
            if search is not None and not follow:
                out.close()
                return NEGATIVE  # as grep: nothing matched
        keep = options is not None and bool(rows) and not session.malformed and not session.headerless
        state = keptgraph.write(out, tree, rows, previewer, no_ids, keep, patch)
        out.close()
        if keep and state is not None:
            kept_store.store(session, options, out.capture, state)
    finally:
        if out.capture is not None:
            out.capture.close()


def _replay(out, kept):
    """A kept graph on a terminal, through the pager as drawn."""
    from ..output import keptgraph

    try:
        data = kept.read(0, kept.length)
    finally:
        kept.close()
    try:
        keptgraph.replay(out, data)
    except UnicodeError:
        return False
    return True


def _reader_gone():
    """Raise BrokenPipeError when stdout is a pipe whose reader has gone (checked while waiting,
    so `stree log -f | head -3` ends with head, not at the next entry)."""
    import select

    try:
        p = select.poll()
        p.register(sys.stdout.fileno(), 0)  # errors only: POLLERR when a pipe's reader closed it
        gone = bool(p.poll(0))
    except (AttributeError, ValueError, OSError):
        return
    if gone:
        raise BrokenPipeError()


def _graph_follow(env, revision, filter_, search, max_count, no_ids, json_mode, fmt, nul):
    """log --graph --follow: on a terminal the graph redrawn in place at each append; into a
    pipe the graph, then each row as it appears (stree.output.graph_follow)."""
    from ..errors import INTERRUPTED
    from ..output.graph_follow import follow

    try:
        if not sys.stdout.isatty() or json_mode or fmt is not None:
            _graph(env, revision, filter_, search, max_count, no_ids, json_mode, fmt, nul, follow=True)
        session, _ = env.load()
        out = env.output(json_mode, fmt, nul, GRAPH_FIELDS)
        out.pager = False
        from ..core.loading import finish

        finish(session)  # (what a command writes when it ends: this one ends when it is stopped)
        from .options import warn_user

        follow(session, out, filter_, search, no_ids, _reader_gone, warn=warn_user)
    except KeyboardInterrupt:
        sys.stdout.flush()
        return INTERRUPTED


def _check_follow(as_graph, reverse, revision):
    if reverse:
        raise UsageError("--follow and --reverse cannot be combined: new entries come last",
                         hint="drop --reverse")
    if ".." in revision:
        raise UsageError("--follow takes a revision, not a range: it prints the entries appended to the file",
                         hint="'stree log --follow' or 'stree log --follow REV'")


def _follower(session):
    """A Follower of `session`, taken right after it was read: its identity and last bytes are
    the file's as read, so a replace or rewrite from then on ends the following (exit 4)."""
    from ..core.loading import finish
    from ..errors import BadFile
    from ..storage.follow import Follower

    from .options import warn_user

    finish(session)  # (what a command writes when it ends: this one ends when it is stopped)
    follower = Follower(session, warn=warn_user)
    st = getattr(session, "file_stat", None)
    if st is not None and (st.st_dev, st.st_ino) != follower.identity:  # replaced since it was read
        raise BadFile(f"{follower.path}: the file was replaced (a new file at its path); stopped following",
                      hint="run 'stree log --follow' again to follow the file as it is now")
    return follower


def _follow(follower, session, out, filter_, search, date_style, only=None):
    """Print the entries appended to the file, in file order, until Ctrl-C (exit 130, quietly)
    or until the file is replaced or truncated (exit 4)."""
    from ..core.preview import Previewer
    from ..core.loading import tree_of
    from ..errors import INTERRUPTED

    filtering = filter_ not in (None, "all") or search or only
    try:
        while True:
            sys.stdout.flush()
            first = follower.wait(_reader_gone)
            tree = tree_of(session)  # (as the file is now: the follower grew the session)
            previewer = Previewer(tree)
            rows = range(first, len(session.nodes))
            if filtering:
                from ..output.records import filtered

                rows = filtered(tree, list(rows), filter_, search, only)
            from ..core.leaf import position

            at = position(tree)
            active = set(tree.path_rows(at)) if at else set()
            for row in rows:
                node = tree.node(row)
                rec = entry_record(tree, node, previewer, active=row in active)
                out.record(rec, None if out.machine else
                           log_line(out, tree, node, previewer, date_style, mark_position=False))
    except KeyboardInterrupt:
        sys.stdout.flush()
        return INTERRUPTED


def _nothing_shown(tree, filter_, search, test, previewer):
    """Say that the graph has no row, and what would show some: --filter all only when it would."""
    from ..output.graph import graph

    if filter_ != "all" and graph(tree, "all", search, previewer=previewer, keep=test):
        click.echo("stree: no entries to show (try --filter all)", err=True)
    elif search is not None:
        click.echo(_inert(f"stree: no entry holds every word of {search!r}"), err=True)
        click.echo("hint: fewer words, or 'stree grep PATTERN' for a fixed string or a regular expression",
                   err=True)
    else:
        click.echo("stree: no entries to show", err=True)


def _inert(text):
    from ..format.terminal import inert

    return inert(text, oneline=True)
