"""Where sessions live (pi's layout), listing them, resolving -s PATH|ID."""

import mmap
import os
import re
from pathlib import Path

from ..errors import BadFile, NotFound, StreeError
from ..format import agents as registry
from .sessionfiles import (agent_files, agent_of, agent_roots, homes, selected_agents,  # noqa: F401  (for callers)
                           shortest_prefix, shortest_prefixes)

DEMO_NAME = "demo"
HEADER_PROBE = 4096  # oh-my-pi's 256-byte title slot plus a header fit easily


def demo_path():
    return Path(__file__).resolve().parent.parent / "data" / "demo.jsonl"


def expand(path):
    return Path(os.path.expanduser(str(path)))


def agent_dir(override=None):
    """pi's agent dir: --agent-dir, $PI_CODING_AGENT_DIR, else ~/.pi/agent."""
    return agent_homes(registry.named(registry.PI), override)[0]


def agent_homes(agent, override=None):
    """The directories an agent (a stree.format.agents record) keeps its sessions under
    (stree.core.agentfiles.homes), as Paths."""
    return [Path(home) for home in homes(agent, override)]


def encode_cwd(cwd):
    """pi's directory name for a project: --home-dev-app-- for /home/dev/app."""
    return "--" + re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", str(cwd))) + "--"


def project_session_dir(cwd, agent=None, session_dir=None):
    """The directory holding this project's sessions (flat when overridden)."""
    if session_dir:
        return expand(session_dir)
    env = os.environ.get("PI_CODING_AGENT_SESSION_DIR")
    if env:
        return expand(env)
    return agent_dir(agent) / "sessions" / encode_cwd(cwd)


HEADER_SCAN = 1 << 20  # pi (1.5) looks for the header within the first MiB


def read_header(path):
    """The header object of a session file, or None: pi's readSessionHeader, which takes
    the first line that parses (blank and malformed lines skipped) within 1 MiB. Cheap:
    reads 4 KiB at a time. oh-my-pi's title slot may come first."""
    from ..format.decode import JS_WHITESPACE, decode_line

    try:
        f = open(path, "rb")
    except OSError:
        return None
    with f:
        pending = b""
        scanned = 0
        while True:
            try:
                block = f.read(min(HEADER_PROBE, HEADER_SCAN + 1 - scanned))
            except OSError:
                return None
            scanned += len(block)
            lines = (pending + block).split(b"\n")
            pending = lines.pop() if block else b""  # at the end of the file, its last line counts
            for raw in lines:
                verdict = _header_candidate(raw, decode_line, JS_WHITESPACE)
                if verdict is not _SKIP:
                    return verdict
            if not block or scanned > HEADER_SCAN:
                return None  # no header, or none within the first MiB: not a session for discovery


_SKIP = object()


def _header_candidate(raw, decode_line, spaces):
    if not raw.decode("utf-8", errors="replace").strip(spaces):
        return _SKIP
    try:
        obj = decode_line(raw)
    except ValueError:
        return _SKIP
    if obj is None or obj is False or obj == "" or (obj.__class__ in (int, float) and obj == 0):
        return _SKIP  # pi skips a falsy value
    if not isinstance(obj, dict):
        return None
    if obj.get("type") == "session" and isinstance(obj.get("id"), str):
        return obj
    if obj.get("type") == "title" and registry.title_slots():
        return _SKIP  # oh-my-pi's title slot (stree reads these files; pi does not)
    return None


def session_files(directory):
    """*.jsonl files with a session header in one directory, newest mtime first."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    found = []
    for name in names:
        if not name.endswith(".jsonl"):
            continue
        path = os.path.join(directory, name)
        try:
            st = os.stat(path)
        except OSError:
            continue
        if not os.path.isfile(path):
            continue
        found.append((st.st_mtime, path))
    found.sort(reverse=True)
    return [Path(p) for _, p in found]


def custom_session_dir(cwd, agent=None, session_dir=None):
    """The session dir --session-dir or $PI_CODING_AGENT_SESSION_DIR names, when it is not
    this project's own: pi (1.5) then takes only the sessions whose header cwd is `cwd`."""
    directory = session_dir or os.environ.get("PI_CODING_AGENT_SESSION_DIR")
    if not directory:
        return None
    directory = expand(directory)
    default = agent_dir(agent) / "sessions" / encode_cwd(cwd)
    return None if _resolved(str(directory)) == _resolved(str(default)) else directory


def _resolved(path):
    """pi's resolvePath: ~ expanded, absolute, normalised (symlinks are not followed)."""
    import posixpath

    path = os.path.expanduser(path)
    if not path.startswith("/"):
        path = posixpath.join(os.getcwd(), path)
    path = posixpath.normpath(path)
    return "/" + path.lstrip("/") if path.startswith("//") else path


def cwd_matches(header, cwd):
    """pi's sessionCwdMatches: the header names this directory."""
    value = header.get("cwd")
    return isinstance(value, str) and value != "" and _resolved(value) == _resolved(str(cwd))


def project_sessions(cwd, agent=None, session_dir=None):
    """This project's session files, newest mtime first, as pi's -c and session list see
    them: in a custom session dir, only those whose header cwd is `cwd`."""
    directory = project_session_dir(cwd, agent, session_dir)
    paths = session_files(directory)
    if custom_session_dir(cwd, agent, session_dir) is None:
        return paths
    return [p for p in paths if (h := read_header(p)) is not None and cwd_matches(h, cwd)]


def all_session_dirs(agent=None, session_dir=None, cwd=None):
    """This project's directory first, then every project under the agent dir."""
    dirs = []
    if cwd is not None:
        dirs.append(project_session_dir(cwd, agent, session_dir))
    root = agent_dir(agent) / "sessions"
    try:
        subdirs = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        subdirs = []
    for d in subdirs:
        if d not in dirs:
            dirs.append(d)
    return dirs


def newest_session(cwd, agent=None, session_dir=None):
    """pi -c: the most recently modified valid session of this project."""
    directory = project_session_dir(cwd, agent, session_dir)
    for path in project_sessions(cwd, agent, session_dir):
        if read_header(path) is not None:
            return path
    raise NotFound(
        f"no pi session for {cwd} (looked in {directory})",
        hint="pass one with -s PATH|ID, or 'stree ls --all' to see every session; "
             "'stree -s demo log --graph' shows the bundled demo",
    )


def looks_like_path(value):
    return "/" in value or "\\" in value or value.endswith(".jsonl")


def resolve_session(value, cwd, agent=None, session_dir=None, agents=None, by_id=False):
    """-s PATH|ID-PREFIX (or 'demo') -> a session file path. An id is looked up in pi's
    directories first, then in the other agents' (--agent). `by_id`: `value` is an id (prefix)
    whatever it looks like (SESSION:ENTRY's decoded session part may hold '/')."""
    if value is None:
        return newest_session(cwd, agent, session_dir)
    if value == DEMO_NAME and not os.path.exists(value) and not by_id:
        return demo_path()
    if not by_id and (looks_like_path(value) or os.path.exists(value)):
        path = expand(value)
        if path.is_dir():
            raise BadFile(f"{value}: is a directory, not a session file",
                          hint="pass the .jsonl file inside it, or use --session-dir DIR")
        if not path.exists():
            raise NotFound(f"{value}: no such session file")
        return path
    local = project_session_dir(cwd, agent, session_dir)
    custom = custom_session_dir(cwd, agent, session_dir)
    # pi: this project's sessions first (in a custom dir, those of this cwd), then every
    # project's (with a custom dir: all of that dir); in each, an exact id beats a prefix
    scopes = [("local", lambda: project_sessions(cwd, agent, session_dir))]
    if custom is not None:
        scopes.append(("global", lambda: session_files(custom)))
    else:
        scopes.append(("global", lambda: [p for d in all_session_dirs(agent, session_dir) if d != local
                                          for p in session_files(d)]))
    others = [a for a in selected_agents(agents) if a != registry.PI]
    if others:
        scopes.append(("others", lambda: [Path(p) for p, *_ in agent_files(others)]))
    prefix = value.lower()
    searched = 0
    for _, files in scopes:
        exact, matches = [], []
        for path in files():
            searched += 1
            id = session_id(path)
            if id is None:
                continue
            if id == value:
                exact.append(path)
            elif id.lower().startswith(prefix):
                matches.append(path)
        if exact:
            return exact[0]  # the newest
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            listing = "\n".join(f"  {session_id(p) or '?'}  {p}" for p in matches[:20])
            raise NotFound(f"session id prefix '{value}' is ambiguous; candidates:\n{listing}",
                           hint="give more characters of the id, or a path")
    raise NotFound(f"no session with id starting '{value}' (searched {searched} files)",
                   hint="'stree ls --all' lists every session")


def session_id(path):
    """The id of a session file: its header's, or for a file without a header where OpenClaw
    keeps them (read read-only), its name's stem; None when it is not a session."""
    header = read_header(path)
    if header is not None:
        return header["id"]
    return os.path.basename(str(path)).split(".", 1)[0] if registry.headerless_allowed(path) else None


def session_candidates(cwd, agent=None, session_dir=None, limit=200, agents=None):
    """(id, title, path) of the sessions -s can name: this project's first, then every
    other project's, each newest first, then the other agents'; title = display name or
    first user message. Answered from the catalogue for the files it holds as they are."""
    local = project_session_dir(cwd, agent, session_dir)
    groups = [session_files(directory) for directory in
              [local] + [d for d in all_session_dirs(agent, session_dir) if d != local]]
    others = [a for a in selected_agents(agents) if a != registry.PI]
    if others:
        groups.append([Path(p) for p, *_ in agent_files(others)])
    known = _catalogued()
    out = []
    seen = set()
    for paths in groups:
        for path in paths:
            if len(out) >= limit:
                return out
            row = known.get(os.path.abspath(str(path)))
            if row is not None and not _current(row, path):
                row = None
            id = (row["id"] if row["ok"] else None) if row is not None else session_id(path)
            if id is None or id in seen:
                continue
            seen.add(id)
            title = (row["name"] or row["first_message"] or "") if row is not None else session_title(path)
            out.append((id, title, path))
    return out


def _catalogued():
    """path -> catalogue row, when there is a catalogue (read only: nothing is updated)."""
    if os.environ.get("STREE_NO_CACHE"):
        return {}
    from ..storage.catalog import Catalog, Unavailable, db_path

    try:
        if not os.path.isfile(db_path()):
            return {}
        with Catalog(quiet=True) as cat:  # (completion: no warning on the terminal)
            return cat.rows()
    except (Unavailable, StreeError):
        return {}


def _current(row, path):
    try:
        st = os.stat(path)
    except OSError:
        return False
    from .catalog_refresh import unchanged

    return unchanged(row, st)


def session_title(path, scan=256 * 1024):
    """The display name (latest session_info) or the first user message, read cheaply:
    a byte search for the name, the first `scan` bytes for the message."""
    try:
        with open(path, "rb") as f:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # ValueError: an empty file cannot be mapped
        return ""
    with data:
        return _name_or_first_message(data, scan)


def _name_or_first_message(data, scan):
    from ..format.text import full_text, normalize
    from ..format.decode import JS_WHITESPACE, decode_line

    end = len(data)
    while True:  # newest session_info first
        at = data.rfind(b'"session_info"', 0, end)
        if at < 0:
            break
        start = data.rfind(b"\n", 0, at) + 1
        stop = data.find(b"\n", at)
        try:
            obj = decode_line(data[start:stop if stop >= 0 else len(data)])
        except ValueError:
            obj = None
        if isinstance(obj, dict) and obj.get("type") == "session_info":
            name = obj.get("name")
            if isinstance(name, str) and name.strip(JS_WHITESPACE):
                return name.strip(JS_WHITESPACE)
            break  # an empty name clears it
        end = start
    for raw in data[:scan].split(b"\n"):
        if b'"user"' not in raw:
            continue
        try:
            obj = decode_line(raw)
        except ValueError:
            continue
        msg = obj.get("message") if isinstance(obj, dict) and obj.get("type") == "message" else None
        if isinstance(msg, dict) and msg.get("role") == "user":
            return normalize(full_text(msg.get("content")))
    return ""


# -- other agents that write this format (their records: stree.format.agents) -----------

def project_agent_files(names, cwd):
    """(path, agent, "live", None) of this project's sessions of the selected agents that keep
    one directory per project, other than pi (oh-my-pi's ~/.omp/agent/sessions/<project>)."""
    out = []
    for record, root in agent_roots([n for n in names if n != registry.PI]):
        if record.per_project:
            out += [(str(p), record.name, "live", None) for p in session_files(Path(root) / encode_cwd(cwd))]
    return out


def resolved(path):
    """A path as pi compares session cwds (~ expanded, absolute, normalised)."""
    return _resolved(str(path))

