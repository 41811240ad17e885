"""`stree summarize`: a branch summarised by a model, decoding only the abandoned branch
(counted, not timed), and what it says when the model's server cannot be reached."""

import json
import socket

import pytest

from decode_count import compacted, decoded, stats_run


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


def test_summarize_decodes_only_the_abandoned_branch(tmp_path, stree):
    path, ids = compacted(tmp_path, 20000, 200, 20)
    b = ids["builder"]
    b.at(ids["branch_at"])
    for i in range(15):
        b.user(f"side {i}")
        b.assistant(f"side answer {i}")
    b.write(path)
    stats_run(stree, path, "rev-parse", "@")
    for args in (("--prompt",), ("--prompt", "--json")):
        r = stats_run(stree, path, "summarize", *args, "--to", ids["leaf"])
        assert r.code == 0, r
        # the 30 abandoned entries, the target and its parent; the session's model is the last
        # assistant's, its thinking level the index's
        assert decoded(r) <= 30 + 3, r.err
        assert r.raw == stree("--no-cache", "-s", path, "summarize", *args, "--to", ids["leaf"]).raw
    assert json.loads(r.out)["entryIds"] == [e["id"] for e in b.entries[-30:]]
