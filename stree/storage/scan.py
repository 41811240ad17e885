"""Scanning the lines of a session file into its Nodes, as pi reads them."""

import os
import sys

from ..errors import BadFile
from ..format import decode, fastjson
from ..format.decode import FAST_INT_DIGITS as _FAST_INT_DIGITS, JS_WHITESPACE, decode_exact, make_scanner
from ..format.entry import entry_fields
from ..format.header import read_header
from . import register_counters
from .nodes import Columns

BLOCK = 1 << 20  # bytes read at a time
STATS = register_counters("scan", {"parsed": 0, "workers": 0, "decoded": 0})  # lines handed to the JSON decoder (by this process
#   and its parse workers), workers forked, entries' content loaded (Session.load) (STREE_DEBUG_STATS)
_scan_once = make_scanner()
# the line scanner's fast path: Python's own int() (C speed), limited to 3998 digits while it
# runs so that it yields an int exactly where _parse_int would; longer numbers take the slow path
_fast_scan_once = make_scanner(exact=False)  # (the C scanners, without the json package: stree.format.decode)
_SPACE = b" \t\n\r\x0b\x0c"


def _line_max(default=256 << 20):
    """STREE_LINE_MAX (bytes; tests set a small one), else `default`."""
    value = os.environ.get("STREE_LINE_MAX", "")
    return int(value) if value.isdigit() and int(value) > 0 else default


LINE_MAX = _line_max()  # bytes: a longer line is skipped with a warning (far above any real entry,
#                         images included; below the 512 MiB strings of JavaScript, which pi reads lines into)


def scan_range(s, fd, start, stop, end):
    """Parse bytes [start, stop) in this process; `end` is where the whole range ends
    (its last line may be torn, and is trimmed as pi trims the end of the file).

    Only the bytes of each new block are searched for a newline, and a line is joined
    once, when it ends: a huge line costs its length, not its length squared. A line
    longer than LINE_MAX is not kept at all; it is skipped and reported malformed. A block
    is parsed where it was read, up to its last newline; the line it cut starts the next
    block (read again: bytes of an append-only file do not change), not joined to it."""
    pos = start
    carry = []  # the blocks of a line not ended yet
    carried = 0
    carry_at = start  # where that line starts
    skipping = False  # inside a line longer than LINE_MAX: read to its end, nothing kept
    while pos < stop:
        block = os.pread(fd, min(BLOCK, stop - pos), pos)
        if not block:
            break  # the file shrank under us: parse what we have
        base = pos
        pos += len(block)
        last = pos >= stop
        if skipping:
            nl = block.find(b"\n")
            if nl < 0 and not last:
                continue
            _too_long(s)
            skipping = False
            if nl < 0:
                break
            block = block[nl + 1:]
            base += nl + 1
            carry_at = base
            if not block:
                continue
        nl = block.rfind(b"\n")
        if nl < 0 and not last:
            carry.append(block)
            carried += len(block)
            if carried > LINE_MAX:
                carry, carried, skipping = [], 0, True
            continue
        cut = len(block) if last else nl + 1
        if carry:
            scan(s, b"".join(carry) + block[:cut], carry_at, end, s.line)
            carry, carried = [], 0
        else:
            scan(s, block, base, end, s.line, cut)  # (its lines up to the last newline: no copy)
        pos = carry_at = base + cut  # (a line the block cut is read again with the next block)
    if skipping:
        _too_long(s)


def _too_long(s):
    s.line += 1
    s.malformed.append((s.line, f"line longer than {LINE_MAX >> 20} MiB (not read)"))


def scan(s, data, base, size, line=None, limit=None):
    """Parse the lines of `data` (file bytes from offset `base`; the file is `size`
    bytes long), or of its first `limit` bytes, into `s`, continuing its line and object
    counters."""
    line = s.line if line is None else line
    index = s.index
    part = Columns()
    scan_once = _fast_scan_once
    fields = entry_fields
    fast = _fast_decoder(size - base)
    digits = getattr(sys, "get_int_max_str_digits", None)
    if digits is None:
        scan_once = _scan_once
    else:
        old_digits = digits()
        sys.set_int_max_str_digits(_FAST_INT_DIGITS)
    try:
        line, index, parsed = _scan(s, data, base, size, line, index, part, scan_once, fields,
                                    old_digits if digits is not None else None, fast,
                                    len(data) if limit is None else limit)
    finally:
        if digits is not None:
            sys.set_int_max_str_digits(old_digits)
    s.nodes.add(part)
    s.line = line
    s.index = index
    STATS["parsed"] += parsed


FAST_MIN_BYTES = 8 << 20  # importing msgspec costs ~11 ms (after click), it saves ~3 ms a MiB: a
#                           smaller scan (appended lines, a short session) keeps the exact decoder


def _fast_decoder(nbytes):
    """The fast decoder's (loads, errors), or None: not installed, turned off, or not worth its
    import for `nbytes` left to scan (the one choice stree.format.decode makes for every decode)."""
    if decode.PICKED:
        return decode.PICKED[0]
    if nbytes < FAST_MIN_BYTES and "msgspec" not in sys.modules and fastjson.wanted() != "msgspec":
        return None
    return decode.fast_decoder(now=True)


def _scan(s, data, base, size, line, index, part, scan_once, fields, outer_digits, fast, end_all):
    ids, parents, types, roles, stamps = part.id, part.parent, part.type, part.role, part.ts
    offsets, lengths, lines, indexes, auxes, hiddens = part.offset, part.length, part.line, part.index, \
        part.aux, part.hidden
    malformed = s.malformed
    keep = s.keep
    v2 = s.version >= 2
    parsed = 0
    pos = 0
    if end_all:
        s.ends_with_newline = data.endswith(b"\n", 0, end_all)
    find = data.find
    # pi (1.5) splits the file on "\n" and JSON.parse's each line as it is: a BOM or other
    # Unicode space around a line (even the first or the last) makes it malformed
    last = base + end_all == size
    while pos < end_all:
        end = find(b"\n", pos, end_all)
        if end < 0:
            end = end_all
        line += 1
        start = pos
        pos = end + 1
        raw = data[start:end]
        offset = base + start
        length = end - start
        if not raw or raw[0] in _SPACE or raw[-1] in _SPACE:
            if not raw.strip():
                continue
        parsed += 1
        obj = text = None
        if fast is not None:  # msgspec or orjson: refuses whatever the exact decoder must read
            try:
                obj = fast[0](raw)
            except fast[1]:
                obj = None
        if obj is None:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = None
        if text is not None:
            try:
                obj, stop = scan_once(text, 0)
                if stop != len(text):
                    obj = None
            except (StopIteration, ValueError, RecursionError, SystemError):  # (SystemError: decode.make_scanner)
                obj = None
        if obj is None:  # the slow path decides, with pi's error
            try:
                if outer_digits is None:
                    obj = decode_exact(raw)
                else:  # with the caller's int limit, not the fast path's
                    sys.set_int_max_str_digits(outer_digits)
                    try:
                        obj = decode_exact(raw)
                    finally:
                        sys.set_int_max_str_digits(_FAST_INT_DIGITS)
            except ValueError as e:
                if not raw.decode("utf-8", errors="replace").strip(JS_WHITESPACE):
                    continue  # only Unicode spaces: pi's line.trim() skips the line too
                reason = "torn last line" if end == end_all and last \
                    and not data.endswith(b"\n", 0, end_all) else f"invalid JSON ({str(e).split(':')[0]})"
                malformed.append((line, reason))
                continue
        if obj.__class__ is not dict:
            if obj is None or obj is False or obj == "" or (obj.__class__ in (int, float) and obj == 0):
                malformed.append((line, "not a JSON object"))
                continue  # pi (1.5) drops a falsy value: it is not counted
            if s.header is None and not s.allow_headerless:
                raise BadFile(f"{s.path}: line {line} is not a session header; this is not a pi session file",
                              hint="a session file starts with {\"type\":\"session\",...}")
            malformed.append((line, "not a JSON object"))
            index += 1  # pi keeps any other JSON value in its list, so v1 indexes count it
            continue
        if s.header is None:
            s.line, s.index = line, index
            index = read_header(s, obj, line, index)
            v2 = s.version >= 2
            if not s.headerless:
                continue  # (a headerless file: this first object is an entry, read below)
        f = fields(obj)
        if f is None:
            index += 1
            malformed.append((line, "entry without a type"))
            continue
        id, parent, etype, role, ts, aux, hidden = f
        if etype == "session":
            malformed.append((line, "second session header"))
            index += 1
            continue
        if v2:
            if id.__class__ is not str:
                index += 1
                malformed.append((line, "entry without an id"))
                continue
            if not (parent is None or parent.__class__ is str):
                parent = None
        ids.append(id)
        parents.append(parent)
        types.append(etype)
        roles.append(role)
        stamps.append(ts)
        offsets.append(offset)
        lengths.append(length)
        lines.append(line)
        indexes.append(index)
        auxes.append(aux)
        hiddens.append(hidden)
        if keep is not None:
            keep.append(obj)
        index += 1
    return line, index, parsed
