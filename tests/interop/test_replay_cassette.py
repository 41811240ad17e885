"""`stree replay --serve`: the real pi 1.6.0 re-runs a session it recorded, answered from the
recording by stree's loopback server (no key, no network), and a changed prompt diverges.
pi 1.5.2 and 0.87.1 re-run it too."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import interruptible, run_stree
from scripted_llm import Answer, ScriptedServer, pi_command, record_with_pi

PROMPTS = ["list the files", "read notes.txt", "say bye"]
NOTE = "remember the milk"


def scratch(path):
    """A scratch checkout the agent works in: its tools run here for real."""
    path.mkdir(parents=True)
    (path / "notes.txt").write_text(NOTE + "\n")
    return path


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A session the real pi 1.6.0 wrote, driven by scripted answers that call bash and read."""
    base = tmp_path_factory.mktemp("recorded")
    server = ScriptedServer([Answer(calls=[("bash", {"command": "ls"})]), Answer("I see notes.txt."),
                             Answer(calls=[("read", {"path": "notes.txt"})]), Answer(f"It says: {NOTE}."),
                             Answer("Bye!")])
    try:
        path = record_with_pi(PROMPTS, server.url, scratch(base / "work"), base / "home")
    finally:
        server.close()
    return path


def entries(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()[1:] if line.strip()]


def messages(path, role):
    return [e for e in entries(path) if e["type"] == "message" and e["message"]["role"] == role]


def calls(path):
    return [(b["name"], b["arguments"]) for e in messages(path, "assistant") for b in e["message"]["content"]
            if b["type"] == "toolCall"]


def user_texts(path):
    return [b["text"] for e in messages(path, "user") for b in e["message"]["content"] if b["type"] == "text"]


@pytest.mark.parametrize("api,version", [("openai", "1.6.0"), ("anthropic", "1.6.0"), ("openai", "1.5.2"),
                                         ("anthropic", "0.87.1")])
def test_an_unchanged_replay_of_a_pi_session_has_no_divergence(recorded, tmp_path, api, version):
    work = scratch(tmp_path / "checkout")
    replayed = tmp_path / "replayed.jsonl"
    report = tmp_path / "report.json"
    drive = " ".join(pi_command(version))
    r = run_stree("-s", recorded, "replay", "--serve", "--api", api, "--drive", drive, "--report", report,
                  "--session-out", replayed, cwd=work, timeout=180)
    assert r.code == 0, r
    data = json.loads(report.read_text())
    assert data["divergences"] == [] and data["notReached"] == []
    assert data["answered"] == data["requests"] == data["recordedTurns"] == len(messages(recorded, "assistant"))
    assert data["drive"]["sent"] == len(PROMPTS) and data["drive"]["exitCode"] == 0
    assert "0 diverged" in r.out
    # the agent asked the same things and made the same calls, and ran them for real here
    assert user_texts(replayed) == PROMPTS
    assert calls(replayed) == calls(recorded)
    read_result = [e for e in messages(replayed, "toolResult") if e["message"]["toolName"] == "read"]
    assert NOTE in read_result[0]["message"]["content"][0]["text"]
    assert [e["message"]["provider"] for e in messages(replayed, "assistant")] == ["stree-replay"] * 5


def test_a_user_message_left_unanswered_at_the_end_is_not_sent(recorded, tmp_path):
    session = tmp_path / "session.jsonl"
    last = entries(recorded)[-1]
    unanswered = {"type": "message", "id": "0badc0de", "parentId": last["id"], "timestamp": last["timestamp"],
                  "message": {"role": "user", "content": [{"type": "text", "text": "one more thing"}],
                              "timestamp": 1}}
    session.write_text(recorded.read_text() + json.dumps(unanswered) + "\n")
    report = tmp_path / "report.json"
    r = run_stree("-s", session, "replay", "--serve", "--drive", " ".join(pi_command()), "--report", report,
                  cwd=scratch(tmp_path / "checkout"), timeout=180)
    assert r.code == 0, r
    data = json.loads(report.read_text())
    assert data["drive"]["userMessages"] == data["drive"]["sent"] == len(PROMPTS) and data["divergences"] == []


def test_a_users_bang_command_is_run_again_and_its_new_output_still_matches(tmp_path):
    # `!date +%N` prints something new each time: the fingerprint keeps the command only
    prompts = ["list the files", {"bash": "date +%N"}, "read notes.txt"]
    server = ScriptedServer([Answer(calls=[("bash", {"command": "ls"})]), Answer("I see notes.txt."),
                             Answer(calls=[("read", {"path": "notes.txt"})]), Answer(f"It says: {NOTE}.")])
    try:
        session = record_with_pi(prompts, server.url, scratch(tmp_path / "work"), tmp_path / "home")
    finally:
        server.close()
    replayed, report = tmp_path / "replayed.jsonl", tmp_path / "report.json"
    r = run_stree("-s", session, "replay", "--serve", "--drive", " ".join(pi_command()), "--report", report,
                  "--session-out", replayed, cwd=scratch(tmp_path / "checkout"), timeout=180)
    assert r.code == 0, r
    data = json.loads(report.read_text())
    assert data["divergences"] == [] and data["answered"] == 4 and data["drive"]["sent"] == 3
    runs = [e["message"] for e in entries(replayed) if e["type"] == "message"
            and e["message"]["role"] == "bashExecution"]
    recorded_runs = [e["message"] for e in entries(session) if e["type"] == "message"
                     and e["message"]["role"] == "bashExecution"]
    assert [m["command"] for m in runs] == ["date +%N"]
    assert runs[0]["output"] != recorded_runs[0]["output"]


def serve(recorded, tmp_path, *args):
    """`stree replay --serve` in the background; returns (process, url)."""
    proc = subprocess.Popen([sys.executable, "-m", "stree", "-s", str(recorded), "replay", "--serve", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=interruptible)
    url = proc.stdout.readline().decode().strip()  # the first line: where to point the agent
    assert url.startswith("http://127.0.0.1:"), (url, proc.stderr.read1(4000) if url == "" else "")
    return proc, url


def finish(proc, sig=signal.SIGTERM):
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out.decode(), err.decode()


def test_a_changed_prompt_diverges_at_its_turn(recorded, tmp_path):
    report = tmp_path / "report.json"
    proc, url = serve(recorded, tmp_path, "--report", report)
    try:
        changed = [PROMPTS[0], "read the notes file", PROMPTS[2]]
        session = record_with_pi(changed, url, scratch(tmp_path / "checkout"), tmp_path / "home")
    finally:
        code, out, err = finish(proc)
    assert code == 1, (out, err)
    data = json.loads(report.read_text())
    first = data["divergences"][0]
    # the first two requests (turn 1 and its tool round) were answered; the third diverged
    assert data["answered"] == 2 and first["request"] == 3
    recorded_answer = messages(recorded, "assistant")[2]  # the answer to "read notes.txt"
    assert first["nearestTurn"]["entryId"] == recorded_answer["id"]
    assert "'read notes.txt'" in first["differences"][0] and "'read the notes file'" in first["differences"][0]
    # pi showed the error and kept it as the turn's error message
    failed = messages(session, "assistant")[2]["message"]
    assert failed["stopReason"] == "error" and "diverged from the recording" in failed["errorMessage"]
    assert "request 3 diverged" in out


def post(url, body):
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers["content-type"], response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["content-type"], e.read().decode()


def test_plain_json_answers_and_ctrl_c(recorded, tmp_path):
    report = tmp_path / "report.json"
    proc, url = serve(recorded, tmp_path, "--report", report)
    try:
        status, ctype, text = post(url + "/v1/chat/completions",
                                   {"model": "x", "messages": [{"role": "system", "content": "any"},
                                                               {"role": "user", "content": "list  the files\n"}]})
        assert status == 200 and ctype == "application/json"
        message = json.loads(text)["choices"][0]
        assert message["finish_reason"] == "tool_calls"
        assert message["message"]["tool_calls"][0]["function"]["name"] == "bash"
        assert json.loads(message["message"]["tool_calls"][0]["function"]["arguments"]) == {"command": "ls"}

        status, _, text = post(url + "/v1/messages", {"model": "x", "max_tokens": 10, "messages": [
            {"role": "user", "content": [{"type": "text", "text": "list the files"}]}]})
        answer = json.loads(text)
        assert status == 200 and answer["stop_reason"] == "tool_use" and answer["content"][0]["name"] == "bash"

        status, _, text = post(url + "/v1/messages", {"model": "x", "max_tokens": 10, "messages": [
            {"role": "user", "content": "something else"}]})
        assert status == 400 and "diverged" in json.loads(text)["error"]["message"]
    finally:
        code, out, err = finish(proc, signal.SIGINT)
    assert code == 130, err
    data = json.loads(report.read_text())
    assert data["interrupted"] is True and data["requests"] == 3 and len(data["divergences"]) == 1


def test_an_agent_that_never_settles_is_stopped_at_the_turn_deadline(recorded, tmp_path):
    # reads its prompts and never answers
    silent = f"{sys.executable} -c 'import sys\nfor line in sys.stdin: pass'"
    r = run_stree("-s", recorded, "replay", "--serve", "--drive", silent, "--turn-timeout", "1", cwd=tmp_path)
    assert r.code == 5, r
    assert "did not finish user message 1 within 1s" in r.err


def test_an_agent_that_exits_is_an_error(recorded, tmp_path):
    r = run_stree("-s", recorded, "replay", "--serve", "--drive", "false", cwd=tmp_path)
    assert r.code == 5, r
    assert "the agent exited (code 1)" in r.err


def test_usage_errors(recorded, tmp_path):
    assert run_stree("-s", recorded, "replay", "--drive", "pi --mode rpc").code == 2
    r = run_stree("-s", recorded, "replay", "--serve", "--drive", "'unbalanced")
    assert r.code == 2 and "--drive" in r.err
    r = run_stree("replay", "--serve", "--drive", "no-such-agent-xyz", "-s", recorded, cwd=tmp_path)
    assert r.code == 5 and "cannot start no-such-agent-xyz" in r.err
    assert not os.path.exists(tmp_path / "report.json")


def test_ctrl_c_stops_the_agent_and_writes_the_report(recorded, tmp_path):
    pid_file = tmp_path / "agent.pid"
    # an agent that reads its prompts and never answers; it says where it runs
    agent = (f"{sys.executable} -c 'import os, sys\nopen(\"{pid_file}\", \"w\").write(str(os.getpid()))\n"
             "for line in sys.stdin: pass'")
    report = tmp_path / "report.json"
    proc = subprocess.Popen([sys.executable, "-m", "stree", "-s", str(recorded), "replay", "--serve", "--drive", agent,
                             "--report", str(report)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=interruptible, cwd=tmp_path)
    while b"user message 1/3" not in proc.stderr.readline():
        assert proc.poll() is None, proc.stderr.read()
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text():  # the agent is up
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    data = json.loads(report.read_text())
    assert data["interrupted"] is True and data["drive"]["sent"] == 1 and not data["ok"]
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the agent is gone


def test_a_warning_when_recorded_calls_name_the_recorded_directory(tmp_path):
    from builders import SessionBuilder

    work = tmp_path / "work"
    b = SessionBuilder(cwd=str(work))
    b.user("fix it")
    b.assistant(None, tools=[("edit", {"path": f"{work}/src/x.py", "oldText": "a", "newText": "b"})])
    b.tool_result(b.entries[-1]["message"]["content"][0]["id"], "edit", "ok")
    b.assistant("done")
    session = b.write(tmp_path / "s.jsonl")
    elsewhere = scratch(tmp_path / "checkout")
    r = run_stree("-s", session, "replay", "--serve", "--drive", "false", cwd=elsewhere)
    assert f"1 recorded tool call(s) name {work} by absolute path (first: edit in" in r.err
    assert f"they act there, not in {elsewhere}" in r.err
    r = run_stree("-s", session, "replay", "--serve", "--drive", "false", cwd=scratch(work))
    assert "absolute path" not in r.err  # replayed where it was recorded
