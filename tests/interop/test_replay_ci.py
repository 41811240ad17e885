"""The README's "Replay in CI" job, examples/replay-ci.sh, run as CI runs it: a session the
real pi 1.6.0 recorded, a candidate model on a loopback server, and the real pi re-running
the session in a scratch checkout against `stree replay --serve`."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from conftest import ROOT
from llm_server import name_keys_for_this_server
from scripted_llm import Answer, ScriptedServer, pi_command, record_with_pi

SCRIPT = ROOT / "examples" / "replay-ci.sh"
NOTE = "remember the milk"
ANSWERS = [Answer(calls=[("bash", {"command": "ls"})]), Answer("I see notes.txt."),
           Answer(calls=[("read", {"path": "notes.txt"})]), Answer(f"It says: {NOTE}.")]


def checkout(path):
    path.mkdir(parents=True)
    (path / "notes.txt").write_text(NOTE + "\n")
    return path


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    base = tmp_path_factory.mktemp("ci")
    server = ScriptedServer(ANSWERS)
    try:
        return record_with_pi(["list the files", "read notes.txt"], server.url, checkout(base / "work"), base / "home")
    finally:
        server.close()


def run_job(tmp_path, session, server, **extra):
    """The script with `stree` on PATH and the candidate model at the loopback server."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "stree").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m stree "$@"\n')
    (bin_dir / "stree").chmod(0o755)
    name_keys_for_this_server()  # the key variable for this server, as a user names it in the config
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", REPLAY_BASE_URL=server.url + "/v1",
               OPENAI_API_KEY="sk-ci-0123456789", REPLAY_OUT=str(tmp_path / "report"), **extra)
    return subprocess.run(["bash", str(SCRIPT), str(session), "candidate-model"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


def failures(junit):
    suite = ET.parse(junit).getroot().find("testsuite")
    return int(suite.get("tests")), int(suite.get("failures"))


def test_the_ci_job_passes_when_model_and_agent_agree(recorded, tmp_path):
    server = ScriptedServer(ANSWERS, id_prefix="cand_")
    try:
        r = run_job(tmp_path, recorded, server, REPLAY_AGENT=" ".join(pi_command()),
                    REPLAY_CHECKOUT=str(checkout(tmp_path / "scratch")))
    finally:
        server.close()
    assert r.returncode == 0, (r.stdout, r.stderr)
    report = tmp_path / "report"
    assert failures(report / "junit.xml") == (4, 0)
    assert "4 turns replayed, 0 diverged" in (report / "turns.txt").read_text()
    cassette = json.loads((report / "cassette.json").read_text())
    assert cassette["ok"] and cassette["answered"] == 4 and cassette["divergences"] == []
    agent = [json.loads(line) for line in (report / "agent-session.jsonl").read_text().splitlines()]
    results = [e["message"] for e in agent if e.get("message", {}).get("role") == "toolResult"]
    assert NOTE in results[-1]["content"][0]["text"]  # pi read the scratch checkout's file for real
    assert "the agent re-ran the session without diverging" in r.stderr


def test_the_ci_job_fails_on_a_divergence_and_keeps_the_report(recorded, tmp_path):
    changed = list(ANSWERS)
    changed[2] = Answer(calls=[("bash", {"command": "cat notes.txt"})])
    server = ScriptedServer(changed, id_prefix="cand_")
    try:
        r = run_job(tmp_path, recorded, server)
    finally:
        server.close()
    assert r.returncode == 1, (r.stdout, r.stderr)
    report = tmp_path / "report"
    assert failures(report / "junit.xml") == (4, 1)
    failed = [c.get("name") for c in ET.parse(report / "junit.xml").getroot().iter("testcase")
              if c.find("failure") is not None]
    assert failed[0].startswith("turn 3 ")
    assert (report / "replayed.jsonl").exists() and "some turns diverged" in r.stderr


def test_the_ci_job_says_how_to_call_it(tmp_path):
    r = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 2 and "usage:" in r.stderr
