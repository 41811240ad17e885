"""The MCP server's stdio transport: JSON-RPC messages as lines on the process's stdin and
stdout, as the SDK's own (mcp.server.stdio) carries them, except that each message goes out as
the bytes pydantic writes (the SDK makes a str of them, copies it with its newline and encodes it
again: 18 of its 26 ms on a tree page of 4 MiB). While it serves, fd 0 reads the null device and
fd 1 writes to stderr, as with the SDK's: a hook's or a child's stray output never reaches the
client. Imported only by stree.mcp.server."""

import os
from contextlib import asynccontextmanager


@asynccontextmanager
async def stdio():
    """(read stream, write stream) for the SDK's Server.run, over the process's stdin/stdout."""
    import anyio

    wire_in, wire_out = _claim()
    try:
        read_send, read_receive = anyio.create_memory_object_stream(0)
        write_send, write_receive = anyio.create_memory_object_stream(0)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_read, wire_in, read_send)
            tasks.start_soon(_write, wire_out, write_receive, tasks.cancel_scope)
            yield read_receive, write_send
    finally:
        _release(wire_in, wire_out)


def _claim():
    """The client's stdin and stdout on descriptors of their own (never closed: a worker thread
    may still be reading); fd 0 then reads the null device, fd 1 writes to stderr."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


def _release(wire_in, wire_out):
    for fd, wire in ((0, wire_in), (1, wire_out)):
        try:
            os.dup2(wire, fd)
        except OSError:
            pass


async def _read(wire_in, send):
    """Each line of stdin, a JSON-RPC message (or the error of one that is not) for the Server."""
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    async with send:
        stdin = anyio.wrap_file(open(wire_in, "rb", closefd=False))
        async for line in stdin:
            try:
                message = types.jsonrpc_message_adapter.validate_json(line.decode("utf-8", "replace"),
                                                                      by_name=False)
            except Exception as e:  # (the SDK answers it as its own transport's would)
                await send.send(e)
                continue
            await send.send(SessionMessage(message))


async def _write(wire_out, receive, serving):
    """Each message from the Server, a line of JSON on stdout (written by a worker thread: a
    client slow to read never stops the event loop). A client that closed its end is gone: the
    server ends (`serving` cancelled) as at the end of its input."""
    import anyio

    async with receive:
        async for session_message in receive:
            data = line_of(session_message.message)
            try:
                await anyio.to_thread.run_sync(_write_all, wire_out, data)
            except BrokenPipeError:
                serving.cancel()
                return


_MARK = "\x00stree.mcp.stdio: the text\x00"  # (stands for a long text in the message pydantic writes)
LONG = 1 << 16  # characters of text from which a tool's answer is written with msgspec (a tree page)


def line_of(message):
    """The message's line: what message.model_dump_json(by_alias=True, exclude_unset=True) gives,
    as bytes, and its newline. A tool answer that is one long text (a tree page: megabytes of JSON,
    its quotes escaped) has that text written by msgspec, the message around it by pydantic: the
    same bytes (both escape a string alike, every code point compared: tests/unit/test_mcp_stdio.py),
    in about half the time (8.4 against 15.4 ms a 4 MiB page of the 100k bench file, the escaping
    4.5 against 12.8). Without msgspec (the `fast` extra), or with STREE_JSON=pure, pydantic writes all."""
    from ..format.fastjson import wanted

    dump = message.__pydantic_serializer__.to_json
    text = _long_text(message)
    if text is not None and wanted() != "pure":
        try:
            import msgspec

            spelled, mark = msgspec.json.encode(text), msgspec.json.encode(_MARK)
        except (ImportError, ValueError):  # (a lone surrogate: pydantic says what it says of it)
            pass
        else:
            result = dict(message.result, content=[dict(message.result["content"][0], text=_MARK)])  # (its order)
            frame = dump(message.model_copy(update={"result": result}), by_alias=True, exclude_unset=True)
            at = frame.rindex(mark)  # (the id comes before the result, the text is its one string holding it)
            return b"".join((frame[:at], spelled, frame[at + len(mark):], b"\n"))
    return dump(message, by_alias=True, exclude_unset=True) + b"\n"


def _long_text(message):
    """The text of a tool answer made of one long text and nothing else to write but
    isError and resultType (a tree page), or None."""
    import mcp_types as types

    if message.__class__ is not types.JSONRPCResponse or message.result.__class__ is not dict:
        return None
    result = message.result
    content = result.get("content")
    if content.__class__ is not list or len(content) != 1 or content[0].__class__ is not dict:
        return None
    block = content[0]
    if block.keys() != {"type", "text"} or block["type"] != "text" or block["text"].__class__ is not str:
        return None
    if len(block["text"]) < LONG or not set(result) <= {"content", "isError", "resultType"}:
        return None
    if result.get("isError", False).__class__ is not bool or _MARK in str(result.get("resultType", "")):
        return None
    return block["text"]


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
