"""Revision syntax -> entry ids (one resolver for every command).

    <full id> | <id prefix, 4+ chars> | <label> | @ | HEAD | root | :/text
    @{N} | HEAD@{N}            where the leaf was N moves ago (`stree reflog`)
    REV~N  REV~  REV^          ancestors
    A..B   A...B               ranges (an empty side means @)

A name is tried as an exact id, then a label, then an id prefix.
"""

import re
import sys

from ..errors import Ambiguous, CycleError, NotFound, UsageError
from ..format.terminal import inert
from .preview import Previewer, entry_text

MIN_PREFIX = 4
_REFLOG = re.compile(r"(?:HEAD)?@\{(-?\d+)\}")
SYNTAX_HINT = ("revisions: ID, ID prefix, LABEL, @, HEAD, root, :/TEXT, @{N}, REV~N, REV^, A..B, A...B "
               "(see 'stree help')")


class Resolver:
    def __init__(self, tree):
        self.tree = tree
        self._by_label = None
        self._previewer = None
        self._at = _MISSING

    @property
    def at(self):
        """`@`: the leaf as the user's position, seen through stree's checkout markers and
        the label / name entries appended at it (the marker itself is reached by its id)."""
        if self._at is _MISSING:
            from .leaf import position

            self._at = position(self.tree)
        return self._at

    @property
    def previewer(self):
        if self._previewer is None:
            self._previewer = Previewer(self.tree)
        return self._previewer

    def by_label(self):
        if self._by_label is None:
            out = {}
            targets = self.tree.label_targets
            for target, label in self.tree.labels.items():
                if target in targets:
                    out.setdefault(label, []).append(target)
            self._by_label = out
        return self._by_label

    def labelled(self, name):
        """The entries labelled `name` (label order); looks up only their ids."""
        if self._by_label is not None:
            return self._by_label.get(name)
        targets = self.tree.label_targets
        return [t for t, label in self.tree.labels.items() if label == name and t in targets]

    # -- single revisions ----------------------------------------------

    def resolve(self, spec, allow_empty=False):
        """A revision to an entry id. `@` on an empty leaf resolves to None only
        when `allow_empty`; otherwise every failure raises NotFound/UsageError."""
        if not isinstance(spec, str) or spec == "":
            raise UsageError("empty revision")
        if allow_empty and spec in ("@", "HEAD") and self.at is None:
            return None
        direct = self._name(spec, soft=True)
        if direct is not _MISSING:
            return direct
        if spec.startswith(":/"):
            return self._search(spec[2:])
        base, steps = _split_steps(spec)
        id = self._name(base)
        tree = self.tree
        walk = 0  # ancestors still to climb: consecutive steps are one walk (REV~9~9~9...)
        node = None
        for kind, count in steps:
            if kind == "^" and count > 1:
                raise UsageError(f"{_short(spec)}: entries have one parent; use ~{count} for ancestors")
            walk += count
        if walk:
            node = tree.get(id)
            while walk:
                parent = tree.parent_of(node) if node is not None else None
                if parent is None:
                    raise NotFound(f"{_short(spec)}: {id} has no parent (it is a root)")
                node = parent
                id = node.id
                walk -= 1
        return id

    def _name(self, name, soft=False):
        tree = self.tree
        if name in ("@", "HEAD"):
            at = self.at
            if at is None:
                raise NotFound("@ is empty: the session has no entries yet" if not tree.nodes
                               else "@ is empty: the leaf is before the first entry")
            return at
        reflog = _REFLOG.fullmatch(name)
        if reflog:
            digits = reflog.group(1)
            return self._reflog(name, -1 if digits.startswith("-") else _count(digits))
        if name == "root":
            if self.at is not None:
                return tree.path(self.at)[0].id
            if tree.roots:
                return tree.roots[0].id
            raise NotFound("root: the session has no entries")
        if name in tree.by_id:
            return name
        targets = self.labelled(name)
        if targets:
            return targets[-1]
        if soft:
            return _MISSING
        return self._prefix(name)

    def _reflog(self, name, n):
        """@{N}: the position the leaf went to N moves ago, as `stree reflog` numbers them."""
        from itertools import islice

        from .leaf import iter_leaf_moves

        if n < 0:
            raise UsageError(f"{_short(name)}: N counts moves back from 0 (the newest), it cannot be negative",
                             hint="'stree checkout -' goes back to where the leaf was before the last move")
        # (the newest n + 1 only; a larger N than any file holds moves is read as "all of them")
        moves = list(islice(iter_leaf_moves(self.tree), min(n, sys.maxsize - 1) + 1))
        if n >= len(moves):
            raise NotFound(f"{_short(name)}: the leaf has moved only {len(moves)} time(s)",
                           hint="'stree reflog' lists the moves")
        position = moves[n].position
        if position is None:
            raise NotFound(f"{name}: the leaf was at the empty leaf, before the first entry")
        return position

    def _prefix(self, name):
        if not re.fullmatch(r"[0-9A-Za-z-]+", name):
            if not name or any(c in name for c in "~^:{}@") or name.startswith("-"):
                raise UsageError(f"bad revision syntax '{name}'", hint=SYNTAX_HINT)
            raise NotFound(f"unknown revision '{name}': no such id or label",
                           hint="'stree label' lists labels; 'stree log' shows ids")
        if len(name) < MIN_PREFIX:
            raise NotFound(f"unknown revision '{name}': no such label, and id prefixes need {MIN_PREFIX}+ characters")
        low = name.lower()
        matches = [id for id in self.tree.by_id if id.lower().startswith(low)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise NotFound(f"unknown revision '{name}': no entry id starts with it and no label has that name",
                           hint="'stree label' lists labels; 'stree log --graph' shows ids")
        lines = []
        for id in matches[:20]:
            node = self.tree.get(id)
            lines.append(f"  {id}  {self.previewer.text(node)[:70]}")
        more = f"\n  ... and {len(matches) - 20} more" if len(matches) > 20 else ""
        raise Ambiguous(f"revision '{name}' is ambiguous; candidates:\n" + "\n".join(lines) + more,
                       hint="give more characters of the id")

    def _search(self, text):
        if not text:
            raise UsageError(":/ needs some text to search for, e.g. :/fix the parser")
        tree = self.tree
        shadowed = tree.shape.shadowed
        nodes = tree.nodes
        for row in range(len(nodes) - 1, -1, -1):
            if shadowed and row in shadowed:
                continue
            node = nodes[row]
            entry = tree.load(node)
            if text in entry_text(entry):
                return node.id
        raise NotFound(f"no entry contains '{text}'")

    # -- ranges ----------------------------------------------------------

    def resolve_range(self, spec):
        """('single', id) | ('range', a, b) | ('symmetric', a, b) for A..B / A...B."""
        if not spec.startswith(":/") and self._name(spec, soft=True) is _MISSING:
            for op, kind in (("...", "symmetric"), ("..", "range")):
                if op in spec:
                    left, _, right = spec.partition(op)
                    a = self.resolve(left or "@")
                    b = self.resolve(right or "@")
                    return (kind, a, b)
        return ("single", self.resolve(spec))

    def parsed(self, spec, verify=False):
        """What `rev-parse` prints for one revision, as (mark, id) pairs: a single entry; for
        A..B, B then ^A; for A...B, A, B and ^ before their merge base. `verify`: one entry."""
        if verify:
            return [("", self.resolve(spec))]
        kind, *parts = self.resolve_range(spec)
        if kind == "single":
            return [("", parts[0])]
        if kind == "range":
            return [("", parts[1]), ("^", parts[0])]
        base = self.tree.merge_base(parts[0], parts[1])
        return [("", parts[0]), ("", parts[1])] + ([("^", base)] if base else [])

    def rows_of(self, spec):
        """nodes_of() as tree rows (no Node objects made)."""
        kind, *ids = self.resolve_range(spec)
        tree = self.tree
        if kind == "single":
            return tree.path_rows(ids[0])
        nodes = tree.range(ids[0], ids[1]) if kind == "range" else tree.symmetric_range(ids[0], ids[1])
        return [tree.row_of(n) for n in nodes]

    def nodes_of(self, spec):
        """The entries a log-like command covers: a path, a range, or a symmetric range."""
        kind, *ids = self.resolve_range(spec)
        tree = self.tree
        if kind == "single":
            return tree.path(ids[0])
        if kind == "range":
            return tree.range(ids[0], ids[1])
        return tree.symmetric_range(ids[0], ids[1])


def _split_steps(spec):
    """(base, [(kind, count)]) of REV~N~M^..., read from the end in one pass (linear in the
    length of the revision: a revision of 20,000 '~' is as quick as one of 20). A base is
    never empty: '~2' alone is a name (and then bad syntax)."""
    steps = []
    end = len(spec)
    while end > 0:
        j = end
        while j > 0 and spec[j - 1].isdigit() and spec[j - 1] < "\x80":
            j -= 1
        if j == 0 or spec[j - 1] not in "~^" or j - 1 == 0:
            break
        digits = spec[j:end]
        steps.append((spec[j - 1], _count(digits) if digits else 1))
        end = j - 1
    steps.reverse()
    return spec[:end], steps


def _count(digits):
    """A step's N; past what any tree can be deep, it is only 'more than the tree holds'
    (int() of a 5,000-digit string would be refused by Python)."""
    return int(digits) if len(digits) <= 18 else 10 ** 18


def _short(spec, limit=80):
    """A revision as an error message shows it (a 20,000-character one is cut)."""
    return spec if len(spec) <= limit else spec[:limit] + f"... ({len(spec)} characters)"


class _Missing:
    pass


_MISSING = _Missing()


# -- listing, for completion -------------------------------------------------

COMPLETION_LIMIT = 200


class _completion_tree:
    """`with _completion_tree(path) as (tree, previewer)`: the session read for completion,
    through the index when it is enabled (saved again, with the previews computed, on success)."""

    def __init__(self, path):
        from .loading import open_session

        self.session, self.tree, _ = open_session(path, defer=True)

    def __enter__(self):
        return self.tree, Previewer(self.tree)

    def __exit__(self, kind, value, traceback):
        from .loading import finish

        try:
            if kind is None:
                finish(self.session)
        finally:
            self.session.close()


def list_revisions(path, prefix="", limit=COMPLETION_LIMIT):
    """What a user may type as a revision of the session at `path`, for completion.

    Returns (labels, entries): labels as (name, preview of the target), newest label
    first; entries as (id, preview), the active path first (newest first), then the
    other entries, newest first, at most `limit`. Both are filtered by `prefix`.
    This is the one place completion reads a session: an index can answer it instead.
    """
    with _completion_tree(path) as (tree, previewer):
        stamps = tree.label_timestamps
        targets = tree.label_targets
        nodes = tree.nodes
        labels = [(label, target) for target, label in tree.labels.items()
                  if label.startswith(prefix) and target in targets]
        labels.sort(key=lambda lt: stamps.get(lt[1]) or "", reverse=True)
        low = prefix.lower()
        if low:
            ids = nodes.col("id") if hasattr(nodes, "col") else [n.id for n in nodes]

            def id_of(row):
                return ids[row]
        else:
            def id_of(row):  # every id matches: read only those shown
                return nodes[row].id
        try:
            tree.ancestor_rows(tree.leaf, 0)  # raises CycleError on a loop
            tip = tree.leaf
        except CycleError:
            tip = None
        shadowed = tree.shape.shadowed
        prow = tree.shape.prow
        from .leaf import is_marker

        types = nodes.col("type") if hasattr(nodes, "col") else None

        def place(row):  # not stree's checkout markers or label entries: they stand for the entry before them
            etype = types[row] if types is not None else nodes[row].type
            return etype != "label" and not (etype == "custom" and is_marker(nodes[row]))

        def candidates():  # the active path, newest first, then the other entries, newest first
            seen = set()
            r = tree.row_of(tree.get(tip)) if tip is not None else -1
            while r >= 0:
                seen.add(r)
                if place(r):
                    yield r
                r = prow[r]
            for row in range(len(nodes) - 1, -1, -1):
                if row not in seen and row not in shadowed and place(row):
                    yield row

        rows = []
        if limit > 0:
            for row in candidates():
                if id_of(row).lower().startswith(low):
                    rows.append(row)
                    if len(rows) >= limit:
                        break
        return ([(label, previewer.text(nodes[targets[target]])) for label, target in labels],
                [(id_of(r), previewer.text(nodes[r])) for r in rows])


def list_moves(path, limit=10):
    """The leaf's last moves as `@{N}` revisions, for completion: [(N, position, preview)]."""
    from itertools import islice

    from .leaf import iter_leaf_moves

    with _completion_tree(path) as (tree, previewer):
        out = []
        for n, move in enumerate(islice(iter_leaf_moves(tree), limit)):  # (the newest only)
            if move.position is not None:
                out.append((n, move.position, previewer.text(tree.get(move.position))))
        return out


RESERVED = ("@", "HEAD", "root")
LABEL_SYNTAX = ("~", "^", ":", "..", "@{", "\\", "?", "*", "[")


def check_name(name):
    """Refuse a label name that could never be used as a revision (as git check-ref-format)."""
    why = None
    if name in RESERVED:
        why = f"'{name}' is a revision name of its own"
    elif name.startswith("-"):
        why = "it starts with '-' (it would read as an option)"
    elif any(c.isspace() for c in name):
        why = "it contains whitespace"
    elif not name.isprintable():
        why = "it contains control characters"
    else:
        bad = [part for part in LABEL_SYNTAX if part in name]
        if bad:
            why = f"it contains '{bad[0]}', which is revision syntax"
    if why:
        raise UsageError(f"invalid label name '{inert(name, oneline=True)}': {why}",
                         hint="use letters, digits and - _ / . (e.g. csv-attempt)")
