"""The environment every front end works in: what it was started with (stree's global options)
and the door to the sessions it names. The CLI's Env (stree.cli), serve's Served
(stree.service.state) and MCP's Workspace (stree.mcp.tools) are this one object, each with
what only it adds (the CLI: colour, pager, --debug; serve and MCP: the sessions kept warm)."""

import os


class Workspace:
    """Where sessions are looked for (--agent-dir, --session-dir, the directory stree runs in),
    the session selected (-s: a path, an id prefix or 'demo'; None: the newest of the directory),
    whose sessions are listed and searched (--agent), whether the per-session index is used
    (--no-cache), the shared catalogue given (--catalog; stree.core.catalog_shared.configured reads it
    from STREE_CATALOG, which the CLI sets, else from the config). The cache directory and the
    config are the process's (STREE_CACHE_DIR, stree.config), the same for every front end."""

    def __init__(self, session=None, cwd=None, agent_dir=None, session_dir=None, agent=None, no_cache=False,
                 catalog=None):
        self.session_arg = session
        self.cwd = cwd or os.getcwd()
        self.agent_dir = agent_dir
        self.session_dir = session_dir
        self.agent = agent  # --agent NAME|all (stree.core.store.selected_agents)
        self.no_cache = no_cache
        self.catalog = catalog

    def where(self):
        """The options as keywords: another front end's Workspace made from this one."""
        return {"session": self.session_arg, "cwd": self.cwd, "agent_dir": self.agent_dir,
                "session_dir": self.session_dir, "agent": self.agent, "no_cache": self.no_cache,
                "catalog": self.catalog}

    def session_path(self, session=None):
        """The file `session` names (as -s does), by default the selected session's."""
        from .store import resolve_session

        return resolve_session(session or self.session_arg, self.cwd, self.agent_dir, self.session_dir, self.agent)

    def open(self, path=None, **options):
        """The session file at `path` (default: the selected one) through the one door
        (core.loading.open_session, which takes `options`), read as this front end reads."""
        from .loading import open_session

        return open_session(path if path is not None else self.session_path(), self.no_cache, **options)
