"""`log --graph --follow`: the graph, then what pi's appends change in it.

On a terminal the graph is redrawn in place after each append: the screen is cleared and the
rows that fit it are drawn, ending with the row that carries the leaf mark (the newest
activity at the bottom, as `watch` would show it). Into a pipe nothing printed can be taken
back: after the graph, each row that appears in it is printed once, as the graph draws it
when it appears (its connectors then; the marks of rows printed before are not updated).
With --json or --format those rows are records (NDJSON), as `log --follow --json` prints
entries.

The file is read by stree.storage.follow.Follower: a stat poll, complete lines only (a torn
last line waits for its end), an error when the file is replaced or truncated.
"""

import shutil
import sys

from . import keptgraph

CLEAR = "\x1b[H\x1b[2J"  # cursor home, clear the screen


def follow(session, out, filter_, search, no_ids, idle=None, warn=None):
    """Follow `session` (read to its end) until Ctrl-C (KeyboardInterrupt, to the caller) or
    until the file is replaced (BadFile). `idle` is called while waiting; `warn` hears of an
    appended line skipped for its length (the Follower reads in bounded blocks)."""
    from ..core.preview import Previewer
    from ..core.loading import tree_of
    from ..storage.follow import Follower
    from .graph import graph

    follower = Follower(session, warn=warn)
    st = getattr(session, "file_stat", None)
    if st is not None and (st.st_dev, st.st_ino) != follower.identity:  # replaced since it was read
        from ..errors import BadFile

        raise BadFile(f"{follower.path}: the file was replaced (a new file at its path); stopped following",
                      hint="run 'stree log --graph --follow' again to follow the file as it is now")
    window = out.tty and not out.machine
    seen = None
    while True:
        tree = tree_of(session)  # (as the file is now: the follower grew the session)
        previewer = Previewer(tree)
        drawing = graph(tree, filter_, search, previewer=previewer)
        if window:
            _window(out, tree, drawing, previewer, no_ids)
        elif seen is None:
            seen = set(drawing.order)  # printed (or left out by -n) before following
        else:
            new = [r for r in drawing.order if r not in seen]
            seen.update(new)
            width = drawing.id_width()
            draw = drawing._draw
            if new:
                out.put([keptgraph.text_of(out, tree, draw(r), previewer, width, no_ids) for r in new])
        sys.stdout.flush()
        follower.wait(idle)


def _window(out, tree, drawing, previewer, no_ids):
    """Clear the screen and draw the rows that fit it, ending with the leaf mark's row."""
    from ..format.terminal import write

    height = max(2, shutil.get_terminal_size((80, 24)).lines)
    order = drawing.order
    chain = drawing.chain() if drawing.chain is not None else None
    last = order.index(chain[0]) if chain is not None else len(order) - 1
    start = max(0, last - (height - 2))
    end = min(len(order), start + height - 1)
    width = drawing.id_width()
    draw = drawing._draw
    texts = [keptgraph.text_of(out, tree, draw(r), previewer, width, no_ids) for r in order[start:end]]
    write(CLEAR + "".join(texts))
