"""`stree summarize`: a branch summarised by a model, and what it says when the model's server
cannot be reached."""

import socket

import pytest


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
