"""Regular expressions compiled when first used: `re` (with enum) costs a patched `log --graph`
(stree.output.keptgraph.patch) about as much as drawing its new rows, and most commands that
import a module with a pattern never match it."""


def pattern(source):
    """A function that returns `source` compiled (re.compile, once, at its first call)."""
    found = []

    def compiled():
        if not found:
            import re

            found.append(re.compile(source))
        return found[0]
    return compiled
