"""delete_session's removal: into the freedesktop.org trash (the home trash,
$XDG_DATA_HOME/Trash, with a .trashinfo naming where the file was), so a file manager can
restore it; unlinked only where no trash can be made."""

import os
import shutil
from datetime import datetime
from pathlib import Path
from urllib.parse import quote


def trash_dir():
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "Trash"


def remove(path):
    """Trash (or else unlink) `path`: {path, method: "trash"|"unlink", trashPath?}."""
    trash = trash_dir()
    try:
        for sub in ("files", "info"):
            (trash / sub).mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        os.unlink(path)
        return {"path": path, "method": "unlink"}
    name, info = _reserve(trash, os.path.basename(path), path)
    target = trash / "files" / name
    try:
        try:
            os.rename(path, target)
        except OSError as e:
            if e.errno != 18:  # EXDEV: another filesystem, copied then removed (as the spec allows)
                raise
            shutil.copy2(path, target)
            os.unlink(path)
    except BaseException:
        info.unlink(missing_ok=True)
        raise
    return {"path": path, "method": "trash", "trashPath": str(target)}


def _reserve(trash, name, original):
    """A name free in the trash, claimed by creating its .trashinfo (O_EXCL, as the spec says)."""
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    text = ("[Trash Info]\nPath=" + quote(original) + "\nDeletionDate="
            + datetime.now().strftime("%Y-%m-%dT%H:%M:%S") + "\n").encode("utf-8")
    for n in range(1, 10000):
        candidate = name if n == 1 else f"{stem}.{n}{dot}{ext}"
        info = trash / "info" / (candidate + ".trashinfo")
        try:
            fd = os.open(info, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        try:
            os.write(fd, text)
        finally:
            os.close(fd)
        if not (trash / "files" / candidate).exists():
            return candidate, info
        info.unlink(missing_ok=True)
    raise OSError(f"{trash}: no free name for {name}")
