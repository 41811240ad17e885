"""The human lines of `stree grep` (one per match, or per session with -l / -c), as the
command prints them through click and as stree.fastgrep prints them without."""

from ..core.grep_sessions import session_part
from ..format.terminal import inert


def grep_lines(grep, style=None):
    """The human lines of `grep` (stree.core.grep_sessions.Grep), a list per session as found:
    SESSION:ENTRY MARK ROLE: LINE per matching line, or SESSION (-l) / SESSION:COUNT (-c) per
    matching session. `style(name, text)`: the output's colours (inert text), or None for none
    (the same lines without a call per part: stree.fastgrep's thousands)."""
    if grep.files_only or grep.count:
        for rec in grep.records():
            short = inert(grep.short_id(rec["session"] or ""), True)
            yield [f"{short}:{rec['count']}" if grep.count else short]
        return
    for row, hits in grep.hits():
        yield session_lines(grep, row, hits, style)


def session_lines(grep, row, hits, style=None):
    """The lines of a session's hits (grep.hits()): its SESSION part made once, each entry's
    ENTRY, MARK and ROLE once, and a line's text escaped only when it needs it."""
    # (SESSION: the id's shortest prefix, percent-encoded when it holds ':', '/', ...)
    part = inert(session_part(grep.short_id(row["id"] or "")), True)
    if style is not None:
        part = style("id", part)
    out = []
    append = out.append
    for c, on_path, lines in hits:
        entry, role = c[6] or "", c[4]  # (ROLE: a message's role, another entry's type)
        if entry.__class__ is not str or not entry.isprintable():  # (an id the file wrote as a number...)
            entry = inert(entry, True)
        if style is not None:
            role = style("muted", role)
        elif role.__class__ is not str or not role.isprintable():
            role = inert(role)
        mark = "@" if on_path else "."
        if style is not None:
            entry, mark = style("id", entry), style("accent", mark)
        for _, line in lines:
            append(f"{part}:{entry} {mark} {role}: {line if line.isprintable() else inert(line, True)}")
    return out
