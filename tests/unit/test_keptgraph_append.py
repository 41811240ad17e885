"""stree.storage.keptgraph.append: a patch added to the end of the kept file it patches. Each
output reads back as what was put in, every block's CRC right; the file keeps the same inode
while it may (nothing copied), and is written anew before unused bytes pile up; an older
reader's output never changes under it; a damaged byte anywhere in an output fails verify()."""

import os

import pytest

from stree.storage.keptgraph import file as graphfile
from stree.storage.keptgraph.append import Appender


@pytest.fixture
def target(tmp_path, monkeypatch):
    monkeypatch.setenv("STREE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("STREE_GRAPH_BLOCK", "100")
    return str(tmp_path / "1-1-00000000.graph")


def first(target, data, rows=b"rows"):
    writer = graphfile.Writer(target, 1 << 30)
    writer.add(data)
    writer.commit(rows, {"n": 0})


def patch(target, cut, new, n, rows=b"rows"):
    """The kept output with `new` put at `cut`, as a patch writes it; (the Kept it started from, its inode)."""
    kept = graphfile.open_kept(target)
    assert kept is not None and kept.verify()
    writer = Appender(kept, target, 1 << 30)
    writer.copy(kept, 0, cut)
    writer.add(new)
    writer.copy(kept, cut, kept.length)
    writer.commit(rows, {"n": n})
    return kept


def test_patches_are_added_in_place_and_read_back_whole(target):
    expected = bytes(range(256)) * 400  # 100 KiB
    first(target, expected)
    inode = os.stat(target).st_ino
    for n in range(1, 40):
        cut = (n * 7919) % len(expected)
        new = b"row %d\n" % n
        kept = patch(target, cut, new, n)
        kept.close()
        expected = expected[:cut] + new + expected[cut:]
        now = graphfile.open_kept(target)
        assert now.verify() and now.read(0, now.length) == expected and now.meta["n"] == n
        assert now.rows() == b"rows"
        now.close()
        size = os.stat(target).st_size
        assert os.stat(target).st_ino == inode  # added to: the unchanged ranges were not copied
        assert size < len(graphfile.MAGIC) + len(expected) + len(expected) // 4 + (1 << 20) + 8192
    assert not [p for p in os.listdir(os.path.dirname(target)) if p.endswith(".tmp")]


def test_a_file_of_mostly_unused_bytes_is_written_anew(target):
    """Rows' state as long as the output, again at each patch: after a few, a new file."""
    data = b"x" * 50_000
    rows = b"r" * 400_000
    first(target, data, rows)
    inodes = {os.stat(target).st_ino}
    for n in range(1, 12):
        patch(target, 10, b"y\n", n, rows).close()
        data = data[:10] + b"y\n" + data[10:]
        inodes.add(os.stat(target).st_ino)
        kept = graphfile.open_kept(target)
        assert kept.verify() and kept.read(0, kept.length) == data and kept.rows() == rows
        kept.close()
        assert os.stat(target).st_size < len(data) + len(data) // 4 + (1 << 20) + 2 * len(rows) + 8192
    assert len(inodes) > 1


def test_an_older_reader_keeps_its_output(target):
    """A reader that opened the kept file before a patch still prints the output it found."""
    data = b"abcdefghij\n" * 1000
    first(target, data)
    reader = graphfile.open_kept(target)
    patch(target, 55, b"new row\n", 1).close()
    assert reader.verify() and reader.read(0, reader.length) == data
    reader.close()
    now = graphfile.open_kept(target)
    assert now.read(0, now.length) == data[:55] + b"new row\n" + data[55:]
    now.close()


@pytest.mark.parametrize("where", ["the added bytes", "the older bytes", "the rows"])
def test_a_damaged_byte_of_a_patched_output_is_found(target, where):
    data = b"0123456789" * 2000
    first(target, data)
    patch(target, 300, b"added row\n", 1).close()
    kept = graphfile.open_kept(target)
    at = {"the added bytes": kept.meta["start"] + 3, "the older bytes": len(graphfile.MAGIC) + 5000,
          "the rows": kept.meta["rows_at"] + 1}[where]
    kept.close()
    with open(target, "r+b") as f:
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 0x20]))
    kept = graphfile.open_kept(target)
    assert kept is not None and not (kept.verify() and kept.rows() is not None)
    kept.close()


def test_a_long_output_is_verified_by_halves(target, monkeypatch):
    """Past SPLIT bytes two threads check it: a damaged byte in either half is found."""
    monkeypatch.setattr(graphfile, "SPLIT", 1000)
    data = bytes(range(256)) * 100
    for at in (7, len(data) - 7):
        first(target, data)
        with open(target, "r+b") as f:
            f.seek(len(graphfile.MAGIC) + at)
            f.write(b"\xff" if data[at] != 0xff else b"\x00")
        kept = graphfile.open_kept(target)
        assert not kept.verify(), at
        kept.close()
    first(target, data)
    kept = graphfile.open_kept(target)
    assert kept.verify()
    kept.close()
