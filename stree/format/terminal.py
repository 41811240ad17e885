"""Text made safe to print on a terminal (session text is untrusted)."""

import re
import sys

# Characters that could act on a terminal: C0 controls (but \n and \t), DEL, C1
# controls, bidi overrides that reorder what follows them, and lone surrogates
# (from \ud800 escapes in JSON) that no terminal encoding can carry.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                     "\ud800-\udfff]")
_UNSAFE_ONELINE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape_char(m):
    c = m.group(0)
    o = ord(c)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def inert(text, oneline=False):
    """Session text made safe to print: control and bidi characters become visible escapes."""
    if not isinstance(text, str):
        text = str(text)
    if text.isprintable():  # no control, format (bidi) or surrogate character: nothing to escape
        return text
    return (_UNSAFE_ONELINE if oneline else _UNSAFE).sub(_escape_char, text)


def write(text):
    """Text to stdout; what the terminal's encoding cannot carry is replaced, not an error."""
    try:
        sys.stdout.write(text)
    except UnicodeEncodeError:
        sys.stdout.flush()  # keep the order of what was written before
        sys.stdout.buffer.write(text.encode(sys.stdout.encoding or "utf-8", errors="replace"))
