"""A cassette run: the server, the agent it answers (if any), and the report.

Calling sequence: `run = CassetteRun(tree, leaf, api=...)`, `run.start()` (the server is
up: `run.url`), then `run.drive(argv, cwd, turn_timeout)` or `run.wait(idle_timeout)`,
and always `run.finish()` (stops the agent and the server) before `run.report()`.
"""

import os
import shutil
import tempfile
import threading
import time

from ..core.replay_match import Cassette, recorded_turns, user_inputs
from .cassette import CassetteServer
from .drive import Agent, AgentFailed, agent_env, write_agent_dir


class CassetteRun:
    def __init__(self, tree, leaf, api="openai", port=0, session_path=None):
        self.tree = tree
        self.leaf = leaf
        self.api = api
        self.session_path = session_path
        self.turns = recorded_turns(tree, leaf)
        # what the user typed before the last recorded answer (after it nothing answers)
        order = {id: i for i, id in enumerate(tree.path_ids(leaf))} if leaf else {}
        last = order[self.turns[-1].entry_id] if self.turns else -1
        self.prompts = [p for p in user_inputs(tree, leaf) if order[p[0]] < last]
        models = [t.message.get("model") for t in self.turns if isinstance(t.message.get("model"), str)]
        self.model_id = models[0] if models else "recorded"
        self.server = CassetteServer(Cassette(self.turns), port=port, models=sorted(set(models)) or [self.model_id])
        self.agent = None
        self.home = None
        self.drive_record = None
        self.interrupted = False
        self.failure = None  # why the drive stopped early (the agent failed), or None

    @property
    def url(self):
        return self.server.url

    def start(self):
        self.server.start()
        return self

    def calls_naming(self, directory):
        """The recorded tool calls whose arguments name `directory` (the recording's cwd) by
        absolute path: replayed in a scratch checkout, they act on that directory still."""
        import json

        if not directory or directory == "/":
            return []
        out = []
        for turn in self.turns:
            for block in turn.message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "toolCall" and \
                        directory in json.dumps(block.get("arguments"), ensure_ascii=False):
                    out.append((turn.entry_id, block.get("name")))
        return out

    # -- an agent driven through the recorded user messages ------------------------------

    def drive(self, argv, cwd, turn_timeout, keep_going=False, progress=None):
        self.home = tempfile.mkdtemp(prefix="stree-replay-")
        agent_dir = os.path.join(self.home, "agent")
        write_agent_dir(agent_dir, self.url, self.api, self.model_id)
        self.agent = Agent(argv, cwd, agent_env(agent_dir, self.url, self.model_id))
        self.drive_record = {"command": argv, "userMessages": len(self.prompts), "sent": 0, "stoppedAt": None}
        try:
            self.agent.start()
        except AgentFailed as e:
            self.failure = str(e)
            self.agent = None
            return
        for n, (entry_id, kind, text, images) in enumerate(self.prompts, 1):
            before = len(self.server.divergences)

            def sent(n=n, text=text if kind == "prompt" else f"!{text}"):
                self.drive_record["sent"] = n
                if progress:
                    progress(n, len(self.prompts), text)
            try:
                if kind == "prompt":
                    self.agent.prompt(text, images, turn_timeout, on_sent=sent)
                else:
                    sent()
                    self.agent.bash(text, kind == "bash-excluded", turn_timeout)
            except AgentFailed as e:
                self.failure = str(e)
                self.drive_record["stoppedAt"] = {"userMessage": n, "entryId": entry_id, "reason": str(e)}
                break
            if len(self.server.divergences) > before and not keep_going:
                self.drive_record["stoppedAt"] = {"userMessage": n, "entryId": entry_id,
                                                  "reason": "the conversation diverged from the recording"}
                break

    def wait(self, idle_timeout=None, stop=None):
        """Serve until `stop` (a threading.Event) is set or, with idle_timeout, no request
        came for that many seconds."""
        stop = stop or threading.Event()
        last, seen = time.monotonic(), 0
        while not stop.wait(0.2):
            if len(self.server.log) != seen:
                seen, last = len(self.server.log), time.monotonic()
            if idle_timeout and time.monotonic() - last >= idle_timeout:
                return

    def finish(self, session_out=None):
        """Stop the agent (and keep its session file at session_out) and the server."""
        try:
            if self.agent is not None and self.agent.proc is not None:
                if self.interrupted:
                    self.agent.kill()
                self.drive_record["exitCode"] = self.agent.close()
                if session_out:
                    self.drive_record["sessionFile"] = self._keep_session(session_out)
        finally:
            self.server.stop()
            if self.home:
                shutil.rmtree(self.home, ignore_errors=True)

    def _keep_session(self, target):
        """Copy the newest session the agent wrote to `target` (atomically); its path or None."""
        from ..writing.atomic import write_atomic

        found = []
        for root, _, files in os.walk(os.path.join(self.home, "agent")):
            found += [os.path.join(root, f) for f in files if f.endswith(".jsonl")]
        if not found:
            return None
        with open(max(found, key=os.path.getmtime), "rb") as f:
            write_atomic(target, f.read())
        return os.path.abspath(target)

    # -- the outcome -------------------------------------------------------------------------

    def not_reached(self):
        asked = {r.get("entryId") for r in self.server.log if "entryId" in r}
        return [{"turn": t.index, "entryId": t.entry_id} for t in self.turns if t.entry_id not in asked]

    def diverged(self):
        """Whether the run failed: a request matched no turn, or a whole drive left turns
        unasked, or the agent failed."""
        if self.server.divergences or self.failure:
            return True
        return self.drive_record is not None and not self.interrupted and bool(self.not_reached())

    def report(self):
        return {
            "session": self.session_path, "leaf": self.leaf, "api": self.api, "model": self.model_id,
            "recordedTurns": len(self.turns), "requests": len(self.server.log),
            "answered": sum(1 for r in self.server.log if "entryId" in r),
            "divergences": [{k: v for k, v in r.items() if k != "diverged"} for r in self.server.divergences],
            "notReached": self.not_reached(),
            "drive": self.drive_record, "agentError": self.failure, "interrupted": self.interrupted,
            "ok": not self.diverged() and not self.interrupted,
        }


def report_lines(report):
    """The report for people: a summary line, then each divergence."""
    drive = report.get("drive")
    head = f"{report['requests']} requests, {report['answered']} answered from the recording " \
           f"({report['recordedTurns']} recorded turns), {len(report['divergences'])} diverged"
    if drive:
        head = f"replayed {drive['sent']} of {drive['userMessages']} user messages: " + head
    lines = [head]
    for d in report["divergences"]:
        near = d.get("nearestTurn")
        where = f"nearest recorded turn {near['turn']} ({near['entryId']})" if near else "no recorded turn"
        lines.append(f"  request {d['request']} diverged; {where}: {'; '.join(d['differences'])}")
    if drive and report["notReached"] and not report["divergences"]:
        ids = ", ".join(t["entryId"] for t in report["notReached"][:5])
        lines.append(f"  {len(report['notReached'])} recorded turn(s) never asked for: {ids}")
    if report.get("agentError"):
        lines.append(f"  the agent stopped: {report['agentError']}")
    if drive and drive.get("sessionFile"):
        lines.append(f"  the agent's session: {drive['sessionFile']}")
    return lines
