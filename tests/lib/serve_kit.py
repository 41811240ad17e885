"""A `stree serve` subprocess driven as a client drives it: requests written to its stdin, its
stdout read line by line by a thread (responses by id, events apart), with timeouts."""

import json
import os
import queue
import subprocess
import sys
import threading

from conftest import interruptible
from schema_check import check_record, load

SCHEMA = load()


class Server:
    def __init__(self, session, *args, env=None, cwd=None, launch=("-m", "stree")):
        """`launch`: what starts stree (python's arguments before stree's own)."""
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.proc = subprocess.Popen([sys.executable, *launch, "-s", str(session), "serve", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=full_env, cwd=cwd, preexec_fn=interruptible)
        self.lines = queue.Queue()
        self.events = queue.Queue()
        self.records = []  # every record read, in order
        self.invalid = []  # records that do not validate against serve.schema.json
        self.pending = {}
        self.n = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.proc.stdout:
            try:
                record = json.loads(raw)
            except RecursionError:  # a tree nested deeper than Python's json module goes
                from stree.format.decode import decode_deep

                record = decode_deep(raw.decode())
            self.records.append(record)
            try:
                problems = check_record(record, SCHEMA)
            except RecursionError:
                problems = []  # (the checker recurses: a 3000-deep tree is checked by the comparison with pi)
            if problems:
                self.invalid.append((record, problems))
            (self.lines if record.get("type") == "response" else self.events).put(record)
        self.lines.put(None)

    def send(self, obj):
        data = obj if isinstance(obj, bytes) else (json.dumps(obj) + "\n").encode()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def response(self, timeout=30):
        record = self.lines.get(timeout=timeout)
        assert record is not None, f"the server ended: {self.stderr()}"
        return record

    def request(self, type, timeout=30, **fields):
        """Send a request with a fresh id and wait for its response (other responses are kept)."""
        self.n += 1
        id = f"r{self.n}"
        self.send({"id": id, "type": type, **fields})
        return self.wait(id, timeout)

    def wait(self, id, timeout=30):
        if id in self.pending:
            return self.pending.pop(id)
        while True:
            record = self.response(timeout)
            if record.get("id") == id:
                return record
            self.pending[record.get("id")] = record

    def data(self, type, **fields):
        r = self.request(type, **fields)
        assert r["success"], r
        return r.get("data")

    def event(self, timeout=30):
        return self.events.get(timeout=timeout)

    def close(self, timeout=30):
        """End of input: the exit code."""
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        code = self.proc.wait(timeout)
        self.reader.join(timeout)  # every line it printed is read
        assert not self.invalid, f"responses not as serve.schema.json says: {self.invalid[:3]}"
        return code

    def stderr(self):
        if self.proc.poll() is None:
            return "(still running)"
        return self.proc.stderr.read().decode(errors="replace")

    def kill(self):
        """(fixture teardown) Stop it if a test left it running; its records must validate too."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(30)
        assert not self.invalid, f"responses not as serve.schema.json says: {self.invalid[:3]}"
