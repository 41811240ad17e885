"""`stree stats` for people: tables of tokens and cost, one section per grouping."""

from ..format.terminal import inert
from .modes import display_width

COLUMNS = (("input", "input"), ("output", "output"), ("cacheRead", "cache read"),
           ("cacheWrite", "cache write"), ("cost", "cost"))


def cost_text(cost):
    return f"${cost:,.4f}"


def cells(rec):
    return [f"{rec[name]:,}" if name != "cost" else cost_text(rec[name]) for name, _ in COLUMNS]


def table(out, sections):
    """Lines of sections [(title, [(name, record)])]: names left, numbers right-aligned, the
    columns as wide as their widest cell over every section."""
    widths = [len(head) for _, head in COLUMNS]
    name_width = 0
    for title, items in sections:
        for name, rec in items:
            row = cells(rec)
            widths = [max(w, len(c)) for w, c in zip(widths, row)]
            name_width = max(name_width, display_width(inert(name, True)))
    name_width = min(max(name_width, 12), 60)
    lines = []
    for title, items in sections:
        if not items:
            continue
        if lines:
            lines.append("")
        head = "  ".join(h.rjust(w) for (_, h), w in zip(COLUMNS, widths))
        lines.append(out.style("header", inert(title, True).ljust(name_width)) + "  " + out.style("muted", head))
        for name, rec in items:
            shown = inert(name, True)
            pad = name_width - display_width(shown)
            if pad < 0:
                shown = shown[:name_width - 1] + "…"
                pad = 0
            row = "  ".join(c.rjust(w) for c, w in zip(cells(rec), widths))
            style = "accent" if rec.get("active") else None
            lines.append(out.style(style, shown) + " " * pad + "  " + row)
    return lines
