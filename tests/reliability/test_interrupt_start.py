"""Ctrl-C while stree is still loading (before a command's own error boundary: click being
imported) ends it as Ctrl-C does anywhere else: `stree: interrupted`, exit 130, no traceback."""

import subprocess
import sys

# Ctrl-C lands while click is imported: the import raises KeyboardInterrupt, as the signal would
CHILD = """
import builtins, sys
real = builtins.__import__
def importing(name, *args, **kwargs):
    if name == "click" or name.startswith("click."):
        raise KeyboardInterrupt
    return real(name, *args, **kwargs)
builtins.__import__ = importing
sys.argv = ["stree", "-s", "demo", "stats"]
from stree.entrypoint import main
main()
"""


def test_ctrl_c_while_click_loads_is_an_interruption_not_a_traceback():
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60)
    assert r.returncode == 130, r
    assert r.stderr == "stree: interrupted\n" and r.stdout == "", r
