"""`stree replay` (teacher forcing): each recorded answer's request sent to a loopback model,
the new answers compared, reported (table, JSON, JUnit) and kept as siblings."""

import json
import os
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import ROOT, interruptible, run_stree
from llm_server import LLMServer, Reply, name_keys_for_this_server, openai_events
from scripted_llm import Answer, ScriptedServer

NODE22 = ROOT / "tests" / "pi" / "node22" / "bin" / "node"
HARNESS = ROOT / "tests" / "pi" / "harness.mjs"

# what the session below records, turn by turn
RECORDED = [Answer(calls=[("bash", {"command": "ls"})]), Answer("I see notes.txt."),
            Answer(calls=[("read", {"path": "notes.txt"})]), Answer("It says: remember the milk."),
            Answer("Bye!")]
PROMPTS = ["list the files", "read notes.txt", "say bye"]


def build_session(path):
    """A session as pi writes one: header, user / assistant / toolResult messages."""
    from builders import SessionBuilder

    b = SessionBuilder(cwd=str(path.parent))
    answers = iter(RECORDED)
    for prompt in PROMPTS:
        b.user(prompt)
        while True:
            answer = next(answers)
            b.assistant(answer.text or None, tools=answer.calls, model="recorded-model")
            if not answer.calls:
                break
            call = b.entries[-1]["message"]["content"][-1]
            b.tool_result(call["id"], call["name"], "output")
    return b.write(path)


@pytest.fixture
def session(tmp_path):
    return build_session(tmp_path / "session.jsonl")


@pytest.fixture
def keys(monkeypatch):
    name_keys_for_this_server()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-0123456789")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")


def assistants(path):
    out = []
    for line in Path(path).read_text().splitlines()[1:]:
        e = json.loads(line)
        if e["type"] == "message" and e["message"]["role"] == "assistant":
            out.append(e)
    return out


def model_args(server, api="openai"):
    base = server.url + "/v1" if api == "openai" else server.url
    return ["--provider", api, "--model", "candidate", "--base-url", base]


def test_dry_run_builds_every_request_as_context_as_prints_it(session, stree):
    r = stree("-s", session, "replay", "--dry-run")
    assert r.code == 0, r
    assert r.out.startswith(f"{len(assistants(session))} requests built (openai")
    r = stree("-s", session, "replay", "--dry-run", "--json", "--provider", "anthropic")
    records = [json.loads(line) for line in r.out.splitlines()]
    assert [x["entryId"] for x in records] == [e["id"] for e in assistants(session)]
    for record in records[:3]:  # the same body `context --as` gives at the parent
        shown = stree("-s", session, "context", record["parentId"], "--as", "anthropic")
        assert shown.code == 0, shown
        assert json.loads(shown.out) == record["request"]


def test_the_same_answers_agree_and_check_passes(session, stree, keys, tmp_path):
    server = ScriptedServer(RECORDED, id_prefix="new_")
    try:
        junit = tmp_path / "replay.xml"
        r = stree("-s", session, "replay", *model_args(server), "--check", "--junit", junit)
    finally:
        server.close()
    assert r.code == 0, r
    rows = r.out.splitlines()
    assert rows[0].split()[:4] == ["ENTRY", "RECORDED", "NEW", "TOOLS"]
    assert [row.split()[0] for row in rows[1:6]] == [e["id"] for e in assistants(session)]
    assert all(" same " in row and "1.00" in row for row in rows[1:6])
    assert "5 turns replayed, 0 diverged" in rows[-1]
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("tests") == "5" and suite.get("failures") == "0"
    # what the model was sent: pi's request at the parent of each recorded answer
    sent = [body for _, body in server.requests]
    assert [m["role"] for m in sent[1]["messages"]][-3:] == ["user", "assistant", "tool"]
    first_call = assistants(session)[0]["message"]["content"][0]["id"]
    assert sent[1]["messages"][-2]["tool_calls"][0]["id"] == first_call and sent[0]["model"] == "candidate"


@pytest.mark.parametrize("api,stream", [("openai", "--stream"), ("openai", "--no-stream"),
                                        ("anthropic", "--stream"), ("anthropic", "--no-stream")])
def test_a_changed_call_and_text_diverge_in_their_rows(session, stree, keys, tmp_path, api, stream):
    changed = list(RECORDED)
    changed[2] = Answer(calls=[("read", {"path": "README.md"})])
    changed[4] = Answer("Nothing to do with it at all, really.")
    server = ScriptedServer(changed)
    try:
        junit = tmp_path / "replay.xml"
        r = stree("-s", session, "replay", *model_args(server, api), "--check", "--json", "--junit", junit, stream)
    finally:
        server.close()
    assert r.code == 1, r
    records = [json.loads(line) for line in r.out.splitlines()]
    ids = [e["id"] for e in assistants(session)]
    assert [x["entryId"] for x in records] == ids
    assert [x["diverged"] for x in records] == [False, False, True, False, True]
    assert records[2]["tools"] == "differ" and "arguments of read differ: path" in records[2]["reasons"]
    assert records[4]["tools"] == "same" and records[4]["similarity"] < 0.5
    assert records[0]["recordedModel"] == "recorded-model" and records[0]["tokens"]["output"] == 20
    assert all(body.get("stream", False) == (stream == "--stream") for _, body in server.requests)
    failures = [c for c in ET.parse(junit).getroot().iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failures] == [f"turn 3 {ids[2]}", f"turn 5 {ids[4]}"]


def pi_inspect(path, version):
    proc = subprocess.run([str(NODE22), str(HARNESS), "--pi", version, "inspect", str(path)],
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return json.loads(proc.stdout)


def pi_view(data):
    """What pi shows of a session: its leaf's context, and the recorded branch to it."""
    entries = {e["id"]: e for e in data["entries"]}
    branch, at = [], data["leafId"]
    while at is not None:
        branch.append(at)
        at = entries[at]["parentId"]
    context = [{k: v for k, v in m.items() if k != "timestamp"} for m in data["context"]["messages"]]
    return branch[::-1], context


@pytest.mark.parametrize("version", ["0.73.1", "0.87.1", "1.5.2", "1.6.0"])
def test_write_in_place_keeps_the_leaf_for_pi(session, stree, keys, version):
    before = pi_inspect(session, version)
    original = session.read_bytes()
    server = ScriptedServer(RECORDED, id_prefix="new_")
    try:
        r = stree("-s", session, "replay", *model_args(server), "--in-place")
    finally:
        server.close()
    assert r.code == 0, r
    after = pi_inspect(session, version)
    assert session.read_bytes().startswith(original)  # appended only
    old_branch, old_context = pi_view(before)
    new_branch, new_context = pi_view(after)
    # pi resumes where it was: its leaf is stree's move back, whose parent is the old leaf
    marker = [e for e in after["entries"] if e["id"] == after["leafId"]][0]
    assert marker["type"] == "custom" and marker["customType"] == "stree/checkout"
    assert new_branch == old_branch + [marker["id"]] and new_context == old_context
    assert stree("-s", session, "rev-parse", "@").out.strip() == old_branch[-1]
    # each recorded answer has its replayed sibling
    for recorded in assistants(session)[:5]:
        siblings = [e for e in after["entries"] if e["parentId"] == recorded["parentId"]
                    and e["type"] == "message" and e["message"]["role"] == "assistant"]
        assert len(siblings) == 2 and siblings[1]["message"]["model"] == "scripted-model"


def test_write_to_a_new_file_leaves_the_original_alone(session, stree, keys, tmp_path):
    original = session.read_bytes()
    out = tmp_path / "replayed.jsonl"
    server = ScriptedServer(RECORDED, id_prefix="new_")
    try:
        r = stree("-s", session, "replay", *model_args(server), "--write", "-o", out, "-j", "3", "--json")
    finally:
        server.close()
    assert r.code == 0, r
    assert session.read_bytes() == original
    records = [json.loads(line) for line in r.out.splitlines()]
    assert [x["turn"] for x in records] == [1, 2, 3, 4, 5]  # in path order, whatever finished first
    assert stree("-s", out, "fsck").code == 0
    assert stree("-s", out, "rev-parse", "@").out.strip() == assistants(session)[-1]["id"]
    header = json.loads(out.read_text().splitlines()[0])
    assert header["parentSession"] == str(session)
    new = [e for e in assistants(out) if e["message"]["provider"] == "openai"]
    recorded = {e["id"]: e for e in assistants(session)}
    assert len(new) == 5 and {e["parentId"] for e in new} == {e["parentId"] for e in recorded.values()}
    graph = stree("-s", out, "log", "--graph", "--filter", "all", "--color", "never").out
    assert graph.count("assistant: Bye!") == 2
    # pi opens the new file on the recorded branch, with the recorded context
    for version in ("0.73.1", "1.6.0"):
        original_branch, original_context = pi_view(pi_inspect(session, version))
        branch, context = pi_view(pi_inspect(out, version))
        assert branch[:-1] == original_branch and context == original_context


def test_write_without_a_file_name_goes_next_to_the_session(session, stree, keys):
    server = ScriptedServer(RECORDED, id_prefix="new_")
    try:
        r = stree("-s", session, "replay", *model_args(server), "--write")
    finally:
        server.close()
    assert r.code == 0, r
    written = [p for p in session.parent.glob("*.jsonl") if p != session]
    assert len(written) == 1 and f"kept 5 new answers as siblings in {written[0]}" in r.err
    assert len(assistants(written[0])) == 10


def test_errors_and_aborts_are_not_replayed(tmp_path, stree):
    from builders import SessionBuilder

    b = SessionBuilder(cwd=str(tmp_path))
    b.user("hi")
    b.assistant(None, stop="error", errorMessage="overloaded")
    b.at(b.entries[0]["id"])
    b.assistant("hello")
    path = b.write(tmp_path / "s.jsonl")
    r = stree("-s", path, "replay", "--dry-run", "--json")
    assert [json.loads(line)["entryId"] for line in r.out.splitlines()] == [b.entries[-1]["id"]]


def test_budget_and_max_turns(session, stree, keys, tmp_path):
    server = ScriptedServer(RECORDED)
    try:
        r = stree("-s", session, "replay", *model_args(server), "--max-turns", "2")
        assert r.code == 0 and "2 turns replayed" in r.out, r
        junit = tmp_path / "j.xml"
        # 120 tokens a turn at USD 1000 per million: 0.12 a turn; two turns spend 0.24 >= 0.2
        r = stree("-s", session, "replay", *model_args(server), "--price", "1000,1000", "--max-cost", "0.2",
                  "--junit", junit)
    finally:
        server.close()
    assert r.code == 0, r
    assert "2 turns replayed" in r.out and "3 not sent (budget)" in r.out and "cost 0.2400" in r.out
    assert ET.parse(junit).getroot().find("testsuite").get("skipped") == "3"


def test_retries_and_model_failure(session, stree, keys, tmp_path):
    server = LLMServer(text="Bye!")
    server.script = [Reply(503, body={"error": {"message": "overloaded"}}, headers={"retry-after": "0"})]
    try:
        r = stree("-s", session, "replay", *model_args(server), "--max-turns", "1", "--retries", "1")
        assert r.code == 0, r
        server.script = [Reply(503, body={"error": {"message": "overloaded"}}, headers={"retry-after": "0"})]
        r = stree("-s", session, "replay", *model_args(server), "--max-turns", "1", "--retries", "0", "--json")
    finally:
        server.close()
    assert r.code == 5, r
    record = json.loads(r.out)
    assert record["error"] and "HTTP 503" in record["error"] and record["diverged"] is True


def test_ctrl_c_keeps_what_is_complete(session, keys, tmp_path):
    server = LLMServer(text="I see notes.txt.")
    # the first turn answers; the second never does (until the test ends)
    server.script = [Reply(events=openai_events("x")), Reply(events=openai_events("y"), delay=120)]
    out, junit = tmp_path / "replayed.jsonl", tmp_path / "j.xml"
    proc = subprocess.Popen([sys.executable, "-m", "stree", "-s", str(session), "replay", *model_args(server),
                             "-o", str(out), "--junit", str(junit)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=interruptible)
    try:
        assert proc.stdout.readline().startswith(b"ENTRY")
        assert proc.stdout.readline().startswith(assistants(session)[0]["id"].encode())
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        server.close()
    assert proc.returncode == 130, err
    assert b"1 turn replayed" in rest and b"interrupted" in rest
    assert len([c for c in ET.parse(junit).getroot().iter("testcase")]) == 1
    assert len(assistants(out)) == len(assistants(session)) + 1
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_an_existing_output_is_refused_before_anything_is_sent(session, stree, keys, tmp_path):
    server = ScriptedServer(RECORDED)
    try:
        taken = tmp_path / "taken.jsonl"
        taken.write_text("mine\n")
        r = stree("-s", session, "replay", *model_args(server), "-o", taken)
        assert r.code == 6 and "already exists" in r.err and taken.read_text() == "mine\n"
        r = stree("-s", session, "replay", *model_args(server), "--junit", tmp_path / "no" / "such" / "j.xml")
        assert r.code == 2 and "no such directory" in r.err
    finally:
        server.close()
    assert server.requests == []


def test_no_model_says_how_to_name_one(session, stree):
    r = stree("-s", session, "replay")
    assert r.code == 2 and "no model to replay with" in r.err and "--provider openai|anthropic" in r.err


def test_usage_errors(session, stree):
    for args in (["--max-cost", "1"], ["--in-place", "-o", "x.jsonl"], ["--serve", "--check"],
                 ["--provider", "extractive"], ["--max-tokens", "0"], ["--drive", "pi"], ["--dry-run", "--write"],
                 ["--price", "1"]):
        r = stree("-s", session, "replay", *args)
        assert r.code == 2, (args, r)
        assert r.err.startswith("stree: error: ") and "Traceback" not in r.err


def test_progress_on_a_terminal_only(session, stree, keys):
    import pty

    from conftest import read_pty

    server = ScriptedServer(RECORDED)
    try:
        master, slave = pty.openpty()
        env = dict(os.environ, STREE_PROGRESS_DELAY="0")
        proc = subprocess.run([sys.executable, "-m", "stree", "-s", str(session), "replay", *model_args(server)],
                              stdout=slave, stderr=slave, env=env, timeout=60)
        os.close(slave)
        shown = read_pty(master)
        os.close(master)
        piped = stree("-s", session, "replay", *model_args(server), env={"STREE_PROGRESS_DELAY": "0"})
    finally:
        server.close()
    assert proc.returncode == 0 and piped.code == 0
    assert b"replaying 5 turns with openai/candidate" in shown
    assert "replaying" not in piped.err


def test_the_system_prompt_comes_from_the_flag_or_the_config(session, stree, tmp_path):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("You are the candidate.")
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "stree" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'system_prompt = "{prompt}"\n')
    r = stree("-s", session, "replay", "--dry-run", "--json", "--max-turns", "1")
    assert json.loads(r.out)["request"]["messages"][0] == {"role": "system", "content": "You are the candidate."}
    other = tmp_path / "other.txt"
    other.write_text("Flag wins.")
    r = stree("-s", session, "replay", "--dry-run", "--json", "--max-turns", "1", "--system-prompt", other)
    assert json.loads(r.out)["request"]["messages"][0]["content"] == "Flag wins."
