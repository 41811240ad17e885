"""Hostile and broken session files, and the contract every command must keep on them.

The contract (docs: stree/errors.py, `stree --help`): a command either succeeds or
exits with a documented code and says why on stderr in one `stree: error:` line
(plus an optional hint); never a traceback, never an internal error, never a hang;
--json output is always valid JSON (no NaN/Infinity); the file is never modified.
"""

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from builders import branchy, dumps

from stree.errors import EXIT_CODES, INTERNAL

DOCUMENTED = {code for code, _ in EXIT_CODES} - {INTERNAL}
ID_RE = re.compile(rb'"id":"([^"\\]{1,40})"')

# Lines that break JSON parsers, Python's in particular.
NASTY_LINES = [
    b"",
    b"   ",
    b"\x00\x00\x00",
    b'{"type":"message","id":"nul00000","parentId":null,"message":{"role":"user","content":"a\x00b"}}',
    b"\xff\xfe\xfd not utf-8 \xc3\x28",
    b'{"type":"message","id":"bad8utf0","parentId":null,"message":{"role":"user","content":"\xff\xc0\xaf"}}',
    b"\xef\xbb\xbf{}",
    b"[" * 5000 + b"]" * 5000,
    b'{"type":"custom","id":"deep0001","parentId":null,"data":' + b"[" * 3000 + b"]" * 3000 + b"}",
    b'{"type":"custom","id":"deep0002","parentId":null,"data":' + b'{"a":' * 2000 + b"1" + b"}" * 2000 + b"}",
    b'{"type":"custom","id":"unclosed","parentId":null,"data":' + b"[" * 3000,
    b'{"type":"message","type":"custom","id":"dupkeys0","id":"dupkeys1","parentId":null}',
    b'{"type":"message","id":"bignum00","parentId":null,"message":{"role":"user","content":"n","n":1e400,'
    b'"m":-1e999,"k":' + b"9" * 5000 + b"}}",
    b'{"type":"message","id":"nan00000","parentId":null,"message":{"role":"user","content":NaN}}',
    b'{"type":"message","id":"infinity","parentId":null,"x":Infinity}',
    b'{"type":"message","id":"surrogat","parentId":null,"message":{"role":"user","content":"lone \\ud800 '
    b'\\udfff pair \\ud83d\\ude00"}}',
    b'{"type":"label","id":"surrlabl","parentId":null,"targetId":"surrogat","label":"\\udc80x"}',
    b'{"type":"session","version":3,"id":"second-header"}',
    b'{"type":"message","id":null,"parentId":null}',
    b'{"type":5,"id":"typenum0","parentId":null}',
    b'{"type":"message","id":["x"],"parentId":{"a":1}}',
    b'{"type":"message","id":"wrongmsg","parentId":null,"message":"just a string","timestamp":7}',
    b'{"type":"message","id":"wrongcnt","parentId":null,"message":{"role":"user","content":42}}',
    b'{"type":"message","id":"wrongblk","parentId":null,"message":{"role":"assistant","content":[1,null,'
    b'{"type":"toolCall","name":{"x":1},"arguments":"notobj"},{"type":"text","text":["a"]}],"stopReason":7}}',
    b'{"type":"compaction","id":"cmpbad00","parentId":null,"summary":{"a":1},"firstKeptEntryId":["x"],'
    b'"tokensBefore":"many"}',
    b'{"type":"branch_summary","id":"bsbad000","parentId":null,"summary":17,"fromId":null}',
    b'{"type":"model_change","id":"mcbad000","parentId":null,"provider":{"a":1},"modelId":[1]}',
    b'{"type":"thinking_level_change","id":"tlbad000","parentId":null,"thinkingLevel":{"x":1}}',
    b'{"type":"session_info","id":"sibad000","parentId":null,"name":["n"]}',
    b'{"type":"custom_message","id":"cmbad000","parentId":null,"customType":7,"content":{"x":1}}',
    b'{"type":"message","id":"cycle001","parentId":"cycle002","timestamp":"2025-01-01T00:00:00Z",'
    b'"message":{"role":"user","content":"c1"}}',
    b'{"type":"message","id":"cycle002","parentId":"cycle001","timestamp":"2025-01-01T00:00:00Z",'
    b'"message":{"role":"user","content":"c2"}}',
    b'{"type":"message","id":"selfpar0","parentId":"selfpar0","message":{"role":"user","content":"me"}}',
    b'{"type":"message","id":"badtime0","parentId":null,"timestamp":"not a date","message":{"role":"user",'
    b'"content":"t"}}',
    b'{"type":"message","id":"badtime1","parentId":null,"timestamp":"9999-99-99T99:99:99Z"}',
    b'{"type":"message","id":"badtime2","parentId":null,"timestamp":"-271821-04-20T00:00:00.000Z"}',
    b'{"type":"label","id":"lbl00000","parentId":null,"targetId":"nowhere0","label":"dangling"}',
    b'"just a string"',
    b"42",
    b"null",
    b"[1,2,3]",
    b"{",
    b'{"type":"message","id":"trunc000","parentId":null,"message":{"role":"us',
    b"\r",
    b"\x1b]0;owned\x07",
    b'{"type":"message","id":"ws000000","parentId":null}    \t  ',
]


def seed_lines():
    """A realistic session (branches, labels, compaction, summaries) as lines of bytes."""
    return [line.encode() for line in branchy().lines()]


def _random_bytes(rng, n):
    return bytes(rng.randrange(256) for _ in range(n))


def mutate(rng, lines):
    """One random mutation of a list of lines (bytes, without newlines)."""
    lines = list(lines)
    kind = rng.randrange(10)
    i = rng.randrange(len(lines)) if lines else 0
    if kind == 0 and lines:  # flip bytes inside a line
        b = bytearray(lines[i])
        for _ in range(rng.randint(1, 4)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
        lines[i] = bytes(b)
    elif kind == 1 and lines:  # cut a line short
        lines[i] = lines[i][:rng.randrange(len(lines[i]) + 1)]
    elif kind == 2 and lines:
        del lines[i]
    elif kind == 3 and lines:
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
    elif kind == 4 and len(lines) > 1:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 5:
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(NASTY_LINES))
    elif kind == 6:
        lines.insert(rng.randrange(len(lines) + 1), _random_bytes(rng, rng.randint(1, 80)))
    elif kind == 7 and lines:  # replace a JSON value inside an entry
        try:
            obj = json.loads(lines[i])
        except (ValueError, RecursionError):
            return lines
        if isinstance(obj, dict) and obj:
            key = rng.choice(sorted(obj))
            obj[key] = rng.choice([None, 0, -1, 1.5, "", "x" * 300, [], {}, True, "@", "root", obj.get("id")])
            lines[i] = dumps(obj).encode("utf-8", "surrogatepass")
    elif kind == 8 and lines:  # point a parent somewhere else (cycles, self, dangling)
        ids = [m.group(1) for line in lines for m in ID_RE.finditer(line)]
        target = rng.choice(ids + [b"nowhere0"]) if ids else b"nowhere0"
        lines[i] = re.sub(rb'"parentId":("[^"]*"|null)', b'"parentId":"' + target + b'"', lines[i], count=1)
    elif kind == 9 and lines:  # CRLF or stray whitespace
        lines[i] = lines[i] + rng.choice([b"\r", b" ", b"\t", b"\x0b"])
    return lines


def hostile_file(rng, path, mutations=None):
    lines = seed_lines()
    for _ in range(mutations if mutations is not None else rng.randint(1, 6)):
        lines = mutate(rng, lines)
    data = b"\n".join(lines) + rng.choice([b"\n", b"", b"\n\n", b"\r\n"])
    path.write_bytes(data)
    return data


def command_lines(rng, path, data):
    """Read commands over one file, with revisions taken from it and some made up."""
    ids = [m.group(1).decode("utf-8", "replace") for m in ID_RE.finditer(data)]
    revs = ["@", "root", "@~1", "@^", "HEAD~3", ":/the", ":/\x1b[31m", "start", "csv-attempt", "nope0000",
            "0000", "@~999", "..@", "start...@", "a..b..c"] + ids
    s = ["-s", str(path), "--no-pager"]

    def rev():
        return rng.choice(revs)
    return [
        s + ["log"],
        s + ["log", rev(), "-n", str(rng.randint(0, 5))],
        s + ["log", "--json", rev()],
        s + ["log", "--graph", "--filter", rng.choice(["default", "no-tools", "user-only", "labeled-only", "all"])],
        s + ["log", "--graph", "--json", "--filter", "all", "--search", rng.choice(["csv", "ü", "x y", "\x00"])],
        s + ["log", "--graph", "--format", "{id}\\t{row}", "-z"],
        s + ["show", rev()],
        s + ["show", "--json", rev(), rev()],
        s + ["show", "--format", "{text}", "-z", rev()],
        s + ["context", rev()],
        s + ["context", "--json", rev()],
        s + ["context", "--as", rng.choice(["openai", "anthropic"]), rev()],
        s + ["rev-parse", rev(), rev()],
        s + ["merge-base", rev(), rev()],
        s + ["merge-base", "--is-ancestor", rev(), rev()],
        s + ["label"],
        s + ["reflog"],
        s + ["fsck"],
        s + ["name"],
        ["--session-dir", str(path.parent), "ls", rng.choice(["--json", "-z", "--all"])],
    ]


def run_batch(cases, timeout=60.0, env=None):  # (a hang detector: far above what a case takes)
    """Run command lines through tests/lib/cli_batch.py; returns results in order."""
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("cli_batch.py")), "--timeout", str(timeout)],
        input="".join(json.dumps(c) + "\n" for c in cases).encode(), capture_output=True,
        timeout=60 + timeout * len(cases), env=env)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    results = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert len(results) == len(cases), proc.stderr.decode(errors="replace")[-3000:]
    for r in results:
        r["out"] = base64.b64decode(r["out"])
    return results


def _strict_json(text):
    def refuse(name):
        raise ValueError(f"{name} is not JSON")
    return json.loads(text, parse_constant=refuse)


def check_contract(args, code, out, err, timed_out=False):
    """Assert what every command owes its user, whatever the file holds. `out` is bytes."""
    where = f"stree {' '.join(map(repr, args))}"
    assert not timed_out, f"{where}: did not finish in time"
    assert "Traceback" not in err, f"{where}: traceback\n{err}"
    assert "internal error" not in err, f"{where}: {err}"
    assert code in DOCUMENTED, f"{where}: undocumented exit code {code}\n{err}"
    errors = [line for line in err.splitlines() if line.startswith(("stree: error:", "Error:"))]
    if code not in (0, 1):
        assert errors, f"{where}: exit {code} without a reason on stderr:\n{err}"
    for line in err.splitlines():
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", line), f"{where}: raw control char on stderr: {line!r}"
    text = out.decode("utf-8")  # stdout is always UTF-8 (raises on surrogates leaking out)
    if "--json" in args or "--as" in args:
        records = [r for r in text.split("\0" if "-z" in args else "\n") if r]
        for rec in records:
            _strict_json(rec)
    if code == 0 and "--json" not in args and "--as" not in args:
        # human and --format text: nothing that a terminal would act on
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]",
                             text.replace("\0", "")), f"{where}: unsafe output {text[:300]!r}"


def file_digest(path):
    import hashlib

    st = os.stat(path)
    return hashlib.sha256(Path(path).read_bytes()).hexdigest(), st.st_mode
