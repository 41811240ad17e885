"""The optional fast decoder (msgspec, the `fast` extra) reads every line exactly as the exact
decoder does, or leaves it to it; and stree works without it.

The test extra installs msgspec. stree uses it for a scan long enough to pay for its import
(8 MiB), so most of the suite's small files take the exact decoder; these tests force it
(STREE_JSON=msgspec) and compare it with the pure one (STREE_JSON=pure), value by value
(types, key order, -0.0) on fuzzed lines, Node by Node on fuzzed files, and command by command.
"""

import json
import math
import os
import random
import subprocess
import sys

import pytest
from builders import branchy, dumps
from fuzzkit import NASTY_LINES, hostile_file
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stree.format import fastjson
from stree.format import decode
from stree.format.decode import decode_exact, decode_line
from stree.storage import scan
from stree.storage.nodes import FIELDS
from stree.storage.session import parse

msgspec = pytest.importorskip("msgspec", reason="the `fast` extra (msgspec) is in the test extra")


def same(a, b):
    """Equal as JSON.parse results: the same types, key order, and the sign of zero."""
    if a.__class__ is not b.__class__:
        return False
    if a.__class__ is dict:
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if a.__class__ is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if a.__class__ is float:
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


def fast_loads():
    picked = fastjson.pick("msgspec")
    assert picked is not None
    return picked[1], picked[2]


def fast_or_none(raw):
    """The fast decoder's answer with the scan's int limit, or None when it refuses the line."""
    loads, errors = fast_loads()
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(scan._FAST_INT_DIGITS)
    try:
        return loads(raw), True
    except errors:
        return None, False
    finally:
        sys.set_int_max_str_digits(old)


def exact_or_none(raw):
    try:
        return decode_exact(raw), True
    except ValueError:
        return None, False


def check_line(raw):
    fast, fast_ok = fast_or_none(raw)
    exact, exact_ok = exact_or_none(raw)
    if fast_ok:  # never accepts what JSON.parse refuses, never reads it differently
        assert exact_ok, raw[:200]
        assert same(fast, exact), raw[:200]
    return fast_ok


# -- lines: JSON values written in every way JSON allows, and some it does not ---------

KEYS = st.sampled_from(["a", "type", "id", "__proto__", "constructor", "", "é", "\ud800", "a"]) | st.text(max_size=6)
SCALARS = st.one_of(
    st.none(), st.booleans(),
    st.integers(),
    st.integers(min_value=-(10 ** 40), max_value=10 ** 40),
    st.sampled_from([2 ** 53 + 1, 2 ** 63, 2 ** 64, -(2 ** 63) - 1, 2 ** 64 + 1, 10 ** 30]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(), st.text(alphabet=st.characters(min_codepoint=0xd700, max_codepoint=0xe100)),
)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.lists(st.tuples(KEYS, inner), max_size=4),  # an object as pairs: duplicate keys allowed
), max_leaves=25)
SPACE = st.sampled_from(["", "", " ", "\t", "\r", "\n ", "  "])


def write(value, draw):
    """JSON text of `value` (pairs lists are objects), in one of the many spellings of each token."""
    ws = draw(SPACE)
    if value is None or value is True or value is False:
        return ws + json.dumps(value)
    if value.__class__ is int:
        return ws + str(value)
    if value.__class__ is float:
        text = draw(st.sampled_from([repr(value), f"{value:e}", f"{value:E}", f"{value:.17g}", repr(value)]))
        return ws + text.replace("inf", "1e999")
    if value.__class__ is str:
        return ws + json.dumps(value, ensure_ascii=draw(st.booleans()))
    if value and value[0].__class__ is tuple:
        items = [write(k, draw) + draw(SPACE) + ":" + write(v, draw) for k, v in value]
        return ws + "{" + ",".join(items) + draw(SPACE) + "}"
    return ws + "[" + ",".join(write(v, draw) for v in value) + draw(SPACE) + "]"


TOKENS = [b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e999", b"01", b"1.", b".5", b"-", b"+1", b"0x10",
          b"\xef\xbb\xbf", b"\xff", b"\xed\xa0\x80", b"\\ud800", b"\x00", b"\x0b", b"\x1f", b"\\u00", b",", b"]",
          b"}", b"9" * 3998, b"9" * 3999, b"9" * 4300, b"[" * 1100, b"true", b"nul", b"\"", b"\\"]


@st.composite
def lines(draw):
    raw = write(draw(VALUES), draw).encode("utf-8", "surrogatepass")  # lone surrogates: invalid UTF-8
    for _ in range(draw(st.integers(0, 2))):  # break it here and there
        at = draw(st.integers(0, len(raw)))
        cut = draw(st.integers(0, 2))
        raw = raw[:at] + draw(st.sampled_from(TOKENS) | st.binary(max_size=3)) + raw[at + cut:]
    return raw


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines())
def test_the_fast_decoder_reads_a_line_as_the_exact_one_or_not_at_all(raw):
    check_line(raw)


def plain(value):
    """The plainest JSON text of `value` (pairs lists are objects)."""
    if value.__class__ is list:
        if value and value[0].__class__ is tuple:
            return "{" + ",".join(json.dumps(k) + ":" + plain(v) for k, v in value) + "}"
        return "[" + ",".join(plain(v) for v in value) + "]"
    return json.dumps(value)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_valid_json_mostly_takes_the_fast_path(value):
    raw = plain(value).encode()
    if b"\\ud8" in raw or b"\\ud9" in raw or b"\\uda" in raw or b"\\udb" in raw or b"\\udc" in raw \
            or b"\\udd" in raw or b"\\ude" in raw or b"\\udf" in raw:
        check_line(raw)
        return  # surrogate escapes: a lone one is the exact decoder's
    assert check_line(raw) or _too_big(value), raw[:200]


def _too_big(value):
    if value.__class__ is int:
        return len(str(abs(value))) >= scan._FAST_INT_DIGITS
    if value.__class__ is float:
        return False
    if value.__class__ is list:
        return any(_too_big(v[1] if v.__class__ is tuple else v) for v in value)
    return False


@pytest.mark.parametrize("raw", [
    b'{"a":1,"b":2,"a":3}', b'{"__proto__":{"x":1},"a":[]}', b'{"a":18446744073709551616}',
    b'{"a":-9223372036854775809}', b'{"a":9007199254740993}', b'{"a":"\\ud800"}', b'{"a":"\\udc00\\ud800"}',
    b'{"a":1e400}', b'{"a":-0}', b'{"a":-0.0}', b'{"a":5e-324}', b'{"a":NaN}', b'{"a":Infinity}',
    b"\xef\xbb\xbf{}", b'{"a":"\xff"}', b" {} ", b"{}\x0b", b"[" * 5000 + b"]" * 5000,
    b'{"k":' + b"9" * 3998 + b"}", b'{"k":' + b"9" * 3999 + b"}", b'{"k":' + b"9" * 5000 + b"}",
] + NASTY_LINES)
def test_the_cases_the_exact_decoder_handles_specially(raw):
    check_line(raw)


def test_what_must_fall_back_does():
    for raw in (b'{"a":"\\ud800"}', b'{"a":1e400}', b'{"a":NaN}', b"\xef\xbb\xbf{}", b'{"a":"\xff"}',
                b"[" * 5000 + b"]" * 5000, b'{"k":' + b"9" * 3999 + b"}"):
        assert fast_or_none(raw)[1] is False, raw[:40]
    for raw in (b'{"a":1,"a":2}', b'{"__proto__":1}', b'{"a":18446744073709551616}'):
        assert fast_or_none(raw)[1] is True, raw


# -- files: the same Nodes, malformed lines and header either way ------------------------

def parsed(data, mode, monkeypatch):
    monkeypatch.setenv("STREE_JSON", mode)  # msgspec: even for a file shorter than FAST_MIN_BYTES
    monkeypatch.setattr(decode, "PICKED", [])
    try:
        s = parse("fuzzed.jsonl", data=data)
    except Exception as e:  # noqa: BLE001 - compared, not hidden
        return ("error", type(e).__name__, str(e))
    cols = {name: list(s.nodes.col(name)) for name in FIELDS}
    return (cols, s.malformed, s.header, s.version, s.line, s.index, decode.PICKED[0] is not None)


def test_fuzzed_files_parse_to_the_same_nodes(tmp_path, monkeypatch):
    rng = random.Random(16)
    for n in range(120):
        path = tmp_path / f"f{n}.jsonl"
        data = hostile_file(rng, path)
        fast, pure = parsed(data, "msgspec", monkeypatch), parsed(data, "pure", monkeypatch)
        if fast[0] == "error":
            assert fast == pure
            continue
        assert fast[-1] is True and pure[-1] is False
        assert fast[:-1] == pure[:-1], path


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(lines(), max_size=8))
def test_fuzzed_entries_parse_to_the_same_nodes(monkeypatch, raws):
    b = branchy()
    out = [dumps(b.header).encode()] + [dumps(e).encode() for e in b.entries[:3]]
    for i, raw in enumerate(raws):  # a fuzzed value as an entry's content, and as a line of its own
        out.append(b'{"type":"message","id":"f%d","parentId":null,"message":{"role":"assistant","content":%s}}'
                   % (i, raw))
        out.append(raw)
    data = b"\n".join(out) + b"\n"
    assert parsed(data, "msgspec", monkeypatch)[:-1] == parsed(data, "pure", monkeypatch)[:-1]


# -- stree itself, with and without the fast decoder -------------------------------------

def test_commands_answer_the_same_with_the_pure_decoder(tmp_path, stree):
    rng = random.Random(5)
    path = tmp_path / "s.jsonl"
    b = branchy()
    lines_ = [dumps(b.header)] + [dumps(e) for e in b.entries]
    lines_[3:3] = [raw.decode("utf-8", "replace") for raw in NASTY_LINES[:12] if b"\n" not in raw]
    path.write_text("\n".join(lines_) + "\n")
    hostile = tmp_path / "h.jsonl"
    hostile_file(rng, hostile)
    for f in (path, hostile):
        for args in (("log", "--graph"), ("context", "--json"), ("fsck",), ("log", "--json")):
            fast = stree("--no-cache", "-s", f, *args, env={"STREE_JOBS": "1", "STREE_JSON": "msgspec"})
            pure = stree("--no-cache", "-s", f, *args, env={"STREE_JOBS": "1", "STREE_JSON": "pure"})
            assert (fast.code, fast.raw, fast.err) == (pure.code, pure.raw, pure.err), (f, args)


def test_stree_works_without_msgspec(tmp_path):
    path = tmp_path / "s.jsonl"
    b = branchy()
    path.write_text("\n".join(dumps(x) for x in [b.header] + b.entries) + "\n")
    code = ("import sys; sys.modules['msgspec'] = None\n"  # as if it were not installed
            "from stree.format import fastjson; assert fastjson.pick() is None\n"
            "sys.argv[0] = 'stree'\n"
            "from stree.cli import run; run()")
    args = ["--no-cache", "-s", str(path), "log", "--json"]
    without = subprocess.run([sys.executable, "-c", code, *args], capture_output=True)
    with_it = subprocess.run([sys.executable, "-m", "stree", *args], capture_output=True)
    assert without.returncode == 0, without.stderr
    assert without.stdout == with_it.stdout
    ids = [json.loads(line)["id"] for line in without.stdout.splitlines()]
    assert len(ids) > 3 and set(ids) <= {e["id"] for e in b.entries}


def test_a_short_scan_keeps_the_exact_decoder_a_long_one_takes_msgspec(tmp_path):
    """msgspec's import costs more than it saves on a few lines (a warm command parsing what
    was appended): only a long scan imports it."""
    b = branchy()
    small = tmp_path / "small.jsonl"
    small.write_text("\n".join(dumps(x) for x in [b.header] + b.entries) + "\n")
    big = tmp_path / "big.jsonl"
    filler = [dumps(dict(e, id=f"{n:08x}", parentId=f"{n - 1:08x}" if n else None)) for n, e in
              enumerate([{"type": "custom", "customType": "x", "data": "y" * 2000}] * 4500)]
    big.write_text("\n".join([dumps(b.header)] + filler) + "\n")
    assert big.stat().st_size > scan.FAST_MIN_BYTES
    code = ("import sys; from stree.storage import session\nfrom stree.format import decode\n"
            "session.parse(sys.argv[1])\n"
            "print(decode.PICKED[0] is not None if decode.PICKED else False, 'msgspec' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "STREE_JSON"}
    for path, want in ((small, "False False"), (big, "True True")):
        r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, env=dict(env, STREE_JOBS="1"))
        assert r.stdout.decode().split() == want.split(), (path, r.stderr)


# -- one line at a time (Session.load, grep's confirmation, the catalogue): the same decoder ---

@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.sampled_from(NASTY_LINES), st.binary(max_size=200),
                 st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                              lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=5), kids, max_size=4),
                              max_leaves=12).map(lambda v: json.dumps(v, ensure_ascii=False).encode("utf-8", "surrogatepass"))))
def test_decode_line_with_the_fast_decoder_reads_as_the_exact_one(raw):
    """decode_line (which takes msgspec once it is worth it) gives what the exact decoder gives,
    or the same error, whatever the line."""
    try:
        want = ("ok", decode_exact(raw))
    except ValueError as e:
        want = ("error", type(e))
    saved = list(decode.PICKED)
    decode.PICKED[:] = [fast_loads()]
    try:
        got = ("ok", decode_line(raw))
    except ValueError as e:
        got = ("error", type(e))
    finally:
        decode.PICKED[:] = saved
    assert got[0] == want[0]
    if got[0] == "ok":
        assert same_deep(got[1], want[1]), raw[:200]


def same_deep(a, b):
    """same(), without recursion (the fuzzed lines nest deeper than Python's stack)."""
    pending = [(a, b)]
    while pending:
        x, y = pending.pop()
        if x.__class__ in (dict, list):
            if x.__class__ is not y.__class__ or len(x) != len(y):
                return False
            if x.__class__ is dict:
                if list(x) != list(y):
                    return False
                pending.extend((x[k], y[k]) for k in x)
            else:
                pending.extend(zip(x, y))
        elif not same(x, y):
            return False
    return True


def test_one_line_decodes_take_msgspec_only_once_it_pays(tmp_path):
    """A warm command decoding a few entries never imports msgspec; a process decoding many
    (serve, grep, the catalogue) takes it after FAST_AFTER lines, and STREE_JSON=pure never."""
    code = ("import sys; from stree.format import decode\n"
            "n = int(sys.argv[1]); line = b'{\"type\":\"message\",\"n\":1}'\n"
            "assert all(decode.decode_line(line) == {'type': 'message', 'n': 1} for _ in range(n))\n"
            "print('msgspec' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "STREE_JSON"}
    few, many = decode.FAST_AFTER // 2, decode.FAST_AFTER * 2
    for n, extra, want in ((few, {}, "False"), (many, {}, "True"), (many, {"STREE_JSON": "pure"}, "False")):
        r = subprocess.run([sys.executable, "-c", code, str(n)], capture_output=True, env=dict(env, **extra))
        assert r.stdout.decode().strip() == want, (n, extra, r.stderr)


# -- the fast encoder (a page of the MCP tree tool's records) ------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**80, max_value=2**80) | st.floats()
    | st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON_VALUES)
def test_fast_encoder_writes_the_values_to_json_writes(value):
    """Lone surrogates, terminal-active characters, non-finite numbers, big integers: the text
    parses to what to_json's parses to, key order included, and is as inert."""
    from stree.output.modes import _JSON_UNSAFE, fast_to_json, to_json

    fast = fast_to_json()
    assert fast is not to_json  # (msgspec is installed for the tests)
    text, exact = fast(value), to_json(value)
    assert not _JSON_UNSAFE.search(text)
    same = json.loads(text), json.loads(exact)
    assert repr(same[0]) == repr(same[1])  # (repr: -0.0 and key order told apart)


def test_fast_encoder_is_to_json_when_pure(monkeypatch):
    from stree.output.modes import fast_to_json, to_json

    monkeypatch.setenv("STREE_JSON", "pure")
    assert fast_to_json() is to_json
