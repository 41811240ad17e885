"""Images taken out of a session's entries (`stree fork --drop-images / --extract-images DIR`).

pi keeps a pasted screenshot or an image a tool read inline, base64 in the entry
({"type": "image", "data", "mimeType"} in a content list), and a session grown by them to
gigabytes is one pi cannot open any more (it runs out of heap: pi#9613). Each image block
is replaced by a text block saying what was there, so pi shows its place in the
transcript and the model reads it in the context:

    [image removed: image/png, 1.2 MB, sha256 3f2a…]
    [image removed: image/png, 1.2 MB, sha256 3f2a…, saved as /abs/dir/3f2a….png]
"""

import base64
import binascii
import hashlib
import os

EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/jpg": "jpg", "image/gif": "gif",
              "image/webp": "webp", "image/svg+xml": "svg", "image/bmp": "bmp"}


def human_size(n):
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _is_image(block):
    return block.__class__ is dict and block.get("type") == "image" and block.get("data").__class__ is str


class ImageStripper:
    """Called on a loaded entry: a copy with every image block (in any list, at any depth)
    replaced by a text block; with `directory`, each image is saved there first, once per
    content (named by its sha256). `count` and `size` total what was taken out."""

    def __init__(self, directory=None):
        self.directory = os.path.abspath(directory) if directory is not None else None
        self.count = 0
        self.size = 0
        self.saved = set()

    @staticmethod
    def touches(raw):
        """Whether an entry's bytes may hold an image block (else they are copied as they are)."""
        return b'"image"' in raw

    def __call__(self, value):
        if value.__class__ is dict:
            return {k: self(v) for k, v in value.items()}
        if value.__class__ is list:
            return [self._replace(v) if _is_image(v) else self(v) for v in value]
        return value

    def _replace(self, block):
        data = block["data"]
        mime = block.get("mimeType") if block.get("mimeType").__class__ is str else "image"
        try:
            payload = base64.b64decode(data, validate=False)
        except (binascii.Error, ValueError):
            payload = data.encode("utf-8", "surrogatepass")
        digest = hashlib.sha256(payload).hexdigest()
        self.count += 1
        self.size += len(payload)
        text = f"[image removed: {mime}, {human_size(len(payload))}, sha256 {digest}"
        if self.directory is not None:
            text += f", saved as {self._save(payload, digest, mime)}"
        return {"type": "text", "text": text + "]"}

    def _save(self, payload, digest, mime):
        from .atomic import NEW_FILE_MODE, write_atomic

        path = os.path.join(self.directory, f"{digest}.{EXTENSIONS.get(mime.lower(), 'bin')}")
        if path not in self.saved and not os.path.exists(path):
            write_atomic(path, payload, mode=NEW_FILE_MODE)
        self.saved.add(path)
        return path
