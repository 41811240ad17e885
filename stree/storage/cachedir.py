"""Where stree keeps its cache (indexes, kept graphs) and how a cache file is
written: a light module, read by the fast paths that must not import the index."""

import os
import stat
import sys

# The only names stree ever writes in its cache dir: <dev>-<inode>.idx (stree.storage.index),
# <dev>-<inode>-<crc>.graph (stree.storage.keptgraph), and their temp files while being written;
# the catalogue, catalog.sqlite and SQLite's -wal and -shm beside it (stree.storage.catalog), listed
# only when the database's content says stree made it (its application id).
# Nothing else there is ever removed, whatever the directory (STREE_CACHE_DIR) holds.
# (compiled when first used: `re` is not imported by the fast paths that only read the cache)
OWN_NAME = r"[0-9a-f]+-[0-9a-f]+(?:-[0-9a-f]{8}\.graph|\.idx)|catalog\.sqlite(?:-wal|-shm)?"
OWN_TEMP = r"(?P<target>[0-9a-f]+-[0-9a-f]+(?:-[0-9a-f]{8}\.graph|\.idx)|catalog\.sqlite)\.[0-9]+(?:-[0-9a-f]+)?\.tmp"


def configured_cache_dir():
    override = os.environ.get("STREE_CACHE_DIR")
    if override:
        return override
    if sys.platform.startswith("linux"):  # platformdirs' own rule, without importing it
        base = os.environ.get("XDG_CACHE_HOME", "")
        if not base.strip():
            base = os.path.expanduser("~/.cache")
        return os.path.join(base, "stree", "index")
    from platformdirs import user_cache_dir

    return os.path.join(user_cache_dir("stree"), "index")


_CHECKED = set()


def cache_dir():
    """The cache directory, refused (StreeError, exit 2) when it is another user's or
    writable by group or others: its indexes decide what stree answers."""
    path = configured_cache_dir()
    if path not in _CHECKED:
        try:
            st = os.stat(path)
        except OSError:
            return path  # not there yet: write_file() makes it, 0700, and checks it then
        refuse_shared(path, st, "cache directory",
                      "point STREE_CACHE_DIR at a directory of your own, or run with --no-cache")
        _CHECKED.add(path)
    return path


def refuse_shared(path, st, what, other_fix, error=None):
    """As ssh treats its config: refuse what another user owns or group/others may write
    (raises `error`, a UsageError by default). Root's own files are trusted (a user
    cannot write them either)."""
    from ..errors import UsageError

    error = error or UsageError
    uid = os.getuid()
    if st.st_uid not in (uid, 0):
        raise error(f"{path}: the {what} belongs to another user (uid {st.st_uid}); refused",
                         hint=f"chown it to you (uid {uid}), or {other_fix}")
    writable = st.st_mode & 0o022
    if writable:
        who = "group and others" if writable == 0o022 else "its group" if writable == 0o020 else "others"
        raise error(f"{path}: the {what} is writable by {who} (mode {stat.S_IMODE(st.st_mode):o}); refused",
                         hint=f"chmod go-w {path}, or {other_fix}")


def own_files(directory):
    """(name, is_temp) of the regular files (not links, not directories) in `directory` that
    stree wrote: its indexes, kept graphs and their temp files; [] when unreadable."""
    import re

    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    out = []
    for name in names:
        own, temp = re.fullmatch(OWN_NAME, name), re.fullmatch(OWN_TEMP, name)
        if not own and not temp:
            continue
        try:
            st = os.lstat(os.path.join(directory, name))
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            out.append((name, bool(temp)))
    return out


def write_file(target, parts):
    """Write a cache file readable by this user only, as a temp file and a rename:
    concurrent stree processes never see half of one (the last writer wins)."""
    fd, tmp = create_temp(target)
    try:
        with os.fdopen(fd, "wb") as f:
            f.writelines(parts)
        os.replace(tmp, target)  # (renames over a link at `target`, never writes through it)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def create_temp(target, readable=False):
    """(descriptor, name) of a new temp file for `target`, beside it, readable by this user
    only: renamed over `target` once written (write_file, stree.storage.keptgraph.file); with
    `readable`, the descriptor reads too."""
    directory = os.path.dirname(target)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    _CHECKED.discard(directory)
    cache_dir()  # (just made, or made by someone else meanwhile: checked again)
    # a new name every time, created exclusively and never through a link: nothing planted
    # at a predictable name (a link to a victim's file) is ever opened or written through
    flags = (os.O_RDWR if readable else os.O_WRONLY) | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    tmp = f"{target}.{os.getpid()}-{os.urandom(6).hex()}.tmp"
    return os.open(tmp, flags, 0o600), tmp


def debug(message):
    if os.environ.get("STREE_DEBUG") or os.environ.get("STREE_DEBUG_STATS"):
        from ..format.terminal import inert

        print(inert(f"stree: debug: {message}", oneline=True), file=sys.stderr)
