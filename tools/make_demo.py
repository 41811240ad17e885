#!/usr/bin/env python3
"""Generate the bundled demo session ``stree/data/demo.jsonl``.

The demo is a pi coding agent (v3 session format) transcript of a developer
fixing a CSV quoting bug in a small Python project called ``csvtool``.  It is
fully deterministic: ids, tool call ids, signatures and timestamps are derived
from fixed seeds, so re-running the script always produces identical bytes.

Usage::

    python3 tools/make_demo.py > stree/data/demo.jsonl
    python3 tools/make_demo.py stree/data/demo.jsonl

Story and tree shape (ids are stable):

* The user reports wrong field counts; Claude reads the parser, greps, runs a
  repro and explains the bug.  The user labels that answer ``bug-found``.
* Branch A (abandoned): a hand-rolled quote-aware splitter.  A test fails,
  gets fixed, but embedded newlines still break; the user aborts the next
  answer, labels the attempt ``handrolled-splitter`` and goes back with /tree
  (without a summary) to the ``bug-found`` answer -> first branch point.
* Main path: thinking level set to ``high``, rewrite on top of the stdlib
  ``csv`` module (``write``), regression tests, label ``fix-verified``,
  session named, then ``/compact``.
* Branch C (abandoned): a ``--strict`` flag on ``stats``.  The user goes back
  with /tree to re-edit that prompt *with* a summary: a ``branch_summary``
  entry hangs off the compaction entry -> second branch point.
* The user switches to openai/gpt-5, which replaces ``--strict`` with a
  ``validate`` subcommand.  Its final answer is the leaf (last line).

The simulated project files are kept in an in-memory file system so that the
``read`` / ``grep`` / ``edit`` / ``write`` tool results and the edit diffs are
consistent with each other (the diff format mirrors pi's generateDiffString).
Command outputs of ``bash`` calls were captured from real runs of this code.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import sys
from datetime import datetime, timedelta, timezone
from decimal import Decimal

CWD = "/home/dev/csvtool"
SESSION_ID = "01a1f83b-f8c7-7d21-9e44-5c81f0a2d6b3"
START = datetime(2026, 11, 20, 9, 14, 2, 311000, tzinfo=timezone.utc)

CLAUDE = {
    "api": "anthropic-messages",
    "provider": "anthropic",
    "model": "claude-sonnet-4-5",
    "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
}
GPT5 = {
    "api": "openai-responses",
    "provider": "openai",
    "model": "gpt-5",
    "cost": {"input": 1.25, "output": 10, "cacheRead": 0.125, "cacheWrite": 0},
}

# Tokens of system prompt, tool definitions, AGENTS.md and skills sent with every
# call (chosen so that the context is 48213 tokens when the user runs /compact).
BASE_CONTEXT_TOKENS = 45177

# ---------------------------------------------------------------------------
# JSON output exactly like JS JSON.stringify
# ---------------------------------------------------------------------------


def _js_number(x):
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if not math.isfinite(x):
        return "null"
    if x == int(x) and abs(x) < 1e21:
        return str(int(x))
    s = repr(x)
    if "e" not in s:
        return s
    mantissa, exp = s.split("e")
    exp = int(exp)
    if -7 < exp < 21:
        return format(Decimal(s), "f")
    return f"{mantissa}e{'+' if exp > 0 else '-'}{abs(exp)}"


def js_dumps(obj):
    if obj is None or isinstance(obj, (bool, int, float)):
        return "null" if obj is None else _js_number(obj)
    if isinstance(obj, str):
        return json.dumps(obj, ensure_ascii=False)
    if isinstance(obj, list):
        return "[" + ",".join(js_dumps(v) for v in obj) + "]"
    if isinstance(obj, dict):
        return "{" + ",".join(
            json.dumps(k, ensure_ascii=False) + ":" + js_dumps(v)
            for k, v in obj.items()
            if v is not UNDEFINED
        ) + "}"
    raise TypeError(type(obj))


UNDEFINED = object()  # dropped by js_dumps, like undefined in JSON.stringify

# ---------------------------------------------------------------------------
# Deterministic pseudo-random material (hash based, no RNG)
# ---------------------------------------------------------------------------

_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _digest(seed: str, n: int) -> bytes:
    out = b""
    i = 0
    while len(out) < n:
        out += hashlib.sha256(f"stree-demo:{seed}:{i}".encode()).digest()
        i += 1
    return out[:n]


def b62(seed: str, n: int) -> str:
    return "".join(_B62[b % 62] for b in _digest(seed, n))


def hexs(seed: str, n: int) -> str:
    return _digest(seed, n).hex()[:n]


def b64(seed: str, nbytes: int) -> str:
    return base64.b64encode(_digest(seed, nbytes)).decode()


# ---------------------------------------------------------------------------
# Simulated project file system and tools
# ---------------------------------------------------------------------------


def _tokenize_lines(value: str) -> list[str]:
    parts = re.split(r"(\n|\r\n)", value)
    if not parts[-1]:
        parts.pop()
    out: list[str] = []
    for i, part in enumerate(parts):
        if i % 2:
            out[-1] += part
        else:
            out.append(part)
    return [t for t in out if t]


def js_diff_lines(old: str, new: str):
    """Port of jsdiff 8 diffLines() (Myers, as used by pi): list of (kind, value)."""
    old_t, new_t = _tokenize_lines(old), _tokenize_lines(new)
    old_len, new_len = len(old_t), len(new_t)

    def extract_common(path, diagonal):
        old_pos = path["oldPos"]
        new_pos = old_pos - diagonal
        common = 0
        while new_pos + 1 < new_len and old_pos + 1 < old_len and old_t[old_pos + 1] == new_t[new_pos + 1]:
            new_pos += 1
            old_pos += 1
            common += 1
        if common:
            path["last"] = {"count": common, "added": False, "removed": False, "prev": path["last"]}
        path["oldPos"] = old_pos
        return new_pos

    def add_to_path(path, added, removed, inc):
        last = path["last"]
        if last and last["added"] == added and last["removed"] == removed:
            comp = {"count": last["count"] + 1, "added": added, "removed": removed, "prev": last["prev"]}
        else:
            comp = {"count": 1, "added": added, "removed": removed, "prev": last}
        return {"oldPos": path["oldPos"] + inc, "last": comp}

    def build(last):
        comps = []
        while last:
            comps.append(last)
            last = last["prev"]
        comps.reverse()
        parts, new_pos, old_pos = [], 0, 0
        for c in comps:
            if not c["removed"]:
                value = "".join(new_t[new_pos:new_pos + c["count"]])
                new_pos += c["count"]
                if not c["added"]:
                    old_pos += c["count"]
            else:
                value = "".join(old_t[old_pos:old_pos + c["count"]])
                old_pos += c["count"]
            parts.append(("added" if c["added"] else "removed" if c["removed"] else "equal", value))
        return parts

    best = {0: {"oldPos": -1, "last": None}}
    new_pos = extract_common(best[0], 0)
    if best[0]["oldPos"] + 1 >= old_len and new_pos + 1 >= new_len:
        return build(best[0]["last"])
    lo, hi = -math.inf, math.inf
    edit_length = 1
    while edit_length <= new_len + old_len:
        diagonal = int(max(lo, -edit_length))
        while diagonal <= min(hi, edit_length):
            remove_path, add_path = best.get(diagonal - 1), best.get(diagonal + 1)
            if remove_path:
                best[diagonal - 1] = None
            can_add = False
            if add_path:
                add_new_pos = add_path["oldPos"] - diagonal
                can_add = 0 <= add_new_pos < new_len
            can_remove = bool(remove_path) and remove_path["oldPos"] + 1 < old_len
            if not can_add and not can_remove:
                best[diagonal] = None
                diagonal += 2
                continue
            if not can_remove or (can_add and remove_path["oldPos"] < add_path["oldPos"]):
                base = add_to_path(add_path, True, False, 0)
            else:
                base = add_to_path(remove_path, False, True, 1)
            new_pos = extract_common(base, diagonal)
            if base["oldPos"] + 1 >= old_len and new_pos + 1 >= new_len:
                return build(base["last"])
            best[diagonal] = base
            if base["oldPos"] + 1 >= old_len:
                hi = min(hi, diagonal - 1)
            if new_pos + 1 >= new_len:
                lo = max(lo, diagonal + 1)
            diagonal += 2
        edit_length += 1
    raise AssertionError("diff did not converge")


def generate_diff_string(old: str, new: str, context_lines: int = 4):
    """Port of pi's generateDiffString (core/tools/edit-diff.js)."""
    parts = js_diff_lines(old, new)
    output = []
    width = len(str(max(len(old.split("\n")), len(new.split("\n")))))
    old_no = new_no = 1
    last_was_change = False
    first_changed = None
    for i, (kind, value) in enumerate(parts):
        raw = value.split("\n")
        if raw and raw[-1] == "":
            raw.pop()
        if kind != "equal":
            if first_changed is None:
                first_changed = new_no
            for line in raw:
                if kind == "added":
                    output.append(f"+{str(new_no).rjust(width)} {line}")
                    new_no += 1
                else:
                    output.append(f"-{str(old_no).rjust(width)} {line}")
                    old_no += 1
            last_was_change = True
            continue
        next_is_change = i < len(parts) - 1 and parts[i + 1][0] != "equal"
        if last_was_change and next_is_change:
            if len(raw) <= context_lines * 2:
                shown, skipped, tail = raw, 0, []
            else:
                shown, skipped, tail = raw[:context_lines], len(raw) - 2 * context_lines, raw[-context_lines:]
        elif last_was_change:
            shown, skipped, tail = raw[:context_lines], len(raw) - min(len(raw), context_lines), []
        elif next_is_change:
            skipped = max(0, len(raw) - context_lines)
            shown, tail = [], raw[skipped:]
        else:
            old_no += len(raw)
            new_no += len(raw)
            last_was_change = False
            continue
        for line in shown:
            output.append(f" {str(old_no).rjust(width)} {line}")
            old_no += 1
            new_no += 1
        if skipped > 0:
            output.append(f" {''.rjust(width)} ...")
            old_no += skipped
            new_no += skipped
        for line in tail:
            output.append(f" {str(old_no).rjust(width)} {line}")
            old_no += 1
            new_no += 1
        last_was_change = False
    return "\n".join(output), first_changed


class Project:
    def __init__(self, files: dict[str, str]):
        self.files = dict(files)
        self.edit_log = []  # (old, new, diff, firstChangedLine) - used to re-check diffs

    def snapshot(self) -> dict[str, str]:
        return dict(self.files)

    def read(self, path, offset=None, limit=None) -> str:
        lines = self.files[path].split("\n")
        start = max(0, offset - 1) if offset else 0
        if limit is not None:
            end = min(start + limit, len(lines))
            text = "\n".join(lines[start:end])
            if end < len(lines):
                text += f"\n\n[{len(lines) - end} more lines in file. Use offset={end + 1} to continue.]"
            return text
        return "\n".join(lines[start:])

    def grep(self, pattern, path) -> str:
        rx = re.compile(pattern)
        prefix = path.rstrip("/") + "/"
        out = []
        for name in sorted(self.files):
            if not name.startswith(prefix):
                continue
            for no, line in enumerate(self.files[name].split("\n"), start=1):
                if rx.search(line):
                    out.append(f"{name[len(prefix):]}:{no}: {line}")
        return "\n".join(out) if out else "No matches found"

    def edit(self, path, edits):
        old = self.files[path]
        spans = []
        for e in edits:
            idx = old.find(e["oldText"])
            assert idx >= 0 and old.count(e["oldText"]) == 1, (path, e["oldText"])
            spans.append((idx, idx + len(e["oldText"]), e["newText"]))
        new, pos = "", 0
        for start, end, text in sorted(spans):
            assert start >= pos, "overlapping edits"
            new += old[pos:start] + text
            pos = end
        new += old[pos:]
        self.files[path] = new
        diff, first = generate_diff_string(old, new)
        self.edit_log.append((old, new, diff, first))
        return f"Successfully replaced {len(edits)} block(s) in {path}.", {"diff": diff, "firstChangedLine": first}

    def write(self, path, content):
        self.files[path] = content
        return f"Successfully wrote {len(content)} bytes to {path}"


# ---------------------------------------------------------------------------
# Session builder
# ---------------------------------------------------------------------------


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def millis(dt: datetime) -> int:
    return int(round(dt.timestamp() * 1000))


def est_tokens(chars: int) -> int:
    return math.ceil(chars / 4)


class Session:
    def __init__(self, project: Project):
        self.project = project
        self.clock = START
        self.entries = [{
            "type": "session", "version": 3, "id": SESSION_ID,
            "timestamp": iso(START), "cwd": CWD,
        }]
        self.by_id = {}
        self.leaf = None
        self.ctx = {None: 0}        # estimated context tokens along the path to an entry
        self.cached = {None: 0}     # prompt-cache prefix available at an entry
        self.model = CLAUDE
        self.bash_runs = []         # (command, files snapshot) - used to re-check outputs
        self._n = 0
        self._pending = []          # tool calls of the last assistant message

    # -- ids / time -------------------------------------------------------
    def new_id(self) -> str:
        while True:
            self._n += 1
            cand = hexs(f"entry-{self._n}", 8)
            if cand not in self.by_id:
                return cand

    def advance(self, ms: int) -> datetime:
        self.clock += timedelta(milliseconds=ms)
        return self.clock

    # -- low level append ---------------------------------------------------
    def append(self, entry_type, fields, ts=None, parent=UNDEFINED):
        eid = self.new_id()
        parent_id = self.leaf if parent is UNDEFINED else parent
        entry = {"type": entry_type, "id": eid, "parentId": parent_id,
                 "timestamp": iso(ts or self.clock)}
        entry.update(fields)
        self.entries.append(entry)
        self.by_id[eid] = entry
        self.ctx[eid] = self.ctx[parent_id]
        self.cached[eid] = self.cached[parent_id]
        self.leaf = eid
        return eid

    def _msg_entry(self, message, tokens, ts):
        eid = self.append("message", {"message": message}, ts=ts)
        self.ctx[eid] = self.ctx[self.by_id[eid]["parentId"]] + tokens
        return eid

    # -- navigation ---------------------------------------------------------
    def branch(self, target):
        """/tree navigation without summary: just move the leaf."""
        self.leaf = target

    # -- entry kinds --------------------------------------------------------
    def user(self, text, gap_ms):
        ts = self.advance(gap_ms)
        msg = {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": millis(ts)}
        return self._msg_entry(msg, est_tokens(len(text)), ts)

    def assistant(self, blocks, *, stop=None, start_ms=420, dur_ms, extra_output=0,
                  aborted=False, name=None):
        """blocks: list of ("thinking", text) / ("text", text) / ("tool", name, args)."""
        m = self.model
        start = self.advance(start_ms)
        content, calls = [], []
        out_chars = 0
        k = len(self.entries)
        for b in blocks:
            if b[0] == "thinking":
                out_chars += len(b[1])
                if m is CLAUDE:
                    content.append({"type": "thinking", "thinking": b[1],
                                    "thinkingSignature": "Eq" + b64(f"sig-{k}-{len(content)}", 330 + len(b[1]) // 3)})
                else:
                    rs = "rs_" + hexs(f"rs-{k}", 48)
                    item = {"id": rs, "type": "reasoning",
                            "encrypted_content": "gAAAAAB" + b64(f"enc-{k}", 540 + len(b[1]) // 2).replace("+", "-").replace("/", "_"),
                            "summary": [{"type": "summary_text", "text": b[1]}]}
                    content.append({"type": "thinking", "thinking": b[1],
                                    "thinkingSignature": json.dumps(item, separators=(",", ":"), ensure_ascii=False)})
            elif b[0] == "text":
                out_chars += len(b[1])
                block = {"type": "text", "text": b[1]}
                if m is GPT5:
                    block["textSignature"] = json.dumps({"v": 1, "id": "msg_" + hexs(f"msg-{k}-{len(content)}", 48)},
                                                        separators=(",", ":"))
                content.append(block)
            elif b[0] == "tool":
                _, tname, args = b
                if m is CLAUDE:
                    cid = "toolu_01" + b62(f"toolu-{k}-{len(content)}", 22)
                else:
                    cid = "call_" + b62(f"call-{k}-{len(content)}", 24) + "|fc_" + hexs(f"fc-{k}-{len(content)}", 48)
                out_chars += len(js_dumps(args)) + 40
                content.append({"type": "toolCall", "id": cid, "name": tname, "arguments": args})
                calls.append((cid, tname, args))

        # usage: context so far + base prompt; cache prefix from the previous call on this path
        prompt = BASE_CONTEXT_TOKENS + self.ctx[self.leaf]
        output = est_tokens(out_chars) + extra_output
        if aborted:
            output = 0
        cached = self.cached[self.leaf]
        if m is CLAUDE:
            inp = 3 + (k % 7)
            cache_read = min(cached, prompt - inp)
            cache_write = prompt - inp - cache_read
        else:
            cache_read = min((cached // 128) * 128 if cached >= 1024 else 0, prompt - 1)
            cache_write = 0
            inp = prompt - cache_read
        usage = {"input": inp, "output": output, "cacheRead": cache_read, "cacheWrite": cache_write,
                 "totalTokens": inp + output + cache_read + cache_write}
        c = m["cost"]
        cost = {"input": (c["input"] / 1000000) * inp, "output": (c["output"] / 1000000) * output,
                "cacheRead": (c["cacheRead"] / 1000000) * cache_read,
                "cacheWrite": (c["cacheWrite"] / 1000000) * cache_write}
        cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
        usage["cost"] = cost

        if stop is None:
            stop = "aborted" if aborted else ("toolUse" if calls else "stop")
        msg = {"role": "assistant", "content": content, "api": m["api"], "provider": m["provider"],
               "model": m["model"], "usage": usage, "stopReason": stop, "timestamp": millis(start)}
        if m is CLAUDE:
            msg["responseId"] = "msg_01" + b62(f"resp-{k}", 22)
        else:
            msg["responseId"] = "resp_" + hexs(f"resp-{k}", 48)
        if aborted:
            msg["errorMessage"] = "Request was aborted"
        end = self.advance(dur_ms)
        eid = self._msg_entry(msg, est_tokens(out_chars), end)
        # everything up to and including this answer is now in the provider's prompt cache
        self.cached[eid] = prompt + est_tokens(out_chars)
        self._pending = calls
        return eid

    def _tool_result(self, idx, text, *, gap_ms, is_error=False, details=UNDEFINED):
        cid, tname, _ = self._pending[idx]
        ts = self.advance(gap_ms)
        msg = {"role": "toolResult", "toolCallId": cid, "toolName": tname,
               "content": [{"type": "text", "text": text}], "details": details,
               "isError": is_error, "timestamp": millis(ts)}
        return self._msg_entry(msg, est_tokens(len(text)), ts)

    def run_tools(self, outputs=None, gaps=None):
        """Execute the pending tool calls against the project, append results."""
        outputs = outputs or {}
        ids = []
        for i, (cid, tname, args) in enumerate(self._pending):
            gap = (gaps or {}).get(i, 35 + 4 * i)
            details, is_error = UNDEFINED, False
            if tname == "read":
                text = self.project.read(args["path"], args.get("offset"), args.get("limit"))
            elif tname == "grep":
                text = self.project.grep(args["pattern"], args["path"])
            elif tname == "write":
                text = self.project.write(args["path"], args["content"])
            elif tname == "edit":
                edits = args.get("edits") or [{"oldText": args["oldText"], "newText": args["newText"]}]
                text, details = self.project.edit(args["path"], edits)
            elif tname == "bash":
                self.bash_runs.append((args["command"], self.project.snapshot()))
                text, code = outputs[i]
                if code:
                    text = (text + "\n\n" if text else "") + f"Command exited with code {code}"
                    is_error, details = True, {}
            else:
                raise ValueError(tname)
            ids.append(self._tool_result(i, text, gap_ms=gap, is_error=is_error, details=details))
        self._pending = []
        return ids

    def label(self, target, label, gap_ms):
        ts = self.advance(gap_ms)
        return self.append("label", {"targetId": target, "label": label}, ts=ts)

    def thinking_level(self, level, gap_ms):
        ts = self.advance(gap_ms)
        return self.append("thinking_level_change", {"thinkingLevel": level}, ts=ts)

    def model_change(self, model, gap_ms):
        ts = self.advance(gap_ms)
        self.model = model
        eid = self.append("model_change", {"provider": model["provider"], "modelId": model["model"]}, ts=ts)
        self.cached[eid] = 0  # new provider, cold cache
        return eid

    def session_info(self, name, gap_ms):
        ts = self.advance(gap_ms)
        return self.append("session_info", {"name": name}, ts=ts)

    def context_tokens(self):
        """Like pi's estimateContextTokens(): last assistant usage + estimate of what follows."""
        cur, trailing = self.leaf, 0
        while cur:
            e = self.by_id[cur]
            if e["type"] == "message":
                m = e["message"]
                if m["role"] == "assistant" and m["stopReason"] not in ("aborted", "error"):
                    return m["usage"]["totalTokens"] + trailing
                trailing += self.ctx[cur] - self.ctx[e["parentId"]]
            cur = e["parentId"]
        return trailing

    def compaction(self, summary, first_kept, details, gap_ms):
        tokens_before = self.context_tokens()
        ts = self.advance(gap_ms)
        eid = self.append("compaction", {"summary": summary, "firstKeptEntryId": first_kept,
                                         "tokensBefore": tokens_before, "details": details,
                                         "fromHook": False}, ts=ts)
        # context is now: summary + kept messages
        kept, cur = 0, self.by_id[eid]["parentId"]
        path = []
        while cur:
            path.append(cur)
            cur = self.by_id[cur]["parentId"]
        path.reverse()
        i = path.index(first_kept)
        kept = self.ctx[path[-1]] - self.ctx[self.by_id[path[i]]["parentId"]]
        self.ctx[eid] = est_tokens(len(summary)) + kept
        self.cached[eid] = BASE_CONTEXT_TOKENS
        return eid

    def branch_with_summary(self, target, summary, details, gap_ms):
        ts = self.advance(gap_ms)
        eid = self.append("branch_summary", {"fromId": target, "summary": summary, "details": details,
                                             "fromHook": False}, ts=ts, parent=target)
        self.ctx[eid] = self.ctx[target] + est_tokens(len(summary))
        return eid

    def lines(self):
        return [js_dumps(e) for e in self.entries]


def file_ops_tags(read_files, modified_files):
    parts = []
    if read_files:
        parts.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        parts.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(parts) if parts else ""


# ---------------------------------------------------------------------------
# The csvtool project
# ---------------------------------------------------------------------------

PARSER_PY = '''"""Minimal streaming CSV reader used by the csvtool commands."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, TextIO


@dataclass
class Row:
    lineno: int
    fields: list[str]


def parse_line(line: str, delimiter: str = ",") -> list[str]:
    """Split one physical line into fields."""
    fields = line.rstrip("\\r\\n").split(delimiter)
    return [f.strip().strip('"') for f in fields]


def parse_rows(fh: TextIO, delimiter: str = ",") -> Iterator[Row]:
    """Yield rows lazily so large files never sit in memory."""
    # line 1 is the header, already consumed by read_header()
    for lineno, line in enumerate(fh, start=2):
        if not line.strip():
            continue
        yield Row(lineno, parse_line(line, delimiter))


def read_header(fh: TextIO, delimiter: str = ",") -> list[str]:
    first = fh.readline()
    if not first:
        raise ValueError("empty input")
    return parse_line(first, delimiter)
'''

CLI_PY = '''"""Command line entry point: ``csvtool <command> FILE``."""

from __future__ import annotations

import argparse
import json
import sys

from .parser import parse_rows, read_header


def cmd_stats(args: argparse.Namespace) -> int:
    with open(args.file, newline="", encoding="utf-8") as fh:
        header = read_header(fh, args.delimiter)
        widths: dict[int, int] = {}
        total = 0
        for row in parse_rows(fh, args.delimiter):
            total += 1
            widths[len(row.fields)] = widths.get(len(row.fields), 0) + 1
            if len(row.fields) != len(header):
                print(
                    f"warning: line {row.lineno}: expected {len(header)} fields, got {len(row.fields)}",
                    file=sys.stderr,
                )
    if args.json:
        print(json.dumps({"columns": len(header), "rows": total, "widths": widths}))
    else:
        print(f"columns: {len(header)}")
        print(f"rows:    {total}")
    return 0


def cmd_head(args: argparse.Namespace) -> int:
    with open(args.file, newline="", encoding="utf-8") as fh:
        header = read_header(fh, args.delimiter)
        print(" | ".join(header))
        for i, row in enumerate(parse_rows(fh, args.delimiter)):
            if i >= args.n:
                break
            print(" | ".join(row.fields))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="csvtool")
    p.add_argument("-d", "--delimiter", default=",")
    sub = p.add_subparsers(dest="command", required=True)

    stats = sub.add_parser("stats", help="count rows and columns")
    stats.add_argument("file")
    stats.add_argument("--json", action="store_true")
    stats.set_defaults(func=cmd_stats)

    head = sub.add_parser("head", help="print the first rows")
    head.add_argument("file")
    head.add_argument("-n", type=int, default=5)
    head.set_defaults(func=cmd_head)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)
'''

QUOTED_CSV = '''id,name,city,notes
1,Ada Lovelace,London,first programmer
2,"Hopper, Grace",Arlington,"COBOL, compilers"
3,Alan Turing,Wilmslow,"said ""hello"" to machines"
4,"Liskov, Barbara",Boston,"multi
line note"
'''

TEST_PARSER_PY = '''import io

import pytest

from csvtool.parser import parse_line, parse_rows, read_header


def test_parse_line_simple():
    assert parse_line("a,b,c\\n") == ["a", "b", "c"]


def test_parse_line_strips_whitespace():
    assert parse_line(" a , b ,c") == ["a", "b", "c"]


def test_parse_line_custom_delimiter():
    assert parse_line("a;b;c", delimiter=";") == ["a", "b", "c"]


def test_parse_line_quoted_without_delimiter():
    assert parse_line('"a","b"') == ["a", "b"]


def test_read_header():
    fh = io.StringIO("id,name\\n1,x\\n")
    assert read_header(fh) == ["id", "name"]


def test_read_header_empty():
    with pytest.raises(ValueError):
        read_header(io.StringIO(""))


def test_parse_rows_skips_blank_lines():
    fh = io.StringIO("id,name\\n1,x\\n\\n2,y\\n")
    read_header(fh)
    rows = list(parse_rows(fh))
    assert [r.fields for r in rows] == [["1", "x"], ["2", "y"]]
    assert [r.lineno for r in rows] == [2, 4]
'''

TEST_CLI_PY = '''import json

from csvtool.cli import main


def write(tmp_path, text):
    path = tmp_path / "data.csv"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_stats_counts_rows(tmp_path, capsys):
    path = write(tmp_path, "x,y\\n1,2\\n3,4\\n")
    assert main(["stats", path]) == 0
    out = capsys.readouterr().out
    assert "columns: 2" in out
    assert "rows:    2" in out


def test_stats_json(tmp_path, capsys):
    path = write(tmp_path, "x,y\\n1,2\\n")
    assert main(["stats", "--json", path]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rows"] == 1


def test_head_limits_rows(tmp_path, capsys):
    path = write(tmp_path, "x\\n1\\n2\\n3\\n")
    assert main(["head", "-n", "2", path]) == 0
    assert capsys.readouterr().out.splitlines() == ["x", "1", "2"]
'''

INIT_PY = '''"""csvtool - small utilities for poking at CSV files."""

__version__ = "0.3.1"
'''

MAIN_PY = '''import sys

from .cli import main

sys.exit(main())
'''

PYPROJECT = '''[project]
name = "csvtool"
version = "0.3.1"
requires-python = ">=3.10"

[project.scripts]
csvtool = "csvtool.cli:main"

[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
'''

ORIGINAL_FILES = {
    "pyproject.toml": PYPROJECT,
    "src/csvtool/__init__.py": INIT_PY,
    "src/csvtool/__main__.py": MAIN_PY,
    "src/csvtool/cli.py": CLI_PY,
    "src/csvtool/parser.py": PARSER_PY,
    "tests/fixtures/quoted.csv": QUOTED_CSV,
    "tests/test_cli.py": TEST_CLI_PY,
    "tests/test_parser.py": TEST_PARSER_PY,
}

# --- branch A: hand-rolled splitter ------------------------------------------

HANDROLLED_OLD = '''def parse_line(line: str, delimiter: str = ",") -> list[str]:
    """Split one physical line into fields."""
    fields = line.rstrip("\\r\\n").split(delimiter)
    return [f.strip().strip('"') for f in fields]
'''

HANDROLLED_NEW = '''def parse_line(line: str, delimiter: str = ",") -> list[str]:
    """Split one physical line into fields, honouring double quotes."""
    fields: list[str] = []
    buf: list[str] = []
    in_quotes = False
    for ch in line.rstrip("\\r\\n"):
        if ch == '"':
            in_quotes = not in_quotes
        elif ch == delimiter and not in_quotes:
            fields.append("".join(buf).strip())
            buf = []
        else:
            buf.append(ch)
    fields.append("".join(buf).strip())
    return fields
'''

HANDROLLED_TESTS_OLD = '''def test_parse_line_quoted_without_delimiter():
    assert parse_line('"a","b"') == ["a", "b"]
'''

HANDROLLED_TESTS_NEW = '''def test_parse_line_quoted_without_delimiter():
    assert parse_line('"a","b"') == ["a", "b"]


def test_parse_line_quoted_delimiter():
    assert parse_line('2,"Hopper, Grace",Arlington') == ["2", "Hopper, Grace", "Arlington"]


def test_parse_line_doubled_quotes():
    assert parse_line('3,"said ""hello"" to machines"') == ["3", 'said "hello" to machines']
'''

HANDROLLED_FIX_OLD = '''    in_quotes = False
    for ch in line.rstrip("\\r\\n"):
        if ch == '"':
            in_quotes = not in_quotes
        elif ch == delimiter and not in_quotes:'''

HANDROLLED_FIX_NEW = '''    in_quotes = False
    text = line.rstrip("\\r\\n")
    i = 0
    while i < len(text):
        ch = text[i]
        i += 1
        if ch == '"':
            if in_quotes and text[i:i + 1] == '"':
                buf.append('"')  # "" inside quotes is a literal quote
                i += 1
            else:
                in_quotes = not in_quotes
        elif ch == delimiter and not in_quotes:'''

# --- main path: stdlib csv ----------------------------------------------------

PARSER_CSV_PY = '''"""Streaming CSV reader used by the csvtool commands.

Parsing is delegated to the stdlib ``csv`` module, so quoted fields may
contain the delimiter, doubled quotes (``""``) and embedded newlines.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from typing import Iterable, Iterator, TextIO


@dataclass
class Row:
    lineno: int  # physical line on which the record starts
    fields: list[str]


def _reader(lines: Iterable[str], delimiter: str):
    return csv.reader(lines, delimiter=delimiter, skipinitialspace=True)


def _clean(fields: list[str]) -> list[str]:
    return [f.strip() for f in fields]


def parse_line(line: str, delimiter: str = ",") -> list[str]:
    """Parse a single record given as a string."""
    for fields in _reader([line], delimiter):
        return _clean(fields)
    return []


def parse_rows(fh: TextIO, delimiter: str = ",", start: int = 2) -> Iterator[Row]:
    """Yield records lazily; a quoted field may span several physical lines.

    ``start`` is the line number of the first line left in ``fh`` (line 1 is
    the header, already consumed by read_header()).
    """
    reader = _reader(fh, delimiter)
    consumed = 0
    for fields in reader:
        lineno = start + consumed
        consumed = reader.line_num
        if not fields:
            continue  # blank line
        yield Row(lineno, _clean(fields))


def read_header(fh: TextIO, delimiter: str = ",") -> list[str]:
    first = fh.readline()
    if not first:
        raise ValueError("empty input")
    return parse_line(first, delimiter)
'''

CSV_TESTS_OLD = '''def test_parse_rows_skips_blank_lines():'''

CSV_TESTS_NEW = '''def test_parse_line_quoted_delimiter():
    assert parse_line('2,"Hopper, Grace",Arlington') == ["2", "Hopper, Grace", "Arlington"]


def test_parse_line_doubled_quotes():
    assert parse_line('3,"said ""hello"" to machines"') == ["3", 'said "hello" to machines']


def test_parse_rows_embedded_newline_keeps_start_line():
    fh = io.StringIO('id,notes\\n1,"multi\\nline"\\n2,x\\n')
    read_header(fh)
    rows = list(parse_rows(fh))
    assert [r.fields for r in rows] == [["1", "multi\\nline"], ["2", "x"]]
    assert [r.lineno for r in rows] == [2, 4]


def test_parse_rows_skips_blank_lines():'''

# --- branch C: --strict flag on stats ----------------------------------------

STRICT_EDIT_OLD = '''        widths: dict[int, int] = {}
        total = 0
        for row in parse_rows(fh, args.delimiter):
            total += 1
            widths[len(row.fields)] = widths.get(len(row.fields), 0) + 1
            if len(row.fields) != len(header):
                print(
                    f"warning: line {row.lineno}: expected {len(header)} fields, got {len(row.fields)}",
                    file=sys.stderr,
                )
    if args.json:
        print(json.dumps({"columns": len(header), "rows": total, "widths": widths}))
    else:
        print(f"columns: {len(header)}")
        print(f"rows:    {total}")
    return 0
'''

STRICT_EDIT_NEW = '''        widths: dict[int, int] = {}
        total = 0
        bad = 0
        for row in parse_rows(fh, args.delimiter):
            total += 1
            widths[len(row.fields)] = widths.get(len(row.fields), 0) + 1
            if len(row.fields) != len(header):
                bad += 1
                print(
                    f"warning: line {row.lineno}: expected {len(header)} fields, got {len(row.fields)}",
                    file=sys.stderr,
                )
    if args.json:
        print(json.dumps({"columns": len(header), "rows": total, "widths": widths}))
    else:
        print(f"columns: {len(header)}")
        print(f"rows:    {total}")
    return 1 if args.strict and bad else 0
'''

STRICT_ARG_OLD = '''    stats.add_argument("--json", action="store_true")
'''

STRICT_ARG_NEW = '''    stats.add_argument("--json", action="store_true")
    stats.add_argument(
        "--strict",
        action="store_true",
        help="exit with status 1 if any row has the wrong number of fields",
    )
'''

# --- final: validate subcommand (gpt-5) ---------------------------------------

VALIDATE_EDITS = [
    {
        "oldText": '''        total = 0
        bad = 0
        for row in parse_rows(fh, args.delimiter):
            total += 1
            widths[len(row.fields)] = widths.get(len(row.fields), 0) + 1
            if len(row.fields) != len(header):
                bad += 1
                print(''',
        "newText": '''        total = 0
        for row in parse_rows(fh, args.delimiter):
            total += 1
            widths[len(row.fields)] = widths.get(len(row.fields), 0) + 1
            if len(row.fields) != len(header):
                print(''',
    },
    {
        "oldText": '''    return 1 if args.strict and bad else 0
''',
        "newText": '''    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    """Report every record whose field count differs from the header."""
    bad = 0
    with open(args.file, newline="", encoding="utf-8") as fh:
        header = read_header(fh, args.delimiter)
        for row in parse_rows(fh, args.delimiter):
            if len(row.fields) != len(header):
                bad += 1
                print(f"line {row.lineno}: expected {len(header)} fields, got {len(row.fields)}")
    return 1 if bad else 0
''',
    },
    {
        "oldText": '''    stats.add_argument(
        "--strict",
        action="store_true",
        help="exit with status 1 if any row has the wrong number of fields",
    )
    stats.set_defaults(func=cmd_stats)
''',
        "newText": '''    stats.set_defaults(func=cmd_stats)

    validate = sub.add_parser("validate", help="report ragged rows; exit 1 if any")
    validate.add_argument("file")
    validate.set_defaults(func=cmd_validate)
''',
    },
]

VALIDATE_TESTS_OLD = '''def test_head_limits_rows(tmp_path, capsys):'''

VALIDATE_TESTS_NEW = '''def test_validate_ok(tmp_path, capsys):
    path = write(tmp_path, 'x,y\\n1,"a, b"\\n')
    assert main(["validate", path]) == 0
    assert capsys.readouterr().out == ""


def test_validate_reports_ragged_rows(tmp_path, capsys):
    path = write(tmp_path, "x,y\\n1,2\\n3\\n4,5,6\\n")
    assert main(["validate", path]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "line 3: expected 2 fields, got 1",
        "line 4: expected 2 fields, got 3",
    ]


def test_head_limits_rows(tmp_path, capsys):'''

# ---------------------------------------------------------------------------
# Captured command outputs
# ---------------------------------------------------------------------------

OUT_REPRO = """warning: line 3: expected 4 fields, got 6
warning: line 5: expected 4 fields, got 5
warning: line 6: expected 4 fields, got 1
columns: 4
rows:    5
"""

OUT_HANDROLLED_FAIL = """........F...                                                             [100%]
=================================== FAILURES ===================================
________________________ test_parse_line_doubled_quotes ________________________

    def test_parse_line_doubled_quotes():
>       assert parse_line('3,"said ""hello"" to machines"') == ["3", 'said "hello" to machines']
E       assert ['3', 'said h... to machines'] == ['3', 'said "... to machines']
E         
E         At index 1 diff: 'said hello to machines' != 'said "hello" to machines'
E         Use -v to get more diff

tests/test_parser.py:29: AssertionError
=========================== short test summary info ============================
FAILED tests/test_parser.py::test_parse_line_doubled_quotes - assert ['3', 's...
1 failed, 11 passed in 0.09s
"""

OUT_HANDROLLED_PASS = """............                                                             [100%]
12 passed in 0.05s
warning: line 6: expected 4 fields, got 1
columns: 4
rows:    5
"""

OUT_CSV_PYTEST = """..........                                                               [100%]
10 passed in 0.05s
"""

OUT_CSV_FINAL = """.............                                                            [100%]
13 passed in 0.06s
columns: 4
rows:    4
"""

OUT_STRICT = """warning: line 3: expected 2 fields, got 1
columns: 2
rows:    2
exit=1
"""

OUT_VALIDATE = """...............                                                          [100%]
15 passed in 0.07s
--- quoted.csv
exit=0
--- ragged.csv
line 3: expected 2 fields, got 1
exit=1
"""

# ---------------------------------------------------------------------------
# The conversation
# ---------------------------------------------------------------------------


def build() -> Session:
    s = Session(Project(ORIGINAL_FILES))

    # ---- investigation -----------------------------------------------------
    u1 = s.user(
        "`csvtool stats` gives wrong field counts on files with quoted fields. "
        "`python -m csvtool stats tests/fixtures/quoted.csv` warns that line 3 has 6 fields, "
        "but the file has 4 columns and every row is fine when I open it in LibreOffice. "
        "Can you find out what's going on?",
        gap_ms=2809,
    )
    s.assistant([
        ("thinking", "The user says quoted fields produce wrong field counts. Classic sign of a naive "
                     "split on the delimiter. Let me look at the parser and the fixture first."),
        ("text", "Let me look at the parser and the fixture file."),
        ("tool", "read", {"path": "src/csvtool/parser.py"}),
        ("tool", "read", {"path": "tests/fixtures/quoted.csv"}),
    ], dur_ms=4117)
    s.run_tools(gaps={0: 31, 1: 6})
    s.assistant([
        ("tool", "grep", {"pattern": "parse_line|parse_rows|read_header", "path": "src"}),
        ("tool", "bash", {"command": "python -m csvtool stats tests/fixtures/quoted.csv"}),
    ], dur_ms=3284)
    s.run_tools(outputs={1: (OUT_REPRO, 0)}, gaps={0: 58, 1: 412})
    diagnosis = s.assistant([
        ("thinking", "Line 3 is `2,\"Hopper, Grace\",Arlington,\"COBOL, compilers\"`: split(',') gives 6 pieces. "
                     "Line 5 starts a record whose last field contains a newline, so parse_rows (which iterates "
                     "physical lines) splits it into two rows: 5 fields and 1 field. Also `.strip('\"')` would turn "
                     "`\"said \"\"hello\"\" to machines\"` into `said \"\"hello\"\" to machines`. The fix belongs in "
                     "parser.py; cli.py only calls read_header/parse_rows."),
        ("text",
         "Found it. The bug is in `src/csvtool/parser.py`:\n\n"
         "```python\n"
         "fields = line.rstrip(\"\\r\\n\").split(delimiter)\n"
         "return [f.strip().strip('\"') for f in fields]\n"
         "```\n\n"
         "`parse_line()` splits on **every** delimiter and only afterwards strips the quotes, so:\n\n"
         "1. **Line 3** `2,\"Hopper, Grace\",Arlington,\"COBOL, compilers\"` is split inside both quoted "
         "fields → 6 fields.\n"
         "2. **Lines 5–6** are one record whose `notes` field contains a newline. `parse_rows()` iterates "
         "physical lines, so it becomes two broken rows (5 fields, then 1).\n"
         "3. Doubled quotes (`\"said \"\"hello\"\" to machines\"`) aren't unescaped either - that row only "
         "*looks* right because it has no comma inside the quotes.\n\n"
         "`cli.py` only goes through `read_header()` / `parse_rows()`, so the fix is contained in the parser. "
         "Two options:\n\n"
         "- **A. Hand-roll a quote-aware splitter** in `parse_line()` (small, no behaviour change for simple "
         "files, but we also have to teach `parse_rows()` about records spanning lines).\n"
         "- **B. Use the stdlib `csv` module** (handles quoted delimiters, `\"\"` escapes and embedded "
         "newlines per RFC 4180; `csv.reader` is lazy, so it still streams).\n\n"
         "Which way do you want to go?"),
    ], dur_ms=14236, extra_output=310)
    s.label(diagnosis, "bug-found", gap_ms=21544)

    # ---- branch A: hand-rolled splitter (abandoned) -------------------------
    s.user("Let's try A first. I'd rather not pull in csv's dialect handling for now, "
           "just make parse_line quote-aware and add tests.", gap_ms=38150)
    s.assistant([
        ("text", "I'll check the existing parser tests first."),
        ("tool", "read", {"path": "tests/test_parser.py"}),
    ], dur_ms=2311)
    s.run_tools()
    handrolled_edit = s.assistant([
        ("thinking", "Simple state machine: toggle in_quotes on '\"', split on the delimiter only outside quotes. "
                     "Add tests for a quoted delimiter and doubled quotes."),
        ("text", "Replacing the naive split with a small state machine and adding two regression tests."),
        ("tool", "edit", {"path": "src/csvtool/parser.py", "oldText": HANDROLLED_OLD, "newText": HANDROLLED_NEW}),
        ("tool", "edit", {"path": "tests/test_parser.py", "oldText": HANDROLLED_TESTS_OLD,
                          "newText": HANDROLLED_TESTS_NEW}),
    ], dur_ms=11873)
    s.run_tools()
    s.assistant([
        ("tool", "bash", {"command": "python -m pytest -q"}),
    ], dur_ms=1502)
    s.run_tools(outputs={0: (OUT_HANDROLLED_FAIL, 1)}, gaps={0: 1187})
    s.assistant([
        ("thinking", "Toggling on every quote drops escaped quotes. Inside quotes, '\"\"' must emit a literal quote."),
        ("text", "The doubled-quote case fails: toggling on every `\"` swallows the escaped quotes. "
                 "Inside a quoted field `\"\"` has to become a literal `\"`."),
        ("tool", "edit", {"path": "src/csvtool/parser.py", "oldText": HANDROLLED_FIX_OLD,
                          "newText": HANDROLLED_FIX_NEW}),
    ], dur_ms=6920)
    s.run_tools()
    s.assistant([
        ("tool", "bash", {"command": "python -m pytest -q && python -m csvtool stats tests/fixtures/quoted.csv"}),
    ], dur_ms=1388)
    s.run_tools(outputs={0: (OUT_HANDROLLED_PASS, 0)}, gaps={0: 1264})
    s.assistant([
        ("text", "All 12 tests pass and line 3 is fixed. The record on lines 5–6 is still broken though "
                 "(`warning: line 6` and `rows: 5` instead of 4): its `notes` field contains a newline, and "
                 "`parse_rows()` hands `parse_line()` one physical line at a time. Line 5 ends with the quote "
                 "still open, so `notes` is cut to `multi`, and `line note\"` becomes a row of its own. To fix "
                 "that, `parse_rows()` would have to keep appending lines while a quote is open and remember the "
                 "start line for `Row.lineno`."),
    ], dur_ms=5214)
    s.user("ugh, this is getting hairy. can parse_rows just keep reading lines while a quote is open?",
           gap_ms=47302)
    s.assistant([], aborted=True, start_ms=388, dur_ms=2951)
    s.label(handrolled_edit, "handrolled-splitter", gap_ms=9480)

    # ---- back to the diagnosis via /tree (no summary) ------------------------
    s.branch(diagnosis)
    s.project = Project(ORIGINAL_FILES)  # user ran `git checkout .`
    s.thinking_level("high", gap_ms=64118)
    u2b = s.user(
        "I threw away the hand-rolled attempt (git checkout .). Let's do B: use the stdlib csv module. "
        "Keep parse_rows a streaming generator and keep Row.lineno pointing at the line where each record starts.",
        gap_ms=27340,
    )
    s.assistant([
        ("thinking", "csv.reader over the file handle is lazy, good. For lineno I can use reader.line_num: before "
                     "reading a record, the record starts at start + line_num of the previous read. read_header "
                     "consumes line 1 with fh.readline(), so parse_rows needs a start offset of 2. Blank lines come "
                     "back as [] from csv.reader and should be skipped like before. parse_line must keep working on a "
                     "single string since tests call it directly, and test_parse_line_strips_whitespace expects "
                     "fields stripped. Let me check how cli.py and the tests use the API before rewriting."),
        ("text", "Let me check how `cli.py` and the tests use the parser API before rewriting it."),
        ("tool", "read", {"path": "src/csvtool/cli.py", "offset": 1, "limit": 44}),
        ("tool", "read", {"path": "tests/test_parser.py"}),
    ], dur_ms=9632, extra_output=450)
    s.run_tools(gaps={0: 29, 1: 5})
    s.assistant([
        ("thinking", "API to keep: Row(lineno, fields), parse_line(line, delimiter), parse_rows(fh, delimiter), "
                     "read_header(fh, delimiter). Rewrite the module wholesale, it's small."),
        ("text", "The public API is `Row`, `parse_line()`, `parse_rows()` and `read_header()`; I'll keep all four "
                 "signatures (with an optional `start` for `parse_rows`) and rewrite the module on top of `csv.reader`."),
        ("tool", "write", {"path": "src/csvtool/parser.py", "content": PARSER_CSV_PY}),
    ], dur_ms=13480, extra_output=520)
    s.run_tools()
    s.assistant([
        ("tool", "bash", {"command": "python -m pytest -q"}),
    ], dur_ms=1194)
    s.run_tools(outputs={0: (OUT_CSV_PYTEST, 0)}, gaps={0: 1033})
    s.assistant([
        ("text", "Existing tests still pass. Adding regression tests for quoted delimiters, doubled quotes and "
                 "a record spanning two lines."),
        ("tool", "edit", {"path": "tests/test_parser.py", "oldText": CSV_TESTS_OLD, "newText": CSV_TESTS_NEW}),
    ], dur_ms=7710)
    s.run_tools()
    s.assistant([
        ("tool", "bash", {"command": "python -m pytest -q && python -m csvtool stats tests/fixtures/quoted.csv"}),
    ], dur_ms=1226)
    s.run_tools(outputs={0: (OUT_CSV_FINAL, 0)}, gaps={0: 1301})
    fixed = s.assistant([
        ("text",
         "Fixed. `src/csvtool/parser.py` now delegates to the stdlib `csv` module:\n\n"
         "- `parse_line()` parses a single record with `csv.reader`, so quoted delimiters and `\"\"` escapes work.\n"
         "- `parse_rows()` wraps the file handle in one `csv.reader`, so it still streams, and a quoted field may "
         "span several lines. `Row.lineno` is the line where the record **starts** (derived from "
         "`reader.line_num`), so warnings point at the right place.\n"
         "- Blank lines are still skipped and fields are still whitespace-stripped.\n\n"
         "Added three regression tests in `tests/test_parser.py`; all 13 tests pass and "
         "`stats tests/fixtures/quoted.csv` now reports 4 columns / 4 rows with no warnings."),
    ], dur_ms=6932)
    s.label(fixed, "fix-verified", gap_ms=18220)
    s.session_info("fix csv quoting bug", gap_ms=12077)
    read_files = ["src/csvtool/parser.py", "tests/fixtures/quoted.csv"]
    compaction_summary = (
        "## Goal\n"
        "Fix `csvtool stats` reporting wrong field counts for CSV files with quoted fields "
        "(repro: `python -m csvtool stats tests/fixtures/quoted.csv`).\n\n"
        "## Constraints & Preferences\n"
        "- Parsing must stay streaming (`parse_rows` is a generator; large files must not be loaded into memory)\n"
        "- The fix should stay inside `src/csvtool/parser.py`\n\n"
        "## Progress\n"
        "### Done\n"
        "- [x] Reproduced: `stats` warns `line 3: expected 4 fields, got 6`, `line 5: expected 4 fields, got 5`, "
        "`line 6: expected 4 fields, got 1` and reports `rows:    5`\n"
        "- [x] Root cause: `parse_line()` does `line.rstrip(\"\\r\\n\").split(delimiter)` and then `.strip('\"')`, "
        "so delimiters inside quotes split fields, `\"\"` escapes are not unescaped, and `parse_rows()` iterates "
        "physical lines so a quoted field with an embedded newline breaks the record in two\n\n"
        "### In Progress\n"
        "- [ ] Choosing the fix: hand-rolled quote-aware splitter (A) vs. stdlib `csv` module (B)\n\n"
        "### Blocked\n"
        "- (none)\n\n"
        "## Key Decisions\n"
        "- **Fix in the parser, not the CLI**: `src/csvtool/cli.py` only calls `read_header()` and `parse_rows()`\n\n"
        "## Next Steps\n"
        "1. Make `parse_line()`/`parse_rows()` quote-aware\n"
        "2. Add regression tests for quoted delimiters, `\"\"` escapes and embedded newlines\n"
        "3. Re-run `python -m pytest -q` and the `stats` repro\n\n"
        "## Critical Context\n"
        "- `tests/fixtures/quoted.csv`: header `id,name,city,notes`; record 2 has quoted commas, record 3 has "
        "`\"\"` escapes, record 4's `notes` spans lines 5-6\n"
        "- `Row(lineno, fields)` is used by `cmd_stats` warnings in `src/csvtool/cli.py`"
        + file_ops_tags(read_files, [])
    )
    compaction = s.compaction(compaction_summary, u2b,
                              {"readFiles": read_files, "modifiedFiles": []}, gap_ms=3904)

    # ---- branch C: --strict flag (abandoned) ---------------------------------
    s.user("Now add a --strict flag to `csvtool stats` that exits with status 1 when any row has the wrong "
           "number of fields. CI will run it on our exports.", gap_ms=41873)
    s.assistant([
        ("thinking", "Need to see cmd_stats and the subparser definition, plus the CLI tests."),
        ("text", "Let me look at the `stats` command and its tests."),
        ("tool", "read", {"path": "src/csvtool/cli.py"}),
        ("tool", "read", {"path": "tests/test_cli.py"}),
    ], dur_ms=4021)
    s.run_tools(gaps={0: 27, 1: 4})
    s.assistant([
        ("text", "Adding the flag and counting ragged rows in `cmd_stats`."),
        ("tool", "edit", {"path": "src/csvtool/cli.py", "oldText": STRICT_EDIT_OLD, "newText": STRICT_EDIT_NEW}),
        ("tool", "edit", {"path": "src/csvtool/cli.py", "oldText": STRICT_ARG_OLD, "newText": STRICT_ARG_NEW}),
    ], dur_ms=9112)
    s.run_tools()
    s.assistant([
        ("tool", "bash", {"command": "printf 'a,b\\n1,2\\n3\\n' > /tmp/ragged.csv && "
                                     "python -m csvtool stats --strict /tmp/ragged.csv; echo \"exit=$?\""}),
    ], dur_ms=1802)
    s.run_tools(outputs={0: (OUT_STRICT, 0)}, gaps={0: 322})
    s.assistant([
        ("text", "Done: `csvtool stats --strict FILE` prints the usual warnings and exits with status 1 if any "
                 "record has a different number of fields than the header (verified on a ragged file: "
                 "`exit=1`). Without `--strict` the exit code is unchanged. Want me to add tests for it in "
                 "`tests/test_cli.py`?"),
    ], dur_ms=4470)

    # ---- /tree back to re-edit the --strict prompt, with summary -------------
    bs_read, bs_mod = ["tests/test_cli.py"], ["src/csvtool/cli.py"]
    branch_summary = (
        "The user explored a different conversation branch before returning here.\n"
        "Summary of that exploration:\n\n"
        "## Goal\n"
        "Add a `--strict` flag to `csvtool stats` that exits with status 1 when any row has the wrong number "
        "of fields, so CI can run it on exports.\n\n"
        "## Constraints & Preferences\n"
        "- Non-zero exit code on ragged rows; default behaviour of `stats` unchanged\n\n"
        "## Progress\n"
        "### Done\n"
        "- [x] Added `--strict` (store_true) to the `stats` subparser in `src/csvtool/cli.py`\n"
        "- [x] `cmd_stats()` counts ragged rows in `bad` and returns `1 if args.strict and bad else 0`\n"
        "- [x] Verified manually: `python -m csvtool stats --strict /tmp/ragged.csv` warns "
        "`line 3: expected 2 fields, got 1` and exits 1\n\n"
        "### In Progress\n"
        "- [ ] No tests for `--strict` in `tests/test_cli.py` yet\n\n"
        "### Blocked\n"
        "- (none)\n\n"
        "## Key Decisions\n"
        "- **Flag on `stats` instead of a new command**: smallest change to the CLI\n\n"
        "## Next Steps\n"
        "1. Add tests for `--strict` to `tests/test_cli.py`\n"
        "2. Mention the exit code in the `--help` text"
        + file_ops_tags(bs_read, bs_mod)
    )
    s.branch_with_summary(compaction, branch_summary, {"readFiles": bs_read, "modifiedFiles": bs_mod},
                          gap_ms=52610)
    s.model_change(GPT5, gap_ms=14388)
    s.user(
        "Change of plan: instead of a --strict flag on stats, add a separate `csvtool validate FILE` subcommand. "
        "It should print `line N: expected X fields, got Y` to stdout for every bad record and exit 1 if there "
        "were any, 0 otherwise. Remove the --strict flag again, stats should stay as it was. Add tests.",
        gap_ms=36905,
    )
    s.assistant([
        ("thinking", "**Reviewing the CLI state**\n\nThe earlier exploration left a `--strict` flag in "
                     "`src/csvtool/cli.py`. I'll read the file to see exactly what's there before reverting it "
                     "and adding a `validate` subcommand."),
        ("tool", "read", {"path": "src/csvtool/cli.py"}),
    ], dur_ms=6804, extra_output=192)
    s.run_tools(gaps={0: 24})
    s.assistant([
        ("thinking", "**Planning the edits**\n\nThree disjoint changes in cli.py: drop the `bad` counter from "
                     "`cmd_stats`, replace the strict return with `return 0` plus a new `cmd_validate`, and swap the "
                     "`--strict` argument for a `validate` subparser."),
        ("text", "Reverting `--strict` and adding `validate` in one edit."),
        ("tool", "edit", {"path": "src/csvtool/cli.py", "edits": VALIDATE_EDITS}),
    ], dur_ms=18342, extra_output=640)
    s.run_tools()
    s.assistant([
        ("thinking", "**Adding tests**\n\nCover the clean case, including a quoted delimiter, and a file with one "
                     "short and one long record."),
        ("tool", "edit", {"path": "tests/test_cli.py", "oldText": VALIDATE_TESTS_OLD,
                          "newText": VALIDATE_TESTS_NEW}),
    ], dur_ms=9205, extra_output=256)
    s.run_tools()
    s.assistant([
        ("tool", "bash", {"command": "python -m pytest -q && echo '--- quoted.csv' && "
                                     "python -m csvtool validate tests/fixtures/quoted.csv; echo \"exit=$?\"; "
                                     "echo '--- ragged.csv' && python -m csvtool validate /tmp/ragged.csv; "
                                     "echo \"exit=$?\""}),
    ], dur_ms=4116, extra_output=128)
    s.run_tools(outputs={0: (OUT_VALIDATE, 0)}, gaps={0: 1420})
    s.assistant([
        ("text",
         "Done.\n\n"
         "- `stats` is back to its original behaviour (the `--strict` flag and the `bad` counter are gone).\n"
         "- New `csvtool validate FILE`: prints `line N: expected X fields, got Y` to stdout for each ragged "
         "record and exits 1 if there were any, 0 otherwise. It uses the same streaming `parse_rows()`, so "
         "quoted fields and multi-line records are handled and line numbers point at the start of the record.\n"
         "- Added `test_validate_ok` and `test_validate_reports_ragged_rows` to `tests/test_cli.py`.\n\n"
         "All 15 tests pass; `validate tests/fixtures/quoted.csv` exits 0 and `/tmp/ragged.csv` reports "
         "line 3 and exits 1. For CI: `python -m csvtool validate export.csv` fails the job on any ragged row."),
    ], dur_ms=7391, extra_output=210)
    return s


def main(argv: list[str]) -> int:
    data = "\n".join(build().lines()) + "\n"
    if len(argv) > 1:
        with open(argv[1], "w", encoding="utf-8", newline="\n") as fh:
            fh.write(data)
    else:
        sys.stdout.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
