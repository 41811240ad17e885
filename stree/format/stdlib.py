"""Two C modules of the standard library, imported without the pure-Python packages each loads
for one name (most of a warm command's time is its imports):

- `array` registers its type as a collections.abc.MutableSequence: the `collections` package it
  imports for that costs 1.5 ms (keyword, operator, reprlib, ...). The class lives in
  `_collections_abc`, which every process has loaded at its start (os imports it).
- `_sqlite3` (SQLite's core, without the sqlite3 package: stree.storage.catalog.common) takes
  `functools.lru_cache`, which its connections cache their statements with (Python 3.11 on):
  `functools` and the `collections` it imports cost twice the core's own import. It is given
  the cache that function makes, made by the same C function, `tuple` standing for
  cache_info()'s named tuple (which the core never asks for).

Each is imported with stand-ins in sys.modules while it imports, only where the real package
is not loaded yet; the stand-ins are gone after, and the real package imported later is the
same as ever (an array is a collections.abc.MutableSequence). Where anything goes wrong the
module is imported as usual."""

import sys


def _imported(name, stand_ins):
    """sys.modules[name] once imported with `stand_ins` ({module name: module}) in sys.modules
    meanwhile."""
    sys.modules.update(stand_ins)
    try:
        __import__(name)
    except Exception:
        pass
    finally:
        for key, module in stand_ins.items():
            if sys.modules.get(key) is module:
                del sys.modules[key]
    if name not in sys.modules:
        __import__(name)  # (as usual: with the real packages)
    return sys.modules[name]


def _array():
    if "collections" in sys.modules or "_collections_abc" not in sys.modules:
        from array import array

        return array
    package = type(sys)("collections")  # (a module: types.ModuleType, without importing types)
    package.abc = sys.modules["_collections_abc"]
    return _imported("array", {"collections": package, "collections.abc": package.abc}).array


def sqlite_core():
    """`_sqlite3`, imported."""
    if "functools" in sys.modules or "_sqlite3" in sys.modules:
        import _sqlite3

        return _sqlite3
    import _functools

    def lru_cache(maxsize=128, typed=False):
        def wrap(function):
            return _functools._lru_cache_wrapper(function, maxsize, typed, tuple)
        return wrap

    stand_in = type(sys)("functools")
    stand_in.lru_cache = lru_cache
    return _imported("_sqlite3", {"functools": stand_in})


def __getattr__(name):
    """`from stree.format.stdlib import array`: the class, imported at the first such import (a
    grep, which needs only the SQLite core, imports no array)."""
    if name == "array":
        global array
        array = _array()
        return array
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
