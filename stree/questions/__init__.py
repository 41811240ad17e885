"""The read questions (log rows, tree, show, context, labels, rev-parse, grep, the session list,
stats), each defined once with its arguments, their validation and its --json records (table.py;
their answers: answers.py, stats.py; what a question is: base.py). `stree serve`
(service/queries.py), MCP (mcp/reads.py) and the CLI (the read commands through
commands/adapter.py; commands/ask.py for a question with no command of its own) are adapters over
them: a new read question offered by all three is one Question in table.py (with serve's schema
and the docs beside it)."""


def questions():
    """Every read question, in the order MCP lists its tools."""
    from .table import QUESTIONS

    return QUESTIONS
