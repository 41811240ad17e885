"""Writing results: human (colour, pager, inert text) or machine (--json, --format, -z).

stdout carries results only; everything else goes to stderr.
"""

import os
import re
import sys

from ..errors import UsageError
from ..format.terminal import inert, write

def human_safe(text, color=True):
    """The last guard of human output: only stree's own colour sequences reach the terminal
    (none without colour), whatever a command forgot to pass through inert() (entry ids, for one)."""
    if "\x1b" not in text or not color:
        return inert(text)
    parts = _OWN_SGR.split(text)
    return "".join(part if i % 2 else inert(part) for i, part in enumerate(parts))


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]")


def to_json(obj):
    """Compact JSON like pi's JSON.stringify, with terminal-active characters \\u-escaped.

    Lone surrogates come out as \\udXXX escapes and non-finite numbers (1e400 reads
    as inf) as null, as JSON.stringify writes them: the output is always valid JSON."""
    import json

    try:
        text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(obj), separators=(",", ":"), ensure_ascii=False)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def fast_to_json():
    """to_json, made with msgspec when it is installed (the `fast` extra; STREE_JSON=pure: never):
    the same JSON values, a number perhaps spelled otherwise (1e16 for 1e+16). For many records
    (a page of the MCP tree tool); what msgspec refuses (a lone surrogate) goes through to_json."""
    from ..format.fastjson import wanted

    if wanted() == "pure":
        return to_json
    try:
        import msgspec
    except ImportError:
        return to_json
    encode, unsafe = msgspec.json.Encoder().encode, _JSON_UNSAFE

    def fast(obj):
        try:
            text = encode(obj).decode("utf-8")
        except (TypeError, ValueError, OverflowError):  # (UnicodeEncodeError is a ValueError)
            return to_json(obj)
        return unsafe.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text) if unsafe.search(text) else text
    return fast


def _finite(obj):
    if isinstance(obj, float):
        return obj if obj == obj and obj not in (float("inf"), float("-inf")) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


STYLES = {
    "accent": "36", "success": "32", "muted": "90", "dim": "2", "warning": "33",
    "error": "31", "borderAccent": "36", "customMessageLabel": "35", "bold": "1",
    "id": "33", "header": "1",
}
# what human_safe() lets through: stree's own colour codes (STYLES) and the reset, nothing else
_OWN_SGR = re.compile("(\x1b\\[(?:" + "|".join(sorted(set(STYLES.values()) | {"0"})) + ")m)")


def use_color(choice):
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"


_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}|[{}]")


def compile_format(fmt, fields, exact=False):
    """Check a --format string against the documented fields; return a renderer.
    {field} is a value, {{ and }} are braces, any other brace is an error (exit 2).
    Values are made inert and one-line, or printed `exact`ly (-z into a pipe)."""
    fmt = fmt.replace("\\t", "\t").replace("\\n", "\n").replace("\\0", "\0")
    parts = []  # literal text, and (field name,) tuples
    pos = 0
    for m in _TOKEN.finditer(fmt):
        parts.append(fmt[pos:m.start()])
        token = m.group(0)
        if m.group(1) is not None:
            if m.group(1) not in fields:
                raise UsageError(f"--format: unknown field {{{m.group(1)}}}; fields are: " + ", ".join(fields))
            parts.append((m.group(1),))
        elif token in ("{{", "}}"):
            parts.append(token[0])
        else:
            shown = fmt[max(0, m.start() - 10):m.start() + 10]
            raise UsageError(f"--format: malformed placeholder at character {m.start() + 1} "
                             f"(near {inert(shown, oneline=True)!r})",
                             hint="placeholders are {field}; write {{ and }} for literal braces")
        pos = m.end()
    parts.append(fmt[pos:])
    parts = [p for p in parts if p != ""]

    def value(v):
        if v is None:
            return ""
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (dict, list)):
            return to_json(v)
        return str(v) if exact else inert(str(v), oneline=True)

    def render(record):
        return "".join(p if p.__class__ is str else value(record.get(p[0])) for p in parts)
    return render


class Output:
    """One command's stdout: records in the chosen mode, human lines through a pager."""

    def __init__(self, json_mode=False, fmt=None, nul=False, color="auto", pager=True, fields=None):
        self.json = json_mode
        self.nul = nul
        self.tty = sys.stdout.isatty()
        # -z records into a pipe carry values exactly (paths with newlines survive xargs -0)
        self.format = compile_format(fmt, fields or {}, exact=nul and not self.tty) if fmt is not None else None
        if json_mode and fmt is not None:
            raise UsageError("--json and --format cannot be combined")
        self.color = use_color(color) and not json_mode and fmt is None
        self.pager = pager
        self._lines = []  # human lines for a terminal, held until they pass a screen
        self._pager = None  # then a Pager, which gets every line as it is made
        self.capture = None  # a list to collect what is written to stdout (stree.storage.keptgraph), or None

    @property
    def machine(self):
        return self.json or self.format is not None

    @property
    def end(self):
        return "\0" if self.nul else "\n"

    def record(self, rec, human=None):
        """Emit one record: JSON line, formatted line, or `human` text."""
        if self.json:
            self._emit(to_json(rec))
        elif self.format is not None:
            self._emit(self.format(rec))
        else:
            self._emit(human if human is not None else "")

    def line(self, text=""):
        self._emit(text)

    def text_of(self, rec, human=None):
        """What record(rec, human) writes, its end included (a kept graph's row)."""
        if self.json:
            return to_json(rec) + self.end
        if self.format is not None:
            return self.format(rec) + self.end
        return human_safe(human if human is not None else "", self.color) + self.end

    def put(self, texts):
        """Write texts made by text_of(), as record() would (through the pager on a terminal)."""
        text = "".join(texts)
        if self.pager and self.tty and not self.machine:
            self._screen(text[:-len(self.end)].split(self.end))
            if self.capture is not None:
                self.capture.append(text)
            return
        write(text)
        if self.capture is not None:
            self.capture.append(text)

    def lines(self, texts):
        """Several human lines, written at once (long listings: one write, not one a line)."""
        if self.pager and self.tty:
            self._screen([human_safe(t, self.color) for t in texts])
            return
        end = self.end
        text = "".join(human_safe(t, self.color) + end for t in texts)
        write(text)
        if self.capture is not None:
            self.capture.append(text)

    def style(self, name, text):
        # what is styled is text, never a sequence (an entry id may hold one): only stree adds those
        text = inert(text)
        if not self.color or not name or not text or name not in STYLES:
            return text
        return f"\x1b[{STYLES[name]}m{text}\x1b[0m"

    def segments(self, segs):
        return "".join(self.style(style, inert(text, oneline=True)) for style, text in segs)

    def _emit(self, text):
        if not self.machine:
            text = human_safe(text, self.color)
        if self.pager and self.tty and not self.machine:
            self._screen([text])
        else:
            write(text + self.end)
            if self.capture is not None:
                self.capture.append(text + self.end)

    def _screen(self, lines):
        """Human lines for the terminal: held while they fit its screen (a short answer is
        printed, never paged), then the pager is started and gets each line as it is made, so
        the first screen of a long drawing shows at once, as git's pager does."""
        if self._pager is not None:
            self._pager.write("".join(line + "\n" for line in lines))
            return
        self._lines.extend(lines)
        if len(self._lines) >= _terminal_size().lines - 1:
            held, self._lines = self._lines, []
            self._pager = Pager()
            self._pager.write("".join(line + "\n" for line in held))
            self._pager.flush()  # (the first screen now, not when a buffer fills)

    def close(self):
        if self._pager is not None:
            pager, self._pager = self._pager, None
            pager.close()
            return
        if not self._lines:
            return
        lines, self._lines = self._lines, []
        write("".join(line + self.end for line in lines))


def _char_width(c):
    import unicodedata

    if unicodedata.combining(c):
        return 0
    return 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1


# the characters whose width is not one column: combining marks (U+0300 on) and wide ones
# (U+1100 on), except the box-drawing characters and the ellipsis the graph draws with; a text
# with none of them is as wide as it is long (tested against _char_width in tests/unit)
_NOT_NARROW = re.compile("[^\x00-\u02ff\u2026\u2190-\u21ff\u2500-\u25fc]")


def fit(segments, width):
    """Cut preview segments to `width` terminal columns, ending with '…' when cut."""
    out = []
    used = 0
    for style, text in segments:
        if not _NOT_NARROW.search(text):  # (one column a character: cut by slicing)
            if used + len(text) <= width - 1 or not text:
                out.append((style, text))
                used += len(text)
                continue
            out.append((style, text[:max(0, width - 1 - used)] + "…"))
            return out
        kept = []
        for c in text:
            w = _char_width(c) if not c.isascii() else 1
            if used + w > width - 1:
                kept.append("…")
                out.append((style, "".join(kept)))
                return out
            kept.append(c)
            used += w
        out.append((style, "".join(kept)))
    return out


def display_width(text):
    """Terminal columns `text` takes (wide characters count two)."""
    if text.isascii() or not _NOT_NARROW.search(text):
        return len(text)
    return sum(_char_width(c) for c in text)


def terminal_width():
    return _terminal_size((100, 24)).columns


def _terminal_size(fallback=(80, 24)):
    import shutil  # (not at startup: it imports bz2, lzma, fnmatch)

    return shutil.get_terminal_size(fallback)


class Pager:
    """$STREE_PAGER, $PAGER or `less` (LESS=FRX unless set), fed as the output is made; with
    none (or `cat`), stdout itself. A pager the user quit raises BrokenPipeError at the next
    write (the command stops, as `stree log | head`); stree waits for it before exiting."""

    def __init__(self):
        import atexit

        self.proc = None
        command = os.environ.get("STREE_PAGER") or os.environ.get("PAGER") or "less"
        if command.strip() in ("", "cat"):
            return
        env = dict(os.environ)
        env.setdefault("LESS", "FRX")
        try:
            sys.stdout.flush()
            import subprocess

            self.proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=env)
        except OSError:
            return
        atexit.register(self.close)  # (an error or Ctrl-C while drawing: the pager still ends first)

    def write(self, text):
        if self.proc is None:
            write(text)
            return
        try:
            self.proc.stdin.write(text.encode("utf-8", errors="replace"))
        except (BrokenPipeError, ValueError):  # (ValueError: written after close)
            raise BrokenPipeError() from None

    def flush(self):
        if self.proc is None:
            sys.stdout.flush()
            return
        try:
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            raise BrokenPipeError() from None

    def close(self):
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
        while True:
            try:
                proc.wait()
                return
            except KeyboardInterrupt:  # (Ctrl-C in the pager is the pager's: wait until it ends)
                continue
