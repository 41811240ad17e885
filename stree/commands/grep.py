import click

from .adapter import Place, checked, parameters, question
from .options import output_options
from ..errors import NEGATIVE
from ..output.fields import GREP_FIELDS, describe

GREP = question("grep")


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
other commands take (stree show SESSION:ENTRY, or stree -s SESSION show ENTRY; a session
id holding ':', '/', '%', spaces or control characters is percent-encoded there); MARK is
@ when the entry is on its session's active path (root to the leaf), . when it is on
another branch. A plain PATTERN is a fixed string, matched case-sensitively anywhere in
a line (as git grep -F); -E makes it a Python regular expression. The text searched is
what :/TEXT searches: user and assistant text (thinking too), tool calls (name and
arguments as JSON), tool results, bash executions, custom messages, branch summaries
and compactions. The catalogue's word index narrows the entries; each candidate is
matched by the pattern itself, against the text the catalogue keeps of it. Exit 1 when
nothing matches.

\b
Fields for --json / --format:
{describe(GREP_FIELDS)}""")
@parameters(GREP)
@output_options(GREP_FIELDS)
@click.pass_obj
def command(env, pattern, ignore_case, word, regex, files_only, count, max_count, roles, types, since, until, cwd,
            json_mode, fmt, nul):
    """Search the text of every session (or the one -s names) for lines matching PATTERN."""
    from ..output.grepline import grep_lines
    from ..questions.answers import searched

    given = checked(GREP, dict(ignore_case=ignore_case, word=word, regex=regex, files_only=files_only, count=count,
                               max_count=max_count, roles=roles, types=types, since=since, until=until, cwd=cwd))
    session = str(env.session_path()) if env.session_arg is not None else None
    grep = searched(Place(env), pattern, session=session, agent=env.agent, **given)
    out = env.output(json_mode, fmt, nul, GREP_FIELDS)
    if out.machine:
        for rec in grep.records():
            out.record(rec)
    else:
        for lines in grep_lines(grep, out.style):  # (a session's lines at a time)
            out.lines(lines)
    out.close()
    if not grep.found:
        return NEGATIVE
