"""One POST to a model API over httpx: retries, timeouts, SSE, errors without secrets."""

import json
import os
import random
import re
import sys
import time
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit, urlunsplit

import httpx

from .. import __version__
from ..errors import MODEL, StreeError

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # a Python str holds pairs as one code point
SECRET_HEADERS = {"authorization", "x-api-key", "api-key"}


class ModelError(StreeError):
    code = MODEL


class _Expired(BaseException):
    """The overall deadline's alarm (a BaseException: no `except Exception` on the way swallows it)."""


ALARM_GRACE = 1.0  # seconds after max_time: the reads' own deadline checks come first


MIN_FRAGMENT = 8  # a run of this many characters of a key (or more) is a piece of it


def secret_forms(key):
    """The key as a server may echo it back: plain, URL-encoded, JSON-escaped, base64."""
    if not key:
        return []
    import base64
    from urllib.parse import quote, quote_plus

    raw = key.encode("utf-8", "surrogatepass")
    forms = {key, quote(key, safe=""), quote_plus(key), key.replace("/", "\\/"),
             json.dumps(key)[1:-1]}
    for text in (raw, b"Bearer " + raw):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(text).decode("ascii")
            forms.update((encoded, encoded.rstrip("=")))
    return sorted(forms, key=len, reverse=True)


def redact(text, secrets):
    """`text` with every secret form, and any piece of one that starts it and is at least
    MIN_FRAGMENT characters long (a key the server cut off), replaced by ***."""
    for secret in secrets:  # whole forms first, the longest first
        text = text.replace(secret, "***")
    for secret in secrets:
        if len(secret) <= MIN_FRAGMENT:
            continue
        start = 0
        while True:
            at = text.find(secret[:MIN_FRAGMENT], start)
            if at < 0:
                break
            end = at + MIN_FRAGMENT
            while end - at < len(secret) and end < len(text) and text[end] == secret[end - at]:
                end += 1
            text = text[:at] + "***" + text[end:]
            start = at + 3
    return text


def safe_url(url):
    """The URL without user:password and query (either may carry credentials)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


class Call:
    """A POST of a JSON body to `url`, with the options' timeout and retry policy."""

    def __init__(self, provider, options, url, headers, body):
        self.provider = provider
        self.options = options
        self.url = url
        self.headers = {"content-type": "application/json", "user-agent": f"stree/{__version__}", **headers}
        self.body = body
        # the key sent, and any other key in the environment (a server may know one we did not send)
        keys = {options.api_key} | {v for k, v in os.environ.items() if k.upper().endswith("_API_KEY")}
        self.secrets = sorted({form for key in keys if key and len(key) >= 8 for form in secret_forms(key)}
                              | ({options.api_key} if options.api_key else set()), key=len, reverse=True)

    # -- messages ------------------------------------------------------

    def redact(self, text):
        return redact(text, self.secrets)

    def fail(self, message, hint=None):
        return ModelError(self.redact(f"{self.provider}: {message}"), hint=hint and self.redact(hint))

    def say(self, message):
        """A line on stderr while a request goes on (a retry): the spinner's line cleared first."""
        from ..format.terminal import inert

        start = "\r\x1b[K" if sys.stderr.isatty() else ""
        sys.stderr.write(start + inert(self.redact(f"stree: {message}"), oneline=True) + "\n")
        sys.stderr.flush()

    def debug(self, message):
        if self.options.debug:
            from ..format.terminal import inert

            sys.stderr.write(inert(self.redact(f"stree: debug: {message}"), oneline=True) + "\n")
            sys.stderr.flush()

    def _shown_headers(self):
        return ", ".join(f"{k}: {'***' if k.lower() in SECRET_HEADERS else v}" for k, v in self.headers.items())

    # -- sending -------------------------------------------------------

    # -- limits ----------------------------------------------------------

    def _left(self):
        """Seconds left before the overall deadline (options.max_time); fails past it."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self.fail(f"no complete answer from {safe_url(self.url)} within {self.options.max_time:g}s "
                            "(max_time)", hint="raise max_time (config) or STREE_MAX_TIME, or check the server")
        return left

    def chunks(self, response, limit=None):
        """The body in pieces, read within the deadline and at most `limit` bytes (the
        options' response_limit by default) in all: never read whole into memory."""
        limit = limit or self.options.response_limit or (16 << 20)
        seen = 0
        for chunk in response.iter_bytes():
            seen += len(chunk)
            if seen > limit:
                raise self.fail(f"the answer from {safe_url(self.url)} is larger than {limit} bytes; nothing "
                                "written", hint="the server ignored the max tokens asked for: check "
                                "--base-url and --model")
            self._left()
            yield chunk

    def read_body(self, response, limit=None):
        return b"".join(self.chunks(response, limit))

    def _error_body(self, response):
        """The first ERROR_BODY_LIMIT bytes of an error response (the rest is not read)."""
        from . import ERROR_BODY_LIMIT

        out = b""
        for chunk in response.iter_bytes():
            out += chunk
            if len(out) >= ERROR_BODY_LIMIT:
                return out[:ERROR_BODY_LIMIT]
            self._left()
        return out

    # -- sending -------------------------------------------------------

    def send(self, on_response):
        """POST with retries; `on_response(response)` reads a successful (2xx) response.

        Every read is checked against the overall deadline (max_time); a read that never
        returns (a server trickling its headers a byte at a time, each within the timeout)
        is cut by an alarm shortly after it, in the main thread where stree runs this."""
        import signal
        import threading

        alarm = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
        if not alarm:
            return self._send(on_response)

        def expired(signum, frame):
            raise _Expired()

        previous = signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, self.options.max_time + ALARM_GRACE)
        try:
            return self._send(on_response)
        except _Expired:
            self.deadline = 0
            self._left()  # raises the max_time error
            raise
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    def _send(self, on_response):
        options = self.options
        url = safe_url(self.url)
        # pi's sanitizeSurrogates: a lone surrogate (from a \\ud800 escape in the file) is dropped
        content = LONE_SURROGATE.sub("", json.dumps(self.body, ensure_ascii=False)).encode("utf-8")
        waited = 0.0
        attempt = 0
        self.deadline = time.monotonic() + options.max_time
        with httpx.Client(timeout=httpx.Timeout(options.timeout), follow_redirects=False) as client:
            while True:
                attempt += 1
                self.debug(f"POST {url} attempt {attempt} ({len(content)} bytes; {self._shown_headers()})")
                started = time.monotonic()
                client.timeout = httpx.Timeout(min(options.timeout, self._left()))
                try:
                    with client.stream("POST", self.url, content=content, headers=self.headers) as response:
                        self.debug(f"HTTP {response.status_code} after {time.monotonic() - started:.2f}s")
                        if response.status_code < 300:
                            return on_response(response)
                        error = self._status_error(response, url, self._error_body(response))
                        retry_after = _retry_after(response.headers.get("retry-after"))
                        retryable = response.status_code in RETRY_STATUS
                except httpx.TimeoutException:
                    self._left()
                    raise self.fail(f"no answer from {url} within {options.timeout:g}s (timed out)",
                                    hint="raise --timeout, or check that the server is up") from None
                except (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as e:
                    error = self.fail(f"cannot reach {url}: {_reason(e)}",
                                      hint="check --base-url and that the server is running")
                    retry_after, retryable = None, True
                except httpx.HTTPError as e:
                    raise self.fail(f"request to {url} failed: {_reason(e)}") from None
                if not retryable or attempt > options.max_retries:
                    raise error from None
                wait = retry_after if retry_after is not None else min(2 ** (attempt - 1), 30) * (
                    1 + random.random() / 4)
                if waited + wait > options.retry_max_time or wait >= self.deadline - time.monotonic():
                    raise error from None
                self.debug(f"retrying in {wait:.1f}s")
                self.say(f"{error}; retrying in {wait:.1f}s (retry {attempt} of {options.max_retries})")
                time.sleep(wait)
                waited += wait

    def _status_error(self, response, url, content):
        status = response.status_code
        message = server_message(content, self.redact)
        hint = None
        if status in (401, 403):
            hint = "check the API key variable for this provider (the key is never printed)"
            if self.options.withheld_key:
                from . import KEY_HOST

                hint = (f"{self.options.withheld_key} is sent only to {KEY_HOST[self.provider]}: name the key "
                        f"variable for this server with api_key_env in the config file")
        elif status == 404:
            hint = "check --base-url and --model"
        elif 300 <= status < 400:
            message = f"redirected to {safe_url(response.headers.get('location', '?'))}"
            hint = "use the final URL as --base-url"
        elif status == 429:
            hint = "rate limited: wait and try again"
        return self.fail(f"HTTP {status} {response.reason_phrase} from {url}: {message}".rstrip(": "), hint=hint)

    def json(self, response):
        """The whole body of a non-streaming response, parsed."""
        content = self.read_body(response)
        try:
            return json.loads(content)
        except ValueError as e:
            raise self.fail(f"malformed JSON from {safe_url(self.url)}: {e}") from None

    def events(self, response):
        """Server-sent events as (event name, parsed data); '[DONE]' ends the stream."""
        name, data = None, []
        try:
            for line in _lines(self.chunks(response)):
                if line == "":
                    if data:
                        text = "\n".join(data)
                        if text.strip() == "[DONE]":
                            return
                        yield name, self._parse_event(text)
                    name, data = None, []
                elif line.startswith(":"):
                    continue
                else:
                    field_name, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if field_name == "event":
                        name = value
                    elif field_name == "data":
                        data.append(value)
            if data and "\n".join(data).strip() != "[DONE]":
                yield name, self._parse_event("\n".join(data))
        except httpx.TimeoutException:
            self._left()
            raise self.fail(f"the stream from {safe_url(self.url)} stalled for {self.options.timeout:g}s "
                            "(timed out)", hint="raise --timeout") from None
        except httpx.HTTPError as e:
            raise self.fail(f"the stream from {safe_url(self.url)} broke off: {_reason(e)}") from None

    def _parse_event(self, text):
        try:
            return json.loads(text)
        except ValueError as e:
            raise self.fail(f"malformed JSON in the event stream from {safe_url(self.url)}: {e}") from None


def post_completion(provider, options, path, headers, body, read_stream, read_json):
    """POST one completion request to base_url + path and read the answer, streamed or not."""
    headers = {"accept": "text/event-stream" if options.stream else "application/json", **headers}
    call = Call(provider, options, options.base_url.rstrip("/") + path, headers, body)
    answer = call.send(lambda r: read_stream(call, r) if options.stream else read_json(call, r))
    if not answer.model:
        answer.model = options.model
    return answer


_NEWLINE = re.compile("[\r\n]")


def _lines(chunks):
    """Lines of a byte stream, split at \\n, \\r\\n or \\r (as SSE allows), decoded as UTF-8."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending, pos = "", 0
    for chunk in chunks:
        pending += decoder.decode(chunk)
        while True:
            m = _NEWLINE.search(pending, pos)
            if m is None:
                pos = len(pending)  # search only the new text next time
                break
            i = m.start()
            if pending[i] == "\r":
                if i + 1 == len(pending):
                    pos = i  # a \\r that may be the first half of \\r\\n
                    break
                end = i + 2 if pending[i + 1] == "\n" else i + 1
            else:
                end = i + 1
            yield pending[:i]
            pending, pos = pending[end:], 0
    pending += decoder.decode(b"", final=True)
    if pending:
        yield pending.rstrip("\r")


def server_message(content, redact=None):
    """The error message a server sent: OpenAI/Anthropic {"error": {"message"}}, else the text;
    at most 300 characters, cut only after `redact` took any secret out."""
    text = content.decode("utf-8", errors="replace")
    if redact is not None:
        text = redact(text)
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            text = str(error["message"])
        elif isinstance(error, str) and error:
            text = error
        elif data.get("message"):
            text = str(data["message"])
    if redact is not None:
        text = redact(text)  # again: a key JSON-escaped in the body reads plain once decoded
    text = " ".join(text.split())
    return text[:300] + ("..." if len(text) > 300 else "")


def _retry_after(value):
    """Retry-After in seconds (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _reason(e):
    text = str(e) or type(e).__name__
    return text.split("\n")[0]
