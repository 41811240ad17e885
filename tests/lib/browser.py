"""Real headless Chromium for the HTML export tests: Debian's /usr/bin/chromium, driven over
the DevTools protocol on --remote-debugging-pipe (fd 3 in, fd 4 out, NUL-separated JSON), no
dependency beyond the standard library."""

import base64
import fcntl
import json
import os
import select
import shutil
import struct
import subprocess
import time
import zlib

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--mute-audio"]


def executable():
    for name in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if name and os.access(name, os.X_OK):
            return name
    return None


def screenshot(html_path, png_path, profile, width=1280, height=1024):
    """chromium --screenshot of a file: the PNG's bytes."""
    proc = subprocess.run([executable(), *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                           f"--screenshot={png_path}", f"file://{html_path}"],
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return open(png_path, "rb").read()


def dump_dom(html_path, profile):
    """chromium --dump-dom: the DOM after the page's scripts ran."""
    proc = subprocess.run([executable(), *FLAGS, f"--user-data-dir={profile}", "--dump-dom", f"file://{html_path}"],
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return proc.stdout.decode("utf-8")


def png_info(data):
    """(width, height, distinct byte values of the decoded image data) of a PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos = 8
    width = height = None
    idat = b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return width, height, len(set(zlib.decompress(idat)))


class Page:
    """One tab of a headless Chromium, over the DevTools pipe."""

    def __init__(self, profile):
        r_in, w_in = os.pipe()  # we write commands -> the browser's fd 3
        r_out, w_out = os.pipe()  # the browser's fd 4 -> we read
        hi_in = fcntl.fcntl(r_in, fcntl.F_DUPFD, 10)
        hi_out = fcntl.fcntl(w_out, fcntl.F_DUPFD, 10)

        def child_fds():
            os.dup2(hi_in, 3)
            os.dup2(hi_out, 4)

        self.proc = subprocess.Popen([executable(), *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-pipe",
                                      "about:blank"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, pass_fds=(3, 4), preexec_fn=child_fds)
        for fd in (r_in, w_out, hi_in, hi_out):
            os.close(fd)
        self.wfd = w_in
        self.rfd = r_out
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    def _send(self, method, params, session):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.wfd, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def _read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.rfd], [], [], left)[0]:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self.rfd, 1 << 20)
            if not chunk:
                raise EOFError("chromium closed the DevTools pipe")
            self.buf += chunk
        raw, _, self.buf = self.buf.partition(b"\0")
        return json.loads(raw)

    def call(self, method, params=None, timeout=60):
        want = self._send(method, params, self.session)
        deadline = time.monotonic() + timeout
        while True:
            msg = self._read(deadline)
            if msg.get("id") == want:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method, timeout=60):
        deadline = time.monotonic() + timeout
        for i, msg in enumerate(self.events):
            if msg["method"] == method:
                return self.events.pop(i)
        while True:
            msg = self._read(deadline)
            if msg.get("method") == method:
                return msg
            if "method" in msg:
                self.events.append(msg)

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, url, before=None):
        """Load `url` (after `before`, a script run first in every new document) and wait for it."""
        self.call("Page.enable")
        self.call("Network.enable")
        if before:
            self.call("Page.addScriptToEvaluateOnNewDocument", {"source": before})
        self.call("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def screenshot(self):
        return base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])

    def requests(self):
        """URLs of every request the page sent (Network.requestWillBeSent), so far."""
        return [m["params"]["request"]["url"] for m in self.events if m["method"] == "Network.requestWillBeSent"]

    def close(self):
        try:
            self._send("Browser.close", {}, None)
            self.proc.wait(timeout=20)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        finally:
            os.close(self.wfd)
            os.close(self.rfd)
