"""`stree replay --serve`: a loopback model server that answers from a recorded session.

POST .../chat/completions (OpenAI) and POST .../messages (Anthropic, any query) are answered
with the recorded assistant message whose context has the request's fingerprint
(stree.core.replay_match), streamed when the request asks for it. A request that matches no
recorded turn is a divergence: it gets an HTTP 400 error the agent shows, and is kept with
the nearest turn and what differs. GET .../models lists the recorded models.

Calling sequence: `server = CassetteServer(cassette)`, `server.start()` (binds 127.0.0.1 and
serves in a thread), `server.url`, ..., `server.stop()`; then `server.log` (every request)
and `server.divergences`.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ..core.replay_match import differences, from_anthropic, from_openai
from . import cassette_wire as wire

READ_TIMEOUT = 30.0  # seconds a client may take to send one request (then its connection is closed)
MAX_BODY = 256 << 20  # bytes of one request body


class CassetteServer:
    def __init__(self, cassette, port=0, models=()):
        self.cassette = cassette
        self.port = port
        self.models = list(models)
        self.log = []  # {request, api, stream, turn, entryId} or a divergence record
        self.divergences = []
        self.lock = threading.Lock()
        self.httpd = None
        self.thread = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = READ_TIMEOUT

            def log_message(self, *args):
                pass

            def do_POST(self):
                server.handle_post(self)

            def do_GET(self):
                server.handle_get(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="stree-cassette", daemon=True)
        self.thread.start()
        return self

    def stop(self):
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None

    # -- requests --------------------------------------------------------------------------

    def handle_get(self, handler):
        path = handler.path.split("?", 1)[0].rstrip("/")
        if path.endswith("/models"):
            data = [{"id": m, "object": "model", "type": "model", "created": 0, "owned_by": "stree"}
                    for m in self.models]
            return _send(handler, 200, {"object": "list", "data": data})
        return _send(handler, 404, wire.openai_error(f"stree replay: no route GET {path}"))

    def handle_post(self, handler):
        path = handler.path.split("?", 1)[0].rstrip("/")
        api = "openai" if path.endswith("/chat/completions") else "anthropic" if path.endswith("/messages") else None
        error = wire.anthropic_error if api == "anthropic" else wire.openai_error
        try:
            length = int(handler.headers.get("content-length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            handler.close_connection = True
            return _send(handler, 400, error("stree replay: a request needs a content-length (at most 256 MiB)"))
        try:
            raw = handler.rfile.read(length)
        except OSError:  # the client went away or stalled past READ_TIMEOUT
            handler.close_connection = True
            return None
        if api is None:
            return _send(handler, 404, error(f"stree replay: no route POST {path} (this server answers "
                                             ".../chat/completions and .../messages)"))
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            return _send(handler, 400, error(f"stree replay: the request body is not a JSON object: {e}"))
        atoms = from_openai(body) if api == "openai" else from_anthropic(body)
        with self.lock:
            n = len(self.log) + 1
            turn = self.cassette.find(atoms)
            if turn is None:
                record = self._divergence(n, api, atoms)
                self.divergences.append(record)
            else:
                record = {"request": n, "api": api, "stream": bool(body.get("stream")), "turn": turn.index,
                          "entryId": turn.entry_id}
            self.log.append(record)
        if turn is None:
            return _send(handler, 400, error(record["message"]))
        message = turn.message
        if message.get("stopReason") == "error":  # recorded as a failed call: fail the same way
            text = str(message.get("errorMessage") or "the recorded call failed")
            return _send(handler, 400, error(f"{text} (recorded error, replayed by stree)", "api_error"))
        answer_id = f"stree-replay-{turn.entry_id}"
        model = message.get("model")
        if body.get("stream"):
            events = (wire.openai_events if api == "openai" else wire.anthropic_events)(message, answer_id, model)
            return _send_events(handler, events)
        return _send(handler, 200, (wire.openai_json if api == "openai" else wire.anthropic_json)(message, answer_id,
                                                                                                 model))

    def _divergence(self, n, api, atoms):
        nearest = self.cassette.nearest(atoms)
        record = {"request": n, "api": api, "diverged": True, "messages": len(atoms)}
        if nearest is None:
            record["nearestTurn"] = None
            record["differences"] = ["the recording has no assistant turn"]
        else:
            record["nearestTurn"] = {"turn": nearest.index, "entryId": nearest.entry_id,
                                     "parentId": nearest.parent_id}
            record["differences"] = differences(nearest.atoms, atoms)
        users = [a[1] for a in atoms if a[0] == "user"]
        record["lastUserText"] = users[-1] if users else None
        where = f"nearest recorded turn {nearest.index} (entry {nearest.entry_id})" if nearest else "no recorded turn"
        record["message"] = (f"stree replay: this conversation diverged from the recording: "
                             f"{'; '.join(record['differences'])}; {where}")
        return record


def _send(handler, status, data):
    payload = json.dumps(data, ensure_ascii=False).encode("utf-8")
    try:
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)
        handler.wfile.flush()
    except OSError:  # the client went away: nothing to answer
        handler.close_connection = True


def _send_events(handler, events):
    payload = wire.sse(events)
    try:
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("cache-control", "no-cache")
        handler.send_header("content-length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)
        handler.wfile.flush()
    except OSError:
        handler.close_connection = True
