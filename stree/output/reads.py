"""The lines of the common read commands (log's path, label's list), shared by the commands
and by stree.fastread, which answers them without click."""

from ..format.terminal import inert
from .dates import show as show_date


def log_line(out, tree, node, previewer, date_style="local", mark_position=True):
    """An entry of `log` (without --graph) for people: id, decorations, time, preview.
    `mark_position`: `(@)` on the entry at @ (not on lines printed as they come: the mark
    could not be taken back when @ moves on)."""
    from ..core.leaf import position

    decorations = []
    if mark_position and node.id == position(tree):
        decorations.append("@")
    label = tree.labels.get(node.id)
    if label:
        decorations.append(inert(label, oneline=True))
    plain_deco = " (" + ", ".join(decorations) + ")" if decorations else ""
    deco = out.style("warning", plain_deco) if decorations else ""
    when = inert(show_date(node.ts, date_style), oneline=True) if node.ts else ""
    segments = previewer.segments(node)
    if out.tty:
        from .modes import fit, terminal_width

        segments = fit(segments, max(1, terminal_width() - len(node.id) - len(plain_deco) - len(when) - 3))
    return f"{out.style('id', node.id)}{deco} {out.style('muted', when)}  {out.segments(segments)}"


def path_log(out, tree, rows, previewer, date_style, active=None):
    """log's records of `rows` (newest first); `active`: the rows on the path to @, None when
    every row shown is on it."""
    from .fields import entry_record

    for row in rows:
        node = tree.node(row)
        rec = entry_record(tree, node, previewer, active=active is None or row in active)
        out.record(rec, None if out.machine else log_line(out, tree, node, previewer, date_style))


def label_records(tree, previewer):
    """The records of `stree label --json` (MCP's labels too): every label, by name."""
    rows = tree.label_targets  # (found when the labels were read: no map of every id)
    for target, label in sorted(tree.labels.items(), key=lambda item: item[1]):
        row = rows.get(target)
        node = tree.node(row) if row is not None else None
        preview = previewer.text(node) if node is not None else "(missing entry)"
        yield {"label": label, "id": target, "timestamp": tree.label_timestamps.get(target), "preview": preview}


def label_list(out, records):
    """`stree label`: its records (label_records, every label by name) as name, entry id, preview."""
    from .modes import display_width, fit, terminal_width

    name_width = max((display_width(inert(rec["label"], oneline=True)) for rec in records), default=0)
    id_width = max((len(rec["id"]) for rec in records), default=0)
    for rec in records:
        human = None
        if not out.machine:
            shown = inert(rec["label"], oneline=True)
            pad = " " * (name_width - display_width(shown))
            segments = [("", rec["preview"])]
            if out.tty:  # one terminal line per label
                segments = fit(segments, max(1, terminal_width() - name_width - id_width - 4))
            human = (f"{out.style('warning', shown)}{pad}  {out.style('id', rec['id'].ljust(id_width))}  "
                     f"{out.segments(segments)}")
        out.record(rec, human)


def rev_line(rec, tree, short=False):
    """A record of `rev-parse` for people: the id (^ before a range's excluded end), or with
    `short` its shortest unique prefix."""
    id = shortest(rec["id"], tree.by_id) if short else rec["id"]
    return ("^" if rec.get("negated") else "") + inert(id, oneline=True)  # (an id is file text)


def shortest(id, ids, minimum=4):
    """The shortest prefix (4+ characters) of `id` no other id in `ids` starts with."""
    for n in range(minimum, len(id)):
        prefix = id[:n]
        if sum(1 for other in ids if other.startswith(prefix)) == 1:
            return prefix
    return id
