"""The catalogue opens SQLite through its C core (stree.storage.catalog.common.sqlite3): the
same connect and error classes as the sqlite3 package, and the package where the core lacks
them."""

import sys
import types

from stree.storage.catalog.common import sqlite3 as stdlib_sqlite


def test_the_core_is_the_package_s_own_connect_and_errors():
    import sqlite3

    core = stdlib_sqlite()
    assert core.connect is sqlite3.connect and core.DatabaseError is sqlite3.DatabaseError
    assert core.OperationalError is sqlite3.OperationalError
    db = core.connect(":memory:")
    assert db.execute("SELECT sqlite_version()").fetchone()[0] == sqlite3.sqlite_version


def test_a_core_without_connect_means_the_package(monkeypatch):
    import sqlite3

    monkeypatch.setitem(sys.modules, "_sqlite3", types.ModuleType("_sqlite3"))
    assert stdlib_sqlite() is sqlite3
