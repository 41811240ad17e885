"""Which libpq a grep of a shared catalogue loads (stree.storage.catalog.libpq): STREE_LIBPQ's
one file when set, else the one psycopg[binary] bundles, else the system's; found without
running psycopg (nor ctypes.util.find_library, which runs processes). A process is used
where what it imported is the question."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

LOOK = ("import json, sys; from stree.storage.catalog import libpq; "
        "print(json.dumps([libpq.candidates(), sorted(m for m in sys.modules if m.split('.')[0] in "
        "('psycopg', 'psycopg_binary', 'ctypes', 'subprocess'))]))")


def looked(env):
    r = subprocess.run([sys.executable, "-c", LOOK], capture_output=True, text=True, timeout=60,
                       env={**{k: v for k, v in os.environ.items() if k != "STREE_LIBPQ"}, **env})
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_named_libpq_is_the_only_one_tried():
    assert looked({"STREE_LIBPQ": "/opt/pg/lib/libpq.so.5"})[0] == ["/opt/pg/lib/libpq.so.5"]
    assert looked({"STREE_LIBPQ": "none"})[0] == ["none"]


def test_psycopg_binarys_libpq_first_then_the_systems_and_nothing_run_to_find_them():
    found, modules = looked({})
    assert found[-1] in ("libpq.so.5", "libpq.5.dylib", "libpq.dll")
    assert modules == []  # (not psycopg, not its binary package, and no process run to look)
    spec = importlib.util.find_spec("psycopg_binary")
    if spec is None:
        pytest.skip("psycopg[binary] is not installed: only the system's libpq is tried")
    bundled = found[:-1]
    assert bundled and all(os.path.basename(os.path.dirname(p)) in ("psycopg_binary.libs", ".dylibs")
                           for p in bundled), found
    assert all(os.path.basename(p).startswith("libpq") and os.path.exists(p) for p in bundled), found
