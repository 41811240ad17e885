"""The words a grep pattern must contain (core.grep_literals.required_literals), by which the
catalogue narrows the sessions it reads: never a word a match can lack. Random patterns over a
small alphabet of literals and regex syntax, random texts, and re itself as the judge."""

import re
import warnings

from hypothesis import given, settings, strategies as st

from stree.core.grep_literals import required_literals

PIECES = ["a", "b", "ab", "ba", "x", "|", "(", ")", "(?:", "[", "]", "[^", "^", "]", "\\", "\\(", "\\|",
          "\\[", "\\]", "?", "*", "+", "{0,2}", "{2}", ".", "-", "(?i)", "\\b", "\\d", " "]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=10), st.lists(st.text("abx|()[]- 1", max_size=12), max_size=6))
def test_every_match_holds_every_required_literal(pieces, texts):
    pattern = "".join(pieces)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (re's FutureWarning about nested sets)
            compiled = re.compile(pattern)
    except (re.error, OverflowError):
        return
    literals = required_literals(pattern)
    for text in texts + [lit for lit in literals] + ["".join(literals)]:
        m = compiled.search(text)
        if m is not None:
            flags = compiled.flags & re.IGNORECASE
            hay = text.lower() if flags else text
            assert all((lit.lower() if flags else lit) in hay for lit in literals), (pattern, text, literals)


def test_a_class_opening_with_a_bracket_does_not_end_a_group():
    # `[^]|]` is one class (a `]` first in a class is literal): the bar is inside the group
    assert required_literals("(a[^]|]b)zzz") == ["zzz"]
    assert required_literals("([]|]b)zzz") == ["zzz"]
    assert required_literals("([^]):]ab)?zzz") == ["zzz"]  # the group is optional: its `ab` is not required
    assert required_literals("a|zzz") == []  # an alternation of the whole: nothing required
