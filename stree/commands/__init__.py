"""One small module per subcommand (args -> core -> output), and the table of them."""

# name -> (module[:attribute], one-line summary). Modules are imported only when their command runs;
# the command is the module's `command`, or the attribute named (an alias kept beside its command).
COMMANDS = {
    "log": ("stree.commands.log", "Show the entries on a path, or the whole tree with --graph"),
    "show": ("stree.commands.show", "Show entries in full"),
    "rev-parse": ("stree.commands.rev_parse", "Resolve revisions to entry ids"),
    "merge-base": ("stree.commands.merge_base", "Find the common ancestor of two entries"),
    "context": ("stree.commands.context", "Show the LLM context pi builds at an entry"),
    "diff": ("stree.commands.diff", "Compare the paths to two entries, turn by turn (two sessions too)"),
    "ls": ("stree.commands.ls", "List sessions of this project, or of all projects"),
    "grep": ("stree.commands.grep", "Search the text of every session for lines matching a pattern"),
    "checkout": ("stree.commands.checkout", "Move the leaf to an entry, as pi's /tree does"),
    "label": ("stree.commands.label", "List labels, or set / clear one"),
    "name": ("stree.commands.name", "Show or set the session's display name"),
    "fork": ("stree.commands.fork", "Write a new session with the path to an entry"),
    "migrate": ("stree.commands.migrate", "Upgrade a version 1/2 session file to version 3"),
    "fsck": ("stree.commands.fsck", "Check a session file for problems"),
    "reflog": ("stree.commands.reflog", "Show the leaf's past positions"),
    "summarize": ("stree.commands.summarize", "Print a branch summary of entries, as pi writes one"),
    "completion": ("stree.commands.completion", "Print the bash or zsh completion script"),
    "help": ("stree.commands.help", "Show a command's manual page (or its --help without man)"),
    "stats": ("stree.commands.stats", "Show tokens and cost of a session, a branch, a range or every session"),
    "export": ("stree.commands.export", "Write a session as a Markdown or self-contained HTML document"),
    "cache": ("stree.commands.cache", "Show or clean the index cache (list, gc, clear)"),
    "catalog": ("stree.commands.catalog", "Show the session catalogue's state, or rebuild it"),
    "gc": ("stree.commands.cache:gc", "Remove stale session indexes and kept graphs from the cache"),
    "replay": ("stree.commands.replay", "Re-ask a model at each turn and compare, or serve the recording"),
    "serve": ("stree.commands.serve", "Answer pi's RPC requests about sessions over stdio (--mcp: MCP tools)"),
}


def load(name):
    """The click command of a name in COMMANDS (its module imported now)."""
    import importlib

    module, _, attribute = COMMANDS[name][0].partition(":")
    return getattr(importlib.import_module(module), attribute or "command")
