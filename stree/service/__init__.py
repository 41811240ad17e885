"""Requests and their answers, for `stree serve` (pi's RPC framing, JSON Lines) and any other
front end (MCP): above core, writing and output, below the commands. A front end reads
requests and hands each to handlers.handle with a state.Served; server.serve is the JSON
Lines loop."""
