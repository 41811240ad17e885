"""The request stree builds at an entry (stree.core.request) against the body the real
pi-ai 1.6.0 posts for the same context and model (the harness's `body` subcommand: pi's
completeSimple to a loopback server), and the one-build cost of requests_along."""

import json
import subprocess

import pytest

import corpus_pi15
from builders import SessionBuilder
from conftest import ROOT
from pi_harness import HARNESS, NODE22
from request_sessions import build

from stree.core.request import Builder, request_at, requests_along
from stree.core.request.model import builtin_tools, permissive_tool
from stree.core.tree import Tree
from stree.storage.session import parse

LOOPBACK = "http://127.0.0.1:9/v1"  # never contacted: only the host decides what pi-ai sends
MODELS = [  # (model, pi provider, system prompt)
    ("m1", "vllm", "You are pi."),
    ("claude-sonnet-4-5", "anthropic", "You are pi.\n\nWorking directory: /proj"),
    ("gpt-5", "openai", None),
]
APIS = {"openai": "openai-completions", "anthropic": "anthropic-messages"}


def pi16(requests):
    """Harness calls against pi 1.6.0 in one node process (a list of argument lists)."""
    if not NODE22.exists():
        pytest.fail(f"Node 22 is not installed in {NODE22.parent.parent}: run 'make test'")
    stdin = "".join(json.dumps([str(a) for a in args]) + "\n" for args in requests)
    proc = subprocess.run([str(NODE22), str(HARNESS), "--pi", "1.6.0", "batch"], input=stdin, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = [json.loads(line) for line in proc.stdout.split("\n") if line.strip()]
    assert len(out) == len(requests), proc.stderr[-2000:]
    return out


def load(path):
    session = parse(str(path))
    return Tree(session.nodes, session.load, session.previews)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    """name -> path: the demo, the request sessions and pi 1.5.2-written edits and compactions."""
    root = tmp_path_factory.mktemp("request")
    home = str(root / "home")
    files = {name: path for name, path in build(root, home).items()}
    for name in ("system_messages", "edits_and_compaction", "context_edits"):
        files[name] = corpus_pi15.write(root / f"{name}.jsonl", getattr(corpus_pi15, name)(home), home)
    files["demo"] = ROOT / "stree" / "data" / "demo.jsonl"
    return files


def test_builtin_tool_definitions_are_pi_1_6_0s(tmp_path):
    (theirs,) = pi16([["tools", "--cwd", tmp_path]])
    ours = json.loads((ROOT / "stree" / "data" / "tools.json").read_text())
    assert [t["name"] for t in ours] == ["read", "bash", "edit", "write", "grep", "find", "ls"]
    assert ours == theirs["tools"]


def offered(body):
    """The tool definitions a body offers (by name: pi's own or the permissive one)."""
    names = [t["function"]["name"] if "function" in t else t["name"] for t in body.get("tools", [])]
    return [builtin_tools().get(n) or permissive_tool(n) for n in names]


def points(tree):
    """Where a request is asked: each assistant message's parent, and the leaf."""
    out = [tree.parent_of(n).id for n in tree.path(tree.leaf)
           if n.type == "message" and n.role == "assistant" and tree.parent_of(n) is not None]
    return list(dict.fromkeys(out + [tree.leaf]))


@pytest.mark.parametrize("name", ["demo", "esc_in_tool_batch", "thinking", "images", "system_messages",
                                  "edits_and_compaction", "context_edits"])
def test_every_request_is_the_body_pi_ai_1_6_0_posts(sessions, name):
    tree = load(sessions[name])
    cases, requests = [], []
    for at in points(tree):
        level = tree.build_context(at)["thinkingLevel"]
        for api in APIS:
            for model, provider, prompt in MODELS:
                ours = request_at(tree, at, api=api, model=model, provider=provider, base_url=LOOPBACK,
                                  system_prompt=prompt)
                args = ["body", sessions[name], "--api", APIS[api], "--model", model, "--provider", provider,
                        "--at", at, "--tools", json.dumps(offered(ours))]
                if model != "m1":
                    args.append("--reasoning")
                if level not in (None, "off"):
                    args += ["--thinking", level]
                if prompt:
                    args += ["--system-prompt", prompt]
                cases.append((at, api, model, ours))
                requests.append(args)
    answers = pi16(requests)
    for (at, api, model, ours), theirs in zip(cases, answers):
        assert ours == theirs["body"], (name, at, api, model)
    assert len(cases) >= 6


def test_an_esc_in_a_tool_batch_gets_pi_ais_error_results(sessions):
    tree = load(sessions["esc_in_tool_batch"])
    body = request_at(tree, tree.leaf, api="openai", model="m1", base_url=LOOPBACK)
    results = {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}
    assert results["toolu_02"] == results["toolu_03"] == results["toolu_07"] == "No result provided"
    assert results["toolu_01"] == "print('a')"
    assert "toolu_04" not in json.dumps(body)  # the aborted answer is left out, its call with it
    names = [t["function"]["name"] for t in body["tools"]]
    assert names == ["read", "bash", "edit", "write", "grep", "deploy"]  # pi's defaults, then the calls
    assert body["tools"][4]["function"] == {k: builtin_tools()["grep"][k] for k in ("name", "description",
                                                                                    "parameters")}
    assert body["tools"][5]["function"]["parameters"]["additionalProperties"] is True  # unknown: permissive


def test_thinking_stays_only_with_the_model_that_wrote_it(sessions):
    tree = load(sessions["thinking"])
    first = next(n.id for n in tree.path(tree.leaf) if n.role == "toolResult")
    same = request_at(tree, first, api="anthropic", model="claude-sonnet-4-5", provider="anthropic")
    other = request_at(tree, first, api="anthropic", model="claude-opus-4-5", provider="anthropic")
    kinds = [b["type"] for b in same["messages"][1]["content"]]
    assert kinds == ["thinking", "redacted_thinking", "text", "text", "tool_use"]  # unsigned: as text
    assert [b["type"] for b in other["messages"][1]["content"]] == ["text", "tool_use"]


def generated(n):
    b = SessionBuilder()
    for i in range(n):
        b.user(f"question {i}")
        b.tool_round("bash", {"command": f"echo {i}"}, f"{i}")
        b.assistant(f"answer {i}")
    return b


def test_requests_along_build_the_prefix_once(tmp_path, monkeypatch):
    import stree.core.request as request

    path = generated(300).write(tmp_path / "long.jsonl")
    tree = load(path)
    loads, builds = [], []
    real_load, real_init = tree.load, request.Builder.__init__
    tree.load = lambda node: loads.append(node.id) or real_load(node)

    def counting_init(self, *args, **kwargs):
        builds.append(1)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(request.Builder, "__init__", counting_init)
    along = list(requests_along(tree, tree.leaf, api="anthropic", model="claude-sonnet-4-5", provider="anthropic"))
    assert len(along) == 600 and len(builds) == 1
    assert sorted(loads) == sorted(tree.path_ids(tree.leaf))  # every entry decoded once
    for entry_id, body in along[::97] + along[-1:]:
        parent = tree.parent_of(tree.get(entry_id)).id
        assert body == request_at(tree, parent, api="anthropic", model="claude-sonnet-4-5", provider="anthropic")


@pytest.mark.parametrize("name", ["demo", "system_messages", "edits_and_compaction", "context_edits", "thinking"])
@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_requests_along_equal_request_at_every_parent(sessions, name, api):
    """Compactions, context edits and model changes on the path rebuild; the bodies are the same."""
    tree = load(sessions[name])
    along = list(requests_along(tree, tree.leaf, api=api))
    assert along, name
    for entry_id, body in along:
        parent = tree.parent_of(tree.get(entry_id)).id
        assert body == request_at(tree, parent, api=api), (name, entry_id)


def test_the_empty_context_and_a_model_without_images():
    tree = Tree([])
    body = request_at(tree, None, api="openai", model="m1", base_url=LOOPBACK)
    assert body["messages"] == [] and [t["function"]["name"] for t in body["tools"]] == ["read", "bash", "edit",
                                                                                         "write"]
    assert list(requests_along(tree, None, api="openai")) == []
    from stree.core.request import make_target
    from stree.core.convert import convert_to_llm

    b = Builder(make_target("openai", model="m1", base_url=LOOPBACK, images=False))
    for m in convert_to_llm([{"role": "user", "content": [{"type": "image", "data": "x", "mimeType": "image/png"}],
                              "timestamp": 1}]):
        b.add(m)
    assert b.body()["messages"][-1]["content"] == [
        {"type": "text", "text": "(image omitted: model does not support images)"}]


def test_max_tokens_near_the_context_window_is_pi_ais_clamp(sessions):
    """pi-ai's estimate (the last usage plus the messages after it) and clamp, with thinking."""
    from stree.core.convert import convert_to_llm
    from stree.core.request import make_target

    path = sessions["demo"]
    tree = load(path)
    prompt = "You are pi. " * 400
    cases, requests = [], []
    for at in [tree.parent_of(n).id for n in tree.path(tree.leaf) if n.role == "assistant"][::4] + [tree.leaf]:
        context = tree.build_context(at)
        for api in APIS:
            for window in (20000, 45000, 60000):
                for model, reasoning in (("m1", False), ("claude-sonnet-4-5", True)):
                    target = make_target(api, model=model, provider="x", base_url=LOOPBACK, context_window=window,
                                         reasoning=reasoning)
                    builder = Builder(target, prompt)
                    for msg in convert_to_llm(context["messages"]):
                        builder.add(msg)
                    ours = builder.body("medium")
                    cases.append(ours)
                    requests.append(["body", path, "--api", APIS[api], "--model", model, "--provider", "x",
                                     "--context-window", window, "--at", at, "--system-prompt", prompt,
                                     "--tools", json.dumps(offered(ours)), "--thinking", "medium",
                                     *(["--reasoning"] if reasoning else [])])
    answers = pi16(requests)
    clamped = 0
    for ours, theirs in zip(cases, answers):
        assert ours == theirs["body"]
        clamped += (ours.get("max_tokens") or ours.get("max_completion_tokens")) < 16384
    assert clamped > len(cases) // 2  # the windows are small enough to clamp


def test_session_tools_offer_every_called_tool_at_every_turn(sessions):
    from stree.core.request import session_tools

    tree = load(sessions["esc_in_tool_batch"])
    tools = session_tools(tree, tree.leaf)
    assert [t["name"] for t in tools] == ["read", "bash", "edit", "write", "grep", "deploy"]
    offered = [[t["name"] for t in body["tools"]]
               for _, body in requests_along(tree, tree.leaf, api="anthropic", tools=tools)]
    assert offered and all(names == offered[0] == [t["name"] for t in tools] for names in offered)
    first = [t["name"] for t in next(requests_along(tree, tree.leaf, api="anthropic"))[1]["tools"]]
    assert first == ["read", "bash", "edit", "write"]  # without: only what was called before
