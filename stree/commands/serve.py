import click

from .options import MODEL_FLAGS, model_options, warn_user


@click.command("serve", epilog="""\b
Examples:
  stree serve -s demo                          serve the bundled demo (Ctrl-D ends it)
  echo '{"id":"1","type":"get_tree"}' | stree serve   one request: the tree of the newest session here
  stree serve --provider openai --base-url http://localhost:11434/v1 --model llama3   summaries by a local model
  printf '%s\\n' '{"type":"get_state"}' '{"type":"log","maxCount":2}' | stree -s demo serve   two answers
  stree serve --mcp                            MCP tools over stdio, for an agent (read only)
  stree serve --mcp --allow-writes             also set_label, checkout and set_name

\b
Requests (one JSON object per line; `id` is optional and repeated in the response):
  pi 1.6.0's   get_state get_messages get_last_assistant_text get_fork_messages
               get_entries{since} get_tree{lightweight} get_session_stats
               export_html{outputPath,overwrite} switch_session{sessionPath} fork{entryId} clone
               set_session_name{name}
  pi PR #1762  list_sessions{scope} navigate_tree{targetId,summarize,customInstructions,
               replaceInstructions,label} set_label{entryId,label} abort_branch_summary
               rename_session{sessionPath,name} delete_session{sessionPath,confirm}
  pi's         abort
  stree's      log{revision,graph,filter,search,maxCount,since,until,roles,models,
               reverse} show{revisions} rev_parse{revisions,verify} context{revision}
               stats{revision,all,since,until}
               grep{pattern,ignoreCase,word,regex,filesOnly,count,maxCount,roles,types,
               since,until,cwd,agent,session}
Responses: {"id", "type": "response", "command", "success": true, "data"} or
{"success": false, "error", "errorCode"}; errorCode is one of parse, unknown_command,
bad_params, not_found, ambiguous, bad_file, model, conflict, busy, cancelled, timeout,
too_large, internal. {"type": "abort"} is answered at once: the request under way fails
(cancelled), as one past STREE_REQUEST_TIMEOUT (default 300 s) does (timeout).
Events: {"type": "entries_appended", "sessionFile", "ids", "leafId"} when entries are
appended to the served session; {"type": "watch_stopped", "sessionFile", "error"}.
The JSON Schema of every request and response: stree/data/serve.schema.json; see stree-serve(1).

\b
navigate_tree with summarize asks a model as `stree checkout --summarize` does (the
model options below, STREE_PROVIDER/STREE_MODEL/STREE_BASE_URL, the config file, the
session's model) and runs the before-tree and tree hooks as checkout does.
End of input ends the server (exit 0) once a summary under way has answered; Ctrl-C
(exit 130) or SIGTERM (exit 143) aborts it: nothing is left half-written.
examples/serve_client.py (in the source tree) shows an editor's side.

\b
MCP tools (each returns the data of the CLI's --json for the same question):
  list_sessions   stree ls --json [--all], filtered by words (query)
  grep            stree grep --json PATTERN [-i] [-w] [-E] [-l|-c] [-m N] [--role R]...
                  [--type T]... [--since D] [--until D] [--cwd DIR] [--agent A] [-s SESSION]
  log             stree log --json [REV|RANGE] [-n N] [--filter F] [--search WORDS]
                  [--since D] [--until D] [--role R]... [--model PATTERN]...
  tree            stree log --graph --json [--filter F] [--search WORDS] [-n N], in
                  pages of about 4 MiB (nextCursor, passed back as cursor)
  show            stree show --json [REV|RANGE...]
  context         stree context --json [REV]
  labels          stree label --json
  stats           stree stats --json [REV|RANGE] [--all] [--since D] [--until D]
With --allow-writes (appended under the lock, as the CLI writes):
  set_label       stree label NAME [REV] [-f]    (a blank NAME clears)
  checkout        stree checkout REV [--exact] [--label NAME]   (hooks run; no summary)
  set_name        stree name NAME                (a blank NAME clears)
Every tool takes `session` (a path or id prefix, as -s; default: serve's -s, else
the newest session here). An answer is its JSON as text and again as
structuredContent (the tool's outputSchema); tree's pages are the text alone, sent
once. A bad revision or unknown session is a tool error (isError) with stree's
message; the server goes on.

\b
The MCP server needs the MCP Python SDK: pip install 'stree[mcp]'. Without it,
`stree serve --mcp` exits with status 2 and says so.""")
@click.option("--mcp", "mcp", is_flag=True, help="Serve the Model Context Protocol (MCP tools for agents) instead.")
@click.option("--allow-writes", is_flag=True, help="With --mcp: also offer the tools that append to sessions.")
@model_options
@click.pass_obj
def command(env, mcp, allow_writes, **model_flags):
    """Answer pi's RPC requests about a session on stdin/stdout, without running pi.

    A long-running stree for editors: pi's RPC framing (JSON Lines), pi 1.6.0's session
    commands with pi's shapes, the tree commands pi PR #1762 proposed, and stree's own
    log, show, rev_parse, context and grep. It needs no model for browsing, keeps the sessions it
    read warm between requests, and sends an event when the served session grows.
    With --mcp: stree's read operations as MCP tools for agents (writes with --allow-writes).
    """
    from ..errors import UsageError

    if mcp:
        from ..mcp.server import serve as serve_mcp
        from ..mcp.tools import Workspace

        serve_mcp(Workspace(allow_writes, **env.where()))
        return
    if allow_writes:
        raise UsageError("--allow-writes goes with --mcp (stree serve's own write requests need no flag)",
                         hint="stree serve --mcp --allow-writes")
    from ..service.server import serve
    from ..service.state import Served

    served = Served(env.session_path(), {name: model_flags[name] for name in MODEL_FLAGS}, warn_user, env.debug,
                    **env.where())
    served.load()  # a session it can read, else the error now (exit 3/4), before any request
    return serve(served)
