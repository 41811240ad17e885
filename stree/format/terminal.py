"""Text made safe to print on a terminal (session text is untrusted)."""

import sys

# Characters that could act on a terminal: C0 controls (but \n and \t), DEL, C1
# controls, bidi overrides that reorder what follows them, and lone surrogates
# (from \ud800 escapes in JSON) that no terminal encoding can carry: code point ranges,
# escaped by str.translate (tables made when first needed: a plain grep imports no re).
_UNSAFE = ((0x00, 0x08), (0x0B, 0x1F), (0x7F, 0x9F), (0x61C, 0x61C), (0x200E, 0x200F), (0x202A, 0x202E),
           (0x2066, 0x2069), (0xD800, 0xDFFF))
_ONELINE = ((0x09, 0x0A),)  # also unsafe on one line: \t and \n
_TABLES = {}


def _escape(o):
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def _table(oneline):
    table = _TABLES.get(oneline)
    if table is None:
        table = _TABLES[oneline] = {o: _escape(o) for lo, hi in _UNSAFE + (_ONELINE if oneline else ())
                                    for o in range(lo, hi + 1)}
    return table


def inert(text, oneline=False):
    """Session text made safe to print: control and bidi characters become visible escapes."""
    if not isinstance(text, str):
        text = str(text)
    if text.isprintable():  # no control, format (bidi) or surrogate character: nothing to escape
        return text
    return text.translate(_table(oneline))


def write(text):
    """Text to stdout; what the terminal's encoding cannot carry is replaced, not an error."""
    try:
        sys.stdout.write(text)
    except UnicodeEncodeError:
        sys.stdout.flush()  # keep the order of what was written before
        sys.stdout.buffer.write(text.encode(sys.stdout.encoding or "utf-8", errors="replace"))
