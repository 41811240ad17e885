"""An optional faster decoder for the cold parse: msgspec, when installed
(`pip install 'stree[fast]'`), behind exactly the semantics of stree.format.decode.

The fast decoder only ever answers for a line it reads the way JSON.parse (as stree.format.decode
implements it) does; everything it refuses, and everything it would read differently, goes
to the exact decoder: invalid UTF-8 (pi decodes lossily), lone surrogates, NaN-like tokens,
numbers out of a double's range or integers past Python's digit limit, deep nesting, a BOM.
Duplicate keys (the last wins, in the first one's place), `__proto__` keys, big integers and
JSON's own whitespace read the same in both.
tests/unit/test_fastjson.py fuzzes the equivalence.

    STREE_JSON=pure       never use a fast decoder (also: the fast one is not installed)
    unset                 msgspec when it is installed and the work is long enough to pay for
                          its import (a scan of stree.storage.scan.FAST_MIN_BYTES, or
                          stree.format.decode.FAST_AFTER lines decoded one by one)
    STREE_JSON=msgspec    msgspec whenever it is installed (the tests)
"""

import os

NAMES = ("msgspec",)  # orjson was measured too: it reads an integer beyond 64 bits as a float, and
#                      checking each line for one made it slower than the exact decoder


def _msgspec():
    import msgspec

    return msgspec.json.Decoder().decode, (msgspec.DecodeError, ValueError, RecursionError)


def wanted():
    """What $STREE_JSON asks for: "pure", "msgspec" or "" (the default)."""
    return os.environ.get("STREE_JSON", "").strip().lower()


def pick(want=None):
    """(name, loads, errors) of the fast decoder to use, or None: `want` (else $STREE_JSON)
    names one, "pure" none; by default the first of NAMES that is installed."""
    want = (wanted() if want is None else want).strip().lower()
    if want == "pure":
        return None
    for name in NAMES:
        if want and want != name:
            continue
        try:
            loads, errors = _msgspec()
        except ImportError:
            continue
        return name, loads, errors
    return None
