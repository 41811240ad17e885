"""Drive an agent through a recorded session over pi's RPC mode (`--drive 'pi --mode rpc'`).

The agent is started with PI_CODING_AGENT_DIR pointing at a temporary agent dir whose
models.json has one provider, `stree-replay`, at the cassette server, and whose settings.json
makes it the default: pi needs no flag and no key. Each recorded user message is sent as a
`prompt` command; the next is sent once the agent reports `agent_settled` (pi 0.80.4 and
later). A user's `!command` is sent as a `bash` command (its output is the agent's own).
The agent runs the recorded tool calls for real, in the directory it is started in.

Calling sequence: `agent = Agent(argv, cwd, env)`, `agent.start()`,
`agent.prompt(text, images, timeout)` per user message, `agent.bash(command, exclude, timeout)`
per `!command` (both raise AgentFailed), `agent.close()`.
"""

import json
import os
import queue
import signal
import subprocess
import threading
import time

PROVIDER = "stree-replay"
CLOSE_GRACE = 10.0  # seconds the agent has to exit once its stdin is closed (then SIGTERM, SIGKILL)
STDERR_TAIL = 4000  # characters of the agent's stderr kept for error messages
EXIT_GRACE = 5.0  # seconds an agent whose input was found closed has to show its exit status


class AgentFailed(Exception):
    """The agent exited, refused a prompt or did not settle in time."""


def write_agent_dir(agent_dir, url, api, model_id):
    """models.json and settings.json of a temporary pi agent dir pointed at the server."""
    os.makedirs(agent_dir, exist_ok=True)
    base = url + "/v1" if api == "openai" else url
    models = {"providers": {PROVIDER: {
        "baseUrl": base, "api": "openai-completions" if api == "openai" else "anthropic-messages",
        "apiKey": "stree-replay", "models": [{
            "id": model_id, "name": f"{model_id} (replayed by stree)", "reasoning": False, "input": ["text", "image"],
            "contextWindow": 10_000_000, "maxTokens": 1_000_000,  # never a compaction the recording did not have
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]}}}
    settings = {"defaultProvider": PROVIDER, "defaultModel": model_id}
    for name, data in (("models.json", models), ("settings.json", settings)):
        with open(os.path.join(agent_dir, name), "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)


def agent_env(agent_dir, url, model_id):
    env = dict(os.environ)
    env.pop("PI_CODING_AGENT_SESSION_DIR", None)  # the replay's own session stays in the temp agent dir
    env.update({"PI_CODING_AGENT_DIR": agent_dir, "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1",
                "PI_TELEMETRY": "0", "STREE_REPLAY_URL": url, "STREE_REPLAY_OPENAI_BASE_URL": url + "/v1",
                "STREE_REPLAY_ANTHROPIC_BASE_URL": url, "STREE_REPLAY_MODEL": model_id})
    return env


class Agent:
    def __init__(self, argv, cwd, env):
        self.argv = argv
        self.cwd = cwd
        self.env = env
        self.proc = None
        self.events = queue.Queue()
        self.stderr = ""
        self.sent = 0

    def start(self):
        try:
            self.proc = subprocess.Popen(self.argv, cwd=self.cwd, env=self.env, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        except OSError as e:
            raise AgentFailed(f"cannot start {self.argv[0]}: {e.strerror}") from None
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        return self

    def _read_stdout(self):
        pending = b""
        for chunk in iter(lambda: self.proc.stdout.read1(65536), b""):
            pending += chunk
            *lines, pending = pending.split(b"\n")  # strict JSONL: LF only (U+2028 is data)
            for line in lines:
                line = line.rstrip(b"\r")
                if line.strip():
                    try:
                        self.events.put(json.loads(line))
                    except ValueError:
                        pass  # not a record: agents may print other things
        self.events.put(None)  # end of output

    def _read_stderr(self):
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):
            self.stderr = (self.stderr + chunk.decode("utf-8", "replace"))[-STDERR_TAIL:]

    def _send(self, record):
        try:
            self.proc.stdin.write(json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n")
            self.proc.stdin.flush()
        except OSError:
            raise AgentFailed(self._gone()) from None

    def _gone(self):
        try:  # (its input is closed as it exits, a moment before its exit status is there to read)
            code = self.proc.wait(EXIT_GRACE)
        except subprocess.TimeoutExpired:
            code = None  # (it closed its input and runs on)
        tail = self.stderr.strip().splitlines()[-3:]
        return (f"the agent exited (code {code})" if code is not None else "the agent closed its input") + \
            (": " + " | ".join(tail) if tail else "")

    def prompt(self, text, images, timeout, on_sent=None):
        """Send one user message (then call on_sent()) and wait until the agent settles.
        Returns the events seen."""
        self.sent += 1
        request_id = f"stree-replay-{self.sent}"
        record = {"id": request_id, "type": "prompt", "message": text}
        if images:
            record["images"] = images
        self._send(record)
        if on_sent:
            on_sent()
        accepted, seen = False, []
        for event in self._records(timeout, f"finish user message {self.sent}"):
            seen.append(event)
            if event.get("type") == "response" and event.get("id") == request_id:
                if not event.get("success"):
                    raise AgentFailed(f"the agent refused user message {self.sent}: {event.get('error')}")
                accepted = True
                if (event.get("data") or {}).get("disposition") == "handled":
                    return seen  # an extension command: no run starts
            elif event.get("type") == "agent_settled" and accepted:
                return seen

    def bash(self, command, exclude, timeout):
        """Run a user's `!command` through the agent (RPC `bash`) and wait for its answer."""
        self.sent += 1
        request_id = f"stree-replay-{self.sent}"
        record = {"id": request_id, "type": "bash", "command": command}
        if exclude:
            record["excludeFromContext"] = True
        self._send(record)
        for event in self._records(timeout, f"run !{command}"):
            if event.get("type") == "response" and event.get("id") == request_id:
                if not event.get("success"):
                    raise AgentFailed(f"the agent refused !{command}: {event.get('error')}")
                return event

    def _records(self, timeout, doing):
        """The agent's records as they come (never ending by itself), until `timeout` seconds
        have passed (AgentFailed: it did not `doing` in time) or the agent's output ends."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AgentFailed(f"the agent did not {doing} within {timeout:g}s")
            try:
                event = self.events.get(timeout=left)
            except queue.Empty:
                continue
            if event is None:
                raise AgentFailed(self._gone())
            if isinstance(event, dict):
                yield event

    def close(self):
        """Close stdin and wait for the agent to exit (SIGTERM, then SIGKILL, to its process group)."""
        if self.proc is None:
            return None
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None:
                try:
                    os.killpg(self.proc.pid, sig)
                except OSError:
                    pass
            try:
                return self.proc.wait(timeout=CLOSE_GRACE)
            except subprocess.TimeoutExpired:
                continue
        return self.proc.wait()

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()
