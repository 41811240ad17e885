"""The write commands stree.fastwrite answers without click (`label [-f] NAME [REV]`,
`checkout [--exact] REV`) leave the file click's path leaves, print what it prints, byte for
byte, with the same exit codes; anything unusual goes to click before a byte is written.

The fast path answers label and checkout, each compared with click's: one concern across these
commands, so one module."""

import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest
from builders import SessionBuilder, branchy
from pi_harness import pi

SEQUENCES = (  # each: commands run one after the other on one copy of the file
    [["label", "found"], ["label", "found"], ["label", "found", "@~2"], ["label", "-f", "found", "@~2"]],
    [["label", "start", "@"], ["label", "-f", "start", "@"], ["label", "--force", "start", "00000006"]],
    [["label", "start", "start"], ["label", "", "start"], ["label", "", "start"], ["label", "  spaced  ", "root"]],
    [["label", "csv-try", "csv-attempt"], ["label", "again", "00000009"]],  # replaces: a note on stderr
    [["--no-pager", "label", "g1"], ["--color", "never", "label", "g2", "@^"], ["label", "--force=x"]],
    [["label", "bad name"], ["label", "@"], ["label", "x~1"], ["label", "x", "nosuchrev"], ["label", "-x"]],
    [["label", "-d", "start"], ["label", "-d", "start"], ["label", "--delete", "00000009"], ["label", "-d", "@"],
     ["label", "--delete=nosuch"], ["label", "-d", "x", "y"], ["label", "-f", "-d", "x"], ["label", "-d", "-f"]],
    [["label", "x", "@", "extra"], ["label", "--json", "x"], ["label", "x", "--", "@"], ["label", "-d"]],
    [["label", "s", "-s", "other.jsonl"], ["label", "deadbeef:x"], ["--color", "sometimes", "label", "x"]],
    [["checkout", "@~2"], ["checkout", "-"], ["checkout", "-"], ["checkout", "@"]],
    [["checkout", "--exact", "@~2"], ["checkout", "--exact", "@~2"], ["checkout", "root"], ["checkout", "-"]],
    [["checkout", "00000006"], ["checkout", "--exact", "00000006"], ["checkout", "start"], ["checkout", "@"]],
    [["checkout", "-"], ["checkout", "nosuchrev"], ["checkout", "--exact"], ["checkout", "@", "@~1"]],
    [["checkout", "@~1", "--dry-run"], ["checkout", "@~1", "--no-hooks"], ["checkout", "@~1", "--label", "y"]],
    [["checkout", "csv-attempt"], ["label", "here"], ["checkout", "--exact", "here"], ["label", "-f", "here", "root"]],
)

ID = re.compile(rb'"id":"([^"]+)"')
STAMP = re.compile(rb'"timestamp":"[^"]*"')
AGO = re.compile(rb" \d+ s ago")  # (the live-pi warning: the seconds since the message)


def run(path, args, **env):
    return subprocess.run([sys.executable, "-m", "stree", "-s", str(path), *args], capture_output=True,
                          env=dict(os.environ, **env), timeout=60, cwd=path.parent)


def appended(path, before, names):
    """The lines appended to `path` since `before`, comparable (see comparable)."""
    data = path.read_bytes()
    assert data.startswith(before)
    return comparable(data[len(before):], names)


def comparable(data, names):
    """`data` with new entry ids (`names`: those of earlier steps too) and times made comparable:
    new ids are random, times the clock's."""
    for id in ID.findall(data):
        names.setdefault(id, b"new-%d" % len(names))
    for id, name in names.items():
        data = data.replace(b'"' + id + b'"', b'"' + name + b'"')
    return AGO.sub(b" s ago", STAMP.sub(b'"timestamp":"T"', data))


def both_ways(tmp_path, builder, sequence, **env):
    """Run the commands on two copies of one file, with the fast path and without it: per step,
    (exit code, stdout, stderr, what was appended) of each."""
    seen = []
    for name, extra in (("fast", {}), ("click", {"STREE_NO_FAST": "1"})):
        os.makedirs(tmp_path / name, exist_ok=True)
        path = builder.write(tmp_path / name / "s.jsonl")
        shutil.copyfile(path, tmp_path / name / "other.jsonl")
        steps = []
        names = {}
        for args in sequence:
            before = path.read_bytes()
            proc = run(path, args, **env, **extra)
            written = appended(path, before, names)
            steps.append((args, proc.returncode, comparable(proc.stdout, names), comparable(proc.stderr, names),
                          written))
        seen.append(steps)
    return seen


@pytest.mark.parametrize("sequence", SEQUENCES, ids=lambda seq: " / ".join(" ".join(a) for a in seq))
def test_the_fast_path_writes_and_says_what_click_does(tmp_path, isolated_home, sequence):
    fast, slow = both_ways(tmp_path, branchy(), sequence)
    assert fast == slow


def _imports(path, args, **env):
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "stree", "-s", str(path), *args],
                          capture_output=True, env=dict(os.environ, **env), timeout=60)
    lines = proc.stderr.decode().splitlines()
    return proc, {line.split("|")[-1].strip() for line in lines if line.startswith("import time:")}


@pytest.mark.parametrize("args", [["label", "x"], ["label", "-f", "start", "@~1"], ["label", "", "start"],
                                  ["label", "-d", "csv-attempt"], ["checkout", "@~2"],
                                  ["checkout", "--exact", "00000006"]], ids=" ".join)
def test_plain_writes_do_not_load_click(tmp_path, isolated_home, args):
    path = branchy().write(tmp_path / "s.jsonl")
    before = path.read_bytes()
    proc, imported = _imports(path, args)
    assert proc.returncode == 0 and path.read_bytes() != before, proc.stderr.decode()[-500:]
    assert "stree.fastwrite" in imported and "click" not in imported and "stree.cli" not in imported


def test_pi_reads_what_the_fast_path_wrote(tmp_path, isolated_home):
    path = branchy().write(tmp_path / "s.jsonl")
    for args in (["label", "bug-found"], ["label", "-f", "start", "00000006"], ["label", "", "csv-attempt"],
                 ["checkout", "--exact", "00000006"], ["label", "here"], ["checkout", "@~1"]):
        proc, imported = _imports(path, args)
        assert proc.returncode == 0 and "click" not in imported, proc.stderr.decode()[-500:]
    seen = pi("inspect", path)
    entries = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    assert seen["leafId"] == entries[-1]["id"] and len(seen["entries"]) == len(entries)
    assert entries[-1]["type"] == "custom" and entries[-1]["customType"] == "stree/checkout"
    listed = [json.loads(line) for line in run(path, ["label", "--json"]).stdout.splitlines()]
    assert seen["labels"] == {x["id"]: x["label"] for x in listed}
    assert {x["label"] for x in listed} == {"bug-found", "here"}  # start replaced by here on 00000006


def _click_did_it(path, args, **env):
    """The command went to click (the fast path gave up) and did what STREE_NO_FAST=1 does."""
    proc, imported = _imports(path, args, **env)
    assert "click" in imported, proc.stderr.decode()[-500:]
    return proc


def test_checkout_hooks_go_to_click(tmp_path, isolated_home):
    hooks = isolated_home / ".config" / "stree" / "hooks"
    hooks.mkdir(parents=True)
    hook = hooks / "tree"
    hook.write_text(f"#!/bin/sh\ncat > {tmp_path}/seen.json\n")
    hook.chmod(0o700)
    path = branchy().write(tmp_path / "s.jsonl")
    assert _click_did_it(path, ["checkout", "@~2"]).returncode == 0
    assert json.loads((tmp_path / "seen.json").read_text())["newLeafId"]
    hook.unlink()
    other = tmp_path / "elsewhere"
    other.mkdir(mode=0o700)
    (other / "before-tree").write_text("#!/bin/sh\necho '{\"cancel\": true}'\n")
    (other / "before-tree").chmod(0o700)
    before = path.read_bytes()
    proc = _click_did_it(path, ["checkout", "@~1"], STREE_HOOKS_DIR=str(other))
    assert proc.returncode == 6 and b"cancelled" in proc.stderr and path.read_bytes() == before
    fast, slow = both_ways(tmp_path / "cmp", branchy(), [["checkout", "@~1"], ["label", "x"]],
                           STREE_HOOKS_DIR=str(other))
    assert fast == slow


def test_a_live_pi_a_warning_a_read_only_or_headerless_file_go_to_click(tmp_path, isolated_home):
    b = branchy()
    b.ms = int(time.time() * 1000) - 5000  # a message appended moments ago: pi may be running it
    b.user("still here")
    b.assistant("yes")
    path = b.write(tmp_path / "live.jsonl")
    proc = _click_did_it(path, ["checkout", "--exact", "@~2"])
    assert proc.returncode == 0 and b"if pi is running it" in proc.stderr
    fast, slow = both_ways(tmp_path / "live", b, [["checkout", "--exact", "@~2"], ["label", "x"]])
    assert fast == slow and b"warning" in fast[0][3]

    with_bad_line = branchy().write(tmp_path / "bad.jsonl")
    with open(with_bad_line, "a") as f:
        f.write("{not json\n")
    for args in (["label", "x"], ["checkout", "@~1"]):
        _click_did_it(with_bad_line, args)

    read_only = branchy().write(tmp_path / "ro.jsonl")
    read_only.chmod(0o444)
    proc = _click_did_it(read_only, ["label", "x"])
    assert proc.returncode == 6 and b"read-only" in proc.stderr

    sessions = tmp_path / ".openclaw" / "agents" / "main" / "sessions"  # where OpenClaw keeps some
    sessions.mkdir(parents=True)
    headerless = sessions / "headerless.jsonl"
    headerless.write_bytes(b"".join(branchy().write(tmp_path / "h.jsonl").read_bytes().splitlines(True)[1:]))
    before = headerless.read_bytes()
    for args in (["label", "x"], ["checkout", "@~1"]):
        proc = _click_did_it(headerless, args)
        assert proc.returncode == 6 and b"no session header" in proc.stderr and headerless.read_bytes() == before


def test_escape_sequences_in_a_resubmitted_message(tmp_path, isolated_home):
    b = SessionBuilder()
    b.user("first")
    b.assistant("answer")
    b.user("\x1b[31mred\x1b[0m and a bell \x07")
    b.assistant("ok")
    fast, slow = both_ways(tmp_path, b, [["checkout", "@~1"], ["checkout", "-"], ["checkout", "--exact", "@~1"]])
    assert fast == slow and fast[0][2]  # the text, as click.echo prints it into a pipe


def test_statistics_of_a_fast_write(tmp_path, isolated_home):
    """`make bench` times the warm writes with STREE_DEBUG_STATS=1: the fast path answers then too,
    with the line click's path prints (lines parsed, index state, entries decoded)."""
    strip = lambda text: [line.split(", peak rss")[0] for line in text.decode().splitlines()  # noqa: E731
                          if line.startswith("stree: stats:")]
    fast, slow = both_ways(tmp_path, branchy(), [["log", "-n", "1"], ["checkout", "@~2"], ["label", "x"],
                                                 ["checkout", "-"]], STREE_DEBUG_STATS="1")
    for (args, *f), (_, *s) in zip(fast, slow):
        assert f[:2] == s[:2] and f[3] == s[3], args
        assert strip(f[2]) == strip(s[2]) and len(strip(f[2])) == 1, args
        assert "index off" not in strip(f[2])[0], args
    proc, imported = _imports(tmp_path / "fast" / "s.jsonl", ["label", "y"], STREE_DEBUG_STATS="1")
    assert "click" not in imported and len(strip(proc.stderr)) == 1


def test_a_bad_lock_timeout_and_a_lock_held_elsewhere(tmp_path, isolated_home):
    """An error the write itself meets (the lock held by another stree) is said as click says
    it, nothing written; a STREE_LOCK_TIMEOUT it refuses goes to click."""
    sequence = [["label", "x"], ["checkout", "@~1"]]
    fast, slow = both_ways(tmp_path / "bad", branchy(), sequence, STREE_LOCK_TIMEOUT="soon")
    assert fast == slow and fast[0][1] == 2 and not fast[0][4]
    import fcntl

    seen = []
    for extra in ({}, {"STREE_NO_FAST": "1"}):
        path = branchy().write(tmp_path / f"locked{len(seen)}.jsonl")
        before = path.read_bytes()
        with open(path, "rb") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            steps = [run(path, args, STREE_LOCK_TIMEOUT="0.3", **extra) for args in sequence]
        assert path.read_bytes() == before
        seen.append([(p.returncode, p.stdout, p.stderr.replace(str(path).encode(), b"FILE")) for p in steps])
    assert seen[0] == seen[1] and seen[0][0][0] == 6 and b"locked by another stree process" in seen[0][0][2]
