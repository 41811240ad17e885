"""stree.mcp.stdio.line_of: the line the MCP server writes for a message is the bytes pydantic
writes (message.model_dump_json(by_alias=True, exclude_unset=True)) and a newline, also when a
long text (a tree page) is written by msgspec and spliced into pydantic's frame."""

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install -e '.[mcp]'; make test installs it)")
pytest.importorskip("msgspec", reason="the fast extra is not installed")

import mcp_types  # noqa: E402  (installed with mcp)
from mcp_types import methods  # noqa: E402

from stree.mcp.server import answer  # noqa: E402
from stree.mcp.stdio import LONG, line_of  # noqa: E402


def pydantic_line(message):
    return message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


def every_code_point():
    """Every code point but the surrogates, each after a quote and a backslash, JSON-in-JSON style."""
    return "".join(f'"\\{chr(cp)}' for cp in range(0x110000) if not 0xD800 <= cp < 0xE000)


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
@pytest.mark.parametrize("request_id", [7, "id \"\x00stree.mcp.stdio: the text\x00\" │"])
@pytest.mark.parametrize("json", ["", "pure"])
def test_a_long_text_answer_is_pydantic_s_bytes(version, request_id, json, monkeypatch):
    monkeypatch.setenv("STREE_JSON", json)
    text = every_code_point()
    assert len(text) >= LONG
    result = methods.serialize_server_result("tools/call", version, answer(None, text))
    message = mcp_types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
    line = line_of(message)
    assert line == pydantic_line(message)
    assert line.count(b"\n") == 1


@pytest.mark.parametrize("text", ["short", "x" * LONG])
def test_other_answers_are_pydantic_s_bytes(text):
    """An answer with structuredContent, an error, a short text, a request: pydantic's line."""
    for result in ({"content": [{"type": "text", "text": text}], "structuredContent": {"rows": [text]},
                    "isError": False},
                   {"content": [{"type": "text", "text": text}], "isError": True},
                   {"content": [{"type": "text", "text": text}, {"type": "text", "text": text}]}):
        message = mcp_types.JSONRPCResponse(jsonrpc="2.0", id=1, result=result)
        assert line_of(message) == pydantic_line(message)
    message = mcp_types.JSONRPCRequest(jsonrpc="2.0", id=2, method="ping", params={"text": text})
    assert line_of(message) == pydantic_line(message)


def test_a_lone_surrogate_fails_as_pydantic_fails():
    text = "x" * LONG + "\ud800"
    message = mcp_types.JSONRPCResponse(jsonrpc="2.0", id=1, result={"content": [{"type": "text", "text": text}]})
    with pytest.raises(Exception) as ours:
        line_of(message)
    with pytest.raises(Exception) as theirs:
        pydantic_line(message)
    assert type(ours.value) is type(theirs.value)
