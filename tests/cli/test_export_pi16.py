"""pi 1.6.0's new content in `show` and `export` (issue 26.7), in pi's own words: the
`openai_input_transformations` diagnostic ("OpenAI dropped N reasoning items: REASON (details
in session)", only where more are dropped than in the previous response, as pi's transcript
notes it), `details.imageUnsupportedByModel` on a read ("[MODEL does not support images; it saw
a placeholder instead]"), and the "Operation aborted" results pi 1.6.0 writes for tool calls
that never started. The entries are built as pi 1.6.0's code writes them (pi-ai's
openai-responses diagnostics, core/tools/read.js, the agent loop's aborted batch): writing
them with pi itself needs a live OpenAI model.

`show` and `export` render through the one transcript code, checked here on one session: so
one module for both."""

import json

from builders import SessionBuilder


def dropped(n, reason="prefix_mismatch"):
    return [{"type": "openai_input_transformations", "timestamp": 1795000000000, "details": {
        "transformations": [{"type": "reasoning", "id": f"rs_{i}", "action": "remove", "reason": reason}
                            for i in range(n)] + [{"type": "other", "id": "x", "action": "keep"}]}}]


def session(tmp_path):
    b = SessionBuilder()
    b.user("go on after the compaction")
    first = b.assistant("first answer", model="gpt-6.2", provider="openai")
    b.entries[-1]["message"]["diagnostics"] = dropped(2)
    b.user("more")
    again = b.assistant("second answer, the same two lost again", model="gpt-6.2", provider="openai")
    b.entries[-1]["message"]["diagnostics"] = dropped(2)
    b.user("and more")
    more = b.assistant("third answer", model="gpt-6.2", provider="openai")
    b.entries[-1]["message"]["diagnostics"] = dropped(3, "encrypted_content_invalid")  # one more than before
    # a read of an image by a model without image input
    calls = b.assistant(None, tools=[("read", {"path": "shot.png"}), ("read", {"path": "b.py"}),
                                     ("bash", {"command": "make"})], model="gpt-6.2", provider="openai")
    ids = [c["id"] for c in b.entries[-1]["message"]["content"]]
    img = b.tool_result(ids[0], "read", "Read image file [image/png]")
    b.entries[-1]["message"]["details"] = {"imageUnsupportedByModel": "gpt-6.2-mini"}
    b.tool_result(ids[1], "read", "Operation aborted", error=True)  # Esc: the calls that never started
    b.tool_result(ids[2], "bash", "Operation aborted", error=True)
    path = b.write(tmp_path / "pi16.jsonl")
    return path, dict(first=first, again=again, more=more, calls=calls, img=img)


def test_show_says_what_pis_transcript_says(stree, tmp_path):
    path, ids = session(tmp_path)
    first = stree("-s", path, "show", ids["first"]).out
    assert "OpenAI dropped 2 reasoning items: prefix_mismatch (details in session)" in first
    again = stree("-s", path, "show", ids["again"]).out
    assert "reasoning items" not in again  # no more than the previous response: nothing new lost
    more = stree("-s", path, "show", ids["more"]).out
    assert "OpenAI dropped 3 reasoning items: encrypted_content_invalid (details in session)" in more
    img = stree("-s", path, "show", ids["img"]).out
    assert "result of [read: shot.png]" in img
    assert "[gpt-6.2-mini does not support images; it saw a placeholder instead]" in img
    aborted = stree("-s", path, "show", "@", "@^").out
    assert "result of [bash: make] (call_" in aborted and "(error)" in aborted and "Operation aborted" in aborted
    assert "result of [read: b.py]" in aborted


def test_export_says_it_too(stree, tmp_path):
    path, ids = session(tmp_path)
    for fmt in ("md", "html"):
        out = stree("-s", path, "export", "-o", "-", "--format", fmt).out
        assert out.count("OpenAI dropped 2 reasoning items: prefix_mismatch (details in session)") == 1, fmt
        assert out.count("OpenAI dropped 3 reasoning items: encrypted_content_invalid (details in session)") == 1
        assert "[gpt-6.2-mini does not support images; it saw a placeholder instead]" in out.replace("\\[", "[")
        assert out.count("error: Operation aborted") == 2  # in the folded result's summary line, unfolded
    html = stree("-s", path, "export", "-o", "-", "--format", "html").out
    assert '<span class="call">[read: b.py]</span> · 1 line · error: Operation aborted' in html
    assert '<p class="notice">OpenAI dropped 2 reasoning items' in html


def test_an_aborted_turn_reads_as_pi_shows_it(stree, tmp_path):
    b = SessionBuilder()
    b.user("go")
    b.assistant(None, stop="aborted")
    b.entries[-1]["message"]["errorMessage"] = "Request was aborted"
    b.user("again")
    b.assistant(None, stop="error")
    b.entries[-1]["message"]["errorMessage"] = "429 rate limited"
    b.user("once more")
    b.assistant("partial", stop="length")
    path = b.write(tmp_path / "a.jsonl")
    out = stree("-s", path, "show", "@", "@~2", "@~4").out
    assert "Operation aborted" in out and "Request was aborted" not in out  # pi's assistant-message.js
    assert "Error: 429 rate limited" in out
    assert "Response was truncated before completion." in out
    md = stree("-s", path, "export", "-o", "-", "--format", "md").out
    assert "**Error:** Operation aborted" in md and "**Error:** Error: 429 rate limited" in md
    assert json.loads(open(path).read().splitlines()[2])["message"]["errorMessage"] == "Request was aborted"
