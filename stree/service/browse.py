"""The session-browsing commands pi PR #1762 proposed and pi lacks: list_sessions, set_label,
rename_session, delete_session (abort_branch_summary and navigate_tree: service.navigate_tree)."""

import json
import os

from ..format.timestamp import activity_millis, iso_millis, ts_millis
from .pi import append
from .protocol import UNSET, RequestError, param


def list_sessions(served, request):
    """{sessions: [...]}, newest activity first. `scope` "current": the served session's
    directory; "all": every project's. Each item carries allMessagesText (the user and
    assistant text, for searching on the client) as pi's SessionInfo does."""
    from ..core.store import all_session_dirs, session_files

    scope = param(request, "scope", str, default="current", choices=("current", "all"))
    if scope == "all":
        dirs = all_session_dirs(served.agent_dir, served.session_dir, served.cwd)
        dirs.insert(0, os.path.dirname(served.path))
    else:
        dirs = [os.path.dirname(served.path)]
    seen = set()
    items = []
    for directory in dirs:
        for path in session_files(directory):
            path = os.path.abspath(str(path))
            if path in seen:
                continue
            seen.add(path)
            info = session_info(path)
            if info is not None:
                items.append(info)
    items.sort(key=lambda item: item.pop("_modified"), reverse=True)
    return {"sessions": items}


def session_info(path):
    """pi's buildSessionInfo for one file (its raw lines, as pi reads them), or None when the
    file is not a session."""
    header = None
    count = 0
    first = ""
    texts = []
    name = None
    last = None
    try:
        with open(path, "rb") as f:
            for raw in f:
                try:
                    entry = json.loads(raw)
                except ValueError:
                    continue
                if not isinstance(entry, dict):
                    continue
                if header is None:
                    if entry.get("type") != "session":
                        return None
                    header = entry
                    continue
                kind = entry.get("type")
                if kind == "session_info":
                    value = entry.get("name")
                    name = value.strip() or None if isinstance(value, str) else None
                if kind != "message":
                    continue
                count += 1
                message = entry.get("message")
                if not (isinstance(message, dict) and isinstance(message.get("role"), str) and "content" in message):
                    continue
                if message["role"] not in ("user", "assistant"):
                    continue
                when = activity_millis(message, entry.get("timestamp"))
                if when is not None:
                    last = max(last or 0, when)
                text = _text(message["content"])
                if not text:
                    continue
                texts.append(text)
                if not first and message["role"] == "user":
                    first = text
            mtime = os.fstat(f.fileno()).st_mtime * 1000
    except (OSError, RecursionError):
        return None
    if header is None:
        return None
    created = ts_millis(header.get("timestamp")) if isinstance(header.get("timestamp"), str) else None
    modified = last if last is not None and last > 0 else created if created is not None else mtime
    item = {"path": path, "id": header.get("id"), "cwd": header.get("cwd") if isinstance(header.get("cwd"), str)
            else ""}
    if name is not None:
        item["name"] = name
    if header.get("parentSession") is not None:
        item["parentSessionPath"] = header["parentSession"]
    item.update(created=_iso(created), modified=_iso(modified), messageCount=count,
                firstMessage=first or "(no messages)", allMessagesText=" ".join(texts), _modified=modified)
    return item


def _text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _iso(ms):
    """Date.toISOString, 1970-01-01T00:00:00.000Z for an invalid date (the PR's toSafeIso)."""
    try:
        return iso_millis(ms)
    except (TypeError, ValueError, OverflowError, OSError):
        return "1970-01-01T00:00:00.000Z"


def set_label(served, request):
    """Set the label of `entryId`, or clear it (label left out, empty or whitespace), as pi's
    appendLabelChange: a label entry at the leaf. Any label pi takes is taken (`stree label`
    refuses names that cannot be revisions; pi's clients do not know that rule)."""
    entry_id = param(request, "entryId", str, required=True)
    label = (param(request, "label", str) or "").strip()
    session, tree = served.load()
    if tree.get(entry_id) is None:
        raise RequestError(f"Entry {entry_id} not found", "not_found")
    append(served, served.path, lambda s, t, new: _label(t, new, entry_id, label))
    return UNSET


def _label(tree, new, entry_id, label):
    if tree.get(entry_id) is None:
        raise RequestError(f"Entry {entry_id} not found", "not_found")
    return [new.label(entry_id, label, tree.leaf)]


def _session_file(served, value):
    """An existing session file named by an absolute path (the PR's sessionPath)."""
    path = os.path.abspath(os.path.expanduser(value))
    if not os.path.isfile(path):
        raise RequestError(f"Session file not found: {value}", "not_found")
    return path


def rename_session(served, request):
    value = param(request, "sessionPath", str, required=True)
    name = param(request, "name", str, required=True).strip()
    if not name:
        raise RequestError("Session name cannot be empty")
    path = _session_file(served, value)
    append(served, path, lambda s, tree, new: [new.session_info(name, tree.leaf)])
    return UNSET


def delete_session(served, request):
    """Move a session file to the freedesktop trash ($XDG_DATA_HOME/Trash, with its .trashinfo)
    when there is one, else unlink it. `confirm: true` is required: a client cannot delete by
    accident. The served session cannot be deleted. Returns {path, method, trashPath?}."""
    value = param(request, "sessionPath", str, required=True)
    if param(request, "confirm", bool, default=False) is not True:
        raise RequestError("delete_session needs \"confirm\": true (the session file is moved to the trash, "
                           "or deleted where there is none)")
    path = _session_file(served, value)
    if os.path.realpath(path) == os.path.realpath(served.path):
        raise RequestError("Cannot delete the currently active session", "conflict")
    from ..core.store import read_header

    if read_header(path) is None:
        raise RequestError(f"{value}: not a session file (no session header); not deleted", "bad_file")
    from .trash import remove

    with served.writing(path):
        return remove(path)


HANDLERS = {
    "list_sessions": list_sessions,
    "set_label": set_label,
    "rename_session": rename_session,
    "delete_session": delete_session,
}
