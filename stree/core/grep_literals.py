"""`stree grep -E`: the substrings any match of a Python regular expression must contain, by
which the catalogue's word index narrows the entries a pattern is matched against
(stree.core.grep_match.Pattern.literals; a plain pattern is its own literal)."""

_META = set(".^$*+?{}[]()|\\")
_BOUNDS = r"\{(\d*)(?:,(\d*))?\}"


def required_literals(pattern):
    """Substrings any match of a Python regular expression must contain (conservative: an
    alternation at the top gives none; groups, classes and escapes other than a quoted
    punctuation character cut the runs; a character made optional by ?, * or {0 is left out)."""
    import re

    bounds_at = re.compile(_BOUNDS).match
    if _top_level_bar(pattern) or re.search(r"\(\?[a-zA-Z]*x", pattern):
        return []  # (verbose mode: spaces in the pattern are not literal)
    runs, cur = [], []
    i, n = 0, len(pattern)

    def cut():
        if cur:
            runs.append("".join(cur))
            cur.clear()

    while i < n:
        ch = pattern[i]
        if ch == "\\":
            nxt = pattern[i + 1] if i + 1 < n else ""
            if nxt and not nxt.isalnum() and nxt < "\x80":
                char, i = nxt, i + 2
            else:  # a class, an anchor, or a character spelled by its code or name: no literal
                cut()
                i = _escape_end(pattern, i)
                continue
        elif ch in "[(":  # a class or a group: no literal runs through it
            cut()
            i = (_skip_class if ch == "[" else _skip_group)(pattern, i)
            continue
        elif ch == "{":
            cut()
            bounds = bounds_at(pattern, i)
            i = bounds.end() if bounds else i + 1
            continue
        elif ch in _META:
            cut()
            i += 1
            continue
        else:
            char, i = ch, i + 1
        quant = pattern[i] if i < n else ""
        if quant == "{":
            bounds = bounds_at(pattern, i)
            if bounds and not int(bounds.group(1) or 0):
                cut()  # {0,n} or {,n}: the character may be absent
                continue
        if quant in ("?", "*"):
            cut()
            continue
        cur.append(char)
        if quant in ("+", "{"):
            cut()
    cut()
    return runs


_ESCAPE_DIGITS = {"x": 2, "u": 4, "U": 8}


def _escape_end(pattern, i):
    """Where the escape at pattern[i] (a backslash before a letter or digit) ends: all of
    \x41, \u0041, \U00000041, \N{LATIN CAPITAL LETTER A}, \101 (octal) and \1 / \12
    (back references) is taken, so none of its letters or digits is read as a literal. What
    the escape is not sure to be is taken too (dropping a literal only narrows less)."""
    n = len(pattern)
    letter = pattern[i + 1] if i + 1 < n else ""
    j = i + 2
    if letter in _ESCAPE_DIGITS:
        k = j
        while k < n and k - j < _ESCAPE_DIGITS[letter] and pattern[k] in "0123456789abcdefABCDEF":
            k += 1
        return k
    if letter == "N":
        if pattern[j:j + 1] == "{":
            end = pattern.find("}", j)
            return n if end < 0 else end + 1
        return j
    if letter.isdigit():  # \0, \012 octal; \1..\99 a group; \101 octal: every digit that follows
        while j < n and pattern[j].isdigit():
            j += 1
        return j
    return j


def _top_level_bar(pattern):
    """True when `pattern` has a `|` outside every group and class (an alternation of the whole)."""
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
        elif ch == "[":
            i = _skip_class(pattern, i)
        elif ch == "(":
            i = _skip_group(pattern, i)
        elif ch == "|":
            return True
        else:
            i += 1
    return False


def _skip_class(pattern, i):
    i += 1
    if pattern[i:i + 1] == "^":
        i += 1
    if pattern[i:i + 1] == "]":
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "]":
            return i + 1
        i += 1
    return i


def _skip_group(pattern, i):
    """The index past the group opening at `i` (its classes and escapes skipped whole)."""
    depth = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i = _skip_class(pattern, i)
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i
