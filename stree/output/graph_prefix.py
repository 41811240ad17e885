"""The connectors drawn before a graph row (stree.output.graph): pi's TreeList render, from a
row's place in the layout (indent, connector, last sibling, the gutters above), each drawing
kept for the rows laid out alike."""

from ..storage import register_counters

# gutter levels walked to draw connectors (STREE_DEBUG_STATS prints it)
STATS = register_counters("render", {"levels": 0})


def child_layout(layout, multiple_roots):
    """The layout of the only row drawn under a row of `layout` (as graph() lays it out)."""
    indent, show_connector, is_last, gutters, virtual_root_child = layout
    child_indent = indent + 1 if show_connector and indent > 0 else indent  # (just branched: connector shown)
    display_indent = max(0, indent - 1) if multiple_roots else indent
    if show_connector and not virtual_root_child:
        gutters = (max(0, display_indent - 1), not is_last, gutters)
    return (child_indent, False, True, gutters, False)


def placed(shared, indent, show_connector, is_last, gutters, virtual_root_child):
    """A row's layout, one tuple for every row laid out alike (`shared`: the layouts so far, by
    their fields, the gutters by identity): a million rows hold a few thousand tuples."""
    key = (indent, show_connector, is_last, id(gutters), virtual_root_child)
    place = shared.get(key)
    if place is None:
        place = shared[key] = (indent, show_connector, is_last, gutters, virtual_root_child)
    return place


def below(indent, just_branched, show_connector, is_last, gutters, virtual_root_child, count, multiple_roots):
    """(indent, just branched, gutters) of the `count` rows drawn under a row laid out as given
    (graph()'s whole layout and graph_walk's, one rule). Gutters: a linked list (position, show,
    the gutters above), newest first, shared by every row below: a tuple per level would hold the
    tree's depth once per level."""
    many = count > 1
    child_indent = indent + 1 if many or (just_branched and indent > 0) else indent
    if show_connector and not virtual_root_child:
        display_indent = max(0, indent - 1) if multiple_roots else indent
        gutters = (max(0, display_indent - 1), not is_last, gutters)
    return child_indent, many, gutters


def prefix(layout, multiple_roots):
    """The drawing before a row of `layout`."""
    return prefix_of(*layout, multiple_roots)


_MEMO_CHARS = 1 << 20  # drawings kept for reuse, in characters (a comb's are as long as it is deep)
_memo = {}
_memo_chars = [0]


def prefix_of(indent, show_connector, is_last, gutters, virtual_root_child, multiple_roots):
    # rows under one parent share their gutters: the drawing is computed once per shape
    key = (indent, show_connector, is_last, id(gutters), virtual_root_child, multiple_roots)
    hit = _memo.get(key)
    if hit is not None and hit[0] is gutters:
        return hit[1]
    text = _draw_prefix(indent, show_connector, is_last, gutters, virtual_root_child, multiple_roots)
    if _memo_chars[0] + len(text) > _MEMO_CHARS:
        _memo.clear()
        _memo_chars[0] = 0
    _memo[key] = (gutters, text)
    _memo_chars[0] += len(text)
    return text


_GUTTER_CHARS = 1 << 19  # gutter drawings kept, in characters
_gutter_memo = {}
_gutter_chars = [0]


def _gutter_text(gutters):
    """(the drawing of `gutters`' levels 0..its newest position, that position), or None when
    a position is out of order (then _draw_prefix draws level by level). Each gutter list
    extends the one above it: its drawing is the one above plus a few levels. The levels not
    drawn yet are joined once, and kept every KEEP_EVERY levels and at the newest: a deep comb's
    drawings are thousands of characters long, and one kept at every level (a copy each) made
    the kept drawings churn."""
    chain = []
    cell = gutters
    text = ""
    top = -1
    while cell is not None:
        hit = _gutter_memo.get(id(cell))
        if hit is not None and hit[0] is cell:
            text, top = hit[1], hit[2]
            break
        chain.append(cell)
        cell = cell[2]
    STATS["levels"] += len(chain)
    parts = [text]
    left = len(chain)
    for cell in reversed(chain):  # oldest first
        position, show = cell[0], cell[1]
        if position < top:
            return None
        if position > top:  # (at the same position the older gutter wins)
            parts.append("   " * (position - top - 1) + ("│  " if show else "   "))
            top = position
        left -= 1
        if not left or not left % KEEP_EVERY:
            text = "".join(parts)
            parts = [text]
            if _gutter_chars[0] + len(text) > _GUTTER_CHARS:
                _gutter_memo.clear()
                _gutter_chars[0] = 0
            _gutter_memo[id(cell)] = (cell, text, top)
            _gutter_chars[0] += len(text)
    return text, top


KEEP_EVERY = 8  # gutter levels between two kept drawings (_gutter_text)


def _draw_prefix(indent, show_connector, is_last, gutters, virtual_root_child, multiple_roots):
    display_indent = max(0, indent - 1) if multiple_roots else indent
    connector = show_connector and not virtual_root_child
    connector_at = display_indent - 1 if connector else -1
    drawn = _gutter_text(gutters) if gutters is not None else ("", -1)
    if drawn is not None:
        text, top = drawn
        if top < display_indent and (connector_at < 0 or connector_at > top):
            if connector_at < 0:
                return text + "   " * (display_indent - top - 1)
            return text + "   " * (connector_at - top - 1) + ("└─ " if is_last else "├─ ") + \
                "   " * (display_indent - connector_at - 1)
    return _draw_levels(display_indent, connector_at, is_last, gutters)


def _draw_levels(display_indent, connector_at, is_last, gutters):
    gutter_at = {}
    cell = gutters
    while cell is not None:  # newest first: the oldest written last, so pi's first gutter at a level wins
        position, show, cell = cell
        gutter_at[position] = show
    STATS["levels"] += len(gutter_at) + display_indent
    out = []
    for level in range(display_indent):
        if level in gutter_at:
            out.append("│  " if gutter_at[level] else "   ")
        elif level == connector_at:
            out.append("└─ " if is_last else "├─ ")
        else:
            out.append("   ")
    return "".join(out)
