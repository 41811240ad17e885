"""stree summarize against real HTTP servers on 127.0.0.1 speaking the OpenAI and Anthropic
wire formats; the expected requests and stored texts come from the real pi."""

import functools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import interruptible, read_pty

from builders import SessionBuilder
from conftest import ROOT
from llm_server import (ANSWER, LLMServer, Reply, anthropic_json, name_keys_for_this_server, openai_events,
                        openai_json)
from pi_harness import REFERENCE, each_version, pi_constant, run_pi
from stree.core.summary import MAX_TOKENS

# what pi asks as max tokens: 0.73.1 2048, 0.87.1 4096, 1.5.2 the model's output limit (the
# harness's model: 8192). stree asks MAX_TOKENS (documented difference).
PI_MAX_TOKENS = {"0.73.1": 2048, "0.87.1": 4096, "1.5.2": 8192, "1.6.0": 8192}

KEY = "sk-test-9f8e7d6c5b4a-SECRET"
ZERO_COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0, "totalFromProvider": False}
DEMO = str(ROOT / "stree" / "data" / "demo.jsonl")
LEAF, TARGET = "f7e0df1c", "459e8d8a"


@pytest.fixture
def server():
    s = LLMServer()
    yield s
    s.close()


@functools.cache
def pi_prep(version):
    """pi's own conversation text and file lists for the demo's branch."""
    return run_pi("branch-prep", DEMO, "--from", LEAF, "--to", TARGET, "--budget", 128000 - 16384, version=version)


def expected_user(prep, version):
    return (f"<conversation>\n{prep['conversation']}\n</conversation>\n\n"
            + pi_constant("BRANCH_SUMMARY_PROMPT", version=version))


def system_prompt(version):
    return pi_constant("SUMMARIZATION_SYSTEM_PROMPT", "core/compaction/utils.js", version=version)


def summarize(stree, server, provider, *args, env=None, session=DEMO):
    name_keys_for_this_server()
    base = f"{server.url}/v1" if provider == "openai" else server.url
    full_env = {"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY, **(env or {})}
    return stree("-s", session, "summarize", "--to", TARGET, "--provider", provider, "--model", "test-model",
                 "--base-url", base, *args, env=full_env)


@functools.cache
def pi_stored(text, version):
    """What pi stores for a model answer `text` on the demo branch (harness: pi's own navigate)."""
    nav = run_pi("navigate", DEMO, TARGET, "--summary", text, "--pi-format", version=version)
    return nav["summaryEntry"]


@each_version
@pytest.mark.parametrize("stream", [True, False])
def test_openai_request_and_summary(stree, server, stream, pi_version):
    prep = pi_prep(REFERENCE)  # stree sends 1.5.2's request; what every version stores is the same
    r = summarize(stree, server, "openai", "--stream" if stream else "--no-stream")
    assert r.code == 0, r
    (req,) = server.requests
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.headers["content-type"] == "application/json"
    body = {"model": "test-model",
            "messages": [{"role": "system", "content": system_prompt(REFERENCE)},
                         {"role": "user", "content": expected_user(prep, REFERENCE)}],
            "stream": stream, "max_completion_tokens": MAX_TOKENS}
    if stream:
        body["stream_options"] = {"include_usage": True}
    assert req.json == body
    stored = pi_stored(ANSWER, pi_version)
    assert r.out == stored["summary"] + "\n"
    assert r.err == ""  # no spinner or chatter off a terminal


@each_version
@pytest.mark.parametrize("stream", [True, False])
def test_anthropic_request_and_summary(stree, server, stream, pi_version):
    prep = pi_prep(REFERENCE)
    r = summarize(stree, server, "anthropic", "--json", "--stream" if stream else "--no-stream")
    assert r.code == 0, r
    (req,) = server.requests
    assert req.path == "/v1/messages"
    assert req.headers["x-api-key"] == KEY
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in req.headers
    assert req.json == {"model": "test-model",
                        "messages": [{"role": "user",
                                      "content": [{"type": "text", "text": expected_user(prep, REFERENCE)}]}],
                        "max_tokens": MAX_TOKENS, "stream": stream,
                        "system": [{"type": "text", "text": system_prompt(REFERENCE)}]}
    out = json.loads(r.out)
    stored = pi_stored(ANSWER, pi_version)
    assert out["summary"] == stored["summary"]
    assert [out["readFiles"], out["modifiedFiles"]] == [prep["readFiles"], prep["modifiedFiles"]]
    assert out["model"] == "served-claude"
    assert out["usage"] == {"input": 1500, "output": 40, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1540,
                            "cost": ZERO_COST, "cacheWrite1h": 0}  # pi-ai's shape (stree knows no prices)


def test_openai_json_output_reports_model_and_usage(stree, server):
    r = summarize(stree, server, "openai", "--json")
    out = json.loads(r.out)
    assert set(out) == {"summary", "readFiles", "modifiedFiles", "model", "usage"}
    assert out["model"] == "served-model"
    assert out["usage"] == {"input": 1200, "output": 34, "cacheRead": 0, "cacheWrite": 0, "reasoning": 0,
                            "totalTokens": 1234, "cost": ZERO_COST}


# -- failures -------------------------------------------------------------------


def assert_failed(r, *words):
    assert r.code == 5, r
    assert r.out == ""
    assert "Traceback" not in r.err
    for word in words:
        assert word in r.err, (word, r.err)
    assert KEY not in r.out + r.err


def test_401_names_provider_status_and_server_message_without_the_key(stree, server):
    server.script = [Reply(401, body={"error": {"message": f"Incorrect API key provided: {KEY}",
                                                "type": "invalid_request_error"}})]
    r = summarize(stree, server, "openai")
    assert_failed(r, "openai", "HTTP 401", "Incorrect API key provided: ***", "/v1/chat/completions")
    assert len(server.requests) == 1  # not retried
    server.script = [Reply(401, body={"type": "error", "error": {"type": "authentication_error",
                                                                 "message": "invalid x-api-key"}})]
    r = summarize(stree, server, "anthropic")
    assert_failed(r, "anthropic", "HTTP 401", "invalid x-api-key")


def test_429_then_200_waits_for_retry_after(stree, server):
    server.script = [Reply(429, body={"error": {"message": "Rate limit reached"}}, headers={"retry-after": "1"})]
    started = time.monotonic()
    r = summarize(stree, server, "openai")
    assert r.code == 0, r
    assert time.monotonic() - started >= 1.0
    assert len(server.requests) == 2
    assert server.requests[0].json == server.requests[1].json


def test_5xx_retried_then_reported(stree, server):
    server.script = [Reply(500, body={"error": {"message": "boom"}}, headers={"retry-after": "0"})] * 4
    r = summarize(stree, server, "openai")
    assert_failed(r, "openai", "HTTP 500", "boom")
    assert len(server.requests) == 4  # one try and three retries
    server.requests.clear()
    server.script = [Reply(529, body={"type": "error", "error": {"type": "overloaded_error",
                                                                 "message": "Overloaded"}},
                           headers={"retry-after": "0"})]
    r = summarize(stree, server, "anthropic")
    assert r.code == 0, r
    assert len(server.requests) == 2


def test_retries_stop_within_the_total_time(stree, server, isolated_home):
    config = isolated_home / ".config" / "stree" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("retry_max_time = 0.5\n")
    server.script = [Reply(503, raw=b"<html>upstream down</html>")] * 5
    started = time.monotonic()
    r = summarize(stree, server, "openai")
    assert_failed(r, "HTTP 503", "upstream down")
    assert len(server.requests) == 1  # the first backoff (1 s) would pass the 0.5 s budget
    assert time.monotonic() - started < 1 + 2 + 4 + 8  # not after the four retries' backoffs


@pytest.mark.parametrize("stream", [True, False])
def test_slow_server_times_out(stree, server, stream):
    server.script = [Reply(delay=60, body=openai_json(ANSWER))]
    started = time.monotonic()
    r = summarize(stree, server, "openai", "--timeout", "0.5", "--stream" if stream else "--no-stream")
    assert_failed(r, "openai", "timed out", "0.5s")
    assert time.monotonic() - started < 40  # not after the answer (a limit far above need: a loaded machine)


def test_malformed_json(stree, server):
    server.script = [Reply(raw=b'{"choices": [')]
    assert_failed(summarize(stree, server, "openai", "--no-stream"), "openai", "malformed JSON")
    server.script = [Reply(events=[(None, '{"choices": [')])]
    assert_failed(summarize(stree, server, "openai"), "openai", "malformed JSON")
    server.script = [Reply(raw=b"not json at all")]
    assert_failed(summarize(stree, server, "anthropic", "--no-stream"), "anthropic", "malformed JSON")


def test_empty_answers_and_refusals_fail(stree, server):
    server.script = [Reply(body=openai_json(""))]
    assert_failed(summarize(stree, server, "openai", "--no-stream"), "empty answer")
    server.script = [Reply(events=openai_events(""))]
    assert_failed(summarize(stree, server, "openai"), "empty answer")
    server.script = [Reply(body=openai_json(None, refusal="I can't help with that."))]
    assert_failed(summarize(stree, server, "openai", "--no-stream"), "refused", "I can't help with that.")
    server.script = [Reply(body=anthropic_json(None))]
    assert_failed(summarize(stree, server, "anthropic", "--no-stream"), "anthropic", "empty answer")
    server.script = [Reply(body=anthropic_json("no", stop="refusal"))]
    assert_failed(summarize(stree, server, "anthropic", "--no-stream"), "refused")
    server.script = [Reply(events=openai_events(ANSWER)[:3])]  # cut off before finish_reason
    assert_failed(summarize(stree, server, "openai"), "ended before the answer was complete")


def test_unreachable_server(stree, server, isolated_home):
    url = server.url
    server.close()
    r = stree("-s", DEMO, "summarize", "--to", TARGET, "--provider", "openai", "--model", "m",
              "--base-url", f"{url}/v1", env={"OPENAI_API_KEY": KEY})
    assert_failed(r, "cannot reach", url)


def test_debug_output_never_shows_the_key(stree, server):
    ok = summarize(stree, server, "openai", env={"STREE_DEBUG": "1"})
    assert ok.code == 0 and "stree: debug: POST" in ok.err and "authorization: ***" in ok.err
    server.script = [Reply(500, body={"error": {"message": f"bad key {KEY}"}}, headers={"retry-after": "0"})] * 4
    bad = stree("--debug", "-s", DEMO, "summarize", "--to", TARGET, "--provider", "anthropic", "--model", "m",
                "--base-url", server.url, env={"ANTHROPIC_API_KEY": KEY})
    assert bad.code == 5 and "x-api-key: ***" in bad.err
    for r in (ok, bad):
        assert KEY not in r.out + r.err
        assert KEY[6:20] not in r.out + r.err


def test_interrupt_exits_130_without_traceback(server):
    server.script = [Reply(delay=10, body=openai_json(ANSWER))]
    env = dict(os.environ, OPENAI_API_KEY=KEY)
    proc = subprocess.Popen([sys.executable, "-m", "stree", "-s", DEMO, "summarize", "--to", TARGET,
                             "--provider", "openai", "--model", "m", "--base-url", f"{server.url}/v1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            preexec_fn=interruptible)
    deadline = time.monotonic() + 60
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert b"interrupted" in err and b"Traceback" not in err and out == b""


# -- choosing the model -----------------------------------------------------------


def test_config_env_and_flags_in_order(stree, server, isolated_home):
    config = isolated_home / ".config" / "stree" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'provider = "openai"\nmodel = "cfg-model"\nbase_url = "{server.url}/v1"\nstream = false\n')
    base = ["-s", DEMO, "summarize", "--to", TARGET]
    assert stree(*base, env={"OPENAI_API_KEY": KEY}).code == 0
    assert stree(*base, env={"OPENAI_API_KEY": KEY, "STREE_MODEL": "env-model"}).code == 0
    assert stree(*base, "--model", "flag-model", env={"OPENAI_API_KEY": KEY, "STREE_MODEL": "env-model"}).code == 0
    assert [(r.json["model"], r.json["stream"]) for r in server.requests] == \
        [("cfg-model", False), ("env-model", False), ("flag-model", False)]
    # no key is needed for a server that is not api.openai.com
    assert stree(*base).code == 0
    assert "authorization" not in server.requests[-1].headers
    config.write_text('provider = "nonesuch"\n')
    r = stree(*base)
    assert r.code == 2 and "nonesuch" in r.err
    config.write_text("provider = [\n")
    r = stree(*base)
    assert r.code == 2 and "config.toml" in r.err and "invalid TOML" in r.err


def session_with_model(tmp_path, provider, model):
    b = SessionBuilder()
    b.user("Fix the bug")
    base = b.assistant("Looking.", provider=provider, model=model)
    target = b.user("Try plan B")
    b.at(base)
    b.user("Try plan A")
    b.assistant("Done with A.", tools=[("edit", {"path": "a.py", "oldText": "x", "newText": "y"})],
                provider=provider, model=model)
    return b.write(tmp_path / "s.jsonl"), target


def test_session_model_used_when_nothing_else_is_set(stree, server, tmp_path):
    path, target = session_with_model(tmp_path, "openai", "gpt-4o-mini")
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": f"{server.url}/v1"}
    r = stree("-s", path, "summarize", "--to", target, env=env)
    assert r.code == 0, r
    assert server.requests[-1].json["model"] == "gpt-4o-mini"
    assert "<modified-files>\na.py\n</modified-files>" in r.out
    r = stree("-s", path, "summarize", "--to", target)  # no key: nothing usable
    assert r.code == 2
    assert "--provider extractive" in r.err and "STREE_PROVIDER" in r.err
    path, target = session_with_model(tmp_path, "google", "gemini-2.5-pro")
    r = stree("-s", path, "summarize", "--to", target, env={"OPENAI_API_KEY": KEY})
    assert r.code == 2 and "--provider extractive" in r.err


# -- pi's own summarizer against the same server ------------------------------------


def pi_summarize(server, version, api, model="test-model", *extra):
    base = f"{server.url}/v1" if api == "openai-completions" else server.url
    return run_pi("summarize", DEMO, "--from", LEAF, "--to", TARGET, "--base-url", base, "--api", api,
                  "--model", model, "--api-key", KEY, *extra, version=version)


@each_version
def test_pi_and_stree_send_the_same_openai_request(stree, server, pi_version):
    pi = pi_summarize(server, pi_version, "openai-completions", "test-model", "--instructions", "mind the tests")
    r = summarize(stree, server, "openai", "--instructions", "mind the tests")
    assert r.code == 0, r
    pi_req, our_req = server.requests
    assert pi_req.path == our_req.path == "/v1/chat/completions"
    assert pi_req.headers["authorization"] == our_req.headers["authorization"] == f"Bearer {KEY}"
    # documented differences: pi adds store:false (OpenAI-only) and sends the user text as a
    # one-element content list; stree sends the same text as a plain string
    want = dict(pi_req.json)
    assert want.pop("store") is False
    (block,) = want["messages"][1]["content"]
    want["messages"][1]["content"] = block["text"]
    ours = dict(our_req.json)
    assert (want.pop("max_completion_tokens"), ours.pop("max_completion_tokens")) == \
        (PI_MAX_TOKENS[pi_version], MAX_TOKENS)
    if pi_version == "0.73.1":  # documented: its system prompt said "AI coding assistant"
        assert want["messages"][0]["content"] == system_prompt(pi_version) != system_prompt(REFERENCE)
        want["messages"][0]["content"] = system_prompt(REFERENCE)
    if pi_version in ("0.73.1", "0.87.1"):  # documented: before 1.2.0 the text held [Assistant thinking] paragraphs
        assert "\n\n[Assistant thinking]: " in want["messages"][1]["content"]
        assert "[Assistant thinking]" not in ours["messages"][1]["content"]
        want["messages"][1]["content"] = ours["messages"][1]["content"]  # 1.5.2's text: the test above
    assert ours == want
    assert r.out == pi["summary"] + "\n"


@each_version
def test_pi_and_stree_send_the_same_anthropic_request(stree, server, pi_version):
    pi = pi_summarize(server, pi_version, "anthropic-messages")
    r = summarize(stree, server, "anthropic", "--json")
    assert r.code == 0, r
    pi_req, our_req = server.requests
    # pi 0.87 and later post to the SDK's beta endpoint, /v1/messages?beta=true (documented)
    assert pi_req.path.split("?")[0] == our_req.path == "/v1/messages"
    for header in ("x-api-key", "anthropic-version"):
        assert pi_req.headers[header] == our_req.headers[header]

    def without_cache_control(value):  # documented difference: pi marks blocks for prompt caching
        if isinstance(value, dict):
            return {k: without_cache_control(v) for k, v in value.items() if k != "cache_control"}
        if isinstance(value, list):
            return [without_cache_control(v) for v in value]
        return value

    want, ours = without_cache_control(pi_req.json), dict(our_req.json)
    assert (want.pop("max_tokens"), ours.pop("max_tokens")) == (PI_MAX_TOKENS[pi_version], MAX_TOKENS)
    if pi_version == "0.73.1":
        want["system"][0]["text"] = system_prompt(REFERENCE)
    if pi_version in ("0.73.1", "0.87.1"):  # thinking paragraphs, as above
        assert "\n\n[Assistant thinking]: " in want["messages"][0]["content"][0]["text"]
        want["messages"][0]["content"][0]["text"] = ours["messages"][0]["content"][0]["text"]
    assert ours == want
    out = json.loads(r.out)
    assert out["summary"] == pi["summary"]
    assert [out["readFiles"], out["modifiedFiles"]] == [pi["readFiles"], pi["modifiedFiles"]]


# -- extractive ---------------------------------------------------------------------


@each_version
def test_extractive_is_deterministic_marked_and_loads_in_pi(stree, pi_version):
    runs = [stree("-s", DEMO, "summarize", "--to", TARGET, "--provider", "extractive", "--json") for _ in range(2)]
    assert runs[0].code == 0 and runs[0].out == runs[1].out
    out = json.loads(runs[0].out)
    assert out["model"] == "extractive" and out["usage"] is None
    text = out["summary"]
    assert text.startswith(pi_constant("BRANCH_SUMMARY_PREAMBLE", version=pi_version)
                           + "(Extractive summary made by stree")
    for heading in ("## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress",
                    "### Blocked", "## Key Decisions", "## Next Steps"):
        assert f"\n{heading}\n" in text
    assert "I threw away the hand-rolled attempt" in text  # the first user request is the goal
    assert "`edit tests/test_cli.py`" in text
    # pi stores it as a branch summary with the same file lists and shows it in the context
    nav = run_pi("navigate", DEMO, TARGET, "--summary", text, version=pi_version)
    assert nav["summaryEntry"]["summary"] == text
    assert nav["summaryEntry"]["details"] == {"readFiles": out["readFiles"], "modifiedFiles": out["modifiedFiles"]}
    last = nav["context"]["messages"][-1]
    assert last["role"] == "branchSummary" and last["summary"] == text


def test_spinner_only_on_a_terminal(server):
    import pty

    master, slave = pty.openpty()
    server.script = [Reply(delay=0.6, body=openai_json(ANSWER))]
    env = dict(os.environ, OPENAI_API_KEY=KEY, STREE_PROGRESS_DELAY="0")
    proc = subprocess.run([sys.executable, "-m", "stree", "-s", DEMO, "summarize", "--to", TARGET, "--no-stream",
                           "--provider", "openai", "--model", "m", "--base-url", f"{server.url}/v1"],
                          stdout=slave, stderr=slave, env=env, timeout=30)
    os.close(slave)
    shown = read_pty(master)
    os.close(master)
    assert proc.returncode == 0
    assert b"Summarizing" in shown and b"openai/m" in shown and b"The user explored" in shown
    # off a terminal: nothing on stderr (see the request tests: r.err == "")


def test_redirects_are_reported_not_followed(stree, server):
    server.script = [Reply(301, raw=b"", headers={"location": "https://user:pw@elsewhere.example/v1?k=1"})]
    r = summarize(stree, server, "openai")
    assert_failed(r, "HTTP 301", "redirected to https://elsewhere.example/v1")
    assert "pw" not in r.err and len(server.requests) == 1


def test_lone_surrogates_are_dropped_as_pi_does(stree, server, tmp_path):
    path, target = session_with_model(tmp_path, "openai", "m")
    path.write_text(path.read_text().replace("Try plan A", "Try plan \\ud800A\\ud83d\\ude00"))
    r = stree("-s", path, "summarize", "--to", target, "--provider", "openai", "--model", "m",
              "--base-url", f"{server.url}/v1")
    assert r.code == 0, r
    assert "[User]: Try plan A😀" in server.requests[-1].json["messages"][1]["content"]
    p = stree("-s", path, "summarize", "--to", target, "--prompt")
    assert p.code == 0 and "[User]: Try plan A😀" in p.out
