import os

import click

from .options import output_options
from ..errors import NEGATIVE, StreeError
from ..format.terminal import inert
from ..output.fields import GREP_FIELDS, describe

ROLES = ("user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary", "compactionSummary")
TYPES = ("message", "compaction", "branch_summary", "custom_message")


@click.command("grep", epilog=f"""\b
Examples:
  stree grep parse_line              every line of every session that says parse_line
  stree grep -i -w csv --role user   what you asked about, in any case, as a word
  stree grep -E 'parse_(line|rows)\\(' --since 2026-01-01
  stree grep -l csv                  the sessions (id prefixes) that mention it
  stree -s demo grep -c quote        how many lines of the demo say quote
  stree show "$(stree grep --format '{{rev}}' -m1 splitter)"   the entry in full

\b
Each match is printed as SESSION:ENTRY MARK ROLE: LINE. SESSION:ENTRY is a revision
other commands take (stree show SESSION:ENTRY, or stree -s SESSION show ENTRY); MARK is
@ when the entry is on its session's active path (root to the leaf), . when it is on
another branch. A plain PATTERN is a fixed string, matched case-sensitively anywhere in
a line (as git grep -F); -E makes it a Python regular expression. The text searched is
what :/TEXT searches: user and assistant text (thinking too), tool calls (name and
arguments as JSON), tool results, bash executions, custom messages, branch summaries
and compactions. The catalogue's word index narrows the entries read; each candidate is
read again from its file and matched by the pattern itself. Exit 1 when nothing matches.

\b
Fields for --json / --format:
{describe(GREP_FIELDS)}""")
@click.argument("pattern")
@click.option("-i", "--ignore-case", is_flag=True, help="Ignore case.")
@click.option("-w", "--word-regexp", "word", is_flag=True, help="Match whole words only.")
@click.option("-E", "--extended-regexp", "regex", is_flag=True, help="PATTERN is a (Python) regular expression.")
@click.option("-l", "--files-with-matches", "list_sessions", is_flag=True,
              help="Print only the sessions that match (shortest id prefix; {path} with --format).")
@click.option("-c", "--count", is_flag=True, help="Print the number of matching lines per session.")
@click.option("-m", "--max-count", type=click.IntRange(min=1), metavar="N", help="Stop after N matching lines in all.")
@click.option("--role", "roles", multiple=True, type=click.Choice(ROLES), metavar="ROLE",
              help="Only messages of this role (user, assistant, toolResult, bashExecution, custom, "
                   "branchSummary, compactionSummary); repeatable.")
@click.option("--type", "types", multiple=True, type=click.Choice(TYPES), metavar="TYPE",
              help="Only entries of this type (message, compaction, branch_summary, custom_message); repeatable.")
@click.option("--since", metavar="DATE", help="Only entries written at or after DATE (2026-01-31, 3d, 2 weeks ago).")
@click.option("--until", metavar="DATE", help="Only entries written at or before DATE.")
@click.option("--cwd", "cwd_filter", metavar="DIR", help="Only sessions whose working directory is DIR.")
@output_options(GREP_FIELDS)
@click.pass_obj
def command(env, pattern, ignore_case, word, regex, list_sessions, count, max_count, roles, types, since, until,
            cwd_filter, json_mode, fmt, nul):
    """Search the text of every session (or the one -s names) for lines matching PATTERN."""
    from ..core.grep import Pattern, entry_filter, parse_when, search
    from ..core.store import resolved

    if list_sessions and count:
        raise StreeError("-l and -c do not go together", code=2)
    pat = Pattern(pattern, regex=regex, ignore_case=ignore_case, word=word)
    keep = entry_filter(roles, types, parse_when(since, "--since") if since else None,
                        parse_when(until, "--until") if until else None)
    sessions, candidates = _candidates(env, pat)
    if cwd_filter is not None:
        want = resolved(os.path.expanduser(cwd_filter))
        sessions = {g: r for g, r in sessions.items() if _cwd_of(r) is not None and resolved(_cwd_of(r)) == want}
    from ..core.store import shortest_prefixes

    short = shortest_prefixes([r["id"] or "" for r in sessions.values()])
    out = env.output(json_mode, fmt, nul, GREP_FIELDS)
    found = 0
    per_session = {}
    for m in search(pat, sessions, candidates, keep):
        found += 1
        sid = m.session["id"] or ""
        if list_sessions or count:
            per_session[m.session["gen"]] = per_session.get(m.session["gen"], 0) + 1
            if list_sessions:
                if per_session[m.session["gen"]] == 1:
                    out.record(_session_record(m.session, 1), short.get(sid, sid))
            elif max_count and found >= max_count:
                break
            continue
        rec = {"session": sid, "path": m.session["path"], "agent": m.session["agent"], "state": m.session["state"],
               "entry": m.entry, "rev": f"{sid}:{m.entry}", "role": m.kind if m.type == "message" else None,
               "type": m.type, "onPath": m.on_path, "lineNumber": m.number, "line": m.line,
               "timestamp": _iso(m.ts)}
        human = None
        if not out.machine:
            mark = "@" if m.on_path else "."
            human = (f"{out.style('id', inert(short.get(sid, sid), True))}:{out.style('id', inert(m.entry or '', True))} "
                     f"{out.style('accent', mark)} {out.style('muted', m.kind)}: {inert(m.line, True)}")
        out.record(rec, human)
        if max_count and found >= max_count:
            break
    if count:
        for gen, row in sessions.items():
            if gen in per_session:
                sid = row["id"] or ""
                out.record(_session_record(row, per_session[gen]), f"{short.get(sid, sid)}:{per_session[gen]}")
    out.close()
    if not found:
        raise SystemExit(NEGATIVE)


def _session_record(row, n):
    return {"session": row["id"], "path": row["path"], "agent": row["agent"], "state": row["state"], "count": n,
            "rev": row["id"]}


def _cwd_of(row):
    cwd = row["cwd"]
    return cwd if isinstance(cwd, str) and cwd else None


def _iso(ms):
    if ms is None:
        return None
    from datetime import datetime, timezone

    dt = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def _files(env):
    """(path, agent, state) of the sessions searched, and the directories listed whole."""
    from ..core.store import agent_files, agent_of, selected_agents

    if env.session_arg is not None:
        path = str(env.session_path())
        return [(path, *agent_of(path))], set()
    found = agent_files(selected_agents(env.agent), env.agent_dir)
    return [(p, a, s) for p, a, s, _ in found], {os.path.dirname(p) for p, *_ in found}


def _candidates(env, pat):
    """(gen -> session row, newest first; candidate entries) from the catalogue, or from
    the files themselves without one."""
    from ..core import catalog
    from ..core.grep import direct

    files, listed = _files(env)
    if catalog.enabled(env.no_cache):
        from ..storage.catalog import Unavailable

        try:
            cat, rows = catalog.sync([(p, a, s, os.path.dirname(os.path.abspath(p))) for p, a, s in files],
                                     prune_roots=listed)
            try:
                live = [r for r in rows.values() if r["ok"]]
                live.sort(key=lambda r: catalog.record(r)["_sort"], reverse=True)
                sessions = {r["gen"]: r for r in live}
                query = pat.query(cat.terms)
                candidates = [] if query is False else cat.matching(query, sessions)
                return sessions, candidates
            finally:
                cat.close()
        except Unavailable as e:
            from ..storage.cachedir import debug

            debug(f"no catalogue: {e}")
    sessions, candidates = direct(files)
    return sessions, candidates
