"""The read tools: each read question MCP is offered (stree.questions: list_sessions, log, tree,
show, context, labels, grep) as a Tool whose arguments' schema is made from the question's, and
whose result is the records of the matching CLI command's --json. This is the adapter: a bad
argument is a usage error naming it; tree's answer comes in pages. (The same word, the reads,
one layer down: stree.output.reads, the lines the read commands print for people.)"""

from ..errors import UsageError
from ..questions import questions
from ..questions.base import whole
from .tools import Tool


def tool(question):
    """The Tool of a question offered to MCP."""
    name, key, title, description, result = question.mcp
    args = question.offered("mcp")
    lists = {a.name: a.choices for a in args if a.kind is list and a.choices is not None}

    def run(ws, **arguments):
        for arg, choices in lists.items():  # (the schema checks their type; the tool, their values)
            for value in arguments.get(arg, ()):
                if value not in choices:
                    raise UsageError(f"argument '{arg}' holds {value!r}; each must be one of: {', '.join(choices)}")
        if name in PAGED:
            return PAGED[name](ws, **arguments)
        data = whole(question.answer(ws, **arguments))
        return data if key is None else {key: data}
    if name in PAGED:  # its pages go out once, as text: no outputSchema, no structuredContent
        description, result = as_text(description, result), None
    return Tool(name, title, description, {a.name: a.mcp_schema() for a in args},
                [a.name for a in args if a.required], run, result)


def as_text(description, schema):
    """The description of a tool whose answer is its JSON text alone, the fields of its result's
    schema told in it. (A page of the tree is megabytes of records: sent as structuredContent too,
    as the spec asks of a tool with an outputSchema, it went out twice, and the SDK walked the
    structured copy twice more, validating and dumping it: half the tool's time. Clients give the
    model the text, or the structured copy when there is one: the same JSON.)"""
    props = schema["properties"]
    key = schema["required"][0]
    fields = ", ".join(props[key]["items"]["properties"])
    rest = "; ".join(f"{name}: {spec['description']}" for name, spec in props.items() if name != key)
    return (f"{description} The answer is one JSON object, as text (no structuredContent): {key}, "
            f"{props[key]['description']}, each a record of {fields}; {rest}.")


def tree_page(ws, session=None, filter="default", search=None, max_count=None, cursor=None):
    """One page of the drawing's rows (about PAGE_BYTES of records, each made as it is written:
    the whole drawing is never held), from row `cursor`; `nextCursor` when more. The layout of
    the drawing is kept for the next page while the session is unchanged (ws.pages), and the
    next page is begun (ws.ahead: the server makes it while it waits for the next call)."""
    from .tools import page_bytes

    start = 0
    if cursor is not None:
        if not cursor.isdigit():
            raise UsageError(f"argument 'cursor' must be a cursor a tree answer gave (nextCursor), not {cursor!r}")
        start = int(cursor)
    drawn = _drawing(ws, session, filter, search, max_count)
    page, ws.ahead = ws.ahead, None
    if page is None or page.drawn is not drawn or page.start != start:  # (made ahead of another drawing)
        page = Page(drawn, start, page_bytes())
    else:
        ws.pages_ahead += 1
    page.make()
    if page.stop is not None:
        ws.ahead = Page(drawn, page.stop, page.limit)
    return page.encoded()


class Page:
    """A page of the tree tool's answer, its records' JSON texts made a few rows at a time
    (make(rows)), each written once and measured as it is made."""

    def __init__(self, drawn, start, limit):
        from ..output.modes import fast_to_json

        self.drawn = drawn  # (count, record(i)) of the drawing, as _drawing keeps it
        self.start = start
        self.limit = limit
        self.encode = fast_to_json()
        self.out = []
        self.size = 0
        self.next = start  # the row made next
        self.stop = None  # the first row of the next page, once this one is full

    @property
    def done(self):
        return self.stop is not None or self.next >= self.drawn[0]

    def make(self, rows=None):
        """Make up to `rows` more records of the page (None: all the page's)."""
        total, record = self.drawn
        end = total if rows is None else min(total, self.next + rows)
        encode, out = self.encode, self.out
        while self.stop is None and self.next < end:
            text = encode(record(self.next))
            if out and self.size + len(text) + 1 > self.limit:
                self.stop = self.next
                break
            self.size += len(text) + 1
            out.append(text)
            self.next += 1

    def encoded(self):
        """The page's JSON text: {"rows": [...]}, with total, nextCursor and a note when it is
        not the whole drawing."""
        from ..output.modes import to_json
        from .tools import Encoded

        start, stop, total = self.start, self.stop, self.drawn[0]
        result = {"rows": None}
        if start or stop is not None:
            result["total"] = total
        if stop is not None:
            result["nextCursor"] = str(stop)
            result["note"] = (f"rows {start + 1}-{stop} of {total}; call tree again with cursor={stop} for the next "
                              "page (or narrow it: filter, search, max_count)")
        tail = "]" + to_json(result)[len('{"rows":null'):]  # ('{"rows":null...': the rows are spliced in)
        if not self.out:
            return Encoded('{"rows":[' + tail)
        # one copy of the page's megabytes, the join: its head and tail go on its first and last record
        parts = self.out[:]
        parts[0] = '{"rows":[' + parts[0]
        parts[-1] += tail
        return Encoded(",".join(parts))


def _drawing(ws, session, filter, search, max_count):
    """questions.answers.tree's (count, record(i)), kept between the pages of one drawing: made
    again when the session's file changed (its Tree is read again) or other arguments are asked."""
    from ..questions.answers import tree

    _, now = ws.load(session)
    key = (ws.path(session), filter, search, max_count)
    kept = ws.pages
    if kept is not None and kept[0] == key and kept[1] is now:
        ws.pages_reused += 1
        return kept[2]
    ws.pages = ws.ahead = None  # (the drawing before is let go first)
    nodes = now._nodes
    if hasattr(nodes, "materialize"):  # every field of every row is read (as log --graph --json does)
        nodes.materialize()
    drawn = tree(ws, session, filter, search, max_count)
    ws.pages = (key, now, drawn)
    return drawn


PAGED = {"tree": tree_page}  # tools whose answer comes in pages
READ_TOOLS = [tool(q) for q in questions() if q.mcp is not None]


def offered(allow_writes=False):
    """The tools the server offers: the read tools, and the write tools with --allow-writes."""
    if not allow_writes:
        return list(READ_TOOLS)
    from .writes import WRITE_TOOLS

    return READ_TOOLS + WRITE_TOOLS
