"""checkout --summarize over real loopback HTTP: the stored entry is the one pi's own
navigation stores for the same model answer; every failure leaves the file byte-identical."""

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import interruptible

from conftest import ROOT
from llm_server import (ANSWER, LLMServer, Reply, anthropic_json, name_keys_for_this_server, openai_events,
                        openai_json)
from pi_harness import REFERENCE, each_version, pi

KEY = "sk-checkout-test-0123456789-SECRET"
LEAF, TARGET = "f7e0df1c", "459e8d8a"  # the demo: leave the validate branch for the csv attempt's start


@pytest.fixture
def server():
    s = LLMServer()
    yield s
    s.close()


def checkout(stree, path, server, provider="openai", *args, env=None):
    name_keys_for_this_server()
    base = f"{server.url}/v1" if provider == "openai" else server.url
    return stree("-s", path, "checkout", TARGET, "--summarize", "--provider", provider, "--model", "test-model",
                 "--base-url", base, *args, env={"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY, **(env or {})})


def appended(path, before):
    return [json.loads(line) for line in path.read_bytes()[len(before):].decode().splitlines()]


def without_ids(entries):
    ids = {e["id"]: f"<new{i}>" for i, e in enumerate(entries)}
    return [{k: ids.get(v, v) if isinstance(v, str) else v for k, v in e.items() if k not in ("id", "timestamp")}
            for e in entries]


@each_version
@pytest.mark.parametrize("provider,label", [("openai", None), ("anthropic", "csv-start")])
def test_summary_entry_is_what_pi_stores(stree, demo, server, provider, label, pi_version):
    before = demo.read_bytes()
    r = checkout(stree, demo, server, provider, *(["--label", label] if label else []))
    assert r.code == 0, r
    assert KEY not in r.out + r.err
    assert len(server.requests) == 1
    ours = appended(demo, before)
    pi_args = ["--label", label] if label else []
    nav = pi("navigate", ROOT / "stree" / "data" / "demo.jsonl", TARGET, "--summary", ANSWER, "--pi-format",
             *pi_args, version=pi_version)
    theirs = nav["appendedEntries"]
    entry = ours[0]
    # the harness's navigate stores a given text, so its entry has no usage: pi's own summarizer
    # reports the usage it would store (1.5.2), from the same server answer
    usage = entry.pop("usage")
    if pi_version == REFERENCE:
        said = pi("summarize", ROOT / "stree" / "data" / "demo.jsonl", "--from", nav["oldLeafId"], "--to", TARGET,
                  "--base-url", f"{server.url}/v1" if provider == "openai" else server.url,
                  "--api", "openai-completions" if provider == "openai" else "anthropic-messages",
                  "--model", "test-model", "--api-key", KEY, version=pi_version)
        assert usage == said["usage"]
        assert json.dumps(usage) == json.dumps(said["usage"])  # key order too
    parent = stree("-s", demo, "rev-parse", f"{TARGET}^").out.strip()  # a user message: the leaf goes above it
    assert entry["parentId"] == parent and entry["fromId"] == nav["oldLeafId"]  # fromId: the old leaf (1.5.2)
    if pi_version == "0.73.1":  # it wrote the new position as fromId
        assert theirs[0]["fromId"] == parent
        theirs = [dict(theirs[0], fromId=nav["oldLeafId"]), *theirs[1:]]
    assert without_ids(ours) == without_ids(theirs)
    assert entry["type"] == "branch_summary" and entry["fromHook"] is False  # as pi's branchWithSummary
    assert set(entry["details"]) == {"readFiles", "modifiedFiles"}
    # pi resumes there and shows the summary in its context
    seen = pi("inspect", demo, version=pi_version)
    assert seen["leafId"] == ours[-1]["id"]
    last = seen["context"]["messages"][-1]
    assert last["role"] == "branchSummary" and last["summary"] == entry["summary"]


def test_summary_equals_stree_summarize(stree, demo, server):
    printed = stree("-s", demo, "summarize", "--to", TARGET, "--provider", "openai", "--model", "m",
                    "--base-url", f"{server.url}/v1", "--instructions", "mind the tests", "--json",
                    env={"OPENAI_API_KEY": KEY})
    before = demo.read_bytes()
    r = checkout(stree, demo, server, "openai", "--instructions", "mind the tests")
    assert r.code == 0, r
    first, second = server.requests
    assert first.json["messages"] == second.json["messages"]
    assert "Additional focus: mind the tests" in second.json["messages"][1]["content"]
    (entry,) = appended(demo, before)
    out = json.loads(printed.out)
    assert entry["summary"] == out["summary"]
    assert entry["details"] == {"readFiles": out["readFiles"], "modifiedFiles": out["modifiedFiles"]}


FAILURES = {
    "401": ([Reply(401, body={"error": {"message": f"bad key {KEY}"}})], 5, "HTTP 401"),
    "429 forever": ([Reply(429, body={"error": {"message": "slow down"}}, headers={"retry-after": "0"})] * 4,
                    5, "HTTP 429"),
    "500": ([Reply(500, body={"error": {"message": "boom"}}, headers={"retry-after": "0"})] * 4, 5, "HTTP 500"),
    "timeout": ([Reply(delay=60, body=openai_json(ANSWER))], 5, "timed out"),
    "malformed JSON": ([Reply(raw=b"{nope")], 5, "malformed JSON"),
    "empty": ([Reply(events=openai_events(""))], 5, "empty answer"),
    "refusal": ([Reply(body=openai_json(None, refusal="No."))], 5, "refused"),
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_failures_write_nothing(stree, demo, server, case):
    script, code, words = FAILURES[case]
    server.script = list(script)
    before = demo.read_bytes()
    stream = "--no-stream" if case in ("malformed JSON", "refusal") else "--stream"
    # a 0.5 s timeout only where it is what must fail: a loaded machine's server may take longer
    timeout = "0.5" if case == "timeout" else "30"
    r = checkout(stree, demo, server, "openai", "--timeout", timeout, stream, "--label", "x")
    assert r.code == code, r
    assert words in r.err and "Traceback" not in r.err
    assert KEY not in r.out + r.err
    assert demo.read_bytes() == before


def test_anthropic_failure_writes_nothing(stree, demo, server):
    server.script = [Reply(body=anthropic_json(None))]
    before = demo.read_bytes()
    r = checkout(stree, demo, server, "anthropic", "--no-stream")
    assert r.code == 5 and "anthropic" in r.err and "empty answer" in r.err
    assert demo.read_bytes() == before


def test_no_model_and_stray_flags_write_nothing(stree, demo):
    before = demo.read_bytes()
    r = stree("-s", demo, "checkout", TARGET, "--summarize")
    assert r.code == 2 and "--provider extractive" in r.err
    r = stree("-s", demo, "checkout", TARGET, "--model", "m")
    assert r.code == 2 and "--model only apply with --summarize" in r.err
    assert demo.read_bytes() == before


def test_interrupt_during_summary_writes_nothing(demo, server):
    server.script = [Reply(delay=10, body=openai_json(ANSWER))]
    before = demo.read_bytes()
    proc = subprocess.Popen([sys.executable, "-m", "stree", "-s", str(demo), "checkout", TARGET, "--summarize",
                             "--provider", "openai", "--model", "m", "--base-url", f"{server.url}/v1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, OPENAI_API_KEY=KEY),
                            preexec_fn=interruptible)
    deadline = time.monotonic() + 60
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.requests, "stree never sent the request"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and b"interrupted" in err and b"Traceback" not in err
    assert demo.read_bytes() == before


def test_hook_summary_wins_and_no_model_is_asked(stree, demo, server, tmp_path):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    hook = hooks / "before-tree"
    hook.write_text('#!/bin/sh\ncat > /dev/null\necho \'{"summary": {"summary": "by the hook", '
                    '"details": {"readFiles": [], "modifiedFiles": ["x.py"]}}}\'\n')
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    before = demo.read_bytes()
    r = checkout(stree, demo, server, "openai", env={"STREE_HOOKS_DIR": str(hooks)})
    assert r.code == 0, r
    assert server.requests == []
    (entry,) = appended(demo, before)
    assert entry["summary"] == "by the hook" and entry["fromHook"] is True


@each_version
def test_extractive_checkout_is_deterministic_and_loads_in_pi(stree, demo, tmp_path, pi_version):
    other = tmp_path / "again.jsonl"
    shutil.copyfile(demo, other)
    stored = []
    for path in (demo, other):
        before = path.read_bytes()
        r = stree("-s", path, "checkout", TARGET, "--summarize", "--provider", "extractive")
        assert r.code == 0, r
        (entry,) = appended(path, before)
        stored.append(entry)
    assert stored[0]["summary"] == stored[1]["summary"]
    assert "Extractive summary made by stree" in stored[0]["summary"]
    seen = pi("inspect", demo, version=pi_version)
    assert seen["leafId"] == stored[0]["id"]
    assert seen["context"]["messages"][-1] == {"role": "branchSummary", "summary": stored[0]["summary"],
                                               "fromId": stored[0]["fromId"], "timestamp": seen["context"]["messages"][-1][
                                                   "timestamp"]}
    nav = pi("navigate", ROOT / "stree" / "data" / "demo.jsonl", TARGET, "--summary", stored[0]["summary"],
             version=pi_version)
    assert nav["summaryEntry"]["details"] == stored[0]["details"]
