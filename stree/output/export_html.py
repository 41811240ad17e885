"""`stree export` as one self-contained HTML file: no network (no live URL at all), stree's own
CSS and JS (stree/data/export.css, export.js) inline and allowed by their hashes in a strict
Content-Security-Policy, every piece of transcript text escaped or rendered from Markdown at
export time with raw HTML off (output.markdown: no script in the page turns text into HTML),
images as data: URIs.

The page: the tree as an outline (nav; pi's five /tree filters and search over the whole text,
labels and branch summaries in it), the entries by branch (each branch a <details>, the
active path's open), tool calls named by their main argument and folded with their output,
a link at each branch point to the branches that leave it, each branch's cost, deep links
(#e-ID) that open the entry and the outline to it, light and dark themes, a phone layout and
a printable view. Written piece by piece: a 100 MB message is escaped a slice at a time."""

import base64
import hashlib
from functools import lru_cache
from html import escape
from pathlib import Path
from urllib.parse import quote

from ..core.entrytypes import with_filter
from ..core.outline import folds
from ..output import markdown
from ..output.dates import show as show_date
from ..output.transcript import headline

SLICE = 1 << 20
# pi 1.6.0's /tree (tree-selector.js): settings entries the default filter hides, entries no filter shows
SETTINGS, NEVER = with_filter("setting"), with_filter("never")  # (their rows: stree.core.entrytypes)


@lru_cache(maxsize=None)
def asset(name):
    return (Path(__file__).resolve().parent.parent / "data" / name).read_text(encoding="utf-8")


def _hash(text):
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def csp():
    return (f"default-src 'none'; img-src data:; style-src {_hash(asset('export.css'))}; "
            f"script-src {_hash(asset('export.js'))}; base-uri 'none'; form-action 'none'")


def esc(value):
    """Text as inert HTML (markup escaped, NUL replaced), in one piece: for short texts."""
    text = value if isinstance(value, str) else str(value)
    return escape(text.replace("\0", "\ufffd"), quote=True)


def esc_pieces(text):
    """A long text escaped a slice at a time."""
    for start in range(0, len(text), SLICE):
        yield esc(text[start:start + SLICE])


def anchor(entry_id):
    return "e-" + str(entry_id)


def render(doc, date_style="local"):
    """The page, in chunks of about 256 KiB (a big session is never held whole as text)."""
    out = []
    size = 0
    for piece in _pieces(doc, date_style):
        out.append(piece)
        size += len(piece)
        if size > 1 << 18:
            yield "".join(out)
            out = []
            size = 0
    yield "".join(out)


def _money(cost):
    return f"${cost:,.4f}"


def _pieces(doc, date_style):
    header = doc.header
    yield '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
    yield f'<meta http-equiv="Content-Security-Policy" content="{esc(csp())}">\n'
    yield ('<meta name="referrer" content="no-referrer">\n<meta name="generator" content="stree export">\n'
           '<meta name="viewport" content="width=device-width, initial-scale=1">\n')
    yield f"<title>{esc(doc.title)}</title>\n<style>{asset('export.css')}</style></head>\n<body>\n<header>"
    yield f"<h1>{esc(doc.title)}</h1><p class=\"meta\">"
    created = header.get("timestamp")
    for name, value in (("session", header.get("id")), ("cwd", header.get("cwd")),
                        ("created", show_date(created, date_style) if created else None),
                        ("entries", doc.count()), ("@", doc.at), ("forked from", header.get("parentSession")),
                        ("tokens", f"{doc.usage.tokens:,}" if doc.usage.count else None),
                        ("cost", _money(doc.usage.cost) if doc.usage.count else None)):
        if value is not None:
            yield f"<span>{esc(name)}: <code>{esc(value)}</code></span>"
    yield ('</p><p class="controls"><button type="button" id="expand-all">Expand all</button>'
           '<button type="button" id="collapse-all">Collapse to the active path</button>'
           '<button type="button" id="theme">Light / dark</button>'
           '<button type="button" id="print">Print</button></p></header>\n')
    yield ('<div class="layout">\n<nav id="outline" aria-label="Outline">'
           '<input type="search" id="search" placeholder="Search..." aria-label="Search the entries">'
           '<div class="filters">'
           '<button type="button" class="on" data-filter="default" title="Hide settings entries">Default</button>'
           '<button type="button" data-filter="no-tools" title="Default minus tool results">No-tools</button>'
           '<button type="button" data-filter="user-only" title="Only user messages">User</button>'
           '<button type="button" data-filter="labeled-only" title="Only labeled entries">Labeled</button>'
           '<button type="button" data-filter="all" title="Show everything">All</button></div>'
           f'<p id="status">{doc.count()} entries</p><div class="tree"><ol>')
    yield from _nav(doc)
    yield "</ol></div></nav>\n<main>\n"
    if not doc.items:
        yield '<p class="note">The session has no entries yet.</p>'
    yield from _main(doc, date_style)
    yield f"</main>\n</div>\n<script>{asset('export.js')}</script>\n</body></html>\n"


def _count(n):
    return f"{n} {'entry' if n == 1 else 'entries'}"


def _filters(item):
    """The classes pi's /tree filters look at (data-free: CSS and the script read them)."""
    cls = ["e"]
    if item.type in SETTINGS:
        cls.append("fs")
    if item.role == "toolResult":
        cls.append("ft")
    if item.type == "message" and item.role == "user":
        cls.append("fu")
    if item.label:
        cls.append("fl")
    if item.tools_only and not item.leaf or item.type in NEVER:
        cls.append("fh")  # pi hides assistant messages with only tool calls (no error) in every filter
    return " ".join(cls)


def _nav(doc):
    for event, branch in folds(doc.branches):
        if event == "close":
            yield "</ol></details></li>"
            continue
        items = [doc.items[r] for r in branch.rows]
        cls = "b active" if branch.active else "b"
        cost = doc.branch_cost(branch)
        yield (f'<li class="{cls}"><details{" open" if branch.active else ""}>'
               f"<summary>{_count(len(items))}{' (active path)' if branch.active else ' (abandoned)'}"
               f"{' · ' + _money(cost) if cost else ''}</summary><ol>")
        for item in items:
            cls = " ".join(c for c in ("active" if item.active else "", "leaf" if item.leaf else "") if c)
            cls_attr = f' class="{cls}"' if cls else ""
            label = f'<span class="lab">{esc(item.label)}</span>' if item.label else ""
            yield (f'<li class="{_filters(item)}"><a href="#{esc(quote(anchor(item.id), safe=""))}"{cls_attr}>'
                   f"{label}{esc(item.preview)}</a></li>")
        yield "</ol><ol>"  # its side branches


def _main(doc, date_style):
    for event, branch in folds(doc.branches):
        if event == "close":
            yield "</details>\n"
            continue
        items = [doc.items[r] for r in branch.rows]
        first = items[0]
        cls = "branch active" if branch.active else "branch"
        where = "the active path" if branch.active else "an abandoned branch"
        cost = doc.branch_cost(branch)
        yield (f'<details class="{cls}"{" open" if branch.active else ""}><summary>'
               f"{esc(where)}: {_count(len(items))}{' · ' + _money(cost) if cost else ''} from "
               f"<code>{esc(first.id)}</code> ({esc(headline(first.preview, 80))})</summary>\n")
        for item in items:
            yield from _entry(item, *doc.content(item), date_style)
        side = branch.children[1:]
        if side:
            yield from _forks(doc, side)


def _forks(doc, side):
    """At a branch point: one link per branch that leaves it (folded below), with its size and cost."""
    yield f'<p class="fork">↳ {len(side)} other branch{"es" if len(side) > 1 else ""} from here: '
    for n, b in enumerate(side):
        first = doc.items[b.rows[0]]
        cost = doc.branch_cost(b)
        yield (f'{", " if n else ""}<a href="#{esc(quote(anchor(first.id), safe=""))}">{esc(headline(first.preview, 60))}</a>'
               f" ({_count(len(b.rows) + doc.below(b))}{', ' + _money(cost) if cost else ''})")
    yield "</p>\n"


def _entry(item, kind, parts, date_style):
    classes = ["entry", "t-" + _cls(item.type), "r-" + _cls(item.role or "none")]
    if item.active:
        classes.append("active")
    if item.leaf:
        classes.append("leaf")
    yield (f'<article class="{" ".join(classes)}" id="{esc(anchor(item.id))}"><div class="head">'
           f'<span class="kind">{esc(kind)}</span> <code class="id">{esc(item.id)}</code> '
           f"<time>{esc(show_date(item.ts, date_style) if item.ts else '')}</time>")
    if item.label:
        yield f'<span class="lab label">{esc(item.label)}</span>'
    if item.leaf:
        yield '<span class="at">← @ (active)</span>'
    yield '</div><div class="body">'
    for part in parts:
        yield from _part(part)
    yield "</div></article>\n"


def _cls(text):
    return "".join(c if c.isascii() and (c.isalnum() or c == "-") else "_" for c in str(text))[:40]


def _lines(text):
    n = text.count("\n") + 1 if text else 0
    return f"{n} line{'' if n == 1 else 's'}"


def _part(part):
    kind = part[0]
    if kind == "text":
        yield '<div class="md">'
        yield from markdown.render(part[1])
        yield "</div>"
    elif kind == "thinking":
        yield '<details class="thinking"><summary>thinking</summary><div class="md">'
        yield from markdown.render(part[1])
        yield "</div></details>"
    elif kind == "call":
        yield (f'<details class="tool call"><summary>→ <span class="call">{esc(part[4])}</span></summary>'
               f"<pre>")
        yield from esc_pieces(part[2])
        yield "</pre></details>"
    elif kind == "result":
        cls = "tool result error" if part[3] else "tool result"
        first = part[2][:1000].strip().split("\n", 1)[0][:160] if part[3] else ""
        yield (f'<details class="{cls}"><summary><span class="call">{esc(part[4])}</span> · {_lines(part[2])}'
               f"{' · error: ' + esc(first) if part[3] else ''}</summary><pre>")
        yield from esc_pieces(part[2])
        yield "</pre></details>"
    elif kind == "image":
        if part[2] is None:
            yield f'<p class="note">[image: {esc(part[1])}, not available]</p>'
        else:
            yield f'<img alt="image ({esc(part[1])})" src="data:{esc(part[1])};base64,'
            yield part[2]  # checked: base64 characters only
            yield '">'
    elif kind == "summary":
        cls = "summary compaction" if part[1] == "compaction" else "summary branch-summary"
        yield (f'<section class="{cls}"><h3>{esc(part[1].capitalize())}</h3><p class="note">{esc(part[3])}</p>'
               '<div class="md">')
        yield from markdown.render(part[2])
        yield "</div></section>"
    elif kind == "bash":
        yield (f'<details class="tool bash"><summary><span class="call">$ {esc(part[1][:200])}</span> '
               f"· exit code {esc(part[3])} · {_lines(part[2])}</summary><pre>$ ")
        yield from esc_pieces(part[1])
        yield "\n"
        yield from esc_pieces(part[2])
        yield "</pre></details>"
    elif kind == "error":
        yield f'<div class="error">{esc(part[1])}</div>'
    elif kind == "notice":
        yield f'<p class="notice">{esc(part[1])}</p>'
    elif kind == "meta":
        yield f'<p class="note">{esc(part[1])}</p>'
    elif kind == "data":
        yield '<details class="tool data"><summary>data</summary><pre>'
        yield from esc_pieces(part[1])
        yield "</pre></details>"
    # a tag: the heading says it
