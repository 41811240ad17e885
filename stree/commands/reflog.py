import click

from .options import output_options
from ..output.fields import describe
from ..core.leaf import iter_leaf_moves
from ..core.preview import Previewer
from ..format.terminal import inert

REFLOG_FIELDS = {
    "index": "n in @{n}: 0 is the newest move",
    "id": "where the leaf went (null for the empty leaf)",
    "from": "the leaf before the move (null for the empty leaf)",
    "to": "the entry checked out (a user message's id when the leaf went to its parent)",
    "kind": "commit (an entry appended at the leaf), checkout (stree marker), summary (navigation with a "
            "branch summary), jump (leaf moved by pi)",
    "entry": "id of the entry that records the move",
    "line": "its line in the session file",
    "timestamp": "when the move happened",
    "message": "the reflog line's text",
}

_WHAT = {"checkout": "checkout", "summary": "checkout with summary", "jump": "leaf moved"}


@click.command("reflog", epilog=f"""\b
Examples:
  stree reflog                       newest first, as git reflog
  stree reflog -n 3
  stree checkout "$(stree reflog --format '{{from}}' -n 1)"   undo the last checkout

\b
As git counts a commit as a move of HEAD, every entry appended at the leaf (by pi or
stree) is a move, shown "commit: <its preview>"; the other moves are read from stree's
checkout markers, branch summaries, and jumps visible in the file (an entry whose parent
is not the entry before it: pi moved the leaf, then appended). Labels and names are not
moves. @{{N}} is the N-th line's position; 'stree checkout -' goes back to where the last
move that is not a commit came from.
Fields for --json / --format:
{describe(REFLOG_FIELDS)}""")
@click.option("-n", "--max-count", type=click.IntRange(min=0), metavar="N", help="Show at most N moves.")
@output_options(REFLOG_FIELDS)
@click.pass_obj
def command(env, max_count, json_mode, fmt, nul):
    """Show the leaf's past positions, newest first."""
    session, tree = env.load()
    out = env.output(json_mode, fmt, nul, REFLOG_FIELDS)
    moves = iter_leaf_moves(tree)  # (made as they are printed: a long session has as many as entries)
    if max_count is not None:
        from itertools import islice

        moves = islice(moves, max_count)
    previewer = Previewer(tree)
    for n, move in enumerate(moves):
        if move.kind == "commit":
            subject = inert(previewer.text(move.node, keep=False), oneline=True)  # (each read once)
            message = "commit: " + (subject if len(subject) <= 72 else subject[:71] + "…")
        else:
            message = f"{_WHAT[move.kind]}: moving from {move.old or '(empty)'} to {move.new or '(empty)'}"
        rec = {"index": n, "id": move.position, "from": move.old, "to": move.new, "kind": move.kind,
               "entry": move.node.id, "line": move.node.line, "timestamp": move.node.ts, "message": message}
        human = None
        if not out.machine:
            pos = (move.position or "(empty)").ljust(8)
            human = f"{out.style('id', pos)} @{{{n}}}: {out.segments([('', message)])}"
        out.record(rec, human)
    out.close()
