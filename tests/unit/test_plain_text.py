"""What the plain grep computes without the modules it no longer imports is what they compute:
inert (stree.format.terminal, by str.translate) escapes exactly the characters of its regular
expression, and sessionfiles.path_text spells a path as pathlib does."""

import re
from pathlib import Path

from stree.core.sessionfiles import path_text
from stree.format.terminal import inert

# the characters inert escapes, as the regular expressions it was written with say them
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
UNSAFE_ONELINE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def by_regex(text, oneline=False):
    if text.isprintable():
        return text
    escape = lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}"  # noqa: E731
    return (UNSAFE_ONELINE if oneline else UNSAFE).sub(escape, text)


def test_inert_escapes_every_code_point_as_its_regular_expression_does():
    for oneline in (False, True):
        wrong = [hex(o) for o in range(0x110000) if inert(chr(o), oneline) != by_regex(chr(o), oneline)]
        assert wrong == []
    text = "tab\there\nline \x1b[31mred\x1b[0m \u202eevil\u202c \ud800 caf\u00e9 \u00a0nbsp \u2028"
    for oneline in (False, True):
        assert inert(text, oneline) == by_regex(text, oneline)


def test_path_text_is_pathlibs_spelling():
    for text in ["", ".", "/", "//", "///", "a", "a/", "./a", "a/./b", "a//b", "/a/../b", "//a/b", "///a/./",
                 "../x", "a/b/..", "~x", "/.", "./", "/home/dev/.pi/agent", "/tmp/x//.pi/./agent/"]:
        assert path_text(text) == str(Path(text)), text
