"""The session files there are and their short names, found with str paths only: where each
agent keeps its files (its record: stree.format.agents), and the shortest prefix that names a
session id among others. `grep` and `catalog push` answered without click (stree.fastgrep,
stree.fastpush) list every session file on each run, and pathlib would cost them more than
the listing (its import brings urllib.parse and ipaddress). stree.core.store, where sessions
live for everything else, re-exports these and gives the same directories as Paths."""

import os

from ..format import agents as registry


def path_text(text):
    """str(pathlib.Path(text)) without pathlib: repeated slashes and '.' parts dropped (a '..'
    kept), no slash at the end."""
    if os.name != "posix":  # (Windows paths: pathlib's rules)
        from pathlib import Path

        return str(Path(text))
    lead = "//" if text.startswith("//") and not text.startswith("///") else "/" if text.startswith("/") else ""
    return lead + "/".join(part for part in text.split("/") if part and part != ".") or "."


def homes(agent, override=None):
    """The directories an agent (a stree.format.agents record) keeps its sessions under:
    --agent-dir for pi, else the first of its environment variables set, else its homes."""
    if override and agent.name == registry.PI:
        return [path_text(os.path.expanduser(str(override)))]
    for var in agent.env:
        if os.environ.get(var):
            return [path_text(os.path.expanduser(os.environ[var]))]
    home = os.path.expanduser("~")
    if home[:1] == "~":
        raise RuntimeError("Could not determine home directory.")  # (as pathlib's Path.home says it)
    return [path_text(os.path.join(home, name)) for name in agent.homes]


def selected_agents(choice=None):
    """--agent NAME|all (or $STREE_AGENT): the names of the agents whose sessions are listed
    and searched; by default all of them (an agent without a directory contributes none)."""
    choice = choice or os.environ.get("STREE_AGENT") or "all"
    return registry.names() if choice == "all" else (choice,)


def agent_roots(names=None, agent=None):
    """(agent, root) of every directory tree holding sessions of the selected agents (all by
    default): below each home, its `sessions` pattern (pi's <agent dir>/sessions, oh-my-pi's
    ~/.omp/agent/sessions, OpenClaw's ~/.openclaw|.clawdbot|.moltbot/agents/<name>/sessions)."""
    out = []
    for record in registry.AGENTS:
        if names is not None and record.name not in names:
            continue
        for home in homes(record, agent):
            roots = [home]
            for part in record.sessions.split("/"):
                if part != "*":
                    roots = [path_text(os.path.join(root, part)) for root in roots]
                    continue
                below = []
                for root in roots:
                    try:
                        below += [path_text(os.path.join(root, name)) for name in sorted(os.listdir(root))]
                    except OSError:
                        continue
                roots = below
            out += [(record, root) for root in roots]
    return out


def agent_files(names=None, agent=None):
    """(path, agent, state, root) of every session file of the selected agents: pi and
    oh-my-pi keep one directory per project, OpenClaw one flat directory per agent (with
    its reset / deleted copies). Paths are as listed, not resolved."""
    out = []
    for record, root in agent_roots(names, agent):
        if not record.per_project:
            dirs = [root]
        else:
            try:
                with os.scandir(root) as found:
                    dirs = sorted(path_text(os.path.join(root, e.name)) for e in found if _is_dir(e))
            except OSError:
                dirs = []
        for directory in dirs:
            try:
                with os.scandir(directory) as found:
                    files = [(e.name, e) for e in found]
            except OSError:
                continue
            for file, e in files:
                state = registry.file_state(record, file)
                if state is None:
                    continue
                try:
                    regular = e.is_file()  # (os.path.isfile without a stat where the directory says)
                except OSError:
                    regular = False
                if regular:
                    out.append((os.path.join(directory, file), record.name, state, root))
    return out


def _is_dir(entry):
    try:
        return entry.is_dir()
    except OSError:
        return False


def agent_of(path, agent=None):
    """(agent, state) of a session file by where it lives (pi for anything else)."""
    path = os.path.abspath(str(path))
    name = os.path.basename(path)
    for record in registry.AGENTS:
        if record.name == registry.PI:
            continue
        top = record.sessions.split("/")[0]
        for home in homes(record):
            if path.startswith(os.path.join(home, top) + os.sep):
                return record.name, registry.file_state(record, name) or "live"
    return registry.PI, "live"


def shortest_prefixes(ids, minimum=8):
    """id -> its shortest prefix (at least `minimum` characters) that no other id starts with."""
    ordered = sorted(set(ids))
    return {id: shortest_prefix(ordered, id, minimum, at) for at, id in enumerate(ordered)}


def shortest_prefix(ordered, id, minimum=8, at=None):
    """The shortest prefix of `id` (at least `minimum` characters) that no other id of
    `ordered` (sorted, without repeats, `id` among them, at `at` when known) starts with."""
    if at is None:
        from bisect import bisect_left

        at = bisect_left(ordered, id)
    need = minimum
    for other in (ordered[at - 1] if at else None, ordered[at + 1] if at + 1 < len(ordered) else None):
        if other is None or other[:need] != id[:need]:
            continue  # (they differ within the prefix needed already)
        common = need
        for a, b in zip(id[need:], other[need:]):
            if a != b:
                break
            common += 1
        need = common + 1
    return id[:need]
