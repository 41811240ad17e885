"""The MCP server over stdio, with the official `mcp` SDK (2.x, its low-level Server: stree gives
each tool's schemas itself). Imported only by `stree serve --mcp`."""

from .. import __version__
from ..errors import INTERNAL, StreeError
from ..format.terminal import inert
from ..output.modes import to_json
from .reads import offered

INSTRUCTIONS = """\
stree reads pi coding-agent sessions (JSONL files whose entries form a tree). Find a past session \
with list_sessions (query: words of its name or first message; all=true for every project), then \
pass its id or path as `session` to tree (every branch, as pi's /tree draws it), log (the entries on \
a path or between two revisions), show (entries in full) and context (what the model saw at an \
entry). Revisions: an id or id prefix, a label, @ (the leaf), root, :/text, REV~N, REV^."""


def sdk():
    """The SDK's modules, or a StreeError (exit 2) saying how to install them."""
    try:
        import mcp_types
        from mcp.server.lowlevel import Server
        from mcp.server.stdio import stdio_server
    except ImportError as e:
        raise StreeError(f"stree serve --mcp needs the MCP Python SDK, which is not installed ({e})", code=2,
                         hint="install it with: pip install 'stree[mcp]'") from None
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("mcp")
    except PackageNotFoundError:
        found = None
    major = (found or "").split(".")[0]
    if found is not None and (not major.isdigit() or int(major) < 2):
        raise StreeError(f"stree serve --mcp needs version 2 of the MCP Python SDK; mcp {found} is installed",
                         code=2, hint="upgrade it with: pip install 'stree[mcp]'")
    return mcp_types, Server, stdio_server


def error_result(types, e):
    """A tool error (isError) carrying stree's message, its hint and its exit code."""
    if isinstance(e, StreeError):
        message, hint, code = str(e), e.hint, e.code
    else:  # a bug in stree: the server goes on, the client hears what broke
        message, hint, code = f"internal error: {type(e).__name__}: {e}", None, INTERNAL
    text = f"stree: error: {inert(message)}" + "".join(f"\nhint: {inert(line)}" for line in str(hint or "").split("\n")
                                                      if hint)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True,
                                structured_content={"error": message, "hint": hint, "exitCode": code})


def build(workspace):
    """The SDK Server offering `offered(workspace.allow_writes)`."""
    types, Server, _ = sdk()
    tools = {tool.name: tool for tool in offered(workspace.allow_writes)}

    def listed(tool):
        hints = types.ToolAnnotations(title=tool.title, read_only_hint=not tool.write, destructive_hint=False,
                                      idempotent_hint=not tool.write, open_world_hint=False)
        return types.Tool(name=tool.name, title=tool.title, description=tool.description,
                          input_schema=tool.input_schema, output_schema=tool.output_schema, annotations=hints)

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[listed(tool) for tool in tools.values()])

    async def call_tool(ctx, params):
        tool = tools.get(params.name)
        if tool is None:
            from .writes import WRITE_TOOLS

            writes = [t.name for t in WRITE_TOOLS]
            why = " (write tools need 'stree serve --mcp --allow-writes')" if params.name in writes else ""
            return error_result(types, StreeError(f"no tool '{params.name}'{why}", code=2))
        try:
            # run here, not in a thread: a write holds the file's lock and lease (a signal handler)
            data = tool.call(workspace, params.arguments)
        except Exception as e:  # never the end of the server
            return error_result(types, e)
        return types.CallToolResult(content=[types.TextContent(type="text", text=to_json(data))],
                                    structured_content=data)

    return Server("stree", version=__version__, title="stree: pi session trees", instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def serve(workspace):
    """Serve MCP on stdin/stdout until the client closes stdin (or Ctrl-C)."""
    import anyio

    server = build(workspace)
    _, _, stdio_server = sdk()

    async def main():
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
