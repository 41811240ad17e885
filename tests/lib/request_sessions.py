"""Sessions for the request tests, written by the real pi's SessionManager (1.5.2: 1.6.0 writes the same): the turns
a request must carry as pi-ai does (an Esc in a tool batch, thinking of several models,
images, ids from the Responses API, tools stree does not know, compaction and edits)."""

from corpus_pi15 import USAGE, Steps, write

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
CLAUDE = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5"}
GPT5 = {"api": "openai-responses", "provider": "openai", "model": "gpt-5"}
LOCAL = {"api": "openai-completions", "provider": "vllm", "model": "qwen3"}


def _assistant(b, content, who, **extra):
    msg = {"role": "assistant", "content": content, **who, "usage": USAGE, "stopReason": "toolUse"
           if any(c.get("type") == "toolCall" for c in content) else "stop", "timestamp": b.tick()}
    msg.update(extra)
    return b.call("appendMessage", msg)


def _result(b, call_id, name, content, error=False):
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    return b.call("appendMessage", {"role": "toolResult", "toolCallId": call_id, "toolName": name,
                                    "content": content, "isError": error, "timestamp": b.tick()})


def esc_in_tool_batch(home):
    """Esc while a batch of three tool calls runs: one result (older pis wrote only that),
    then the user speaks again; later an aborted answer that had started a call."""
    b = Steps()
    b.user("look at the parser")
    _assistant(b, [{"type": "text", "text": "Reading three files."},
                   {"type": "toolCall", "id": "toolu_01", "name": "read", "arguments": {"path": "a.py"}},
                   {"type": "toolCall", "id": "toolu_02", "name": "read", "arguments": {"path": "b.py"}},
                   {"type": "toolCall", "id": "toolu_03", "name": "bash", "arguments": {"command": "ls"}}], CLAUDE)
    _result(b, "toolu_01", "read", "print('a')")
    b.user("stop, only look at a.py")
    _assistant(b, [{"type": "toolCall", "id": "toolu_04", "name": "bash", "arguments": {"command": "wc a.py"}}],
               CLAUDE, stopReason="aborted")
    b.user("go on")
    _assistant(b, [{"type": "toolCall", "id": "toolu_05", "name": "grep", "arguments": {"pattern": "x"}},
                   {"type": "toolCall", "id": "toolu_06", "name": "deploy", "arguments": {"env": "staging"}}], CLAUDE)
    _result(b, "toolu_05", "grep", "a.py:1:x")
    _result(b, "toolu_06", "deploy", "Operation aborted", error=True)
    _assistant(b, [{"type": "text", "text": "Done."}], CLAUDE)
    _assistant(b, [{"type": "toolCall", "id": "toolu_07", "name": "read", "arguments": {"path": "c.py"}}], CLAUDE)
    return b  # the leaf: a call without its result


def thinking(home):
    """Thinking of Claude (signed, redacted, unsigned), of GPT-5 over the Responses API (ids
    with '|', an encrypted signature) and of a local server (reasoning_content)."""
    b = Steps()
    b.user("think about it")
    _assistant(b, [{"type": "thinking", "thinking": "Let me see.", "thinkingSignature": "EqQBCkgIBx"},
                   {"type": "thinking", "thinking": "", "thinkingSignature": "c2VjcmV0", "redacted": True},
                   {"type": "thinking", "thinking": "unsigned thought"},
                   {"type": "text", "text": "Claude's answer"},
                   {"type": "toolCall", "id": "toolu_th1", "name": "read", "arguments": {"path": "x"}}], CLAUDE)
    _result(b, "toolu_th1", "read", "x")
    _assistant(b, [{"type": "text", "text": "first part"}], CLAUDE)
    b.call("appendModelChange", "openai", "gpt-5")
    b.call("appendThinkingLevelChange", "high")
    b.user("and you?")
    call_id = "call_" + "A" * 30 + "|fc_" + "b" * 40
    _assistant(b, [{"type": "thinking", "thinking": "hmm", "thinkingSignature":
                    '{"type":"reasoning","id":"rs_1","summary":[]}'},
                   {"type": "toolCall", "id": call_id, "name": "bash", "arguments": {"command": "date"}},
                   {"type": "toolCall", "id": "call_short|fc_1", "name": "ls", "arguments": {}}], GPT5)
    _result(b, call_id, "bash", "Tue")
    _result(b, "call_short|fc_1", "ls", "")
    _assistant(b, [{"type": "thinking", "thinking": "local thought", "thinkingSignature": "reasoning_content"},
                   {"type": "text", "text": "local answer"}], LOCAL)
    b.user("thanks")
    return b


def images(home):
    """Images from the user, from a tool, and in a tool's error result."""
    b = Steps()
    b.call("appendMessage", {"role": "user", "timestamp": b.tick(), "content": [
        {"type": "text", "text": "what is in this picture?"}, {"type": "image", "data": PNG, "mimeType": "image/png"}]})
    _assistant(b, [{"type": "toolCall", "id": "toolu_i1", "name": "read", "arguments": {"path": "shot.png"}},
                   {"type": "toolCall", "id": "toolu_i2", "name": "read", "arguments": {"path": "bad.png"}}], CLAUDE)
    _result(b, "toolu_i1", "read", [{"type": "text", "text": "Read image file [image/png]"},
                                    {"type": "image", "data": PNG, "mimeType": "image/png"}])
    _result(b, "toolu_i2", "read", [{"type": "image", "data": PNG, "mimeType": "image/png"}], error=True)
    _assistant(b, [{"type": "text", "text": "A single pixel."}], CLAUDE)
    b.call("appendMessage", {"role": "user", "timestamp": b.tick(), "content": [
        {"type": "image", "data": PNG, "mimeType": "image/png"}]})
    return b


BUILDERS = {"esc_in_tool_batch": esc_in_tool_batch, "thinking": thinking, "images": images}


def build(directory, home):
    return {name: write(directory / f"{name}.jsonl", make(home), home, version="1.5.2")
            for name, make in BUILDERS.items()}
