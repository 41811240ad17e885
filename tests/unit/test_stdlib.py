"""array and SQLite's core imported without the packages they load for one name each
(stree.format.stdlib): a fresh process, as a command starts, finds them working, and the real
packages imported afterwards whole."""

import json
import subprocess
import sys

SQLITE = """
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

ARRAY = """
import sys
from stree.format.stdlib import array
before = "collections" in sys.modules
a = array("i", range(5))
a.extend([7, 8])
import collections.abc
import json
real = hasattr(collections, "OrderedDict") and collections.abc.MutableSequence.__module__ == "collections.abc"
print(json.dumps({"before": before, "values": a.tolist(), "abc": isinstance(a, collections.abc.MutableSequence),
                  "real": real}))
"""


def fresh(code):
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_sqlite_s_core_comes_without_functools_and_functools_whole_later():
    """2 ms of a warm grep: its connections cache statements as ever."""
    assert fresh(SQLITE) == {"before": [], "total": [300, sum(len(str(k * k)) for k in range(300))], "real": True,
                             "again": True}


def test_array_comes_without_collections_and_is_still_a_mutable_sequence():
    """1.5 ms of every command that reads an index."""
    assert fresh(ARRAY) == {"before": False, "values": [0, 1, 2, 3, 4, 7, 8], "abc": True, "real": True}
