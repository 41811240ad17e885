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


FRESH = """
import sys
from stree.storage.catalog.common import sqlite3
core = sqlite3()
before = sorted(m for m in ("functools", "collections") if m in sys.modules)
db = core.connect(":memory:")
db.execute("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)")
for k in range(300):  # one statement, many times, others between: the statement cache at work
    db.execute("INSERT INTO t VALUES (?, ?)", (k, str(k * k)))
    db.execute(f"SELECT {k % 7}").fetchone()
total = db.execute("SELECT count(*), sum(length(v)) FROM t").fetchone()
import functools
import json  # (json loads re, which loads functools: last)
real = hasattr(functools, "reduce") and hasattr(functools, "partial") and functools.lru_cache.__module__ == "functools"
print(json.dumps({"before": before, "total": total, "real": real, "again": sqlite3() is core}))
"""


def test_a_grep_s_process_opens_sqlite_without_functools_and_functools_comes_whole_later():
    """A process that has not loaded functools (a one-shot grep) gets the core without it and
    without collections (2 ms of a warm grep); its connections cache statements as ever, and
    functools imported afterwards is the real module."""
    import json
    import subprocess

    r = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got == {"before": [], "total": [300, sum(len(str(k * k)) for k in range(300))], "real": True,
                   "again": True}
