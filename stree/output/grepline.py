"""The human line of `stree grep` (one per match, or per session with -l / -c), as the
command prints it through click and as stree.fastgrep prints it without."""

from ..core.grep_sessions import session_part
from ..format.terminal import inert


def grep_line(grep, rec, m, style=None, count=False):
    """SESSION:ENTRY MARK ROLE: LINE for a Match `m`; SESSION (-l) or SESSION:COUNT (-c) for a
    session record `rec` (m None). `style(name, text)`: the output's colours (inert text), or
    None for none (the same line without a call per part: stree.fastgrep's thousands)."""
    if m is None:
        short = grep.short_id(rec["session"] or "")
        return f"{inert(short, True)}:{rec['count']}" if count else inert(short, True)
    short = grep.short_id(m.session["id"] or "")
    part = _PARTS.get(short)
    if part is None:  # (SESSION:ENTRY: an id holding ':', '/', ... percent-encoded)
        part = _PARTS[short] = inert(session_part(short), True)
    mark = "@" if m.on_path else "."
    if style is None:
        return f"{part}:{inert(m.entry or '', True)} {mark} {inert(m.kind)}: {inert(m.line, True)}"
    return (f"{style('id', part)}:{style('id', inert(m.entry or '', True))} "
            f"{style('accent', mark)} {style('muted', m.kind)}: {inert(m.line, True)}")


_PARTS = {}  # a session id's shortest prefix -> the SESSION part of SESSION:ENTRY, as printed
