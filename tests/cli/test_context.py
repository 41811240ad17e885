"""`stree context`: pi's context at a revision, as JSON and as the bodies the APIs take (more
of `--as` in test_context_as.py), decoding only the entries its answer needs.

Counted, not timed: STREE_DEBUG_STATS reports the entries whose content was loaded
(decoded) by the command. On a long compacted session, `context` decodes the compaction,
the kept entries and what follows, and the last thinking-level and model setters; the rest
of the path is known from its structure (the index) only. The answer stays pi 1.5.2's.
"""

import json
import re

import pytest
from builders import SessionBuilder
from decode_count import compacted, decoded, stats_run
from pi_harness import pi


def index_state(result):
    return re.search(r"index ([\w-]+)", result.err).group(1)


@pytest.mark.slow  # (big inputs: left out of `make check`)
def test_context_on_a_long_compacted_session_decodes_the_kept_entries_only(tmp_path, stree):
    kept, after = 200, 20
    path, ids = compacted(tmp_path, 100_000, kept, after)
    first = stats_run(stree, path, "context", "--json")  # builds the index
    assert first.code == 0, first
    warm = stats_run(stree, path, "context", "--json")
    assert warm.code == 0 and index_state(warm) == "fresh", warm
    # kept entries + the compaction + the entries after it; the thinking change before them
    # is known from the index (its level), not decoded
    assert decoded(warm) == kept + 1 + after, warm.err
    plain = stree("--no-cache", "-s", path, "context", "--json")
    assert plain.code == 0 and plain.raw == warm.raw == first.raw
    context = json.loads(warm.out)
    assert context["thinkingLevel"] == "high"
    assert context["model"] == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}
    assert len(context["messages"]) == 1 + kept - 2 + after  # the summary, kept minus the edits, after
    assert context["messages"][1]["content"] == [{"type": "text", "text": "kept 0, edited"}]


def test_context_at_the_compaction_reads_the_model_from_before_the_kept_range(tmp_path, stree):
    path, ids = compacted(tmp_path, 20000, 200, 20)
    stats_run(stree, path, "rev-parse", "@")
    r = stats_run(stree, path, "context", "--json", ids["compaction"])
    assert r.code == 0, r
    assert decoded(r) == 200 + 1, r.err  # kept and the compaction: the model and thinking level from the index
    assert r.raw == stree("--no-cache", "-s", path, "context", "--json", ids["compaction"]).raw
    context = json.loads(r.out)
    assert (context["model"], context["thinkingLevel"]) == ({"provider": "anthropic", "modelId": "claude-late"},
                                                            "high")


def test_the_lazy_context_is_pi_1_5_2s(tmp_path, stree):
    path, ids = compacted(tmp_path, 400, 30, 20)
    revs = [ids["leaf"], ids["compaction"], ids["first"], ids["old"], ids["branch_at"]]
    seen = pi("inspect", path, *[a for id in revs for a in ("--context-at", id)], version="1.5.2")
    r = stree("-s", path, "context", "--json")
    assert r.code == 0, r
    assert json.loads(r.out) == seen["context"]
    for id in revs:
        r = stree("-s", path, "context", "--json", id)
        assert r.code == 0, r
        assert json.loads(r.out) == seen["contexts"][id], id


def test_the_setters_the_index_cannot_hold_are_decoded(tmp_path, stree):
    """A thinking level or model that is not a string is not in the index: its entry is read
    (and the context is pi's)."""
    b = SessionBuilder()
    b.append("model_change", provider="openai", modelId={"odd": 1})
    b.append("thinking_level_change", thinkingLevel=["odd"])
    for i in range(50):
        b.user(f"question {i}")
        b.custom_message("note", f"note {i}")
    first = b.user("kept")
    b.custom_message("note", "kept note")
    b.compaction("summary", first)
    b.user("after")
    path = b.write(tmp_path / "odd.jsonl")
    stats_run(stree, path, "rev-parse", "@")
    r = stats_run(stree, path, "context", "--json")
    assert r.code == 0, r
    assert decoded(r) == 2 + 1 + 1 + 2, r.err  # kept, the compaction, after, and both setters
    assert json.loads(r.out) == pi("inspect", path, version="1.5.2")["context"]
    assert (json.loads(r.out)["model"], json.loads(r.out)["thinkingLevel"]) == (
        {"provider": "openai", "modelId": {"odd": 1}}, ["odd"])


def test_context_json_and_replay_shapes(stree, branchy_file):
    ctx = json.loads(stree("-s", branchy_file, "context", "--json").out)
    assert ctx["thinkingLevel"] == "high" and ctx["messages"][0]["role"] == "compactionSummary"
    oa = json.loads(stree("-s", branchy_file, "context", "--as", "openai").out)
    assert oa["model"] == "gpt-5"
    assert [m["role"] for m in oa["messages"]] == ["user", "user", "assistant", "tool", "assistant", "user",
                                                   "assistant"]
    an = json.loads(stree("-s", branchy_file, "context", "--as", "anthropic").out)
    roles = [m["role"] for m in an["messages"]]
    assert set(roles) == {"user", "assistant"}  # (consecutive user turns: pi-ai sends them, the API joins them)
    assert [b["type"] for m in an["messages"] for b in m["content"] if m["role"] == "assistant"][0] == "tool_use"
