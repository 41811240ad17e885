"""The corners where stree differed from pi 1.6.0 (issue 26), each tried on a file pi wrote with
its own writers and checked against what the real pi says of it: the context at an empty
leaf, a checkout of the marker standing there, a fork keeping the session name, and @{N}
after pi's own appends."""

import base64
import hashlib
import json
import os
import subprocess
import sys

import pytest

from corpus_pi15 import Steps, write
from pi_harness import pi, pi_rpc, pi_write


@pytest.fixture
def home(isolated_home):
    (isolated_home / "proj").mkdir()
    return isolated_home


def entries_of(path):
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def two_turns(home, path):
    b = Steps()
    u1 = b.user("first question")
    b.text("first answer")
    b.user("second question")
    b.text("second answer")
    write(path, b, home)
    return [e["id"] for e in entries_of(path)], u1


def test_context_at_the_empty_leaf_is_empty_as_pi_says(stree, home, tmp_path):
    path = tmp_path / "s.jsonl"
    ids, _ = two_turns(home, path)
    assert stree("-s", path, "checkout", ids[0]).code == 0  # the root user message: the empty leaf
    r = stree("-s", path, "context", "--json")
    assert r.code == 0, r
    seen = pi("inspect", path)
    assert seen["leafId"] == entries_of(path)[-1]["id"]  # pi's leaf: the marker stree appended
    assert json.loads(r.out) == seen["context"] and seen["context"]["messages"] == []
    (answer,) = pi_rpc(path, ["get_messages"])["responses"]
    assert answer["data"]["messages"] == []
    assert stree("-s", path, "context").code == 0
    for rev in ("@~1", "@^"):  # an ancestor of the empty leaf is still an error
        assert stree("-s", path, "context", rev).code == 3


def test_checking_out_the_marker_at_the_empty_leaf_writes_nothing(stree, home, tmp_path):
    path = tmp_path / "s.jsonl"
    ids, _ = two_turns(home, path)
    assert stree("-s", path, "checkout", ids[0]).code == 0
    marker = entries_of(path)[-1]["id"]
    before = path.read_bytes()
    nav = pi("navigate", path, marker)  # pi on a copy: the marker is its leaf, /tree does nothing
    assert nav["noop"] is True and nav["appendedEntries"] == []
    r = stree("-s", path, "checkout", marker)
    assert r.code == 0, r
    assert "already at this point" in r.err
    assert path.read_bytes() == before


def test_checking_out_the_marker_at_the_empty_leaf_from_elsewhere_goes_there(stree, home, tmp_path):
    path = tmp_path / "s.jsonl"
    ids, _ = two_turns(home, path)
    assert stree("-s", path, "checkout", ids[0]).code == 0
    marker = entries_of(path)[-1]["id"]
    assert stree("-s", path, "checkout", ids[3]).code == 0
    nav = pi("navigate", path, marker)
    r = stree("-s", path, "checkout", marker)
    assert r.code == 0, r
    assert pi("inspect", path)["context"] == nav["context"] and nav["context"]["messages"] == []
    assert stree("-s", path, "rev-parse", "@").code == 3  # @ is the empty leaf again


@pytest.mark.parametrize("where", ["at", "before"])
def test_fork_keeps_the_session_name_as_pis_clone_and_fork(stree, home, tmp_path, where):
    """pi's /clone copies the path to its leaf, the session_info given there included; /fork
    (before a user message) copies the path to the message's parent, with the names on it."""
    path = tmp_path / "s.jsonl"
    b = Steps()
    b.user("first question")
    b.text("first answer")
    b.call("appendSessionInfo", "early name")
    u2 = b.user("second question")
    b.text("second answer")
    b.call("appendSessionInfo", "my work")
    write(path, b, home)
    entries = entries_of(path)
    target = entries[-1]["id"] if where == "at" else entries[3]["id"]  # pi's leaf / the second question
    theirs = pi("clone", path, target, *(["--position", "before"] if where == "before" else []))
    out = tmp_path / "fork.jsonl"
    args = ["fork", "-o", out] if where == "at" else ["fork", "--before", entries[3]["id"], "-o", out]
    r = stree("-s", path, *args)
    assert r.code == 0, r
    assert entries_of(out) == theirs["entries"]
    name = pi("inspect", out)["name"]
    assert name == ("my work" if where == "at" else "early name")
    assert stree("-s", out, "name").out.strip() == name


def test_at_n_after_a_checkout_is_where_pis_appends_left_the_leaf(stree, home, tmp_path):
    path = tmp_path / "s.jsonl"
    ids, _ = two_turns(home, path)
    assert stree("-s", path, "checkout", ids[1]).code == 0  # back to the first answer
    appended = pi_write(path, [["appendMessage", {"role": "user", "content": "third question", "timestamp": 5}],
                               ["appendMessage", {"role": "user", "content": "fourth question", "timestamp": 6}]])
    leaf = pi("inspect", path)["leafId"]  # L: reached by pi's own appends since the last checkout
    assert leaf == appended["ids"][-1]
    assert stree("-s", path, "checkout", ids[3]).code == 0
    reflog = [json.loads(x) for x in stree("-s", path, "reflog", "--json").out.splitlines()]
    assert [(m["kind"], m["id"]) for m in reflog[:4]] == [
        ("checkout", ids[3]), ("commit", appended["ids"][1]), ("commit", appended["ids"][0]), ("checkout", ids[1])]
    assert reflog[1]["from"] == appended["ids"][0] and reflog[2]["from"] == ids[1]
    human = stree("-s", path, "reflog", "-n", "2").out.splitlines()
    assert human[1].startswith(f"{leaf} @{{1}}: commit: ") and "fourth question" in human[1]
    assert stree("-s", path, "rev-parse", "@{1}").out == f"{leaf}\n"
    assert stree("-s", path, "rev-parse", "HEAD@{2}").out == f"{appended['ids'][0]}\n"
    assert stree("-s", path, "checkout", "-").code == 0  # as git: back to where the last checkout left
    assert stree("-s", path, "rev-parse", "@").out == f"{leaf}\n"


# -- serve: pi 1.6.0's get_last_assistant_text and get_fork_messages ----------------------


def served(path, commands):
    """stree serve's responses to `commands` (each checked against serve.schema.json)."""
    from serve_kit import Server

    server = Server(path)
    try:
        out = []
        for i, c in enumerate(commands):
            server.send({"id": f"harness-{i}", "type": c})
            out.append(server.response())
        return out
    finally:
        assert server.close() == 0


def assistant(b, content, stop):
    return b.assistant(content, stopReason=stop)


LAST_TEXT = {
    # 1.6.0 skips the text-less ends that are not "stop"; 1.5.2 skipped only an empty aborted one
    "skips": lambda b: [assistant(b, [{"type": "text", "text": "the answer"}], "stop"),
                        b.tool("c1", "read", {"path": "a.txt"}),
                        assistant(b, [], "aborted"),
                        assistant(b, [{"type": "text", "text": "  \n"}], "error")],
    # a reply that ended normally stays the last one, text or not
    "stop_without_text": lambda b: [assistant(b, [{"type": "text", "text": "older"}], "stop"),
                                    assistant(b, [{"type": "thinking", "thinking": "hm"}], "stop")],
    "joined_and_trimmed": lambda b: [assistant(b, [{"type": "text", "text": "  one "},
                                                   {"type": "toolCall", "id": "c", "name": "x", "arguments": {}},
                                                   {"type": "text", "text": "two\n"}], "toolUse")],
}


@pytest.mark.parametrize("case", sorted(LAST_TEXT))
def test_get_last_assistant_text_answers_as_pi(home, tmp_path, case):
    path = tmp_path / f"{case}.jsonl"
    b = Steps()
    b.user("question")
    LAST_TEXT[case](b)
    write(path, b, home)
    commands = ["get_last_assistant_text", "get_fork_messages"]
    theirs = pi_rpc(path, commands)["responses"]
    assert served(path, commands) == theirs
    older = pi_rpc(path, commands, version="1.5.2")["responses"]
    if case == "skips":
        assert theirs[0]["data"] == {"text": "the answer"}
        assert older[0]["data"] == {}  # 1.5.2 stopped at the failed reply with blank text
    else:
        assert older == theirs


def test_get_fork_messages_answers_as_pi(home, tmp_path):
    """Every user message with text, on every branch, in file order; an image-only one left out."""
    path = tmp_path / "f.jsonl"
    b = Steps()
    first = b.user("first question")
    b.text("answer")
    b.call("appendMessage", {"role": "user", "content": [{"type": "text", "text": "two "},
                                                         {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                                                         {"type": "text", "text": "blocks"}], "timestamp": 3})
    b.call("appendMessage", {"role": "user", "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
                             "timestamp": 4})
    b.call("branch", first)
    b.user("on another branch")
    write(path, b, home)
    theirs = pi_rpc(path, ["get_fork_messages"])["responses"]
    assert [m["text"] for m in theirs[0]["data"]["messages"]] == ["first question", "two blocks",
                                                                  "on another branch"]
    assert served(path, ["get_fork_messages"]) == theirs


# -- oh-my-pi 18's compactions replayed by the provider ----------------------------------
# Built from omp 18.3.4's source (npm @oh-my-pi/pi-coding-agent, src/session/session-context.ts,
# buildSessionContext; omp itself is not run here: some of its @oh-my-pi/* dependencies are
# missing from the registry): a compaction with OpenAI's remote replacement history keeps the
# entries after providerReplayThroughEntryId (none without one); an Anthropic snapshot
# (firstKeptEntryId "") keeps the entries after it; any other compaction keeps from
# firstKeptEntryId, as pi.

REMOTE = {"openaiRemoteCompaction": {"provider": "openai", "replacementHistory": [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Preserved user"}]},
    {"type": "compaction", "encrypted_content": "enc"}], "compactionItem": {"type": "compaction",
                                                                          "encrypted_content": "enc"}}}
NATIVE = {"anthropicCompaction": {"provider": "anthropic", "content": "native summary", "signature": "sig"}}

OMP = {  # case: (firstKeptEntryId, providerReplayThroughEntryId, preserveData, the ids kept)
    "remote_snapshot": ("", "a1", REMOTE, ["u2", "a2", "u3"]),
    "anthropic_snapshot": ("", "a1", NATIVE, ["u2", "a2", "u3"]),
    "remote_after_first_kept": ("u1", "a2", REMOTE, ["u3"]),  # the replay, not firstKeptEntryId, decides
    "remote_without_replay_id": ("u2", None, REMOTE, []),
    "snapshot_without_payload": ("", "a1", {}, []),  # pi's rule: "" names no entry
    "anthropic_with_first_kept": ("u2", "u3", NATIVE, ["u2", "a2", "u3"]),  # not a snapshot: pi's rule
}


def omp_file(path, first, replay, preserve):
    header = {"type": "session", "version": 3, "id": "0199aaaa-omp", "timestamp": "2026-11-01T00:00:00.000Z",
              "cwd": "/tmp"}
    lines, parent = [header], None
    for n, (id, role, text) in enumerate([("u1", "user", "q1"), ("a1", "assistant", "a1"), ("u2", "user", "q2"),
                                          ("a2", "assistant", "a2"), ("u3", "user", "q3")]):
        message = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": n}
        if role == "assistant":
            message.update(provider="openai", model="gpt-5", stopReason="stop", api="openai-responses")
        lines.append({"type": "message", "id": id, "parentId": parent,
                      "timestamp": f"2026-11-01T00:00:0{n}.000Z", "message": message})
        parent = id
    compaction = {"type": "compaction", "id": "c1", "parentId": parent, "timestamp": "2026-11-01T00:00:06.000Z",
                  "summary": "S", "firstKeptEntryId": first, "tokensBefore": 100, "method": "remote"}
    if replay is not None:
        compaction["providerReplayThroughEntryId"] = replay
    if preserve:
        compaction["preserveData"] = preserve
    lines.append(compaction)
    lines.append({"type": "message", "id": "u4", "parentId": "c1", "timestamp": "2026-11-01T00:00:07.000Z",
                  "message": {"role": "user", "content": "after", "timestamp": 7}})
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    return {e["id"]: e for e in lines[1:]}


@pytest.mark.parametrize("case", sorted(OMP))
def test_omp_provider_replayed_compactions_keep_what_omp_keeps(stree, tmp_path, isolated_home, case):
    first, replay, preserve, kept = OMP[case]
    path = tmp_path / f"{case}.jsonl"
    entries = omp_file(path, first, replay, preserve)
    want = [entries[id]["message"] for id in kept] + [entries["u4"]["message"]]
    for args in ([], ["--no-cache"], []):  # the index (built by the first run) answers as a plain parse
        r = stree(*args, "-s", path, "context", "--json")
        assert r.code == 0, r
        messages = json.loads(r.out)["messages"]
        assert messages[0]["role"] == "compactionSummary" and messages[0]["summary"] == "S"
        assert messages[1:] == want
    r = stree("-s", path, "context", "--json", "c1")  # at the compaction itself
    assert json.loads(r.out)["messages"][1:] == want[:-1]
    for args in ([], ["--no-cache"]):  # a snapshot's firstKeptEntryId "" is omp's, not a dangling id
        r = stree(*args, "-s", path, "fsck")
        assert r.code == 0 and "firstKeptEntryId" not in r.out + r.err, r


# -- sessions pi cannot open: inline images (pi#9613) ---------------------------------------

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4).decode()


def _without_images(value):
    """The entry as the fork must write it: each image block a text block (checked apart)."""
    if isinstance(value, dict):
        return {k: _without_images(v) for k, v in value.items()}
    if isinstance(value, list):
        return ["IMAGE" if isinstance(v, dict) and v.get("type") == "image" else _without_images(v) for v in value]
    return value


def _texts_for_images(value, out):
    if isinstance(value, dict):
        for v in value.values():
            _texts_for_images(v, out)
    elif isinstance(value, list):
        for v in value:
            if isinstance(v, dict) and v.get("type") == "text" and v.get("text", "").startswith("[image removed: "):
                out.append(v["text"])
            else:
                _texts_for_images(v, out)
    return out


@pytest.mark.parametrize("how", ["drop", "extract"])
def test_fork_without_images_is_a_file_pi_opens_with_its_tree_and_text(stree, home, tmp_path, how):
    path = tmp_path / "shots.jsonl"
    b = Steps()
    image = {"type": "image", "data": PNG, "mimeType": "image/png"}
    first = b.call("appendMessage", {"role": "user", "timestamp": 1, "content": [
        {"type": "text", "text": "what is on this screenshot?"}, image]})
    b.assistant([{"type": "toolCall", "id": "r1", "name": "read", "arguments": {"path": "b.png"}}],
                stopReason="toolUse")
    b.call("appendMessage", {"role": "toolResult", "toolCallId": "r1", "toolName": "read", "isError": False,
                             "timestamp": 3, "content": [{"type": "text", "text": "Read image file [image/png]"},
                                                         image]})
    b.text("a login form")
    b.call("appendLabelChange", first, "shot")
    b.call("appendSessionInfo", "screenshots")
    write(path, b, home)
    source = pi("inspect", path)
    out, shots = tmp_path / "light.jsonl", tmp_path / "shots"
    flag = ["--drop-images"] if how == "drop" else ["--extract-images", shots]
    r = stree("-s", path, "fork", "--full", *flag, "-o", out)
    assert r.code == 0, r
    assert "2 image(s) taken out" in r.err
    light = pi("inspect", out)  # the real pi 1.6.0 opens it: the same tree, labels, name and text
    assert light["tree"] == source["tree"] and light["leafId"] == source["leafId"]
    assert light["labels"] == source["labels"] and light["name"] == "screenshots"
    notes = _texts_for_images(light["context"], [])
    assert len(notes) == 2 and '"type": "image"' not in json.dumps(light["entries"])
    digest = hashlib.sha256(base64.b64decode(PNG)).hexdigest()
    size = len(base64.b64decode(PNG))
    for note in notes:
        assert note.startswith(f"[image removed: image/png, {size / 1e3:.1f} kB, sha256 {digest}")
        if how == "extract":
            saved = shots / f"{digest}.png"
            assert note == f"[image removed: image/png, {size / 1e3:.1f} kB, sha256 {digest}, saved as {saved}]"
            assert saved.read_bytes() == base64.b64decode(PNG)
        else:
            assert note.endswith(f"sha256 {digest}]") and not shots.exists()
    # each image's place: the text block stands where the image block stood
    assert len(light["entries"]) == len(source["entries"])
    for before, after in zip(source["entries"], light["entries"]):
        assert _without_images(before) == _image_notes_as_images(after)


def _image_notes_as_images(value):
    if isinstance(value, dict):
        return {k: _image_notes_as_images(v) for k, v in value.items()}
    if isinstance(value, list):
        return ["IMAGE" if isinstance(v, dict) and str(v.get("text", "")).startswith("[image removed: ")
                else _image_notes_as_images(v) for v in value]
    return value


def test_a_session_of_big_inline_images_is_read_in_bounded_memory(stree, tmp_path):
    """300 MB of 2 MB base64 screenshots (pi#9613's file, smaller): stree's peak memory, counted
    by the kernel (ru_maxrss of a child), stays under half the file's size while it lists,
    checks and forks it without the images; pi 1.6.0 opens the fork."""
    path = tmp_path / "heavy.jsonl"
    image = base64.b64encode(os.urandom(1_500_000)).decode()
    with open(path, "w") as f:
        f.write(json.dumps({"type": "session", "version": 3, "id": "0199aaaa-heavy",
                            "timestamp": "2026-11-01T00:00:00.000Z", "cwd": str(tmp_path)}) + "\n")
        parent = None
        for i in range(150):
            shot = [{"type": "text", "text": f"screenshot {i}"},
                    {"type": "image", "data": image, "mimeType": "image/png"}]
            for id, message in ((f"u{i:07d}", {"role": "user", "timestamp": i, "content": shot}),
                                (f"a{i:07d}", {"role": "assistant", "timestamp": i, "stopReason": "stop",
                                               "content": [{"type": "text", "text": f"seen {i}"}]})):
                f.write(json.dumps({"type": "message", "id": id, "parentId": parent,
                                    "timestamp": "2026-11-01T00:00:00.000Z", "message": message}) + "\n")
                parent = id
    size = path.stat().st_size
    assert size > 300e6
    out = tmp_path / "light.jsonl"
    for args in (["log", "-n", "5"], ["fsck"], ["fork", "--full", "--drop-images", "-o", out]):
        code, peak, err = peak_rss(["-s", path, *args])
        assert code == 0, (args, err)
        assert peak < size / 2, (args, peak, size)  # measured: ~70 MB; the bound is far above that
    light = pi("inspect", out)
    assert len(light["entries"]) == 300 and light["leafId"] == "a0000149"
    assert [m["content"][0]["text"] for m in light["context"]["messages"][-2:]] == ["screenshot 149", "seen 149"]
    assert light["context"]["messages"][-2]["content"][1]["text"].startswith("[image removed: image/png, 1.5 MB")


def peak_rss(args):
    """(exit code, peak resident memory in bytes, stderr) of one `python -m stree` run, from a
    wrapper process that has no other child (ru_maxrss of RUSAGE_CHILDREN: the largest child)."""
    wrapper = ("import resource, subprocess, sys\n"
               "r = subprocess.run([sys.executable, '-m', 'stree', *sys.argv[1:]], stdout=subprocess.DEVNULL,"
               " stderr=subprocess.PIPE)\n"
               "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n"
               "sys.stdout.write(r.stderr.decode(errors='replace')[-500:])\n")
    proc = subprocess.run([sys.executable, "-c", wrapper, *map(str, args)], capture_output=True, text=True,
                          timeout=600)
    first, _, rest = proc.stdout.partition("\n")
    code, peak = map(int, first.split())
    return code, peak, rest
