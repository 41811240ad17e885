"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions and Anthropic
Messages wire formats (JSON and SSE), records every request, and plays scripted failures.

Like the real APIs, it answers a request they would refuse with a 400 and their error shape
(openai_problem, anthropic_problem: tool results without their call, calls without their
results, `tool_use` without `tools`, roles and empty content they refuse), before any
scripted reply. Anthropic combines consecutive turns of one role into one turn (its API
reference says so), and so does this server before it checks the turns."""

import json
import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ANSWER = "## Goal\nFix the parser.\n\n## Next Steps\n1. Add tests"


def name_keys_for_this_server():
    """stree sends OPENAI_API_KEY / ANTHROPIC_API_KEY only to api.openai.com / api.anthropic.com;
    for the loopback server the config names the key variables (api_key_env), as a user does."""
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "stree" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    text = config.read_text() if config.exists() else ""
    if "api_key_env" not in text:
        config.write_text(text + '\n[openai]\napi_key_env = "OPENAI_API_KEY"\n'
                                 '[anthropic]\napi_key_env = "ANTHROPIC_API_KEY"\n')


class Recorded:
    def __init__(self, method, path, headers, body):
        self.method = method
        self.path = path
        self.headers = {k.lower(): v for k, v in headers.items()}
        self.raw = body
        try:
            self.json = json.loads(body)
        except ValueError:
            self.json = None

    def __repr__(self):
        return f"Recorded({self.method} {self.path})"


def openai_json(text, model="served-model", finish="stop", refusal=None):
    message = {"role": "assistant", "content": text}
    if refusal is not None:
        message["refusal"] = refusal
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1200, "completion_tokens": 34, "total_tokens": 1234}}


def openai_events(text, model="served-model", finish="stop"):
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model}
    events = [dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
    for i in range(0, len(text), 7):  # several chunks, split mid-word
        events.append(dict(base, choices=[{"index": 0, "delta": {"content": text[i:i + 7]}, "finish_reason": None}]))
    events.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}]))
    events.append(dict(base, choices=[], usage={"prompt_tokens": 1200, "completion_tokens": 34,
                                                "total_tokens": 1234}))
    return [(None, e) for e in events] + [(None, "[DONE]")]


def anthropic_json(text, model="served-claude", stop="end_turn"):
    content = [{"type": "text", "text": text}] if text is not None else []
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 1500, "output_tokens": 40}}


def anthropic_events(text, model="served-claude", stop="end_turn"):
    start = {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1500, "output_tokens": 1}}}
    events = [("message_start", start),
              ("content_block_start", {"type": "content_block_start", "index": 0,
                                       "content_block": {"type": "text", "text": ""}}),
              ("ping", {"type": "ping"})]
    for i in range(0, len(text), 7):
        events.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                               "delta": {"type": "text_delta", "text": text[i:i + 7]}}))
    events += [("content_block_stop", {"type": "content_block_stop", "index": 0}),
               ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": 40}}),
               ("message_stop", {"type": "message_stop"})]
    return events


TOOL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def openai_problem(body):
    """Why OpenAI's chat completions would refuse `body` ((message, param) or None)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list) or not messages:
        return "[] is too short - 'messages'", "messages"
    pending, answered = None, set()  # the tool_call ids of the last assistant message
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ("system", "developer", "user", "assistant", "tool"):
            return (f"Invalid value: {role!r}. Supported values are: 'system', 'assistant', 'user', 'tool', "
                    "'function' and 'developer'.", f"messages.[{i}].role")
        if role == "tool":
            if pending is None or m.get("tool_call_id") not in pending:
                return ("Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
                        "with 'tool_calls'.", f"messages.[{i}].role")
            answered.add(m["tool_call_id"])
            if not isinstance(m.get("content"), (str, list)):
                return f"Invalid type for 'messages[{i}].content'", f"messages.[{i}].content"
            continue
        if pending is not None and pending - answered:
            return ("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                    "'tool_call_id'. The following tool_call_ids did not have response messages: "
                    + ", ".join(sorted(pending - answered)), f"messages.[{i}].role")
        pending, answered = None, set()
        content = m.get("content")
        if role == "assistant":
            calls = m.get("tool_calls")
            if calls:
                for j, call in enumerate(calls):
                    if not isinstance(call.get("id"), str) or len(call["id"]) > 40:
                        return (f"Invalid 'messages[{i}].tool_calls[{j}].id': string too long. Expected a string "
                                "with maximum length 40.", f"messages.[{i}].tool_calls.[{j}].id")
                    if not isinstance((call.get("function") or {}).get("arguments"), str):
                        return f"Missing required parameter: 'messages[{i}].tool_calls[{j}].function.arguments'.", None
                pending = {c["id"] for c in calls}
            elif content is None or content == "":
                return (f"Invalid value for 'content': expected a string, got {json.dumps(content)}.",
                        f"messages.[{i}].content")
        elif isinstance(content, list) and not content:
            return (f"Invalid 'messages[{i}].content': empty array. Expected an array with minimum length 1, but got "
                    "an empty array instead.", f"messages.[{i}].content")
        elif not isinstance(content, (str, list)):
            return f"Invalid type for 'messages[{i}].content'", f"messages.[{i}].content"
    if pending is not None and pending - answered:
        return ("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                "'tool_call_id'. The following tool_call_ids did not have response messages: "
                + ", ".join(sorted(pending - answered)), f"messages.[{len(messages) - 1}].role")
    for k, tool in enumerate(body.get("tools") or []):
        name = (tool.get("function") or {}).get("name") if isinstance(tool, dict) else None
        if tool.get("type") != "function" or not isinstance(name, str) or not TOOL_ID.fullmatch(name):
            return f"Invalid 'tools[{k}].function.name'", f"tools[{k}].function.name"
    return None


def anthropic_problem(body):
    """Why Anthropic's messages API would refuse `body` (a message, or None)."""
    if not isinstance(body, dict) or not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        return "max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    turns = []  # (role, blocks, index of the first message) after combining consecutive roles
    uses_tools = False
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        content = m.get("content")
        last = i == len(messages) - 1 and role == "assistant"
        if isinstance(content, str):
            if not content.strip() and not last:
                return f"messages.{i}: all messages must have non-empty content except for the optional final " \
                       "assistant message"
            content = [{"type": "text", "text": content}] if content else []
        if not isinstance(content, list) or (not content and not last):
            return f"messages.{i}: all messages must have non-empty content except for the optional final " \
                   "assistant message"
        for j, b in enumerate(content):
            kind = b.get("type") if isinstance(b, dict) else None
            where = f"messages.{i}.content.{j}"
            if kind == "text" and (not isinstance(b.get("text"), str) or not b["text"].strip()):
                return f"{where}: text content blocks must contain non-whitespace text"
            if kind == "thinking" and not isinstance(b.get("signature"), str):
                return f"{where}.thinking.signature: Field required"
            if kind == "image" and not ((b.get("source") or {}).get("data") and (b.get("source") or {}).get(
                    "media_type") in ("image/png", "image/jpeg", "image/gif", "image/webp")):
                return f"{where}.image.source: Input does not match a base64 image"
            if kind in ("tool_use", "tool_result"):
                uses_tools = True
            if kind == "tool_use" and role != "assistant" or kind == "tool_result" and role != "user":
                return f"{where}: `{kind}` blocks are not allowed in a {role} message"
            if kind not in ("text", "image", "thinking", "redacted_thinking", "tool_use", "tool_result", "document"):
                return f"{where}: Input tag {kind!r} found using 'type' does not match any of the expected tags"
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(content)
        else:
            turns.append((role, list(content), i))
    if uses_tools and not body.get("tools"):
        return "Requests which include `tool_use` or `tool_result` blocks must define tools."
    for k, (role, content, first) in enumerate(turns):
        if role != "assistant":
            continue
        uses = [b.get("id") for b in content if b.get("type") == "tool_use"]
        after = turns[k + 1][1] if k + 1 < len(turns) else []
        results = []
        for b in after:
            if b.get("type") != "tool_result":
                break
            results.append(b.get("tool_use_id"))
        missing = [u for u in uses if u not in results]
        if missing:
            return f"messages.{first}: `tool_use` ids were found without `tool_result` blocks immediately after: " \
                   f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block in " \
                   "the next message."
    for k, (role, content, first) in enumerate(turns):
        if role != "user":
            continue
        before = turns[k - 1][1] if k else []
        uses = {b.get("id") for b in before if b.get("type") == "tool_use"}
        for b in content:
            if b.get("type") == "tool_result" and b.get("tool_use_id") not in uses:
                return f"messages.{first}: unexpected `tool_use_id` found in `tool_result` blocks: " \
                       f"{b.get('tool_use_id')}. Each `tool_result` block must have a corresponding `tool_use` " \
                       "block in the previous message."
    return None


def problem_reply(path, body):
    """A 400 in the API's own error shape when the real API would refuse the request, else None."""
    if path.endswith("/chat/completions"):
        found = openai_problem(body)
        if found:
            message, param = found
            return Reply(400, body={"error": {"message": message, "type": "invalid_request_error", "param": param,
                                              "code": None}})
    elif path.split("?", 1)[0].endswith("/v1/messages"):
        message = anthropic_problem(body)
        if message:
            return Reply(400, body={"type": "error", "error": {"type": "invalid_request_error", "message": message}})
    return None


class Reply:
    """One scripted answer: a status, headers, and a JSON body, SSE events or raw bytes."""

    def __init__(self, status=200, body=None, events=None, raw=None, headers=None, delay=0.0, hold=None):
        self.status, self.body, self.events, self.raw = status, body, events, raw
        self.headers = headers or {}
        self.delay = delay
        self.hold = hold  # a threading.Event: the answer waits until the test sets it (no clock involved)


class LLMServer:
    def __init__(self, text=ANSWER, validate=True):
        self.text = text
        self.validate = validate  # refuse what the real APIs refuse (problem_reply)
        self.requests = []
        self.answered = []  # the requests whose answer was sent (or whose client had hung up)
        self.script = []  # Replies used first, in order; then the default answer
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                rec = Recorded("POST", self.path, dict(self.headers.items()), body)
                server.requests.append(rec)
                reply = problem_reply(rec.path, rec.json) if server.validate and rec.json is not None else None
                if reply is None:
                    reply = server.script.pop(0) if server.script else server.default(rec)
                try:
                    server.send(self, reply)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                server.answered.append(rec)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def default(self, rec):
        stream = bool(rec.json and rec.json.get("stream"))
        if rec.path.endswith("/chat/completions"):
            return Reply(events=openai_events(self.text)) if stream else Reply(body=openai_json(self.text))
        if rec.path.split("?", 1)[0].endswith("/v1/messages"):  # pi >= 0.87 asks /v1/messages?beta=true
            return Reply(events=anthropic_events(self.text)) if stream else Reply(body=anthropic_json(self.text))
        return Reply(404, body={"error": {"message": f"no route {rec.path}"}})

    def send(self, handler, reply):
        if reply.delay:
            time.sleep(reply.delay)
        if reply.hold is not None:
            reply.hold.wait(120)
        if reply.events is not None:
            payload = b""
            for name, data in reply.events:
                chunk = "" if name is None else f"event: {name}\n"
                chunk += "data: " + (data if isinstance(data, str) else json.dumps(data)) + "\n\n"
                payload += chunk.encode()
            ctype = "text/event-stream"
        elif reply.raw is not None:
            payload, ctype = reply.raw, "application/json"
        else:
            payload, ctype = json.dumps(reply.body).encode(), "application/json"
        handler.send_response(reply.status)
        handler.send_header("content-type", ctype)
        handler.send_header("content-length", str(len(payload)))
        for k, v in reply.headers.items():
            handler.send_header(k, v)
        handler.end_headers()
        handler.wfile.write(payload)
        handler.wfile.flush()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
