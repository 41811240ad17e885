"""Where a client may have stree write a new file (serve's export_html; fork and clone name their
own file): never over an existing file unless the request says `overwrite: true`, and never over
a session file at all, whatever it says.

A session file is (1) any file whose first line that parses is a session header (pi's
readSessionHeader, symlinks followed), or (2) any existing `.jsonl` file inside a sessions
directory (the served session's directory, the project's, the agent's sessions/ tree or
--session-dir): a session being written may not have its header on disk yet, and pi lists
whatever lies there. `stree export` refuses an existing file without --force the same way."""

import os
from pathlib import Path

from .protocol import RequestError


def checked_target(served, value, overwrite):
    """The absolute Path to write `value` (relative: to the server's working directory), or a
    RequestError (conflict) when writing there would replace what the rules above protect."""
    target = Path(os.path.expanduser(value))
    if not target.is_absolute():
        target = Path(served.cwd) / target
    if not os.path.lexists(target):
        return target
    if _is_session_file(served, target):
        raise RequestError(f"{value}: is a session file; it is never replaced", "conflict",
                           hint="choose another outputPath")
    if not overwrite:
        raise RequestError(f"{value}: already exists; nothing written", "conflict",
                           hint="pass \"overwrite\": true to replace it, or choose another outputPath")
    if os.path.isdir(target):
        raise RequestError(f"{value}: is a directory; nothing written", "conflict")
    return target


def _is_session_file(served, target):
    from ..core.store import read_header

    real = os.path.realpath(target)
    if real == os.path.realpath(served.path) or read_header(real) is not None:
        return True
    if not real.endswith(".jsonl"):
        return False
    return any(_inside(real, d) for d in _session_dirs(served))


def _session_dirs(served):
    from ..core.store import agent_dir, project_session_dir

    dirs = [os.path.dirname(served.path)]
    try:
        dirs.append(str(project_session_dir(served.cwd, served.agent_dir, served.session_dir)))
        dirs.append(os.path.join(str(agent_dir(served.agent_dir)), "sessions"))
    except RuntimeError:  # (no home directory to find them in: the served session's directory only)
        pass
    return [os.path.realpath(d) for d in dirs]


def _inside(path, directory):
    try:
        return os.path.commonpath([path, directory]) == directory
    except ValueError:
        return False
