"""Issue 17, first half: what a hostile user, a hostile server or a hostile file name did.

Each test reproduces a fault as the red-team pass found it: files of others deleted by
`stree gc`, a huge model answer appended, a symlinked session replaced by a copy, a
planted link followed, keys sent or printed where they should not be, escapes reaching
a terminal, bad environment values. CI runs as root: "another user" is uid 65534
(nobody), made with chown, and where that user must act, with setpriv or runuser.
"""

import os
import stat
import subprocess
import sys

import pytest

from builders import SessionBuilder, branchy


def small_session(path):
    b = SessionBuilder()
    u = b.user("hello")
    b.assistant("hi")
    b.user("again")
    b.at(u).assistant("other branch")
    return b.write(path)


# -- 1. gc and cache clear remove only stree's own files ---------------------------------


def _foreign_cache(tmp_path):
    """A cache dir (as STREE_CACHE_DIR may name) that also holds files that are not stree's."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (cache / "notes.txt").write_text("mine\n")
    (cache / "photo.idx").write_text("not an index\n")  # stree's suffix, not its name
    (cache / "draft.graph").write_text("not a graph\n")
    (cache / "report.tmp").write_text("x\n")
    (cache / "sub").mkdir()
    (cache / "sub" / "deep.txt").write_text("deep\n")
    (cache / "1-2.idx").mkdir()  # a directory with an index's name
    os.symlink(victim, cache / "3-4.idx")  # a link with an index's name
    os.symlink(victim, cache / "5-6-0000abcd.graph")
    os.symlink(cache / "sub", cache / "link-to-sub")
    return cache, victim


def _listing(cache):
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*"))


@pytest.mark.parametrize("how", [["gc", "--all"], ["cache", "clear"], ["gc"], ["cache", "gc"]])
def test_gc_and_cache_clear_leave_other_files_alone(tmp_path, stree, how):
    cache, victim = _foreign_cache(tmp_path)
    before = _listing(cache)
    session = small_session(tmp_path / "s.jsonl")
    gone = small_session(tmp_path / "gone.jsonl")
    env = {"STREE_CACHE_DIR": str(cache)}
    for path in (session, gone):
        assert stree("-s", path, "log", env=env).code == 0
        assert stree("-s", path, "log", "--graph", env=env).code == 0  # a pipe: the graph is kept
    os.unlink(gone)
    ours = [n for n in _listing(cache) if n not in before]
    assert any(n.endswith(".idx") for n in ours) and any(n.endswith(".graph") for n in ours), ours
    # a killed write's leftover temp file (stree's own name), old enough to be stale
    leftover = cache / (next(n for n in ours if n.endswith(".idx")) + ".4242.tmp")
    leftover.write_bytes(b"half")
    os.utime(leftover, (1_000_000_000, 1_000_000_000))
    listed = stree("cache", "--json", env=env)
    assert listed.code == 0 and "notes.txt" not in listed.out and "victim" not in listed.out, listed
    r = stree(*how, env=env)
    assert r.code == 0, r
    after = _listing(cache)
    for name in before:
        assert name in after, f"{how} removed {name}, which is not stree's"
    assert victim.read_text() == "precious\n"
    assert os.path.islink(cache / "3-4.idx") and (cache / "1-2.idx").is_dir()
    assert not leftover.exists()
    left = [n for n in after if n not in before]
    if how in (["gc", "--all"], ["cache", "clear"]):
        assert left == [], left
    else:  # only what belonged to the deleted session went
        assert left and len(left) < len(ours), (ours, left)


# -- 3. an atomic rewrite through a symlink rewrites the real file ----------------------


@pytest.mark.parametrize("how", ["migrate", "label", "chain"])
def test_migration_through_a_symlink_rewrites_the_real_file(tmp_path, stree, how):
    from test_write_commands import v1_file

    real_dir = tmp_path / "real"
    real_dir.mkdir()
    real = v1_file(real_dir / "old.jsonl")
    links = tmp_path / "links"
    links.mkdir()
    link = links / "session.jsonl"
    os.symlink(os.path.relpath(real, links), link)  # relative, as `ln -s ../real/old.jsonl` makes
    if how == "chain":
        first = link
        link = links / "again.jsonl"
        os.symlink(first, link)
    ids = stree("-s", real, "log", "--format", "{id}").out.split()
    if how == "label":
        r = stree("-s", link, "label", "greeting", ids[-1])
    else:
        r = stree("-s", link, "migrate")
    assert r.code == 0 and "migrated" in r.err, r
    assert os.path.islink(link) and os.path.realpath(link) == str(real)
    assert '"version":3' in real.read_text().splitlines()[0]
    assert not list(links.glob(".*.tmp")) and not list(real_dir.glob(".*.tmp"))
    assert stree("-s", real, "migrate", "--check").code == 0
    after = stree("-s", real, "log", "--format", "{id}", "--filter", "all").out.split()
    assert set(ids) <= set(after)
    if how == "label":
        assert "greeting" in stree("-s", real, "label").out
    assert os.lstat(link).st_mode & stat.S_IFLNK


def test_migration_keeps_the_real_files_mode_through_a_link(tmp_path, stree):
    from test_write_commands import v1_file

    real = v1_file(tmp_path / "old.jsonl")
    os.chmod(real, 0o640)
    link = tmp_path / "link.jsonl"
    os.symlink(real, link)
    assert stree("-s", link, "migrate").code == 0
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o640 and os.path.islink(link)


def test_fork_never_writes_over_a_link(tmp_path, stree):
    session = small_session(tmp_path / "s.jsonl")
    victim = tmp_path / "victim.txt"
    dangling = tmp_path / "dangling.jsonl"
    os.symlink(victim, dangling)  # points at a file that does not exist yet
    r = stree("-s", session, "fork", "@", "-o", dangling)
    assert r.code == 6 and "already exists" in r.err, r
    assert os.path.islink(dangling) and not victim.exists()
