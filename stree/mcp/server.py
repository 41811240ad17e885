"""The MCP server over stdio, with the official `mcp` SDK (2.x, its low-level Server: stree gives
each tool's schemas itself; the lines on stdin/stdout: stree.mcp.stdio). Imported only by
`stree serve --mcp`. The same concept for pi's RPC framing is stree.service.server (`stree
serve` without --mcp).

The SDK's event loop runs on a thread of its own, so it answers `ping` and reads
`notifications/cancelled` while a tool runs; every tool call runs on the main thread, one at a
time (writes take the file's lock and lease, which need the main thread's signals). A read
tool runs under its deadline (STREE_REQUEST_TIMEOUT) and its cancellation (core.budget: a
timer tick raises in it, even inside a backtracking regex): it then fails alone, and the next
call is served. The end of input ends the loop, cancels the call under way and ends the
server."""

import queue
import threading

from .. import __version__
from ..errors import INTERNAL, REPORTED, StreeError
from ..format.terminal import inert
from .reads import offered

INSTRUCTIONS = """\
stree reads pi coding-agent sessions (JSONL files whose entries form a tree). Find a past session \
with list_sessions (query: words of its name or first message; all=true for every project), then \
pass its id or path as `session` to tree (every branch, as pi's /tree draws it), log (the entries on \
a path or between two revisions), show (entries in full), context (what the model saw at an \
entry) and stats (tokens and cost, of a session or, with all=true, of every session). Revisions: an \
id or id prefix, a label, @ (the leaf), root, :/text, REV~N, REV^."""


def sdk():
    """The SDK's modules, or a StreeError (exit 2) saying how to install them."""
    try:
        import mcp_types
        from mcp.server.lowlevel import Server
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
    return mcp_types, Server


def error_result(types, e):
    """A tool error (isError) carrying stree's message, its hint and its exit code."""
    if isinstance(e, REPORTED):
        message, hint, code = str(e), e.hint, e.code
    else:  # a bug in stree: the server goes on, the client hears what broke
        message, hint, code = f"internal error: {type(e).__name__}: {e}", None, INTERNAL
    text = f"stree: error: {inert(message)}" + "".join(f"\nhint: {inert(line)}" for line in str(hint or "").split("\n")
                                                      if hint)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True,
                                structured_content={"error": message, "hint": hint, "exitCode": code})


def answer(data, text):
    """A tool's answer as the SDK is given it: the wire form as a plain dict, not a CallToolResult
    (the SDK checks and dumps a result once more when it is a model, a walk of every record of a
    tree page that cost a quarter of its time in the SDK; tests/cli/test_serve_mcp.py reads the
    answers as a client does). The JSON text, and the same as structuredContent when the tool has
    an outputSchema (`data`; None for the tree's pages, sent once: stree.mcp.reads.as_text)."""
    result = {"content": [{"type": "text", "text": text}], "isError": False,
              "resultType": "complete"}  # (required from protocol 2026-07-28; dropped before it)
    if data is not None:
        result["structuredContent"] = data
    return result


class Job:
    """One tool call, run by the main thread (run()) and awaited by the event loop (done)."""

    def __init__(self, tool, workspace, arguments):
        self.tool = tool
        self.workspace = workspace
        self.arguments = arguments
        self.cancelled = threading.Event()
        self.done = threading.Event()
        self.wake = None  # called from the main thread once done: wakes the event loop's wait
        self.result = None  # (data, its JSON text)
        self.error = None

    def run(self, timeout):
        from ..core.budget import Cancelled, request

        try:
            if self.cancelled.is_set():
                raise Cancelled("the request was cancelled by the client")
            if self.tool.write:  # a write is never cut short (an append is quick)
                self.result = self.tool.call(self.workspace, self.arguments)
            else:
                with request(f"the {self.tool.name} tool", timeout, self.cancelled):
                    self.result = self.tool.call(self.workspace, self.arguments)
        except MemoryError:
            self.error = StreeError(f"the {self.tool.name} tool's answer did not fit in memory", code=2,
                                    hint="ask for less: max_count, filter, search, or a cursor page")
        except (Exception, *REPORTED) as e:
            self.error = e
        finally:
            from ..core.budget import settle

            settle()  # (nothing left watched for the next call)
            self.done.set()
            if self.wake is not None:
                self.wake()


def waker(event):
    """A function setting the event loop's `event` from another thread, never blocking it: a
    finished call answered at once (a poll of 20 ms cost 10 ms a call, 0.9 s of the tree's 87
    pages at 100k). After the loop's end it does nothing."""
    import asyncio

    loop = asyncio.get_running_loop()  # (anyio.run's default backend)

    def wake():
        try:
            loop.call_soon_threadsafe(event.set)
        except RuntimeError:  # (the loop is closed: nobody waits)
            pass
    return wake


def build(workspace, jobs):
    """The SDK Server offering `offered(workspace.allow_writes)`; tool calls go to `jobs`."""
    types, Server = sdk()
    tools = {tool.name: tool for tool in offered(workspace.allow_writes)}

    def listed(tool):
        hints = types.ToolAnnotations(title=tool.title, read_only_hint=not tool.write, destructive_hint=False,
                                      idempotent_hint=not tool.write, open_world_hint=False)
        return types.Tool(name=tool.name, title=tool.title, description=tool.description,
                          input_schema=tool.input_schema, output_schema=tool.output_schema, annotations=hints)

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[listed(tool) for tool in tools.values()])

    async def call_tool(ctx, params):
        import anyio

        tool = tools.get(params.name)
        if tool is None:
            from .writes import WRITE_TOOLS

            writes = [t.name for t in WRITE_TOOLS]
            why = " (write tools need 'stree serve --mcp --allow-writes')" if params.name in writes else ""
            return error_result(types, StreeError(f"no tool '{params.name}'{why}", code=2))
        job = Job(tool, workspace, params.arguments)
        job.wake = waker(finished := anyio.Event())
        jobs.put(job)
        try:
            await finished.wait()  # (not a worker thread: cancellable while the main thread works)
        except anyio.get_cancelled_exc_class():
            job.cancelled.set()  # (notifications/cancelled, or the end of input: no answer is sent)
            raise
        if job.error is not None:  # never the end of the server
            return error_result(types, job.error)
        return answer(*job.result)

    return Server("stree", version=__version__, title="stree: pi session trees", instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def next_job(jobs, workspace):
    """The next call (None: the end). Meanwhile the main thread makes the tree's next page
    (workspace.ahead), a few rows at a time, looking for a call between them: a client paging
    through a long drawing finds its next page made while it read the last one (it and the SDK
    work at once: two pipes, two processes). A failure there is let go: the call makes the page."""
    while True:
        ahead = workspace.ahead
        if ahead is None or ahead.done:
            return jobs.get()
        try:
            return jobs.get_nowait()
        except queue.Empty:
            pass
        try:
            ahead.make(rows=50)
        except Exception:  # (MemoryError too: nothing asked for it yet; the call says it if it comes)
            workspace.ahead = None


def serve(workspace):
    """Serve MCP on stdin/stdout until the client closes stdin (or Ctrl-C)."""
    import anyio

    from ..core.budget import request_timeout
    from ..core.warm import Counted
    from ..storage.keptgraph.file import widen_pipe
    from .stdio import stdio

    timeout = request_timeout()
    jobs = queue.Queue()
    server = build(workspace, jobs)
    failed = []
    widen_pipe(1)

    async def main():
        async with stdio() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    def loop():
        try:
            anyio.run(main)
        except BaseException as e:  # (reported by the main thread)
            failed.append(e)
        finally:
            jobs.put(None)

    thread = threading.Thread(target=loop, name="stree-mcp-loop", daemon=True)
    thread.start()
    counted = Counted()
    while True:
        job = next_job(jobs, workspace)
        if job is None:
            break
        with counted(job.tool.name) as count:
            reused, ahead = workspace.pages_reused, workspace.pages_ahead
            job.run(timeout)
            if workspace.pages_reused != reused:
                count.note = ", kept drawing"  # (a page of the tree tool's drawing made before)
            if workspace.pages_ahead != ahead:
                count.note += ", page begun ahead"
    thread.join()
    if failed:
        raise failed[0]
