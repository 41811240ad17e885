"""`stree serve --mcp`: stree's read operations (and, with --allow-writes, label, checkout
and name) as MCP tools over stdio, for agents that look up their own past sessions.

    tools.py    what a tool is (name, description, input schema, a function from arguments
                to the records the CLI's --json prints) and the Workspace; no SDK import
    reads.py    the read tools (list_sessions, log, tree, show, context, labels)
    writes.py   the write tools (label, checkout, name), through stree.writing
    server.py   the MCP SDK glue (imported only when the server starts: `pip install 'stree[mcp]'`)
    stdio.py    the messages' lines on stdin/stdout (each answer written as the bytes pydantic makes)

A tool's result is the data of the matching CLI command's --json, built by the same core and
output functions, sent as JSON text and again as structuredContent (tree's pages: the text
alone, sent once); an error (a bad revision, an unknown session) is a tool error carrying
stree's message, never the end of the server.
"""
