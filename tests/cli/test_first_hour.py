"""The smaller things a new user met in the first hour (issue 27 item 6), each driven as the
user did it: `p=$(stree fork --before ...)`, `checkout` of a user message pi wrote after a
label, the subcommand man pages on global options, a summary against a server that refuses
connections, and completion's revisions."""

import json
import os
import re
import socket
import subprocess
import sys

import pytest

from builders import SessionBuilder
from conftest import ROOT


def test_fork_before_in_a_command_substitution(stree, demo, tmp_path):
    shell = (f'p=$({sys.executable} -m stree -s "{demo}" fork --before a6e6657a) && '
             f'{sys.executable} -m stree -s "$p" log -1 --format "{{id}}"')
    r = subprocess.run(["sh", "-c", shell], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "edc2c8c2"  # the new session, at the message's parent
    assert r.stderr.startswith("Change of plan: instead of a --strict flag")  # the text to send again
    made = json.loads(stree("-s", demo, "fork", "--before", "a6e6657a", "--json").out)
    assert made["text"].startswith("Change of plan") and os.path.exists(made["path"])


def test_checkout_of_a_user_message_after_a_label_says_what_at_names(stree, tmp_path):
    b = SessionBuilder()
    first = b.user("first question")
    answer = b.assistant("first answer")
    b.append("label", targetId=first, label="start")  # pi appends a label into the chain...
    asked = b.user("second question")  # ...and the next message's parent is the label entry
    b.assistant("second answer")
    path = b.write(tmp_path / "s.jsonl")
    assert json.loads(path.read_text().splitlines()[-2])["parentId"] != answer
    for fast in ("", "1"):
        copy = tmp_path / f"c{fast}.jsonl"
        copy.write_bytes(path.read_bytes())
        r = stree("-s", copy, "checkout", asked, env={"STREE_NO_FAST": fast})
        assert r.code == 0, r
        at = stree("-s", copy, "rev-parse", "@").out.strip()
        assert at == answer
        assert re.search(r"now at (\S+)", r.err).group(1) == at, r.err


def test_checkout_with_a_summary_says_the_summary_is_at(stree, demo):
    r = stree("-s", demo, "checkout", "dd3d7fdd", "--summarize", "--provider", "extractive")
    assert r.code == 0, r
    at = stree("-s", demo, "rev-parse", "@").out.strip()
    assert json.loads(demo.read_text().splitlines()[-1])["id"] == at  # the branch summary entry
    assert re.search(r"now at (\S+)", r.err).group(1) == at, r.err


def test_subcommand_man_pages_say_global_options_go_before_or_after(stree, tmp_path):
    pages = sorted((ROOT / "man").glob("stree-*.1"))
    assert pages
    for page in pages:
        text = page.read_text()
        assert "go before the" not in text, page
        assert "may come before or" in text, page
    # as the code does: before and after give the same answer
    assert stree("-s", "demo", "log", "-2").out == stree("log", "-s", "demo", "-2").out


def refused_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now: connections are refused
    return port


@pytest.mark.slow  # (stree's real back-off: 1 s, then 2 s; make test runs it, make check does not)
def test_a_summary_against_a_server_refusing_connections_says_it_retries(stree, isolated_home):
    config = isolated_home / ".config" / "stree" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("max_retries = 2\n")
    url = f"http://127.0.0.1:{refused_port()}/v1"
    r = stree("-s", "demo", "summarize", "--to", "@~3", "--provider", "openai", "--model", "m", "--base-url", url,
              env={"OPENAI_API_KEY": "sk-test"})
    assert r.code == 5, r
    lines = r.err.splitlines()
    retries = [line for line in lines if "retrying in" in line]
    assert len(retries) == 2, r.err  # a line a retry, as it happens
    assert all("cannot reach" in line and "127.0.0.1" in line for line in retries)
    assert "(retry 1 of 2)" in retries[0] and "(retry 2 of 2)" in retries[1]
    assert lines[-2].startswith("stree: error: ") and lines[-1].startswith("hint: ")


def test_completion_offers_no_marker_or_label_entry_ids(stree, demo):
    assert stree("-s", demo, "checkout", "dd3d7fdd", "--label", "tried").code == 0  # a marker and a label entry
    bookkeeping = {e["id"] for e in map(json.loads, demo.read_text().splitlines()[1:])
                   if e["type"] == "label" or (e["type"] == "custom" and e.get("customType") == "stree/checkout")}
    assert len(bookkeeping) >= 4
    every = {e["id"] for e in map(json.loads, demo.read_text().splitlines()[1:])}
    for fast in ("", "1"):  # the table stree answers from, and click's definitions (the reference)
        r = stree("__complete", "bash", "", "--", "-s", str(demo), "show", "", env={"STREE_NO_FAST": fast})
        assert r.code == 0, r
        offered = {line.split("\t")[1] for line in r.out.splitlines()[1:]}
        assert {"tried", "bug-found", "@"} <= offered  # labels and the specials are offered
        assert offered & every  # entries too
        assert not offered & bookkeeping, offered & bookkeeping
        # a prefix of a marker's id offers nothing of it either
        marker = sorted(bookkeeping)[0]
        r = stree("__complete", "bash", marker[:5], "--", "-s", str(demo), "show", marker[:5],
                  env={"STREE_NO_FAST": fast})
        assert marker not in r.out
