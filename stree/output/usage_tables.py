"""`stree stats` for people: tables of tokens and cost, one section per grouping (the totals:
stree.core.usage_totals; one entry's usage: stree.format.usage)."""

from ..format.terminal import inert
from .modes import display_width

COLUMNS = (("input", "input"), ("output", "output"), ("cacheRead", "cache read"),
           ("cacheWrite", "cache write"), ("cost", "cost"))


def cost_text(cost):
    return f"${cost:,.4f}"


def cells(rec, columns=COLUMNS, short=False):
    return [cost_text(rec[name]) if name == "cost" else short_count(rec[name]) if short else f"{rec[name]:,}"
            for name, _ in columns]


def short_count(n):
    """A token count in at most 6 characters: 950, 48.8k, 1.09M, 2.5G."""
    for unit, size in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if n >= size:
            value = n / size
            return f"{value:.{2 if value < 10 else 1 if value < 100 else 0}f}{unit}"
    return str(n)


# what goes first when a table is wider than the terminal: numbers shortened, then these columns
OPTIONAL = ("cacheWrite", "cacheRead", "input")
NAME_MIN = 20  # columns are shortened, then left out, before a row's name is cut below this


def table(out, sections, width=None):
    """Lines of sections [(title, [(name, record)])]: names left, numbers right-aligned, the
    columns as wide as their widest cell over every section. With `width` (a terminal's), every
    line fits it: numbers shortened (48.8k), then the optional columns left out (cache write,
    cache read, input), then the names cut; never a wrapped row."""
    items_of = [items for _, items in sections if items]
    names = [display_width(inert(name, True)) for items in items_of for name, _ in items]
    titles = [display_width(inert(title, True)) for title, items in sections if items]
    name_width = min(max(names + titles + [NAME_MIN]), 60)
    columns, short = COLUMNS, False
    widths = _widths(items_of, columns, short)
    if width is not None:
        if not _fits(width, NAME_MIN, widths):
            short = True
            widths = _widths(items_of, columns, short)
        for drop in OPTIONAL:
            if _fits(width, NAME_MIN, widths):
                break
            columns = tuple(c for c in columns if c[0] != drop)
            widths = _widths(items_of, columns, short)
        name_width = max(1, min(name_width, width - sum(widths) - 2 * len(widths)))
    lines = []
    for title, items in sections:
        if not items:
            continue
        if lines:
            lines.append("")
        head = "  ".join(h.rjust(w) for (_, h), w in zip(columns, widths))
        lines.append(out.style("header", _cut(inert(title, True), name_width)) + "  " + out.style("muted", head))
        for name, rec in items:
            shown = _cut(inert(name, True), name_width)
            row = "  ".join(c.rjust(w) for c, w in zip(cells(rec, columns, short), widths))
            style = "accent" if rec.get("active") else None
            lines.append(out.style(style, shown) + "  " + row)
    return lines


def _widths(items_of, columns, short):
    widths = [len(head) for _, head in columns]
    for items in items_of:
        for _, rec in items:
            widths = [max(w, len(c)) for w, c in zip(widths, cells(rec, columns, short))]
    return widths


def _fits(width, name_width, widths):
    return name_width + sum(widths) + 2 * len(widths) <= width


def _cut(text, width):
    """`text` padded or cut ('…') to `width` terminal columns."""
    pad = width - display_width(text)
    if pad >= 0:
        return text + " " * pad
    from .modes import fit

    kept = "".join(t for _, t in fit([(None, text)], width))
    return kept + " " * (width - display_width(kept))
