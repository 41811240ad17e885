"""A `stree serve --mcp` subprocess driven with raw JSON-RPC lines (as any MCP client sends them
over stdio), so a test can send what a careful SDK would not: a cancellation in the middle of a
call, a request right behind a slow one, end of input at any moment."""

import json
import os
import queue
import subprocess
import sys
import threading

from conftest import interruptible

HELLO = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}


class McpServer:
    def __init__(self, *args, serve_args=(), env=None, cwd=None, launch=("-m", "stree")):
        """`launch`: what starts stree (python's arguments before stree's own)."""
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.proc = subprocess.Popen([sys.executable, *launch, *map(str, args), "serve", "--mcp", *serve_args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=full_env, cwd=cwd, preexec_fn=interruptible)
        self.answers = queue.Queue()
        self.n = 0
        self.pending = {}
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.send(HELLO)
        assert "result" in self.wait(0), self.stderr()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self):
        for raw in self.proc.stdout:
            self.answers.put(json.loads(raw))
        self.answers.put(None)

    def send(self, obj):
        self.proc.stdin.write((json.dumps(obj) + "\n").encode())
        self.proc.stdin.flush()

    def start(self, tool, **arguments):
        """Send a tools/call; returns its id (wait(id) for the answer)."""
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}})
        return self.n

    def cancel(self, id):
        self.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id,
                                                                                    "reason": "test"}})

    def ping(self, timeout=30):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": "ping"})
        return self.wait(self.n, timeout)

    def wait(self, id, timeout=60):
        if id in self.pending:
            return self.pending.pop(id)
        while True:
            message = self.answers.get(timeout=timeout)
            assert message is not None, f"the server ended: {self.stderr()}"
            if message.get("id") == id:
                return message
            if "id" in message:
                self.pending[message["id"]] = message

    def call(self, tool, timeout=60, **arguments):
        """The tools/call result object."""
        answer = self.wait(self.start(tool, **arguments), timeout)
        assert "result" in answer, answer
        return answer["result"]

    def close(self, timeout=30):
        self.proc.stdin.close()
        code = self.proc.wait(timeout)
        self.reader.join(timeout)
        return code

    def stderr(self):
        if self.proc.poll() is None:
            return "(still running)"
        return self.proc.stderr.read().decode(errors="replace")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
