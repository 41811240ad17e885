"""`stree serve` while things happen: navigate_tree leaving the file pi's own navigation leaves,
a summary asked of a loopback model and aborted by a second request, one write at a time,
a write refused when the file moved on, pi appending while a client watches, signals and
end of input mid-summary, and a thousand requests in one process."""

import json
import os
import signal
import stat
import threading
import time

import pytest
from conftest import ROOT
from llm_server import ANSWER, LLMServer, Reply, name_keys_for_this_server, openai_events, openai_json
from pi_harness import pi, pi_write
from serve_kit import Server

KEY = "sk-serve-test-0123456789-SECRET"
LEAF, TARGET = "f7e0df1c", "459e8d8a"  # the demo: leave the validate branch for the csv attempt's start


@pytest.fixture
def llm():
    s = LLMServer()
    yield s
    s.close()


def model_server(demo, llm, *args):
    name_keys_for_this_server()
    return Server(demo, "--provider", "openai", "--model", "test-model", "--base-url", f"{llm.url}/v1", *args,
                  env={"OPENAI_API_KEY": KEY})


def appended(path, before):
    return [json.loads(line) for line in path.read_bytes()[len(before):].decode().splitlines()]


def without_ids(entries):
    ids = {e["id"]: f"<new{i}>" for i, e in enumerate(entries)}
    return [{k: ids.get(v, v) if isinstance(v, str) else v for k, v in e.items() if k not in ("id", "timestamp")}
            for e in entries]


def test_navigate_tree_leaves_the_file_pis_navigation_leaves(demo):
    """No summary: pi keeps its leaf in memory (and writes the label); stree appends a context-free
    marker, then the label: pi, reading the file, is where its own navigation put it."""
    before = demo.read_bytes()
    nav = pi("navigate", ROOT / "stree" / "data" / "demo.jsonl", TARGET, "--label", "tried")
    s = Server(demo)
    try:
        data = s.data("navigate_tree", targetId=TARGET, label=" tried ")
        assert data == {"cancelled": False, "editorText": nav["editorText"]}
        assert s.data("get_entries", since=LEAF)["entries"] == appended(demo, before)
        assert s.data("navigate_tree", targetId=appended(demo, before)[-1]["id"]) == {"cancelled": False}
    finally:
        assert s.close() == 0
    seen = pi("inspect", demo)
    assert seen["context"] == nav["context"]
    assert seen["labels"][TARGET] == "tried"
    assert [e["type"] for e in appended(demo, before)] == ["custom", "label"]


def test_navigate_tree_with_a_summary_stores_what_pi_stores(demo, llm):
    before = demo.read_bytes()
    s = model_server(demo, llm)
    try:
        data = s.data("navigate_tree", targetId=TARGET, summarize=True, label="csv-start",
                      customInstructions="focus on tests")
    finally:
        assert s.close() == 0
    ours = appended(demo, before)
    assert len(llm.requests) == 1 and "focus on tests" in json.dumps(llm.requests[0].json)
    nav = pi("navigate", ROOT / "stree" / "data" / "demo.jsonl", TARGET, "--summary", ANSWER, "--pi-format",
             "--label", "csv-start")
    ours[0].pop("usage")
    assert without_ids(ours) == without_ids(nav["appendedEntries"])
    assert data == {"cancelled": False, "editorText": nav["editorText"],
                    "summaryEntry": {"id": ours[0]["id"], "summary": ours[0]["summary"], "fromExtension": False}}


def test_a_second_request_aborts_the_summary_and_nothing_is_written(demo, llm):
    answer = threading.Event()  # the model answers when the test says so
    llm.script = [Reply(hold=answer, body=openai_json(ANSWER))]
    before = demo.read_bytes()
    s = model_server(demo, llm)
    try:
        s.send({"id": "nav", "type": "navigate_tree", "targetId": TARGET, "summarize": True})
        deadline = time.monotonic() + 60
        while not llm.requests and time.monotonic() < deadline:
            time.sleep(0.02)
        assert llm.requests, "the summary was never asked for"
        # the server answers other requests meanwhile; writes to the file wait their turn (busy)
        assert s.data("rev_parse") == {"records": [{"rev": "@", "id": LEAF}]}
        r = s.request("set_label", entryId=TARGET, label="x")
        assert r["errorCode"] == "busy" and "hint" in r
        assert s.request("abort_branch_summary") == {"id": "r3", "type": "response",
                                                     "command": "abort_branch_summary", "success": True}
        assert s.wait("nav", timeout=60)["data"] == {"cancelled": True, "aborted": True}
        assert not llm.answered  # aborted before the model answered
        assert s.request("set_label", entryId=TARGET, label="after")["success"]  # the file is free again
        label_written = demo.read_bytes()
        answer.set()  # the model answers now: its summary is not written
        deadline = time.monotonic() + 60
        while not llm.answered and time.monotonic() < deadline:
            time.sleep(0.02)
        assert llm.answered
        assert s.data("rev_parse")["records"][0]["id"] != TARGET
        # a second summary aborted: the end of input does not wait for the model's answer
        never = threading.Event()
        llm.script = [Reply(hold=never, body=openai_json(ANSWER))]
        s.send({"id": "nav2", "type": "navigate_tree", "targetId": TARGET, "summarize": True})
        deadline = time.monotonic() + 60
        while len(llm.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(llm.requests) == 2, "the second summary was never asked for"
        s.request("abort_branch_summary")
        assert s.wait("nav2")["data"] == {"cancelled": True, "aborted": True}
        ended = time.monotonic()
    finally:
        assert s.close() == 0
    never.set()
    assert time.monotonic() - ended < 60  # (the model never answered: the end did not wait for it)
    assert demo.read_bytes() == label_written
    assert [e["type"] for e in appended(demo, before)] == ["label"]
    assert not any(r.get("command") == "navigate_tree" and r["data"].get("summaryEntry")
                   for r in s.records if r.get("data"))


def test_end_of_input_waits_for_the_summary_and_ctrl_c_aborts_it(demo, llm):
    llm.script = [Reply(delay=1, events=openai_events(ANSWER))]
    before = demo.read_bytes()
    s = model_server(demo, llm)
    s.send({"id": "nav", "type": "navigate_tree", "targetId": TARGET, "summarize": True})
    assert s.close() == 0  # EOF right away: the summary is waited for and answered
    # (its answer, before or after the watcher's entries_appended event for the summary written)
    answers = [r for r in s.records if r.get("id") == "nav"]
    assert len(answers) == 1 and "data" in answers[0], s.records
    assert answers[0]["data"]["summaryEntry"]["summary"]
    assert appended(demo, before)[0]["type"] == "branch_summary"

    before = demo.read_bytes()
    llm.script = [Reply(hold=threading.Event(), body=openai_json(ANSWER))]  # never answered
    s = model_server(demo, llm)
    s.send({"id": "nav", "type": "navigate_tree", "targetId": "9bd41591", "summarize": True})
    deadline = time.monotonic() + 60
    while len(llm.requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(llm.requests) == 2, "the second summary was never asked for"
    s.proc.send_signal(signal.SIGINT)
    assert s.proc.wait(60) == 130
    assert b"Traceback" not in s.proc.stderr.read()
    assert demo.read_bytes() == before


def test_a_write_refused_because_the_file_moved_on(demo, tmp_path):
    """A before-tree hook during which someone appends (pi, another client): nothing written."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    hook = hooks / "before-tree"
    line = json.dumps({"type": "message", "id": "pi000001", "parentId": LEAF, "timestamp": "2026-11-20T10:00:00.000Z",
                       "message": {"role": "user", "content": "meanwhile", "timestamp": 1}})
    hook.write_text(f"#!/bin/sh\ncat > /dev/null\necho '{line}' >> '{demo}'\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    s = Server(demo, env={"STREE_HOOKS_DIR": str(hooks)})
    try:
        r = s.request("navigate_tree", targetId=TARGET)
        assert r["success"] is False and r["errorCode"] == "conflict" and "nothing written" in r["error"]
        assert demo.read_text().splitlines()[-1] == line
    finally:
        assert s.close() == 0


def test_pi_appending_while_a_client_watches_sends_the_new_ids(demo):
    s = Server(demo)
    try:
        assert s.data("get_entries")["leafId"] == LEAF
        seen = pi_write(str(demo), [["appendMessage", {"role": "user", "content": "more please", "timestamp": 1}],
                                    ["appendMessage", {"role": "assistant", "timestamp": 2,
                                                       "content": [{"type": "text", "text": "ok"}]}]])
        events = [s.event(timeout=60)]
        while sum(len(e["ids"]) for e in events) < 2:  # pi writes line by line: one event, or two
            events.append(s.event(timeout=60))
        assert all(e["type"] == "entries_appended" and e["sessionFile"] == str(demo) for e in events)
        assert [id for e in events for id in e["ids"]] == seen["ids"]
        assert events[-1]["leafId"] == seen["leafId"]
        since = s.data("get_entries", since=LEAF)
        assert [e["id"] for e in since["entries"]] == seen["ids"] and since["leafId"] == seen["leafId"]
        # the server's own writes are events too
        s.data("set_session_name", name="watched")
        assert s.event(timeout=60)["leafId"] == s.data("get_entries")["leafId"]
    finally:
        assert s.close() == 0


def test_a_replaced_file_stops_the_watch_with_an_event(demo):
    s = Server(demo)
    try:
        s.data("get_state")
        replacement = demo.parent / "new.jsonl"
        replacement.write_bytes(demo.read_bytes())
        os.replace(replacement, demo)
        event = s.event(timeout=60)
        assert event["type"] == "watch_stopped" and "replaced" in event["error"]
        assert s.data("get_entries")["leafId"] == LEAF  # requests are still answered
    finally:
        assert s.close() == 0


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_a_thousand_requests_in_one_process_do_not_grow_memory(demo):
    s = Server(demo)
    kinds = [("get_tree", {}), ("get_entries", {"since": TARGET}), ("log", {"maxCount": 5}),
             ("get_tree", {"lightweight": True}), ("rev_parse", {"revisions": ["bug-found"]}),
             ("get_messages", {}), ("context", {}), ("get_session_stats", {}), ("show", {}),
             ("no_such_command", {})]
    try:
        at = {}
        for n in range(1, 1001):
            kind, fields = kinds[n % len(kinds)]
            s.request(kind, **fields)
            if n in (100, 1000):
                at[n] = rss_kib(s.proc.pid)
    finally:
        assert s.close() == 0
    print(f"RSS at request 100: {at[100]} KiB, at request 1000: {at[1000]} KiB")
    assert at[1000] - at[100] < 0.1 * at[100] + 2048, at  # no growth per request (10% or 2 MiB of noise)


def test_sigterm_while_idle_ends_the_server(demo):
    s = Server(demo)
    assert s.data("rev_parse") == {"records": [{"rev": "@", "id": LEAF}]}
    s.proc.send_signal(signal.SIGTERM)
    assert s.proc.wait(60) == 143
    s = Server(demo)
    assert s.data("get_state")
    s.proc.send_signal(signal.SIGINT)
    assert s.proc.wait(60) == 130 and b"Traceback" not in s.proc.stderr.read()


def test_navigate_tree_runs_the_checkout_hooks(demo, tmp_path):
    """pi's session_before_tree / session_tree: stree's before-tree and tree hooks. A cancel
    answers {cancelled: true} and writes nothing; the tree hook sees the move."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name, script in (("before-tree", f"cat > {tmp_path}/prep.json\n"
                                         f"[ -e {tmp_path}/cancel ] && echo '{{\"cancel\": true}}'\nexit 0\n"),
                         ("tree", f"cat > {tmp_path}/after.json\n")):
        hook = hooks / name
        hook.write_text("#!/bin/sh\n" + script)
        hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "cancel").touch()
    before = demo.read_bytes()
    s = Server(demo, env={"STREE_HOOKS_DIR": str(hooks)})
    try:
        assert s.data("navigate_tree", targetId=TARGET, label="x") == {"cancelled": True}
        assert demo.read_bytes() == before and not (tmp_path / "after.json").exists()
        prep = json.loads((tmp_path / "prep.json").read_text())
        assert prep["targetId"] == TARGET and prep["oldLeafId"] == LEAF and prep["label"] == "x"
        (tmp_path / "cancel").unlink()
        assert s.data("navigate_tree", targetId="9bd41591") == {"cancelled": False}
        after = json.loads((tmp_path / "after.json").read_text())
        assert after["oldLeafId"] == LEAF and after["newLeafId"] == "9bd41591"
        assert after["appendedEntries"] == s.data("get_entries", since=LEAF)["entries"]
    finally:
        assert s.close() == 0
