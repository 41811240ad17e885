"""The tree as an outline of branches: chains of entries that start at a root or after a
branch point (or after the leaf) and end at a leaf, a branch point or the leaf. What
`stats` sums per branch and `export` folds."""


class Branch:
    """One chain of entries (rows, oldest first), its sub-branches, and whether it lies on
    the active path (root -> the last entry)."""

    __slots__ = ("rows", "active", "children", "parent")

    def __init__(self, rows, active, parent):
        self.rows = rows
        self.active = active
        self.children = []
        self.parent = parent


def branches(tree):
    """Top-level Branches (one per root), depth first, the active path's first at each
    level; every entry of the tree is in exactly one Branch."""
    leaf = tree.leaf
    on_path = set(tree.path_rows(leaf)) if leaf is not None else set()
    leaf_row = tree.row_of(tree.get(leaf)) if leaf is not None else None
    prow = tree.shape.prow
    seg_of = {}
    top = []
    for r in tree.depth_first_rows(leaf):
        p = prow[r]
        if p < 0 or p not in seg_of or len(tree.child_rows(p)) > 1 or p == leaf_row:
            parent = seg_of.get(p) if p >= 0 else None
            b = Branch([r], r in on_path, parent)
            (parent.children if parent is not None else top).append(b)
            seg_of[r] = b
        else:
            b = seg_of[p]
            b.rows.append(r)
            seg_of[r] = b
    return top


def walk(top):
    """Every Branch of branches(), depth first."""
    stack = list(reversed(top))
    while stack:
        b = stack.pop()
        yield b
        stack.extend(reversed(b.children))


def folds(top):
    """("open", branch) and ("close", branch) events to draw branches() as nested folds, without
    recursion: a branch's first child (towards the leaf on the active path) continues after it
    at the same level, its other children are folded inside it. Nesting grows only at side
    branches, so a long active path with many branch points stays flat."""
    stack = [("chain", b) for b in reversed(top)]
    while stack:
        op, b = stack.pop()
        if op == "close":
            yield "close", b
            continue
        yield "open", b
        if b.children:
            stack.append(("chain", b.children[0]))
        stack.append(("close", b))
        for side in reversed(b.children[1:]):
            stack.append(("chain", side))
