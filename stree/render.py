"""The session graph as pi's /tree draws it: order, filters, indentation, connectors.

A port of TreeList (flattenTree, applyFilter, recalculateVisualStructure,
render) without the interactive parts. Iterative throughout.
"""

FILTERS = ("default", "no-tools", "user-only", "labeled-only", "all")
_SETTINGS = ("label", "context_edit", "custom", "model_change", "thinking_level_change", "session_info")


class Row:
    __slots__ = ("node", "prefix", "active", "label", "segments", "leaf")

    def __init__(self, node, prefix, active, label, segments, leaf):
        self.node = node
        self.prefix = prefix  # connector/gutter drawing, e.g. "│  ├─ "
        self.active = active  # on the path root -> leaf
        self.label = label
        self.segments = segments  # preview segments
        self.leaf = leaf  # the leaf, or the nearest visible entry above a hidden leaf

    def text(self, marker=True):
        """The row as plain text; pi's row plus stree's `← active` marker."""
        out = self.prefix + ("• " if self.active else "") + (f"[{self.label}] " if self.label else "")
        out += "".join(t for _, t in self.segments)
        if marker and self.leaf:
            out += "  ← active"
        return out


def _passes(etype, role, hidden, id, filter, label, leaf):
    if etype == "usage":
        return False  # pi 1.5: usage entries are never shown, not even as the leaf
    if etype == "message" and role == "assistant" and hidden and id != leaf:
        return False  # tool-call-only assistant messages are hidden in every mode
    settings = etype in _SETTINGS
    if filter == "user-only":
        return etype == "message" and role == "user"
    if filter == "no-tools":
        return not settings and not (etype == "message" and role == "toolResult")
    if filter == "labeled-only":
        return label is not None
    if filter == "all":
        return True
    return not settings


def graph(tree, filter="default", search=None, leaf=None, previewer=None):
    """Rows of the graph, in pi's order. `leaf` defaults to the session's leaf.

    Works on rows and columns; a Node is made only for the rows shown."""
    from .preview import Previewer, searchable_text

    if filter not in FILTERS:
        raise ValueError(filter)
    leaf = tree.leaf if leaf is None else leaf
    previewer = previewer or Previewer(tree)
    labels = tree.labels
    leaf_row = tree._row(leaf) if leaf is not None else None
    flat = tree.depth_first_rows(leaf if leaf_row is not None else None)
    nodes = tree._nodes
    col = nodes.col
    ids, types, roles, hidden = col("id"), col("type"), col("role"), col("hidden")
    prow = tree.shape.prow

    tokens = [t for t in (search or "").lower().split() if t]
    visible = []
    for r in flat:
        id = ids[r]
        label = labels.get(id)
        if not _passes(types[r], roles[r], hidden[r], id, filter, label, leaf):
            continue
        if tokens:
            text = searchable_text(tree.load(nodes[r]), label).lower()
            if not all(t in text for t in tokens):
                continue
        visible.append(r)
    if not visible:
        return []

    # nearest visible ancestor of every entry (pre-order: parents come first)
    is_visible = set(visible)
    up = {}
    for r in flat:
        j = prow[r]
        up[r] = None if j < 0 else j if j in is_visible else up.get(j)
    kids = {None: []}
    for r in visible:
        kids.setdefault(up[r], []).append(r)
    roots = kids[None]
    multiple_roots = len(roots) > 1

    layout = {}
    stack = [(root, 1 if multiple_roots else 0, multiple_roots, multiple_roots, i == len(roots) - 1, (),
              multiple_roots) for i, root in reversed(list(enumerate(roots)))]
    while stack:
        r, indent, just_branched, show_connector, is_last, gutters, virtual_root_child = stack.pop()
        layout[r] = (indent, show_connector, is_last, gutters, virtual_root_child)
        children = kids.get(r, ())
        many = len(children) > 1
        child_indent = indent + 1 if many or (just_branched and indent > 0) else indent
        connector_shown = show_connector and not virtual_root_child
        display_indent = max(0, indent - 1) if multiple_roots else indent
        child_gutters = gutters + ((max(0, display_indent - 1), not is_last),) if connector_shown else gutters
        for i in range(len(children) - 1, -1, -1):
            stack.append((children[i], child_indent, many, many, i == len(children) - 1, child_gutters, False))

    active = set(tree.path_rows(leaf)) if leaf is not None else set()
    marked = leaf_row  # the leaf, or the nearest visible entry above a hidden one
    while marked is not None and marked not in is_visible:
        j = prow[marked]
        marked = j if j >= 0 else None

    rows = []
    for r in visible:
        indent, show_connector, is_last, gutters, virtual_root_child = layout[r]
        prefix = _prefix(indent, show_connector, is_last, gutters, virtual_root_child, multiple_roots)
        node = nodes[r]
        rows.append(Row(node, prefix, r in active, labels.get(ids[r]), previewer.segments(node), r == marked))
    return rows


def _prefix(indent, show_connector, is_last, gutters, virtual_root_child, multiple_roots, _memo={}):
    # rows under one parent share their gutters tuple: the drawing is computed once per shape
    key = (indent, show_connector, is_last, id(gutters), virtual_root_child, multiple_roots)
    hit = _memo.get(key)
    if hit is not None and hit[0] is gutters:
        return hit[1]
    text = _draw_prefix(indent, show_connector, is_last, gutters, virtual_root_child, multiple_roots)
    _memo[key] = (gutters, text)
    return text


def _draw_prefix(indent, show_connector, is_last, gutters, virtual_root_child, multiple_roots):
    display_indent = max(0, indent - 1) if multiple_roots else indent
    connector = show_connector and not virtual_root_child
    connector_at = display_indent - 1 if connector else -1
    gutter_at = {}
    for position, show in gutters:
        gutter_at.setdefault(position, show)  # pi takes the first gutter at a level
    out = []
    for level in range(display_indent):
        if level in gutter_at:
            out.append("│  " if gutter_at[level] else "   ")
        elif level == connector_at:
            out.append("└─ " if is_last else "├─ ")
        else:
            out.append("   ")
    return "".join(out)
