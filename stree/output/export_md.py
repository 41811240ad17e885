"""`stree export` as Markdown: the session's branches in order (the active path first, each
abandoned branch after the entry it leaves from), every entry with its parts. Transcript text
stays text: HTML-significant characters are escaped and code goes in fences longer than any
backtick run inside, so a renderer shows it, never runs it. Images as data: URIs."""

import re

from ..output.dates import show as show_date
from ..core.outline import walk

_RUN = re.compile(r"`+")


def text(value):
    """Prose: kept as written (Markdown), with &, < and > escaped (no raw HTML)."""
    return (value.replace("\0", "\ufffd").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .encode("utf-8", "replace").decode("utf-8"))


def inline(value):
    """One line: text() with newlines and Markdown's inline markers made plain."""
    return re.sub(r"([\\`*_\[\]#|])", r"\\\1", text(" ".join(str(value).split())))


def plain(value):
    """One line inside HTML (a <summary>): escaped, whitespace folded."""
    return text(" ".join(str(value).split()))


def fence(body, info=""):
    longest = max((len(m.group(0)) for m in _RUN.finditer(body)), default=0)
    bar = "`" * max(3, longest + 1)
    body = body.replace("\0", "\ufffd").encode("utf-8", "replace").decode("utf-8")
    return f"{bar}{info}\n{body}\n{bar}"


def quoted(body):
    return "\n".join("> " + line if line else ">" for line in text(body).split("\n"))


def render(doc, date_style="local"):
    """The document, in chunks: one per branch."""
    out = []
    w = out.append
    header = doc.header
    w(f"# {inline(doc.title)}\n")
    created = header.get("timestamp")
    for name, value in (("Session", header.get("id")), ("Working directory", header.get("cwd")),
                        ("Created", show_date(created, date_style) if created else None),
                        ("Entries", doc.count()), ("Position (@)", doc.at),
                        ("Forked from", header.get("parentSession")),
                        ("Tokens", f"{doc.usage.tokens:,} (input {doc.usage.input:,}, output {doc.usage.output:,}, "
                                   f"cache read {doc.usage.cacheRead:,}, cache write {doc.usage.cacheWrite:,})"
                         if doc.usage.count else None),
                        ("Cost", f"${doc.usage.cost:,.4f}" if doc.usage.count else None)):
        if value is not None:
            w(f"- {name}: `{inline(value)}`")
    w("")
    if not doc.items:
        w("_The session has no entries yet._\n")
    number = {}
    for n, branch in enumerate(walk(doc.branches), 1):
        number[id(branch)] = n
        items = [doc.items[r] for r in branch.rows]
        if branch.parent is None and n == 1 and branch.active:
            title = "Active path"
        elif branch.active:
            title = "Active path, continued"
        else:
            title = "Abandoned branch"
        origin = f" (after `{inline(items[0].parent)}`)" if items[0].parent else ""
        w(f"## {n}. {title}{origin}: {len(items)} {'entry' if len(items) == 1 else 'entries'}\n")
        for item in items:
            _entry(w, item, *doc.content(item), date_style)
        yield "\n".join(out) + "\n"
        out = []
        w = out.append
    if out:
        yield "\n".join(out) + "\n"


def _entry(w, item, kind, parts, date_style):
    marks = []
    if item.label:
        marks.append(f"label **{inline(item.label)}**")
    if item.leaf:
        marks.append("**← @ (active)**")
    when = show_date(item.ts, date_style) if item.ts else ""
    w(f"### {inline(kind)} · `{inline(item.id)}`" + (f" · {inline(when)}" if when else "")
      + (" · " + " · ".join(marks) if marks else "") + "\n")
    for part in parts:
        block = _part(part)
        if block:
            w(block + "\n")


def _part(part):
    kind = part[0]
    if kind == "text":
        return text(part[1])
    if kind == "thinking":
        return "<details><summary>thinking</summary>\n\n" + quoted(part[1]) + "\n\n</details>"
    if kind == "call":
        return (f"<details><summary>tool call: {plain(part[1])}</summary>\n\n" + fence(part[2], "json")
                + "\n\n</details>")
    if kind == "result":
        state = " (error)" if part[3] else ""
        return f"<details><summary>result of {plain(part[1])}{state}</summary>\n\n" + fence(part[2]) + "\n\n</details>"
    if kind == "image":
        if part[2] is None:
            return f"_[image: {inline(part[1])}, not available]_"
        return f"![image](data:{part[1]};base64,{part[2]})"
    if kind == "summary":
        return f"**{part[1].capitalize()}** ({inline(part[3])})\n\n" + quoted(part[2])
    if kind == "bash":
        return fence(f"$ {part[1]}\n{part[2]}\n(exit code {part[3]})", "console")
    if kind == "error":
        return "**Error:** " + text(part[1])
    if kind == "meta":
        return f"_{inline(part[1])}_"
    if kind == "data":
        return fence(part[1], "json")
    return None
