"""`stree context --as openai|anthropic` prints a body the APIs accept: sent over HTTP to the
loopback OpenAI and Anthropic servers (which refuse what the real APIs refuse), with the
system prompt and tools from files or the config, and pi-ai 1.6.0's instructions role."""

import copy
import json

import httpx
import pytest

from conftest import ROOT
from llm_server import LLMServer
from request_sessions import build
from test_request import pi16

DEMO = ROOT / "stree" / "data" / "demo.jsonl"


@pytest.fixture(scope="module")
def server():
    s = LLMServer()
    yield s
    s.close()


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    root = tmp_path_factory.mktemp("send")
    files = build(root, str(root / "home"))
    files["demo"] = DEMO
    return files


def post(server, api, body):
    url = f"{server.url}/v1/chat/completions" if api == "openai" else f"{server.url}/v1/messages"
    return httpx.post(url, json=body, timeout=30)


def context_as(stree, path, api, *args, rev=None):
    r = stree("-s", path, "context", *([rev] if rev else []), "--as", api, *args)
    assert r.code == 0, r
    return json.loads(r.out)


@pytest.mark.parametrize("name", ["demo", "esc_in_tool_batch", "thinking", "images"])
@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_the_body_is_accepted_at_the_leaf_and_before_an_answer(stree, server, sessions, name, api):
    path = sessions[name]
    ids = stree("-s", path, "log", "--format", "{id} {role}").out.split("\n")
    before_answer = [line.split()[0] for line, nxt in zip(ids, ids[1:]) if nxt.endswith(" assistant")]
    for rev in [None] + before_answer[:3]:
        body = context_as(stree, path, api, "--model", "claude-sonnet-4-5" if api == "anthropic" else "gpt-5",
                          rev=rev)
        r = post(server, api, body)
        assert r.status_code == 200, (name, rev, r.text)


def test_what_the_apis_refuse_is_refused(stree, server, sessions):
    """The bodies as stree printed them before (no error results, no tools) get the APIs' 400s."""
    path = sessions["esc_in_tool_batch"]
    good = context_as(stree, path, "openai", "--model", "gpt-5")
    no_results = copy.deepcopy(good)
    no_results["messages"] = [m for m in good["messages"] if m.get("content") != "No result provided"]
    r = post(server, "openai", no_results)
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"
    assert "did not have response messages" in r.json()["error"]["message"]
    orphan = copy.deepcopy(good)
    orphan["messages"].insert(1, {"role": "tool", "tool_call_id": "nope", "content": "x"})
    assert "must be a response to a preceeding message" in post(server, "openai", orphan).json()["error"]["message"]

    good = context_as(stree, path, "anthropic", "--model", "claude-sonnet-4-5")
    assert post(server, "anthropic", good).status_code == 200
    for broken, words in [
        ({k: v for k, v in good.items() if k != "tools"}, "must define tools"),
        (dict(good, messages=[m for m in good["messages"] if "No result provided" not in json.dumps(m)]),
         "without `tool_result` blocks immediately after"),
        (dict(good, messages=good["messages"] + [{"role": "user", "content": ""}]), "non-empty content"),
        (dict(good, messages=[{"role": "system", "content": "x"}] + good["messages"]), "'user' or 'assistant'"),
        (dict(good, messages=good["messages"][:1] + [{"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "read", "input": {}}]}, {"role": "assistant", "content": "hm"}]
            + good["messages"][1:]), "without `tool_result` blocks"),
    ]:
        r = post(server, "anthropic", broken)
        assert r.status_code == 400, words
        assert r.json()["type"] == "error" and words in r.json()["error"]["message"], r.text


def test_system_prompt_and_tools_from_files_then_the_config(stree, sessions, tmp_path, isolated_home):
    path = sessions["esc_in_tool_batch"]
    prompt = tmp_path / "prompt.md"
    prompt.write_text("You are pi, a coding agent.\n")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "read", "description": "Read a file.", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}]))
    body = context_as(stree, path, "anthropic", "--system-prompt", prompt, "--tools", tools)
    assert body["system"][0]["text"] == "You are pi, a coding agent.\n"
    names = [t["name"] for t in body["tools"]]
    assert names == ["read", "bash", "grep", "deploy"]  # the file's, then the tools the session calls
    assert body["tools"][0]["description"] == "Read a file."

    config = isolated_home / ".config" / "stree" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'system_prompt = "{prompt}"\ntools = "{tools}"\n')
    assert context_as(stree, path, "openai", "--model", "gpt-5")["messages"][0] == {
        "role": "developer", "content": "You are pi, a coding agent.\n"}
    other = tmp_path / "other.md"
    other.write_text("Flags win.")
    assert context_as(stree, path, "openai", "--system-prompt", other)["messages"][0]["content"] == "Flags win."

    tools.write_text("{not json")
    r = stree("-s", path, "context", "--as", "openai", "--tools", tools)
    assert r.code == 2 and r.err.startswith(f"stree: error: {tools}: the tools (--tools) are not valid JSON")
    assert "\nhint: " in r.err and "Traceback" not in r.err
    r = stree("-s", path, "context", "--model", "gpt-5")
    assert r.code == 2 and "needs --as openai or --as anthropic" in r.err


@pytest.mark.parametrize("provider,base,role", [
    ("vllm", "http://127.0.0.1:9/v1", "system"),
    ("groq", "http://127.0.0.1:9/v1", "system"),
    ("openai", "http://127.0.0.1:9/v1", "developer"),  # a provider declared OpenAI's
])
def test_the_instructions_role_is_pi_1_6_0s(stree, sessions, tmp_path, provider, base, role):
    """developer only for OpenAI's own API (or a provider declared OpenAI), system elsewhere."""
    path = sessions["demo"]
    prompt = tmp_path / "prompt.md"
    prompt.write_text("You are pi.")
    ours = context_as(stree, path, "openai", "--model", "gpt-5", "--provider", provider, "--base-url", base,
                      "--system-prompt", prompt)
    default_tools = json.loads((ROOT / "stree" / "data" / "tools.json").read_text())[:4]
    (theirs,) = pi16([["body", path, "--api", "openai-completions", "--model", "gpt-5", "--provider", provider,
                       "--reasoning", "--thinking", "high", "--system-prompt", "You are pi.",
                       "--tools", json.dumps(default_tools)]])
    assert theirs["body"]["messages"][0] == ours["messages"][0] == {"role": role, "content": "You are pi."}
    assert theirs["body"] == ours


def test_summaries_follow_the_same_rule():
    """summarize, checkout --summarize and serve's navigate_tree send through one request_body."""
    from stree.providers import Options, Request
    from stree.providers.openai import request_body

    request = Request("instructions", "conversation", 100)
    for base, role in [("https://api.openai.com/v1", "developer"), ("http://localhost:11434/v1", "system"),
                       ("https://api.groq.com/openai/v1", "system"), ("http://127.0.0.1:8000/v1", "system")]:
        options = Options(provider="openai", model="gpt-5", base_url=base)
        assert request_body(options, request)["messages"][0]["role"] == role, base
    options = Options(provider="openai", model="llama3.1", base_url="https://api.openai.com/v1")
    assert request_body(options, request)["messages"][0]["role"] == "system"  # not a reasoning model
