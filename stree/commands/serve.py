import click


@click.command("serve", epilog="""\b
Examples:
  stree serve --mcp                  MCP tools over stdio, for an agent (read only)
  stree serve --mcp --allow-writes   also set_label, checkout and set_name
  stree -s demo serve --mcp          the bundled demo as the default session

\b
MCP tools (each returns the data of the CLI's --json for the same question):
  list_sessions   stree ls --json [--all], filtered by words (query)
  log             stree log --json [REV|RANGE] [-n N] [--filter F] [--search WORDS]
  tree            stree log --graph --json [--filter F] [--search WORDS]
  show            stree show --json [REV...]
  context         stree context --json [REV]
  labels          stree label --json
With --allow-writes (appended under the lock, as the CLI writes):
  set_label       stree label NAME [REV] [-f]    (a blank NAME clears)
  checkout        stree checkout REV [--exact] [--label NAME]   (hooks run; no summary)
  set_name        stree name NAME                (a blank NAME clears)
Every tool takes `session` (a path or id prefix, as -s; default: serve's -s, else
the newest session here). A bad revision or unknown session is a tool error
(isError) with stree's message; the server goes on.

\b
The MCP server needs the MCP Python SDK: pip install 'stree[mcp]'. Without it,
`stree serve --mcp` exits with status 2 and says so.""")
@click.option("--mcp", "mcp", is_flag=True, help="Serve the Model Context Protocol on stdin/stdout.")
@click.option("--allow-writes", is_flag=True, help="With --mcp: also offer the tools that append to sessions.")
@click.pass_obj
def command(env, mcp, allow_writes):
    """Serve stree's operations to another program over stdin/stdout."""
    from ..errors import UsageError

    if not mcp:
        raise UsageError("stree serve needs --mcp (for now)", hint="stree serve --mcp")
    from ..mcp.server import serve
    from ..mcp.tools import Workspace

    serve(Workspace(env.session_arg, env.agent_dir, env.session_dir, env.cwd, env.no_cache, allow_writes, env.agent))
