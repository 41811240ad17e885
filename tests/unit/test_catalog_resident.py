"""A catalogue kept open by a resident process (stree.storage.catalog.resident): one
connection from one update to the next, the session rows read again only when the database
changed (another connection committed, or this one wrote), a catalogue replaced on disk
opened anew. Counted (the rows decoded), never timed."""

import os
import sqlite3

import pytest

from builders import branchy
from clock import past_the_tick
from stree.core import catalog_refresh
from stree.storage.catalog import resident, sqlite as backend


@pytest.fixture
def kept(isolated_home, monkeypatch):
    """keep_open() for this test only; how many times the session rows were decoded."""
    monkeypatch.setattr(resident, "_ON", [])
    monkeypatch.setattr(resident, "KEPT", {})
    resident.keep_open()
    decoded = []
    real = backend.rows_of

    def counting(cur, columns):
        decoded.append(1)
        return real(cur, columns)

    monkeypatch.setattr(backend, "rows_of", counting)
    yield decoded
    for path in list(resident.KEPT):
        resident.forget(path)


def update(paths):
    cat, rows = catalog_refresh.sync([(str(p), "pi", "live", str(p.parent)) for p in paths], content=True)
    db = cat.db
    cat.close()
    return db, rows


def test_rows_are_read_again_only_when_the_catalogue_changed(kept, tmp_path):
    paths = [branchy().write(tmp_path / f"s{i}.jsonl") for i in range(3)]
    for path in paths:
        past_the_tick(path)  # (no row read in the tick of its file's change: not read again for that)
    update(paths)
    db, rows = update(paths)  # (the rows as the catalogue holds them)
    assert len(rows) == 3 and kept
    read = len(kept)
    again, same = update(paths)
    assert again is db and same == rows and len(kept) == read  # (the same connection; rows not read)

    other = sqlite3.connect(resident.KEPT and next(iter(resident.KEPT)))  # another process commits
    other.execute("UPDATE meta SET value = value + 1 WHERE key = 'updated'")
    other.commit()
    other.close()
    _, after = update(paths)
    assert after == rows and len(kept) == read + 1

    with open(paths[0], "a") as f:  # this connection writes (the grown file read again)
        f.write(open(paths[0]).read().splitlines()[-1].replace('"id":"', '"id":"x', 1) + "\n")
    past_the_tick(paths[0])
    _, grown = update(paths)
    assert len(kept) == read + 1  # (nothing committed since the last read: the rows kept)
    assert grown[str(paths[0])]["size"] == os.path.getsize(paths[0])
    _, latest = update(paths)
    assert latest == grown and len(kept) == read + 2  # (read again after this connection's own write)
    update(paths)
    assert len(kept) == read + 2  # (and not after)


def test_a_catalogue_replaced_on_disk_is_opened_anew(kept, tmp_path):
    paths = [branchy().write(tmp_path / "s.jsonl")]
    db, _ = update(paths)
    for suffix in ("", "-wal", "-shm"):
        path = next(iter(resident.KEPT)) + suffix
        if os.path.exists(path):
            os.unlink(path)
    fresh, rows = update(paths)
    assert fresh is not db and len(rows) == 1
    assert sqlite3.connect(next(iter(resident.KEPT))).execute("SELECT count(*) FROM sessions").fetchone()[0] == 1
