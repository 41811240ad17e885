"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions and Anthropic
Messages wire formats (JSON and SSE), records every request, and plays scripted failures."""

import json
import os
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


class Reply:
    """One scripted answer: a status, headers, and a JSON body, SSE events or raw bytes."""

    def __init__(self, status=200, body=None, events=None, raw=None, headers=None, delay=0.0, hold=None):
        self.status, self.body, self.events, self.raw = status, body, events, raw
        self.headers = headers or {}
        self.delay = delay
        self.hold = hold  # a threading.Event: the answer waits until the test sets it (no clock involved)


class LLMServer:
    def __init__(self, text=ANSWER):
        self.text = text
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
