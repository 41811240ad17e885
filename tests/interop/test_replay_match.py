"""The cassette's fingerprint: a recorded turn's context and the request pi-ai sends for it
have the same fingerprint, on sessions the real pi wrote (an Esc in a tool batch, aborted
answers, thinking, images, Responses API call ids, compactions and context edits)."""

import pytest

import corpus_pi15
from conftest import ROOT
from request_sessions import build
from stree.core.replay_match import (Cassette, differences, from_anthropic, from_messages, from_openai,
                                     recorded_turns)
from stree.core.request import requests_along
from stree.core.tree import Tree
from stree.storage.session import parse


def load(path):
    session = parse(str(path))
    return Tree(session.nodes, session.load, session.previews)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    root = tmp_path_factory.mktemp("match")
    home = str(root / "home")
    files = dict(build(root, home))
    for name in ("system_messages", "edits_and_compaction", "context_edits"):
        files[name] = corpus_pi15.write(root / f"{name}.jsonl", getattr(corpus_pi15, name)(home), home)
    files["demo"] = ROOT / "stree" / "data" / "demo.jsonl"
    return files


@pytest.mark.parametrize("api,fingerprint", [("openai", from_openai), ("anthropic", from_anthropic)])
def test_a_recorded_turn_matches_the_request_pi_sends_for_it(sessions, api, fingerprint):
    checked = 0
    for name, path in sessions.items():
        tree = load(path)
        turns = recorded_turns(tree, tree.leaf)
        bodies = dict(requests_along(tree, tree.leaf, api=api))
        assert [t.entry_id for t in turns] == list(bodies), name
        for turn in turns:
            assert fingerprint(bodies[turn.entry_id]) == turn.atoms, (name, turn.entry_id)
            checked += 1
    assert checked > 20


def test_what_the_fingerprint_holds_and_leaves_out():
    messages = [
        {"role": "system", "content": "You are pi. Today is 2026-11-26."},
        {"role": "user", "content": [{"type": "text", "text": "  list\nthe   files "},
                                     {"type": "image", "data": "AAAA", "mimeType": "image/png"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"},
                                          {"type": "toolCall", "id": "call_1|fc_9", "name": "bash",
                                           "arguments": {"command": "ls"}}], "stopReason": "toolUse"},
        {"role": "toolResult", "toolCallId": "call_1|fc_9", "toolName": "bash",
         "content": [{"type": "text", "text": "a.py  (at 12:03:01)"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "partial"}], "stopReason": "aborted"},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "call_2", "name": "read",
                                           "arguments": {"path": "a.py"}}], "stopReason": "toolUse"},
        {"role": "user", "content": "stop"},
    ]
    atoms = from_messages(messages)
    assert atoms == [("user", "list the files [image]"), ("assistant", (("call_1_fc_9", "bash"),)),
                     ("result", "call_1_fc_9"), ("assistant", (("call_2", "read"),)),
                     ("result", "call_2"),  # pi-ai's "No result provided"
                     ("user", "stop")]
    other_day = [dict(messages[0], content="You are pi. Today is 2027-01-01.")] + messages[1:]
    other_day[3] = dict(messages[3], content=[{"type": "text", "text": "a.py  (at 09:00:00)"}])
    assert from_messages(other_day) == atoms


def test_nearest_turn_and_what_differs():
    first = [("user", "list the files")]
    second = first + [("assistant", (("c1", "bash"),)), ("result", "c1")]
    third = second + [("assistant", ()), ("user", "read notes.txt")]
    turns = [type("T", (), {"atoms": a, "index": i + 1})() for i, a in enumerate((first, second, third))]
    cassette = Cassette(turns)
    assert cassette.find(second) is turns[1]
    asked = second + [("assistant", ()), ("user", "read the notes")]
    assert cassette.find(asked) is None and cassette.nearest(asked) is turns[2]
    assert differences(third, asked) == ["message 5: recorded user text 'read notes.txt', "
                                         "request has user text 'read the notes'"]
    assert differences(first, first + [("result", "x")]) == [
        "the request has 1 message(s) more than the recording after message 1, starting with tool result for x"]
    assert differences(second, first) == [
        "the request ends after message 1; the recording goes on with assistant message calling bash (c1)"]
