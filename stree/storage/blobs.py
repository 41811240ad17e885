"""oh-my-pi's image blobs: an image block's `data` may be `blob:sha256:<64 hex>`, the
SHA-256 of the raw image bytes, stored as the file `<agent dir>/blobs/<hash>`
(~/.omp/agent/blobs). Read here for showing or exporting; the session keeps the reference."""

import base64
import hashlib
import os
import re
from pathlib import Path

from ..format import agents as registry

PREFIX = "blob:sha256:"
_HASH = re.compile(r"[a-f0-9]{64}")  # oh-my-pi's parseBlobRef: anything else is no blob (no ../)
MAX_BLOB = 64 << 20


def is_ref(data):
    return isinstance(data, str) and data.startswith(PREFIX)


def blob_dirs(session_path):
    """Where a session's blobs may be: `blobs` beside the `sessions` directory above the file,
    then the homes of the agents that keep blobs (oh-my-pi's ~/.omp/agent/blobs)."""
    out = []
    path = Path(os.path.abspath(str(session_path)))
    for parent in path.parents:
        if parent.name == "sessions":
            out.append(parent.parent / "blobs")
            break
    for agent in registry.AGENTS:
        for home in agent.homes if agent.blobs else ():
            default = Path.home() / home / "blobs"
            if default not in out:
                out.append(default)
    return out


def read(ref, dirs):
    """The bytes a blob reference names, or None (not a valid reference, missing, or its
    content does not match its hash)."""
    if not is_ref(ref):
        return None
    digest = ref[len(PREFIX):]
    if not _HASH.fullmatch(digest):
        return None
    for directory in dirs:
        try:
            with open(os.path.join(directory, digest), "rb") as f:
                data = f.read(MAX_BLOB + 1)
        except OSError:
            continue
        if len(data) <= MAX_BLOB and hashlib.sha256(data).hexdigest() == digest:
            return data
    return None


def image_base64(data, dirs):
    """An image block's base64 data, a blob reference resolved; None when it cannot be."""
    if is_ref(data):
        raw = read(data, dirs)
        return None if raw is None else base64.b64encode(raw).decode("ascii")
    return data if isinstance(data, str) else None
