import click

from .options import output_options
from ..core.grep_match import ROLES, text_types
from ..errors import NEGATIVE
from ..output.fields import GREP_FIELDS, describe

TYPES = text_types()


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
              help=f"Only entries of this type ({', '.join(TYPES)}); repeatable.")
@click.option("--since", metavar="DATE", help="Only entries written at or after DATE (2026-01-31, 3d, 2 weeks ago).")
@click.option("--until", metavar="DATE", help="Only entries written at or before DATE.")
@click.option("--cwd", "cwd_filter", metavar="DIR", help="Only sessions whose working directory is DIR.")
@output_options(GREP_FIELDS)
@click.pass_obj
def command(env, pattern, ignore_case, word, regex, list_sessions, count, max_count, roles, types, since, until,
            cwd_filter, json_mode, fmt, nul):
    """Search the text of every session (or the one -s names) for lines matching PATTERN."""
    from ..core.grep_sessions import Grep
    from ..output.grepline import grep_line

    grep = Grep(pattern, regex=regex, ignore_case=ignore_case, word=word, roles=roles, types=types, since=since,
                until=until, cwd=cwd_filter, files_only=list_sessions, count=count, max_count=max_count,
                session_path=env.session_path() if env.session_arg is not None else None, agent=env.agent,
                agent_dir=env.agent_dir, no_cache=env.no_cache)
    out = env.output(json_mode, fmt, nul, GREP_FIELDS)
    for rec, m in grep.records(machine=out.machine):
        out.record(rec, None if out.machine else grep_line(grep, rec, m, out.style, count))
    out.close()
    if not grep.found:
        return NEGATIVE
