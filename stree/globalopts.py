"""The global options, declared once. stree.cli makes click options of them (on the group, and
hidden on every command so that they may also follow it, as in jj); the click-free fast paths
(stree.entrypoint, stree.fastread) take the spellings of those marked `fast` from here, and leave any
other to click. Imports no click."""

from .format import agents


class GlobalOption:
    def __init__(self, dest, spellings, help, metavar=None, choices=None, envvar=None, default=None,
                 flag=False, fast=False):
        self.dest = dest  # the keyword stree.cli.main receives
        self.spellings = spellings
        self.help = help
        self.metavar = metavar
        self.choices = choices  # the values it takes, when a fixed set
        self.envvar = envvar
        self.default = default
        self.flag = flag
        self.fast = fast  # read by the fast paths too (plain spellings only)


OPTIONS = (
    GlobalOption("session", ("-s", "--session"), "Session file, or session id prefix ('demo' = the bundled demo). "
                 "Default: the newest session of the current directory.", metavar="PATH|ID",
                 envvar="STREE_SESSION", fast=True),
    GlobalOption("agent_dir", ("--agent-dir",), "pi's agent directory (default $PI_CODING_AGENT_DIR or ~/.pi/agent).",
                 metavar="DIR", fast=True),
    GlobalOption("session_dir", ("--session-dir",), "Directory holding this project's sessions (flat).",
                 metavar="DIR", fast=True),
    GlobalOption("agent", ("--agent",), f"Whose sessions ls --all, grep and completion cover: {agents.help_text()} "
                 "or all (default: all present).", choices=agents.choices(), envvar="STREE_AGENT"),
    GlobalOption("chdir", ("-C",), "Run as if started in DIR.", metavar="DIR"),
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


def fast_values():
    """{spelling: dest} of the global options with a value the fast paths read."""
    return {s: o.dest for o in OPTIONS if o.fast and not o.flag for s in o.spellings}


def fast_flags():
    """{spelling: dest} of the global flags the fast paths read."""
    return {s: o.dest for o in OPTIONS if o.fast and o.flag for s in o.spellings}
