"""Answers a server keeps made between requests: the response line of a request whose answer
depends only on the served file (get_state), kept with the identity of the file it was made
from (core.warm.file_identity). The reader thread sends it at once when the file is unchanged
and nothing is ahead of the request (server.py): no turn of the main thread, nothing read,
decoded or encoded. Anything else (the file changed, another session served, a request with
fields) goes to the handler, which makes the answer and keeps it again."""

import os

from ..core.warm import file_identity
from .protocol import UNSET, encode, json_bytes, success

KEPT = ("get_state",)  # the request types whose answers are kept


class Answers:
    def __init__(self):
        self._kept = {}  # type -> (path, file identity, the response line without an id)

    def keep(self, kind, path, identity, data):
        """Keep `data`, the answer to a `kind` request about `path` as read at `identity`."""
        if identity is not None:
            self._kept[kind] = (path, identity, encode(success(UNSET, kind, data)))

    def answer(self, request, path):
        """The response line to `request` (a dict) about `path`, when it is kept and the file has
        not changed since; else None."""
        kind = request.get("type")
        kept = self._kept.get(kind)
        if kept is None or kept[0] != path or len(request) > 1 + ("id" in request):
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        if file_identity(st) != kept[1]:
            return None
        if "id" not in request:
            return kept[2]
        return b'{"id":' + _id_json(request["id"]) + b"," + kept[2][1:]  # (success() puts the id first)


def _id_json(id):
    """json_bytes(id), without the encoder for the usual id: printable ASCII, no quote or backslash."""
    if id.__class__ is str and id.isascii() and id.isprintable() and '"' not in id and "\\" not in id:
        return b'"' + id.encode() + b'"'
    return json_bytes(id)
