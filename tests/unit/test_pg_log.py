"""psycopg's own log stays off stree's stderr (stree.storage.catalog.pgerrors.load_psycopg): a push
whose connection is lost in the middle of a COPY says so once, in stree's words, without psycopg's
`error ignored terminating <psycopg.Copy [BAD] at 0x...>` above it (what logging's last resort
printed); with --debug or STREE_DEBUG, psycopg's warnings are shown."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("psycopg")

WARN = ("from stree.storage.catalog.pgerrors import load_psycopg; load_psycopg(); import logging; "
        "logging.getLogger('psycopg').warning('error ignored terminating <Copy>: the connection is lost')")


def stderr(*args, **env):
    """What a process that loads psycopg as stree does, then hears a warning of it, writes on stderr
    (`args`: its command line, as stree's would read)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("STREE_")}
    r = subprocess.run([sys.executable, "-c", WARN, *args], capture_output=True, text=True, timeout=60,
                       env={**clean, **env})
    assert r.returncode == 0, r.stderr
    return r.stderr


def test_psycopg_s_warnings_are_not_printed():
    assert stderr() == ""


def test_psycopg_s_warnings_are_printed_with_debug():
    assert "error ignored terminating" in stderr(STREE_DEBUG="1")
    assert "error ignored terminating" in stderr("--debug", "catalog", "push")
    assert stderr("catalog", "push") == ""
