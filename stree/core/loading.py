"""The one door to a session: `open_session(path)` reads the file (through its index, which
parses only the lines appended since, or parsed whole: --no-cache, STREE_NO_CACHE) and gives
the Session, its Tree and what the reading cost (a LoadReport). Every reader comes in here:
the CLI (cli.Env), the fast paths (stree.entrypoint, fastread, fastwrite), serve and MCP
(core.warm), the catalogue, fsck, stats, export and the writers' locked re-read.

`tree_of(session)` is the one place a Tree is made of a session (again, after a follower
grew it). What STREE_DEBUG_STATS prints is the command's report (`COMMAND`): how its first
read used the index, and the work counted meanwhile (stree.storage.counters).

No imports at the top: the fast paths come in here before anything else is loaded."""


class LoadReport:
    """What reading a session cost. `index`: 'off' (parsed whole, or nothing read), 'fresh'
    (the index as it was), 'updated' (appended lines parsed), 'built' (parsed whole, the index
    written), 'graph-cache' (a kept `log --graph` printed: nothing read). The counts are this
    process's, so far: lines parsed (by it and its parse workers), entries decoded, index values
    made, parse workers forked; `graph` and `levels` those of a graph drawn, `walked` the rows
    walked up paths to build contexts (else None); `indexed` the sessions whose entries the
    catalogue read in (else None)."""

    __slots__ = ("index",)

    def __init__(self, index="off"):
        self.index = index

    @staticmethod
    def _count(kind, name):
        from ..storage import counters

        counts = counters(kind)
        return counts[name] if counts is not None else 0

    @property
    def parsed(self):
        return self._count("scan", "parsed")

    @property
    def decoded(self):
        return self._count("scan", "decoded")

    @property
    def workers(self):
        return self._count("scan", "workers")

    @property
    def values(self):
        return self._count("columns", "values")

    @property
    def walked(self):
        """Rows walked up paths to build contexts (stree.core.context), or None when none was."""
        from ..storage import counters

        path = counters("path")
        return path["walked"] if path is not None and path["walked"] else None

    @property
    def indexed(self):
        """Sessions whose entries the catalogue read in (stree.core.catalog_refresh), or None when
        the catalogue was not brought up to date."""
        from ..storage import counters

        catalog = counters("catalog")
        return catalog["indexed"] if catalog is not None else None

    @property
    def graph(self):
        """{drawn, kept, how} of the graph rows written, or None when no graph was."""
        from ..storage import counters

        return counters("graph")

    @property
    def levels(self):
        """Connector levels walked to draw a graph, or None."""
        from ..storage import counters

        render = counters("render")
        return render["levels"] if render is not None else None

    def first(self, index):
        """Record how a read used the index, unless an earlier read of the command did."""
        if self.index == "off":
            self.index = index


COMMAND = LoadReport()  # the command this process runs: its first counted read (STREE_DEBUG_STATS)


class Opened:
    """A session read: `session, tree, report = open_session(...)`."""

    __slots__ = ("session", "tree", "report")

    def __init__(self, session, tree, report):
        self.session, self.tree, self.report = session, tree, report

    def __iter__(self):
        return iter((self.session, self.tree, self.report))


def use_index(no_cache=False):
    """Whether a read goes through the per-session index: not with --no-cache or STREE_NO_CACHE."""
    from ..storage import index

    return index.enabled(no_cache)


def open_session(path, no_cache=False, defer=False, fd=None, data=None, freeze=False, previews=True,
                 report=None, keep=None):
    """The session file at `path` as it is now: an Opened (session, tree, report).

    - `no_cache`: parse the whole file, not through its index (also when STREE_NO_CACHE is set);
    - `defer`: a new index is written when the command ends (finish), with the previews it made;
    - `fd`: read through this descriptor (a writer's, holding a lease an open would break);
    - `data`: the file's bytes, parsed (no index);
    - `freeze`: the session stays for the whole command: no collection while it is read, and
      later collections skip it (gc.freeze);
    - `previews=False`: the tree keeps no previews in the index (a writer's, fsck's);
    - `report`: the command's report (COMMAND), told how the read used the index if it is the
      command's first;
    - `keep`: a list the parse fills with the entries it decoded, when it reads the file whole
      (the catalogue's build: each entry decoded once).

    An I/O error in the middle of reading (a failing disk, a vanished mount) is a StreeError."""
    from ..errors import StreeError

    if freeze:
        import gc

        gc.disable()  # parsing makes many objects and no cycles: collections would only cost time
    try:
        state = "off"
        try:
            if data is None and use_index(no_cache):
                from ..storage import index

                session, state = index.load(str(path), defer=defer, fd=fd, keep=keep)
            else:
                from ..storage.session import parse

                session = parse(str(path), data, keep=keep)
        except OSError as e:
            raise StreeError(f"{path}: cannot read: {e.strerror}") from None
        tree = tree_of(session, previews)
        if freeze:
            gc.freeze()
    finally:
        if freeze:
            gc.enable()
    if report is None:
        report = LoadReport(state)
    else:
        report.first(state)
    return Opened(session, tree, report)


def tree_of(session, previews=True):
    """The Tree of a session read (again after a follower grew it: stree.storage.follow)."""
    from .tree import Tree

    return Tree(session.nodes, session.load, session.previews if previews else None)


def finish(session):
    """What a command does with a session when it ends: the index a read deferred, or the
    previews it computed, written (nothing for a session parsed whole)."""
    from ..storage import index

    index.save(session)
