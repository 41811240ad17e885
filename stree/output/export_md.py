"""`stree export` as Markdown: the session's branches in order (the active path first, each
abandoned branch after the entry it leaves from), every entry with its parts.

The file is inert in any CommonMark renderer, raw HTML allowed or not:
- prose keeps its Markdown (emphasis, lists, `code spans`) but can open no fence (runs of
  three backticks or tildes are escaped), no raw HTML or autolink (`<` and `&` escaped outside
  code spans), no link or image (`[` escaped: no URL is fetched on viewing). Line
  breaks are normalised first (a lone CR ends a line for a renderer, not for a scan);
- code goes in fences longer than any backtick run inside, so no body ends its fence;
- the only raw HTML is stree's own <details>/<summary>, with escaped text on one line.
The page is written piece by piece: a 100 MB message is escaped in slices, never copied whole."""

import re

from ..output.dates import show as show_date
from ..core.outline import walk

SLICE = 1 << 20  # characters escaped at a time
_LINE_END = re.compile(r"\r\n?")
_RUN = re.compile(r"`+")
_OPEN = re.compile(r"^ {0,3}(`{3,}(?=[^`\n]*$)|~{3,})([^\n]*)$", re.M)  # a fence at a line's start
# outside code spans: a backslash escape, a backtick run, a tilde run, a character to escape
_TOKEN = re.compile(r"\\([!-/:-@\[-`{-~])|(`+)|(~{3,})|([&<\[\0])")
_URL = re.compile(r"\bhttps?://[^\s<>()\[\]{}\"'`\\|^]+", re.I)  # --links: what an autolink may hold
_ESCAPE = {"&": "&amp;", "<": "&lt;", "[": "\\[", "\0": "\ufffd"}


def _clean(value):
    """NUL and lone surrogates replaced, line ends made \\n."""
    value = value.replace("\0", "\ufffd")
    if "\r" in value:
        value = _LINE_END.sub("\n", value)
    return value.encode("utf-8", "replace").decode("utf-8")


def _close(line, start, n):
    """Where a run of exactly n backticks starts at or after start on the same line, or -1."""
    stop = line.find("\n", start)
    for m in _RUN.finditer(line, start, len(line) if stop < 0 else stop):
        if len(m.group(0)) == n:
            return m.start()
    return -1


def _line(line, out):
    """Lines of prose, made inert, appended to out in pieces (a code span never crosses a line)."""
    pos = 0
    for m in _TOKEN.finditer(line):
        if m.start() < pos:  # inside a code span already written
            continue
        out.append(line[pos:m.start()])
        escaped, ticks, tildes, char = m.groups()
        if escaped is not None:
            out.append(_ESCAPE.get(escaped, "\\" + escaped) if escaped in "&<" else "\\" + escaped)
        elif ticks is not None:
            n = len(ticks)
            end = _close(line, m.end(), n) if n <= 2 else -1
            if end < 0:  # no code span: literal backticks, which open nothing
                out.append("\\`" * n)
            else:  # a code span: its text is literal for every renderer
                out.append(line[m.start():end + n])
                pos = end + n
                continue
        elif tildes is not None:
            out.append("\\~" * len(tildes))
        else:
            out.append(_ESCAPE[char])
        pos = m.end()
    out.append(line[pos:])


def prose(value):
    """Text as inert Markdown, in pieces (a big text is never copied whole). A code block the
    text opens at the start of a line is written as stree's own fence (closed where the text
    closes it, or at the end of the text, as a renderer reads the text alone)."""
    value = value if isinstance(value, str) else str(value)
    if "\r" in value:
        value = _LINE_END.sub("\n", value)
    pos = 0
    while pos < len(value):
        m = _OPEN.search(value, pos)
        if m is None:
            yield from _lines(value, pos, len(value))
            return
        yield from _lines(value, pos, m.start())
        char, n = m.group(1)[0], len(m.group(1))
        body = min(m.end() + 1, len(value))
        close = re.compile(rf"^ {{0,3}}{re.escape(char)}{{{n},}}[ \t]*$", re.M).search(value, body)
        end = max(body, close.start() - 1) if close else len(value)  # the body without its last line end
        info = re.match(r"[\w+#.-]*", m.group(2).strip()).group(0)[:30]
        yield from fence(value, info, body, end)
        if close is None:
            return
        pos = close.end() + 1
        yield "\n"


def _lines(value, start, stop):
    """value[start:stop] as prose, a slice of lines at a time."""
    while start < stop:
        end = min(stop, start + SLICE)
        if end < stop:  # whole lines; a line longer than a slice is cut after a space
            last = value.rfind("\n", start + 1, end)
            space = value.rfind(" ", start + 1, end) if last < 0 else -1
            end = last if last > 0 else space + 1 if space > 0 else end
            while end > start + 1 and value[end - 1] == "\\":  # never part a backslash from what it escapes
                end -= 1
        out = []
        _line(_clean(value[start:end]), out)
        if end < stop and value[end] == "\n":
            out.append("\n")
            end += 1
        yield "".join(out)
        start = end


def text(value):
    return "".join(prose(value))


def inline(value):
    """One line of prose: whitespace folded, Markdown's block markers at the start made plain."""
    line = " ".join(_clean(str(value)).split())
    line = "".join(_lines(line, 0, len(line)))
    return re.sub(r"^([#>+\-*=|]|\d+[.)])", r"\\\1", line)


def code(value):
    """An inline code span holding value (one line) literally."""
    value = " ".join(_clean(str(value)).split())
    longest = max((len(m.group(0)) for m in _RUN.finditer(value)), default=0)
    bar = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{bar}{pad}{value}{pad}{bar}"


def plain(value):
    """One line inside stree's HTML (a <summary>): escaped, whitespace folded."""
    line = " ".join(_clean(str(value)).split())
    return line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def fence(body, info="", start=0, stop=None):
    """body[start:stop] as a fenced code block, in pieces: the fence longer than any backtick
    run inside, so nothing inside ends it."""
    stop = len(body) if stop is None else stop
    longest = max((len(m.group(0)) for m in _RUN.finditer(body, start, stop)), default=0)
    bar = "`" * max(3, longest + 1)
    yield f"{bar}{info}\n"
    while start < stop:
        end = min(stop, start + SLICE)
        if end < stop and body[end - 1] == "\r":
            end += 1  # a \r\n is never cut in two
        yield _clean(body[start:end])
        start = end
    yield f"\n{bar}"


def quoted(body):
    """Prose inside a blockquote."""
    yield "> "
    for piece in prose(body):
        yield piece.replace("\n", "\n> ")


def render(doc, date_style="local", links=False):
    """The document, in chunks of about 256 KiB, each written as soon as it is made. `links`:
    after each message text, its http(s) addresses as live links (autolinks: never an image,
    never another scheme)."""
    out = []
    size = 0
    for piece in _pieces(doc, date_style, links):
        out.append(piece)
        size += len(piece)
        if size > 1 << 18:
            yield "".join(out)
            out = []
            size = 0
    yield "".join(out)


def _pieces(doc, date_style, links):
    header = doc.header
    yield f"# {inline(doc.title)}\n\n"
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
            yield f"- {name}: {code(value)}\n"
    yield "\n"
    if not doc.items:
        yield "_The session has no entries yet._\n\n"
    for n, branch in enumerate(walk(doc.branches), 1):
        items = [doc.items[r] for r in branch.rows]
        if branch.parent is None and n == 1 and branch.active:
            title = "Active path"
        elif branch.active:
            title = "Active path, continued"
        else:
            title = "Abandoned branch"
        origin = f" (after {code(items[0].parent)})" if items[0].parent else ""
        yield f"## {n}. {title}{origin}: {len(items)} {'entry' if len(items) == 1 else 'entries'}\n\n"
        for item in items:
            yield from _entry(item, *doc.content(item), date_style, links)


def _entry(item, kind, parts, date_style, links):
    marks = []
    if item.label:
        marks.append(f"label **{inline(item.label)}**")
    if item.leaf:
        marks.append("**← @ (active)**")
    when = show_date(item.ts, date_style) if item.ts else ""
    yield (f"### {inline(kind)} · {code(item.id)}" + (f" · {inline(when)}" if when else "")
           + (" · " + " · ".join(marks) if marks else "") + "\n\n")
    for part in parts:
        pieces = _part(part)
        if pieces is not None:
            yield from pieces
            yield "\n\n"
        if links and part[0] == "text":
            found = list(dict.fromkeys(m.group(0).rstrip(".,;:!?*_~") for m in _URL.finditer(part[1])))
            if found:
                yield "Links: " + " · ".join(f"<{url}>" for url in found[:100]) + "\n\n"


def _folded(summary, body):
    yield f"<details><summary>{plain(summary)}</summary>\n\n"
    yield from body
    yield "\n\n</details>"


def _part(part):
    kind = part[0]
    if kind == "text":
        return prose(part[1])
    if kind == "thinking":
        return _folded("thinking", quoted(part[1]))
    if kind == "call":
        return _folded(f"tool call: {part[4]}", fence(part[2], "json"))
    if kind == "result":
        first = part[2][:1000].strip().split("\n", 1)[0][:120] if part[3] else ""
        state = f" (error: {first})" if part[3] else ""
        return _folded(f"result of {part[4]}{state}", fence(part[2]))
    if kind == "image":
        if part[2] is None:
            return iter([f"_\\[image: {inline(part[1])}, not available\\]_"])
        return iter([f"![image](data:{part[1]};base64,", part[2], ")"])
    if kind == "summary":
        return iter([f"**{part[1].capitalize()}** ({inline(part[3])})\n\n", *quoted(part[2])])
    if kind == "bash":
        return fence(f"$ {part[1]}\n{part[2]}\n(exit code {part[3]})", "console")
    if kind == "error":
        return iter(["**Error:** ", *prose(part[1])])
    if kind == "notice":
        return iter([f"**Note:** {inline(part[1])}"])
    if kind == "meta":
        return iter([f"_{inline(part[1])}_"])
    if kind == "data":
        return fence(part[1], "json")
    return None  # a tag: the heading says it
