"""Scripted model answers for tests: a loopback OpenAI / Anthropic server that plays a list of
assistant answers (text and tool calls), the n-th to a request holding n - 1 assistant
messages, streamed or not; and the real pi driven through its RPC mode to record sessions.

    server = ScriptedServer([Answer(calls=[("bash", {"command": "ls"})]), Answer("done")])
    path = record_with_pi(["list the files"], server.url, cwd=scratch, home=tmp)

The events are written here by hand, from the APIs' documentation, independently of
stree's own encoder (stree.service.cassette_wire), so that each checks the other.
"""

import json
import os
import queue
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NODE22 = ROOT / "tests" / "pi" / "node22" / "bin" / "node"


def pi_cli(version="1.6.0"):
    return ROOT / "tests" / "pi" / "versions" / version / "dist" / "bundle" / "cli.js"


def pi_command(version="1.6.0"):
    """The argv of the real pi's RPC mode (its `pi` bin is dist/bundle/cli.js)."""
    return [str(NODE22), str(pi_cli(version)), "--mode", "rpc"]


@dataclass
class Answer:
    text: str = ""
    calls: list = field(default_factory=list)  # [(tool name, arguments dict)]
    usage: tuple = (100, 20)  # (prompt tokens, completion tokens)
    model: str = "scripted-model"


class ScriptedServer:
    def __init__(self, answers, id_prefix="call_"):
        self.answers = list(answers)
        self.id_prefix = id_prefix
        self.requests = []
        self.calls_made = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                server.requests.append((self.path, body))
                # the answer for this point of the conversation: the n-th for a request holding
                # n - 1 assistant messages (pi asks in order; stree replay -j N in any order)
                turn = sum(1 for m in body.get("messages") or []
                           if isinstance(m, dict) and m.get("role") == "assistant")
                if turn >= len(server.answers):
                    return self._reply(500, "application/json", b'{"error":{"message":"script exhausted"}}')
                answer = server.answers[turn]
                anthropic = self.path.split("?", 1)[0].endswith("/messages")
                if body.get("stream"):
                    events = server.anthropic_events(answer) if anthropic else server.openai_events(answer)
                    payload = "".join((f"event: {n}\n" if n else "") +
                                      f"data: {d if isinstance(d, str) else json.dumps(d)}\n\n"
                                      for n, d in events).encode()
                    return self._reply(200, "text/event-stream", payload)
                data = server.anthropic_json(answer) if anthropic else server.openai_json(answer)
                return self._reply(200, "application/json", json.dumps(data).encode())

            def _reply(self, status, ctype, payload):
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def _ids(self, answer):
        with self.lock:
            out = []
            for _ in answer.calls:
                self.calls_made += 1
                out.append(f"{self.id_prefix}{self.calls_made:04d}")
            return out

    def openai_json(self, answer):
        message = {"role": "assistant", "content": answer.text or None}
        if answer.calls:
            message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                                     for i, (n, a) in zip(self._ids(answer), answer.calls)]
        return {"id": "chatcmpl-s", "object": "chat.completion", "created": 1, "model": answer.model,
                "choices": [{"index": 0, "message": message,
                             "finish_reason": "tool_calls" if answer.calls else "stop"}],
                "usage": {"prompt_tokens": answer.usage[0], "completion_tokens": answer.usage[1],
                          "total_tokens": sum(answer.usage)}}

    def openai_events(self, answer):
        base = {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1, "model": answer.model}

        def chunk(delta, finish=None):
            return None, dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])

        out = [chunk({"role": "assistant", "content": ""})]
        if answer.text:
            out += [chunk({"content": answer.text[i:i + 5]}) for i in range(0, len(answer.text), 5)]
        for k, (call_id, (name, args)) in enumerate(zip(self._ids(answer), answer.calls)):
            text = json.dumps(args)
            out.append(chunk({"tool_calls": [{"index": k, "id": call_id, "type": "function",
                                              "function": {"name": name, "arguments": text[:3]}}]}))
            out.append(chunk({"tool_calls": [{"index": k, "function": {"arguments": text[3:]}}]}))
        out.append(chunk({}, "tool_calls" if answer.calls else "stop"))
        out.append((None, dict(base, choices=[], usage={"prompt_tokens": answer.usage[0],
                                                         "completion_tokens": answer.usage[1],
                                                         "total_tokens": sum(answer.usage)})))
        return out + [(None, "[DONE]")]

    def anthropic_json(self, answer):
        content = [{"type": "text", "text": answer.text}] if answer.text else []
        content += [{"type": "tool_use", "id": i, "name": n, "input": a}
                    for i, (n, a) in zip(self._ids(answer), answer.calls)]
        return {"id": "msg_s", "type": "message", "role": "assistant", "model": answer.model, "content": content,
                "stop_reason": "tool_use" if answer.calls else "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": answer.usage[0], "output_tokens": answer.usage[1]}}

    def anthropic_events(self, answer):
        data = self.anthropic_json(answer)
        out = [("message_start", {"type": "message_start", "message": dict(data, content=[], stop_reason=None)})]
        for i, block in enumerate(data["content"]):
            if block["type"] == "text":
                out.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                    "content_block": {"type": "text", "text": ""}}))
                out.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                    "delta": {"type": "text_delta", "text": block["text"]}}))
            else:
                out.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                    "content_block": dict(block, input={})}))
                out.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                    "type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
            out.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        out.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": data["stop_reason"]},
                                      "usage": {"output_tokens": answer.usage[1]}}))
        return out + [("message_stop", {"type": "message_stop"})]


def pi_agent_dir(agent_dir, url, api="openai", model="scripted-model"):
    """A pi agent dir whose default model is the server at `url`."""
    agent_dir = Path(agent_dir)
    agent_dir.mkdir(parents=True, exist_ok=True)
    provider = {"baseUrl": url + "/v1" if api == "openai" else url,
                "api": "openai-completions" if api == "openai" else "anthropic-messages",
                "apiKey": "test-key", "models": [{"id": model, "contextWindow": 1000000}]}
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"scripted": provider}}))
    (agent_dir / "settings.json").write_text(json.dumps({"defaultProvider": "scripted", "defaultModel": model}))
    return agent_dir


def record_with_pi(prompts, url, cwd, home, api="openai", version="1.6.0", timeout=120):
    """Drive the real pi through `prompts` (one RPC prompt each, the next once it settled; a
    {"bash": COMMAND} item is the user's `!COMMAND`) against the model server at `url`;
    returns the session file pi wrote."""
    home = Path(home)
    agent_dir = pi_agent_dir(home / "agent", url, api)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "PI_CODING_AGENT_DIR": str(agent_dir),
           "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0", "TZ": "UTC", "LANG": "C.UTF-8"}
    proc = subprocess.Popen(pi_command(version), cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout] + [lines.put(None)], daemon=True).start()
    try:
        for n, text in enumerate(prompts):
            command = {"type": "bash", "command": text["bash"]} if isinstance(text, dict) else \
                {"type": "prompt", "message": text}
            proc.stdin.write(json.dumps({"id": f"p{n}", **command}).encode() + b"\n")
            proc.stdin.flush()
            while True:
                line = lines.get(timeout=timeout)
                assert line is not None, f"pi exited: {proc.stderr.read().decode()[-2000:]}"
                record = json.loads(line)
                if record.get("type") == "response" and record.get("id") == f"p{n}":
                    assert record["success"], record
                    if command["type"] == "bash":
                        break
                if record.get("type") == "agent_settled":
                    break
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    sessions = sorted(agent_dir.rglob("*.jsonl"))
    assert len(sessions) == 1, sessions
    return sessions[0]
