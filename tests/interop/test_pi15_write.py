"""stree's writes and branch-summary requests against the real pi 1.6.0, on session files
built by pi's own writers: forks of a path with labels in the middle (pi's /clone), the
summary budget with images and system messages, thinking and context edits in an
abandoned branch, reasoning models, and answers pi refuses to store (a tool call, the
token cap). How older pis differ is recorded where they do."""

import json

import pytest

from corpus_pi15 import Steps, tool_decl, write
from llm_server import LLMServer, Reply
from pi_harness import REFERENCE, VERSIONS, each_version, pi

KEY = "sk-test-pi15-write-KEY"


@pytest.fixture
def server():
    s = LLMServer()
    yield s
    s.close()


def entries_of(path):
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


# -- forks: label entries dropped, parent ids re-chained ------------------------------


def labelled_path(home):
    """Labels in the middle of the path (one right before a compaction that names it as
    its first kept entry), two in a row, and one at the leaf."""
    b = Steps()
    u1 = b.user("one")
    b.text("uno")
    b.call("appendLabelChange", u1, "start")
    u2 = b.user("two")
    a2 = b.text("dos")
    b.call("appendLabelChange", u2, "second")
    mid = b.call("appendLabelChange", a2, "mid")
    b.call("appendCompaction", "summary of one and two", mid, 1234)
    u3 = b.user("three")
    b.text("tres")
    b.call("appendLabelChange", u3, "end")
    return b


@pytest.fixture
def labelled(tmp_path, isolated_home):
    (isolated_home / "proj").mkdir()
    path = write(tmp_path / "labelled.jsonl", labelled_path(isolated_home), isolated_home)
    return path


@each_version
def test_fork_across_labels_is_pis_clone(stree, labelled, tmp_path, pi_version):
    leaf = entries_of(labelled)[-1]["id"]
    clone = pi("clone", labelled, leaf, version=pi_version)
    out = tmp_path / "fork.jsonl"
    r = stree("-s", labelled, "fork", leaf, "-o", out)
    assert r.code == 0, r
    ours = entries_of(out)
    today = clone if pi_version == REFERENCE else pi("clone", labelled, leaf)
    if pi_version == "0.73.1":
        # documented: 0.73.1 kept the parent ids, so the entries right after a dropped label
        # were orphans (roots of their own trees)
        assert clone["orphans"] and today["orphans"] == []
    else:
        assert clone["orphans"] == []
    ids = {e["id"] for e in ours}
    assert all(e["parentId"] is None or e["parentId"] in ids for e in ours)
    assert [e for e in ours if e["type"] != "label"] == [e for e in today["entries"] if e["type"] != "label"]
    assert [(e["parentId"] == ours[i - 1]["id"], e["targetId"], e["label"], e["timestamp"])
            for i, e in enumerate(ours) if e["type"] == "label"] == \
        [(True, e["targetId"], e["label"], e["timestamp"]) for e in today["entries"] if e["type"] == "label"]
    compaction = next(e for e in ours if e["type"] == "compaction")
    assert compaction["firstKeptEntryId"] == compaction["id"]  # it named the label right before it
    assert json.loads(stree("-s", out, "context", "--json").out) == today["context"]
    assert pi("inspect", out)["context"] == today["context"]
    fsck = stree("-s", out, "fsck")
    assert fsck.code == 0 and "ok" in fsck.err, fsck


def test_fork_before_a_message_after_a_label_is_pis_fork(stree, labelled, tmp_path):
    two = next(e["id"] for e in entries_of(labelled) if e["type"] == "message"
               and e["message"]["content"] == "three")
    clone = pi("clone", labelled, two, "--position", "before")
    out = tmp_path / "fork.jsonl"
    r = stree("-s", labelled, "fork", two, "--before", "-o", out)
    assert r.code == 0, r
    assert r.out.splitlines() == [str(out)] and r.err.splitlines() == [clone["selectedText"]]
    assert [e for e in entries_of(out) if e["type"] != "label"] == \
        [e for e in clone["entries"] if e["type"] != "label"]
    assert json.loads(stree("-s", out, "context", "--json").out) == clone["context"]
    assert stree("-s", out, "fsck").code == 0


# -- the summary of an abandoned branch -------------------------------------------------


def abandoned_branch(home):
    """A branch to leave holding what pi 1.5.2 counts or drops: a system message, images
    (user, tool result, custom message), thinking, a hidden and a replaced message."""
    b = Steps()
    b.call("appendThinkingLevelChange", "high")
    b.user("start here")
    base = b.text("ok")
    b.user("the other way")  # the checkout target: a user message, so the leaf goes to `base`
    b.call("branch", base)
    b.system("You are pi.", sections={"cwd": "Working directory: /proj", "none": None},
             toolsAdded=[tool_decl("read"), tool_decl("bash")])
    b.call("appendMessage", {"role": "user", "timestamp": b.tick(), "content": [
        {"type": "text", "text": "what is in this picture?"},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]})
    b.assistant([{"type": "thinking", "thinking": "It looks like a cat. " * 30, "thinkingSignature": "sig"},
                 {"type": "text", "text": "A cat. Let me read the notes."},
                 {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": f"{home}/proj/notes.md"}}],
                stopReason="toolUse")
    b.call("appendMessage", {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "isError": False,
                             "timestamp": b.tick(), "content": [
                                 {"type": "text", "text": "notes " * 700},
                                 {"type": "image", "data": "R0lGODlh", "mimeType": "image/gif"}]})
    hidden = b.user("forget this line")
    replaced = b.text("an answer to replace")
    b.call("appendContextEdit", hidden, None)
    b.call("appendContextEdit", replaced, {"content": "first replacement"})
    b.call("appendContextEdit", replaced, {"content": "the replaced answer"})  # the latest edit wins
    b.call("appendCustomMessageEntry", "screenshot", [{"type": "text", "text": "a screenshot: "},
                                                      {"type": "image", "data": "AAAA", "mimeType": "image/png"}],
           True)
    b.user("last question in the branch")
    b.assistant([{"type": "thinking", "thinking": "final thoughts"}, {"type": "text", "text": "final answer"},
                 {"type": "toolCall", "id": "c2", "name": "edit",
                  "arguments": {"path": "src/a.py", "oldText": "a", "newText": "b"}}], stopReason="toolUse")
    return b


@pytest.fixture
def branch(tmp_path, isolated_home):
    (isolated_home / "proj").mkdir()
    path = write(tmp_path / "branch.jsonl", abandoned_branch(isolated_home), isolated_home)
    entries = entries_of(path)
    target = next(e["id"] for e in entries if e["type"] == "message"
                  and e["message"]["content"] == "the other way")
    return path, entries[-1]["id"], target


@pytest.mark.parametrize("window", [None, 16385, 16384 + 20, 16384 + 900, 16384 + 1300, 16384 + 2500,
                                    16384 + 3800, 16384 + 5200])
def test_budget_counts_images_and_system_messages_as_pi(stree, branch, window):
    path, leaf, target = branch
    budget = 128000 - 16384 if window is None else window - 16384
    want = pi("branch-prep", path, "--from", leaf, "--to", target, "--budget", budget)
    r = stree("-s", path, "summarize", "--to", target, "--prompt", "--json",
              *([] if window is None else ["--context-window", window]))
    assert r.code == 0, r
    got = json.loads(r.out)
    assert got["user"].startswith("<conversation>\n" + want["conversation"] + "\n</conversation>\n\n")
    assert (got["totalTokens"], got["readFiles"], got["modifiedFiles"]) == \
        (want["totalTokens"], want["readFiles"], want["modifiedFiles"])
    assert got["entryIds"] == want["entryIds"]


def test_thinking_and_context_edits_in_the_abandoned_branch(stree, branch):
    path, leaf, target = branch
    want = pi("branch-prep", path, "--from", leaf, "--to", target)
    got = json.loads(stree("-s", path, "summarize", "--to", target, "--prompt", "--json").out)
    conversation = want["conversation"]
    assert got["user"].startswith(f"<conversation>\n{conversation}\n</conversation>")
    assert "It looks like a cat" not in conversation and "final thoughts" not in conversation  # no thinking
    assert "forget this line" not in conversation and "[Assistant]: the replaced answer" in conversation
    assert "[User]: a screenshot: " in conversation
    for version in VERSIONS:
        if version == REFERENCE:
            continue
        old = pi("branch-prep", path, "--from", leaf, "--to", target, version=version)["conversation"]
        if version == "1.5.2":
            assert old == conversation  # 1.6.0 prepares a branch as 1.5.2 did
            continue
        # documented: pi before 1.2 kept the thinking, and before 1.5 ignored context edits
        assert "[Assistant thinking]: It looks like a cat" in old and "[User]: forget this line" in old


def summarize_pi(server, path, leaf, target, api, *extra):
    base = f"{server.url}/v1" if api == "openai-completions" else server.url
    return pi("summarize", path, "--from", leaf, "--to", target, "--base-url", base, "--api", api,
              "--model", "test-model", "--api-key", KEY, *extra)


def summarize_stree(stree, server, path, target, provider, *extra, env=None):
    base = f"{server.url}/v1" if provider == "openai" else server.url
    return stree("-s", path, "summarize", "--to", target, "--provider", provider, "--model", "test-model",
                 "--base-url", base, *extra, env={"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY, **(env or {})})


def reasoning_config(home, on):
    config = home / ".config" / "stree" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"reasoning = {'true' if on else 'false'}\n")


@pytest.mark.parametrize("reasoning", [False, True], ids=["plain", "reasoning"])
def test_openai_request_is_pis(stree, server, branch, isolated_home, reasoning):
    path, leaf, target = branch
    reasoning_config(isolated_home, reasoning)
    theirs = summarize_pi(server, path, leaf, target, "openai-completions",
                          *(["--reasoning", "--thinking-level", "high"] if reasoning else []))
    r = summarize_stree(stree, server, path, target, "openai", "--json")
    assert r.code == 0, r
    pi_req, our_req = server.requests
    want, ours = dict(pi_req.json), dict(our_req.json)
    # documented differences: store:false, a content list for the user text, the token cap
    assert want.pop("store") is False
    (block,) = want["messages"][1]["content"]
    want["messages"][1]["content"] = block["text"]
    assert want.pop("max_completion_tokens") == 8192  # the harness model's output limit
    assert ours.pop("max_completion_tokens") == 4096 + (16384 if reasoning else 0)
    # pi-ai 1.6.0's instructions role: "developer" for a reasoning model of OpenAI only; the
    # harness declares its loopback model OpenAI's (provider "openai"), stree sees a server
    # that is not api.openai.com (tests/cli/test_context_as.py checks the rule against 1.6.0)
    assert want["messages"][0]["role"] == ("developer" if reasoning else "system")
    assert ours["messages"][0]["role"] == "system"
    ours["messages"][0]["role"] = want["messages"][0]["role"]
    assert ours == want
    assert want.get("reasoning_effort") == ("high" if reasoning else None)
    out = json.loads(r.out)
    assert out["summary"] == theirs["summary"] and out["usage"] == theirs["usage"]
    assert [out["readFiles"], out["modifiedFiles"]] == [theirs["readFiles"], theirs["modifiedFiles"]]


@pytest.mark.parametrize("reasoning", [False, True], ids=["plain", "reasoning"])
def test_anthropic_request_is_pis(stree, server, branch, isolated_home, reasoning):
    path, leaf, target = branch
    reasoning_config(isolated_home, reasoning)
    theirs = summarize_pi(server, path, leaf, target, "anthropic-messages",
                          *(["--reasoning", "--thinking-level", "high"] if reasoning else []))
    r = summarize_stree(stree, server, path, target, "anthropic", "--json")
    assert r.code == 0, r
    pi_req, our_req = server.requests
    want, ours = dict(pi_req.json), dict(our_req.json)
    # documented: pi asks the model's output limit and takes the thinking budget out of it;
    # stree keeps 4096 for the answer and adds the budget
    assert want.pop("max_tokens") == 8192
    assert ours.pop("max_tokens") == 4096 + (16384 if reasoning else 0)
    if reasoning:
        assert want.pop("thinking") == {"type": "enabled", "budget_tokens": 8192 - 1024, "display": "summarized"}
        assert ours.pop("thinking") == {"type": "enabled", "budget_tokens": 16384, "display": "summarized"}
    assert ours == want
    out = json.loads(r.out)
    assert out["summary"] == theirs["summary"] and out["usage"] == theirs["usage"]


def test_prompt_json_is_what_pi_sends(stree, server, branch):
    path, leaf, target = branch
    summarize_pi(server, path, leaf, target, "anthropic-messages", "--instructions", "mind the images")
    got = json.loads(stree("-s", path, "summarize", "--to", target, "--prompt", "--json",
                           "--instructions", "mind the images").out)
    (req,) = server.requests
    assert got["system"] == req.json["system"][0]["text"]
    assert got["user"] == req.json["messages"][0]["content"][0]["text"]
    assert got["reasoning"] is None  # no model given: not a reasoning model


# -- answers pi refuses to store ------------------------------------------------------------


def openai_tool_call():
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    return [(None, dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": "Let me look."},
                                        "finish_reason": None}])),
            (None, dict(base, choices=[{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}])),
            (None, dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "tool_calls"}])),
            (None, "[DONE]")]


def openai_length():
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return [(None, dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": "## Goal\nHalf a"},
                                        "finish_reason": None}])),
            (None, dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "length"}])),
            (None, "[DONE]")]


def anthropic_answer(blocks, stop):
    start = {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
                                                  "model": "c", "content": [], "stop_reason": None,
                                                  "usage": {"input_tokens": 10, "output_tokens": 1}}}
    events = [("message_start", start)]
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            events += [("content_block_start", {"type": "content_block_start", "index": i,
                                                "content_block": {"type": "text", "text": ""}}),
                       ("content_block_delta", {"type": "content_block_delta", "index": i,
                                                "delta": {"type": "text_delta", "text": block["text"]}})]
        else:
            events += [("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                "type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}}),
                       ("content_block_delta", {"type": "content_block_delta", "index": i,
                                                "delta": {"type": "input_json_delta", "partial_json": "{}"}})]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    return events + [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop},
                                        "usage": {"output_tokens": 5}}),
                     ("message_stop", {"type": "message_stop"})]


REFUSED = {
    "openai tool call": ("openai", openai_tool_call, "tried to call a tool", "attempted to call a tool"),
    "openai length": ("openai", openai_length, "token cap", "token cap"),
    "anthropic tool call": ("anthropic", lambda: anthropic_answer(
        [{"type": "text", "text": "Looking."}, {"type": "tool_use"}], "tool_use"),
        "tried to call a tool", "attempted to call a tool"),
    "anthropic max_tokens": ("anthropic", lambda: anthropic_answer(
        [{"type": "text", "text": "## Goal\nHalf"}], "max_tokens"), "token cap", "token cap"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_tool_call_or_token_cap_answers_are_errors_and_nothing_is_written(stree, server, branch, case):
    provider, events, ours_says, pi_says = REFUSED[case]
    path, leaf, target = branch
    api = "openai-completions" if provider == "openai" else "anthropic-messages"
    server.script = [Reply(events=events())]
    theirs = summarize_pi(server, path, leaf, target, api)
    assert pi_says in theirs["error"]  # pi 1.5.2's generateBranchSummary refuses the answer
    before = path.read_bytes()
    base = f"{server.url}/v1" if provider == "openai" else server.url
    server.script = [Reply(events=events())]
    r = stree("-s", path, "checkout", target, "--summarize", "--provider", provider, "--model", "test-model",
              "--base-url", base, env={"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY})
    assert r.code == 5, r
    assert ours_says in r.err and "Traceback" not in r.err
    assert path.read_bytes() == before
    assert len(server.requests) == 2  # not retried


def test_checkout_summary_entry_loads_in_pi(stree, server, branch):
    """The branch_summary stree writes (fromId = the old leaf, pi-ai's usage) is what pi
    1.5.2 reads back, and what its own navigation would write."""
    path, leaf, target = branch
    nav = pi("navigate", path, target, "--summary", "x")
    r = stree("-s", path, "checkout", target, "--summarize", "--provider", "openai", "--model", "test-model",
              "--base-url", f"{server.url}/v1", env={"OPENAI_API_KEY": KEY})
    assert r.code == 0, r
    entry = entries_of(path)[-1]
    assert list(entry) == ["type", "id", "parentId", "timestamp", "fromId", "summary", "details", "usage",
                           "fromHook"]
    assert (entry["fromId"], entry["parentId"]) == (nav["summaryEntry"]["fromId"], nav["summaryEntry"]["parentId"])
    assert entry["fromId"] == nav["oldLeafId"] == leaf
    seen = pi("inspect", path)
    assert seen["entries"][-1] == entry and seen["leafId"] == entry["id"]
    assert seen["context"]["messages"][-1]["summary"] == entry["summary"]


def test_extractive_summary_honours_context_edits(stree, branch):
    path, leaf, target = branch
    r = stree("-s", path, "summarize", "--to", target, "--provider", "extractive")
    assert r.code == 0, r
    assert "forget this line" not in r.out  # hidden by a context edit
    assert "an answer to replace" not in r.out and "last question in the branch" in r.out


def test_given_summary_gets_pis_file_lists_with_context_edits(stree, tmp_path, isolated_home):
    """checkout --summary FILE stores the details pi computes for the abandoned entries:
    a tool call in a message a context edit replaced no longer counts."""
    (isolated_home / "proj").mkdir()
    b = Steps()
    b.user("start")
    base = b.text("ok")
    b.user("elsewhere")
    b.call("branch", base)
    b.tool("c1", "read", {"path": "kept.md"})
    edited = b.assistant([{"type": "toolCall", "id": "c2", "name": "edit",
                           "arguments": {"path": "gone.py", "oldText": "a", "newText": "b"}}], stopReason="toolUse")
    b.call("appendContextEdit", edited, {"content": "(edit withdrawn)"})
    b.text("done")
    path = write(tmp_path / "edits.jsonl", b, isolated_home)
    target = next(e["id"] for e in entries_of(path) if e["type"] == "message"
                  and e["message"]["content"] == "elsewhere")
    nav = pi("navigate", path, target, "--summary", "notes")
    (tmp_path / "notes.md").write_text("notes")
    r = stree("-s", path, "checkout", target, "--summary", tmp_path / "notes.md")
    assert r.code == 0, r
    entry = entries_of(path)[-1]
    assert entry["details"] == nav["summaryEntry"]["details"] == {"readFiles": ["kept.md"], "modifiedFiles": []}
