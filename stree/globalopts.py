"""The global options, declared once. stree.cli makes click options of them (on the group, and
hidden on every command so that they may also follow it, as in jj); the click-free fast paths
(stree.entrypoint, stree.fastread, stree.fastwrite, through stree.argv) read those marked `fast`, and leave
any other to click; completion reads those marked `selects`. Imports no click."""

from .format import agents


class GlobalOption:
    def __init__(self, dest, spellings, help, metavar=None, choices=None, envvar=None, default=None,
                 flag=False, fast=False, selects=False):
        self.dest = dest  # the keyword stree.cli.main receives
        self.spellings = spellings
        self.help = help
        self.metavar = metavar
        self.choices = choices  # the values it takes, when a fixed set
        self.envvar = envvar
        self.default = default
        self.flag = flag
        self.fast = fast  # read by the fast paths too (plain spellings only: stree.argv)
        self.selects = selects  # changes which session is meant (the sessions and revisions completed)


OPTIONS = (
    GlobalOption("session", ("-s", "--session"), "Session file, or session id prefix ('demo' = the bundled demo). "
                 "Default: the newest session of the current directory.", metavar="PATH|ID",
                 envvar="STREE_SESSION", fast=True, selects=True),
    GlobalOption("agent_dir", ("--agent-dir",), "pi's agent directory (default $PI_CODING_AGENT_DIR or ~/.pi/agent).",
                 metavar="DIR", fast=True, selects=True),
    GlobalOption("session_dir", ("--session-dir",), "Directory holding this project's sessions (flat).",
                 metavar="DIR", fast=True, selects=True),
    GlobalOption("agent", ("--agent",), f"Whose sessions ls --all, grep and completion cover: {agents.help_text()} "
                 "or all (default: all present).", choices=agents.choices(), envvar="STREE_AGENT",
                 selects=True),
    GlobalOption("chdir", ("-C",), "Run as if started in DIR.", metavar="DIR", selects=True),
    GlobalOption("color", ("--color",), "Colour human output.", choices=("auto", "always", "never"), default="auto",
                 fast=True),
    GlobalOption("no_pager", ("--no-pager",), "Do not page long output.", flag=True, fast=True),
    GlobalOption("no_cache", ("--no-cache",), "Parse the session file without the index cache (also STREE_NO_CACHE).",
                 flag=True),
    GlobalOption("catalog", ("--catalog",), "The catalogue ls, grep and `catalog` answer from: postgresql://... for a "
                 "team's shared one (also STREE_CATALOG, the config's `catalog`; default: this machine's SQLite one).",
                 metavar="URL"),
    GlobalOption("debug", ("--debug",), "Show tracebacks for errors.", flag=True, envvar="STREE_DEBUG"),
)


def fast_dests():
    """The dests of the global options the fast paths read (stree.argv)."""
    return {o.dest for o in OPTIONS if o.fast}


def session_dests():
    """The dests of the global options that change which session is meant (completion reads them)."""
    return {o.dest for o in OPTIONS if o.selects}
