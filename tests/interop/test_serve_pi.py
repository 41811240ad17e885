"""`stree serve` answers pi 1.5.2's session commands as the real `pi --mode rpc` does on the same
file: every response compared field by field (pi runs offline through the harness's `rpc`)."""

import json
import os

import pytest
from pi_harness import pi_rpc
from serve_kit import Server

from stree.storage.session import parse

COMMANDS = ["get_state", "get_messages", "get_entries", "get_tree", "get_session_stats"]
NO_AGENT = {"model", "thinkingLevel"}  # get_state: pi's running model (none offline), its clamped level


def prepared(src, tmp_path, name):
    """A copy of `src` pi opens as it is: its header cwd exists, and the thinking_level_change
    pi 1.5.2 appends to a branch without one is in the file already (pi wrote it)."""
    lines = src.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["cwd"] = str(tmp_path)
    lines[0] = json.dumps(header, separators=(",", ":"))
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pi_rpc(str(path), ["get_state"], in_place=True)
    return path


def sources(tmp_path):
    from builders import branchy
    from corpus import compactions, deep, many_roots

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = {"demo": tmp_path / "src-demo.jsonl"}
    out["demo"].write_bytes(open(os.path.join(root, "stree", "data", "demo.jsonl"), "rb").read())
    for name, builder in (("branchy", branchy()), ("roots", many_roots()), ("compactions", compactions()),
                          ("deep", deep())):
        out[name] = builder.write(tmp_path / f"src-{name}.jsonl")
    return out


def pi_answers(path, commands):
    answer = pi_rpc(str(path), commands)
    assert answer["exitCode"] == 0, answer["stderr"]
    assert not answer["appendedEntries"], "pi appended: the file was not prepared"
    return [r for r in answer["responses"]]


def ours(path, commands):
    server = Server(path)
    try:
        out = []
        for c in commands:
            c = {"type": c} if isinstance(c, str) else c
            server.n += 1
            server.send({"id": f"harness-{server.n - 1}", **c})
            out.append(server.response())
        return out
    finally:
        assert server.close() == 0


def same(pi_record, our_record, path):
    """Field by field: pi's session file path is its temp copy's; get_state's agent fields differ."""
    extra = {"errorCode", "hint"} if pi_record.get("success") is False else set()  # stree's typed errors
    assert set(our_record) - extra == set(pi_record), (our_record.keys(), pi_record.keys())
    if extra:
        assert our_record["errorCode"] in ("not_found", "bad_params", "unknown_command", "bad_file")
    for key in pi_record:
        if key != "data":
            assert our_record[key] == pi_record[key], key
    if not pi_record.get("success") or "data" not in pi_record:
        return
    theirs, mine = dict(pi_record["data"]), dict(our_record["data"])
    if "sessionFile" in theirs:
        assert os.path.basename(theirs.pop("sessionFile")) == os.path.basename(mine.pop("sessionFile"))
        assert mine.pop("sessionFile", None) is None
    if pi_record["command"] == "get_state":
        for key in NO_AGENT:
            theirs.pop(key, None)
        mine_level = mine.pop("thinkingLevel")
        assert isinstance(mine_level, str)
    assert set(mine) == set(theirs)
    for key in theirs:
        assert mine[key] == theirs[key], (pi_record["command"], key)


@pytest.mark.parametrize("name", ["demo", "branchy", "roots", "compactions", "deep"])
def test_read_commands_answer_as_pi(tmp_path, name):
    path = prepared(sources(tmp_path)[name], tmp_path, name)
    ids = [n.id for n in parse(str(path)).nodes]
    commands = COMMANDS + [{"type": "get_entries", "since": ids[len(ids) // 2]},
                           {"type": "get_entries", "since": ids[-1]},
                           {"type": "get_entries", "since": "no-such-id"},
                           {"type": "set_session_name", "name": "  "}, "no_such_command"]
    theirs = pi_answers(path, commands)
    mine = ours(path, commands)
    assert len(theirs) == len(mine) == len(commands)
    for t, m in zip(theirs, mine):
        if t.get("error") == "Maximum call stack size exceeded" and t["command"] == "get_tree":
            # pi's JSON.stringify of a 3000-deep chain overflows its stack; stree answers: the
            # nodes hold pi's entries (get_entries, compared above) in a chain, one child each
            assert name == "deep" and m["success"]
            entries = next(r for r in theirs if r["command"] == "get_entries")["data"]["entries"]
            node, chain = m["data"]["tree"][0], []
            while node:
                chain.append(node["entry"])
                node = node["children"][0] if node["children"] else None
            assert chain == entries
            continue
        same(t, m, path)


def test_writes_answer_and_write_as_pi(tmp_path):
    """set_session_name and fork: the same answers, and the same entries in the files."""
    path = prepared(sources(tmp_path)["demo"], tmp_path, "demo")
    user = next(n.id for n in parse(str(path)).nodes if n.type == "message" and n.role == "user"
                and n.parent is not None)
    commands = [{"type": "set_session_name", "name": " renamed "}, "get_state",
                {"type": "fork", "entryId": user}, {"type": "fork", "entryId": "nope"}]
    theirs = pi_rpc(str(path), commands)
    pi_appended = theirs["appendedEntries"]
    (tmp_path / "ours").mkdir()
    mine_path = tmp_path / "ours" / path.name
    mine_path.write_bytes(path.read_bytes())
    mine = ours(mine_path, commands)
    for t, m in zip(theirs["responses"], mine):
        same(t, m, path)
    # the name entry: pi's and ours, the same but for id and timestamp
    ours_appended = [json.loads(line) for line in mine_path.read_bytes()[len(path.read_bytes()):].splitlines()]
    strip = [{k: v for k, v in e.items() if k not in ("id", "timestamp")} for e in pi_appended]
    assert [{k: v for k, v in e.items() if k not in ("id", "timestamp")} for e in ours_appended] == strip


@pytest.mark.parametrize("how", ["clone", "fork"])
def test_fork_and_clone_write_the_file_pi_writes(tmp_path, how):
    """The new session holds the entries pi's own fork / clone writes, and is served next."""
    from pi_harness import pi

    path = prepared(sources(tmp_path)["branchy"], tmp_path, "branchy")
    nodes = parse(str(path)).nodes
    leaf = nodes[len(nodes) - 1].id
    user = [n.id for n in nodes if n.type == "message" and n.role == "user"][-1]
    server = Server(path)
    try:
        if how == "clone":
            assert server.data("clone") == {"cancelled": False}
            theirs = pi("clone", str(path), leaf, "--position", "at")
        else:
            data = server.data("fork", entryId=user)
            theirs = pi("clone", str(path), user, "--position", "before")
            assert data == {"text": theirs["selectedText"], "cancelled": False}
        state = server.data("get_state")
        new = state["sessionFile"]
        assert new != str(path) and os.path.dirname(new) == str(tmp_path)
        def label_ids_left_out(entries):  # (the labels re-appended at the end get new ids)
            return [{k: v for k, v in e.items() if not (e["type"] == "label" and k in ("id", "parentId"))}
                    for e in entries]

        assert label_ids_left_out(server.data("get_entries")["entries"]) == label_ids_left_out(theirs["entries"])
        header = json.loads(open(new).readline())
        assert header["parentSession"] == str(path) and header["cwd"] == theirs["header"]["cwd"]
        assert state["sessionId"] == header["id"] != theirs["header"]["id"]
    finally:
        assert server.close() == 0
