"""The record `stree ls` lists for one session file (the MCP server's list_sessions too)."""

import os

from . import catalog_refresh as catalog
from ..errors import StreeError
from ..format.agents import PI
from ..format.text import full_text, normalize
from ..format.timestamp import activity_millis, iso_millis, ts_millis
from .store import (agent_files, all_session_dirs, project_agent_files, project_session_dir, project_sessions,
                    selected_agents, session_files)


def session_paths(cwd, agent_dir=None, session_dir=None, all_=False, agent=None):
    """([(path, agent, state)], listed dirs, where they were looked for): this project's
    sessions, or with `all_` every project's, of the agents `agent` selects (core.store
    selected_agents: pi, oh-my-pi, OpenClaw), each path once."""
    agents = selected_agents(agent)
    dirs = []
    if PI in agents:  # its layout: --agent-dir, --session-dir
        if all_:
            dirs = all_session_dirs(agent_dir, session_dir, cwd)
        else:
            dirs = [project_session_dir(cwd, agent_dir, session_dir)]
    paths = []
    seen = set()
    for directory in dirs:
        # this project's: in a custom session dir, only this directory's sessions (as pi lists them)
        for path in session_files(directory) if all_ else project_sessions(cwd, agent_dir, session_dir):
            if str(path) not in seen:
                seen.add(str(path))
                paths.append((str(path), PI, "live"))
    others = [a for a in agents if a != PI]
    found = agent_files(others) if all_ else project_agent_files(others, cwd)
    for path, kind, state, _ in found:
        if path not in seen:
            seen.add(path)
            paths.append((path, kind, state))
    listed = {str(d) for d in dirs} | {os.path.dirname(p) for p, *_ in found}
    where = "any project" if all_ else str(dirs[0]) if dirs else "this project"
    return paths, listed, where


def session_records(paths, listed=(), current=None, advance=None, no_cache=False, everything=False):
    """The ls records of the readable sessions among `paths` ((path, agent, state) each), newest
    activity first; `current` (an absolute path, or None) is marked current. From the
    catalogue, which reads only the files changed since; without it (no_cache, no SQLite), each
    file parsed. `advance()` is called after each file. From a shared catalogue (--catalog,
    STREE_CATALOG: stree.core.catalog_shared), what was pushed: of `paths` on this host, or with
    `everything` (ls --all) every session the team pushed that this role may see."""
    infos = None
    if catalog.enabled(no_cache):
        from .catalog_shared import configured, records

        url = configured()
        if url is not None:
            infos = records(url, None if everything else paths)
        else:
            infos = _from_catalogue(paths, listed, advance)
    if infos is None:
        infos = []
        for path, kind, state in paths:
            info = session_info(path)
            if info is not None:
                info["agent"], info["state"] = kind, state
                infos.append(info)
            if advance is not None:
                advance()
    infos.sort(key=lambda i: i["_sort"], reverse=True)
    for info in infos:
        info.pop("_sort")
        info["current"] = info["path"] == current
    return infos


def _from_catalogue(paths, listed, advance):
    from ..storage.catalog import Unavailable

    try:
        files = [(p, kind, state, os.path.dirname(os.path.abspath(p))) for p, kind, state in paths]
        cat, rows = catalog.sync(files, prune_roots=listed, progress=advance)
        cat.close()
    except Unavailable as e:
        from ..storage.cachedir import debug

        debug(f"no catalogue: {e}")
        return None
    out = [catalog.record(rows[full]) for full in (os.path.abspath(p) for p, _, _ in paths)
           if full in rows and rows[full]["ok"]]
    for path, kind, state in cat.stale:  # (changed while another process wrote the catalogue)
        info = session_info(path)
        if info is not None:
            info["agent"], info["state"] = kind, state
            out.append(info)
    return out


def session_info(path):
    """The ls record of one file, or None when it is not a readable session."""
    from .loading import open_session

    try:
        session, tree, _ = open_session(path, no_cache=True)  # (parsed: no index written per file)
    except StreeError:
        return None
    try:
        header = session.header
        messages = [n for n in session.nodes if n.type == "message"]
        first = ""
        last_activity = None
        for node in messages:
            if node.role not in ("user", "assistant"):
                continue
            message = session.load(node).get("message")
            if not isinstance(message, dict) or "content" not in message:
                continue
            if not first and node.role == "user":
                first = normalize(full_text(message.get("content")))
            ms = activity_millis(message, node.ts)
            if ms is not None and (last_activity is None or ms > last_activity):
                last_activity = ms
        created = header.get("timestamp")
        if last_activity is None or last_activity <= 0:
            last_activity = ts_millis(created)
        if last_activity is None:
            last_activity = int(os.stat(path).st_mtime * 1000)
        return {
            "id": header.get("id"),
            "path": os.path.abspath(path),
            "cwd": header.get("cwd"),
            "name": tree.name(),
            "created": created,
            "modified": iso_millis(last_activity),
            "messages": len(messages),
            "entries": len(session.nodes),
            "firstMessage": first or "(no messages)",
            "parentSession": header.get("parentSession"),
            "_sort": last_activity,
        }
    finally:
        session.close()
