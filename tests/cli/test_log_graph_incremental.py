"""`log --graph` after appends: patched from the kept output, byte for byte what a full
drawing (--no-cache) prints, drawing only the rows the new entries change."""

import re
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings, strategies as st

from builders import branchy, dumps

ROOT = Path(__file__).resolve().parents[2]

OPTION_SETS = (
    ("--graph",),
    ("--graph", "--filter", "all"),
    ("--graph", "--filter", "no-tools", "--no-ids"),
    ("--graph", "--filter", "user-only"),
    ("--graph", "--filter", "labeled-only"),
    ("--graph", "--json"),
    ("--graph", "-n", "6"),
    ("--graph", "--format", "{id} {children} {leaf} {row}"),
    ("--color", "always", "log", "--graph"),
)


def drawn(result_err):
    m = re.search(r"graph rows drawn (\d+), kept (\d+)", result_err)
    return (int(m.group(1)), int(m.group(2))) if m else None


def how(result_err):
    m = re.search(r"graph rows drawn \d+, kept \d+ \(([\w ]+)\)", result_err)
    return m.group(1) if m else None


def run(stree, path, options, *extra, **env):
    options = list(options)
    if "log" in options:  # global options first
        i = options.index("log")
        before, options = options[:i], options[i + 1:]
    else:
        before = []
    return stree(*extra, *before, "-s", path, "log", *options, env=dict({"STREE_DEBUG_STATS": "1"}, **env))


def settle():
    time.sleep(0.06)  # past the racy window: an output drawn now is kept (stree.storage.index.racy)


STEP = st.one_of(
    st.tuples(st.just("user"), st.text(alphabet="abc xyz", min_size=1, max_size=12)),
    st.tuples(st.just("tool_round"), st.sampled_from(["read", "bash", "edit"])),
    st.tuples(st.just("tool_call"), st.sampled_from(["read", "grep"])),  # a hidden assistant as the leaf
    st.tuples(st.just("label"), st.integers(min_value=0, max_value=10_000)),
    st.tuples(st.just("name"), st.text(alphabet="nm ", max_size=6)),
    st.tuples(st.just("bookkeeping"), st.sampled_from(["model", "thinking", "custom"])),
    st.tuples(st.just("branch"), st.integers(min_value=0, max_value=10_000)),  # /tree, then a message
    st.tuples(st.just("torn"), st.text(alphabet="tq ", min_size=1, max_size=8)),
)


def apply(b, path, step):
    """Append what `step` makes; a torn step writes half a line, the rest after a drawing."""
    kind, arg = step
    before = len(b.entries)
    if kind == "user":
        b.user(arg)
    elif kind == "tool_round":
        b.tool_round(arg, {"path": "src/x.py", "command": "ls"}, "out")
    elif kind == "tool_call":
        b.assistant(None, tools=[(arg, {"path": "a.py", "pattern": "x"})])
    elif kind == "label":
        b.label(b.entries[arg % len(b.entries)]["id"], f"l{arg % 7}" if arg % 5 else " ")
    elif kind == "name":
        b.name(arg)
    elif kind == "bookkeeping":
        {"model": lambda: b.model_change("openai", "gpt-5"), "thinking": lambda: b.thinking("low"),
         "custom": lambda: b.custom("ext", {"k": 1})}[arg]()
    elif kind == "branch":
        messages = [e for e in b.entries if e["type"] == "message"]
        b.at(messages[arg % len(messages)]["id"])
        b.user("branch " + str(arg))
    elif kind == "torn":
        b.user(arg)
    data = "".join(dumps(e) + "\n" for e in b.entries[before:])
    with open(path, "a", encoding="utf-8") as f:
        if kind == "torn":
            f.write(data[:len(data) // 2])
            return data[len(data) // 2:]
        f.write(data)
    return None


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(options=st.sampled_from(OPTION_SETS), steps=st.lists(STEP, min_size=1, max_size=5),
       block=st.sampled_from(["", "97", "1000"]))
def test_a_patched_graph_is_a_full_drawing(stree, tmp_path_factory, options, steps, block):
    """(block: the kept output's CRC blocks as small as a row or two, so patches copy ranges that
    cut blocks, and carry whole ones over)"""
    home = tmp_path_factory.mktemp("home")
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "TZ": "UTC", "PAGER": "cat",
           "STREE_GRAPH_BLOCK": block}
    b = branchy()
    path = b.write(home / "s.jsonl")
    settle()
    assert run(stree, path, options, **env).code == 0
    for step in steps:
        rest = apply(b, path, step)
        settle()
        for _ in range(2 if rest is None else 1):
            got = run(stree, path, options, **env)
            full = run(stree, path, options, "--no-cache", **env)
            assert (got.code, got.raw) == (full.code, full.raw), (step, got.err, full.err)
            event(f"{step[0]}: {how(got.err) or 'kept'}")
        if rest is not None:  # the torn line completed
            with open(path, "a", encoding="utf-8") as f:
                f.write(rest)
            settle()
            got = run(stree, path, options, **env)
            full = run(stree, path, options, "--no-cache", **env)
            assert (got.code, got.raw) == (full.code, full.raw), (step, got.err, full.err)


def test_chains_branches_and_labels_are_patched_drawing_few_rows(stree, tmp_path, isolated_home):
    """Appends to the leaf and labels each draw a handful of rows; appends to the leaf without
    laying the graph out again. (A message under an older
    entry puts its branch first, as pi's /tree does: the rows below the branch point move.)"""
    b = branchy()
    path = b.write(tmp_path / "s.jsonl")
    settle()
    run(stree, path, ("--graph",))
    for step in (("user", "more"), ("tool_round", "read"), ("tool_call", "grep"), ("branch", 3),
                 ("label", 2), ("user", "after the label")):
        apply(b, path, step)
        settle()
        got = run(stree, path, ("--graph",))
        assert got.raw == run(stree, path, ("--graph",), "--no-cache").raw, step
        rows, kept = drawn(got.err)
        if step[0] != "branch":  # (a label on an older row: laid out again, its row alone drawn)
            assert rows <= 4 and kept >= 10, (step, got.err)
            assert how(got.err) == ("laid out" if step[0] == "label" else "appended"), (step, got.err)


def test_one_entry_appended_to_10k_entries_draws_a_bounded_number_of_rows(stree, tmp_path, isolated_home):
    path = tmp_path / "big.jsonl"
    subprocess.run([sys.executable, str(ROOT / "tools" / "bench" / "gen.py"), "10000", str(path)], check=True)
    settle()
    first = run(stree, path, ("--graph",))
    assert first.code == 0 and drawn(first.err)[0] > 5000
    last = __import__("json").loads(path.read_bytes().splitlines()[-1])
    with open(path, "a", encoding="utf-8") as f:
        f.write(dumps({"type": "message", "id": "feedbeef", "parentId": last["id"],
                       "timestamp": "2030-01-01T00:00:00.000Z",
                       "message": {"role": "user", "content": [{"type": "text", "text": "one more"}],
                                   "timestamp": 1893456000000}}) + "\n")
    settle()
    got = run(stree, path, ("--graph",))
    rows, kept = drawn(got.err)
    decoded = int(re.search(r"decoded (\d+) entries", got.err).group(1))
    assert rows <= 3 and kept > 5000 and decoded <= 3 and how(got.err) == "appended", got.err
    assert got.raw == run(stree, path, ("--graph",), "--no-cache").raw


# -- the kept file: written as drawn, patched by copying its ranges ------------------------------

def generated(tmp_path, entries):
    path = tmp_path / "big.jsonl"
    subprocess.run([sys.executable, str(ROOT / "tools" / "bench" / "gen.py"), str(entries), str(path)], check=True)
    return path


def append_message(path, parent, text, ident):
    with open(path, "a", encoding="utf-8") as f:
        f.write(dumps({"type": "message", "id": ident, "parentId": parent, "timestamp": "2030-01-01T00:00:00.000Z",
                       "message": {"role": "user", "content": [{"type": "text", "text": text}],
                                   "timestamp": 1893456000000}}) + "\n")
    settle()


def kept_graphs(home):
    return sorted((home / ".cache" / "stree" / "index").glob("*.graph"))


def test_a_comb_kept_in_many_blocks_is_patched_under_the_leaf_and_under_another_parent(stree, tmp_path,
                                                                                         isolated_home):
    """The 100k case, smaller: a kept output of many blocks; an append under the leaf draws the
    new row and the marks only, and a message under an older entry (pi's /tree, then a new
    message) is laid out again, its kept rows copied from the kept file."""
    import json

    from stree.storage.keptgraph.file import read_meta

    path = generated(tmp_path, 3000)
    env = {"STREE_GRAPH_BLOCK": "4096"}
    settle()
    first = run(stree, path, ("--graph",), **env)
    total = drawn(first.err)[0]
    assert first.code == 0 and total > 1500
    (kept,) = kept_graphs(isolated_home)
    meta = read_meta(kept)
    assert len(meta["blocks"]) > 20 and meta["length"] == len(first.raw)
    entries = [json.loads(line) for line in path.read_bytes().splitlines()]
    users = [e for e in entries if e["type"] == "message" and e["message"]["role"] == "user"]
    steps = (("leaf", entries[-1]["id"], "aaaa0001"), ("leaf", "aaaa0001", "aaaa0002"),
             ("older", users[-2]["id"], "aaaa0003"), ("leaf", "aaaa0003", "aaaa0004"))
    hows = []
    for where, parent, ident in steps:
        append_message(path, parent, f"one more under {where}", ident)
        got = run(stree, path, ("--graph",), **env)
        assert got.code == 0 and got.raw == run(stree, path, ("--graph",), "--no-cache").raw, where
        rows, copied = drawn(got.err)
        decoded = int(re.search(r"decoded (\d+) entries", got.err).group(1))
        assert decoded <= 3 and rows + copied >= total, got.err
        hows.append(how(got.err))
        if where == "leaf":  # (under the assistant message that ends the file: it is shown only as the leaf, and
            assert rows <= 3, got.err  # the new message takes its row: laid out again, no row drawn but the new one)
        else:
            assert how(got.err) == "laid out" and copied > total // 2, got.err
        again = run(stree, path, ("--graph",), **env)  # the patched output was kept in its turn
        assert again.raw == got.raw and "graph-cache" in again.err, again.err
        (kept,) = kept_graphs(isolated_home)
        assert read_meta(kept)["length"] == len(got.raw)
    assert hows[1] == hows[3] == "appended", hows
    assert not list((isolated_home / ".cache" / "stree" / "index").glob("*.tmp"))


def test_an_output_past_the_limit_is_drawn_and_not_kept(stree, tmp_path, isolated_home):
    path = generated(tmp_path, 400)
    settle()
    full = run(stree, path, ("--graph",), "--no-cache")
    limit = str(len(full.raw) - 1)
    for _ in range(2):
        got = run(stree, path, ("--graph",), STREE_GRAPH_MAX=limit)
        assert got.raw == full.raw and how(got.err) == "drawn", got.err
    directory = isolated_home / ".cache" / "stree" / "index"
    assert not kept_graphs(isolated_home) and not list(directory.glob("*.tmp"))
    run(stree, path, ("--graph",), STREE_GRAPH_MAX=str(len(full.raw)))
    assert len(kept_graphs(isolated_home)) == 1


def test_a_drawing_cut_short_keeps_nothing(tmp_path, isolated_home):
    """`stree log --graph | head -1`: the reader goes away, the half-written kept file goes too."""
    import os

    path = generated(tmp_path, 12000)  # a drawing of ~4 MB: more than the pipe (1 MiB) and a batch hold
    settle()
    env = dict(os.environ, STREE_GRAPH_BLOCK="4096")
    proc = subprocess.Popen([sys.executable, "-m", "stree", "-s", str(path), "log", "--graph"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    proc.stdout.readline()
    proc.stdout.close()
    assert proc.wait() == 0, proc.stderr.read()
    directory = isolated_home / ".cache" / "stree" / "index"
    assert not kept_graphs(isolated_home) and not list(directory.glob("*.tmp"))
    whole = subprocess.run([sys.executable, "-m", "stree", "-s", str(path), "log", "--graph"], capture_output=True,
                           env=env, cwd=ROOT)
    assert whole.stdout.count(b"\n") > 1000 and len(kept_graphs(isolated_home)) == 1  # (read whole: kept)


def test_a_damaged_kept_file_is_never_patched(stree, tmp_path, isolated_home):
    """A byte changed in any block of the kept output or in its rows, or the file cut: the
    append is drawn whole, byte for byte right."""
    import json

    from stree.storage.keptgraph.file import MAGIC, read_meta

    path = generated(tmp_path, 600)
    env = {"STREE_GRAPH_BLOCK": "2048"}
    settle()
    run(stree, path, ("--graph",), **env)
    (kept,) = kept_graphs(isolated_home)
    clean = kept.read_bytes()
    meta = read_meta(kept)
    data_end = len(MAGIC) + meta["length"]
    damages = (lambda b: b[:-1],  # cut
               lambda b: _flip(b, len(MAGIC) + 3),  # the first block
               lambda b: _flip(b, data_end - 5),  # the last block
               lambda b: _flip(b, (len(MAGIC) + data_end) // 2),  # one in the middle
               lambda b: _flip(b, data_end + 2),  # the rows' state
               lambda b: _flip(b, len(b) - 14))  # the meta's CRC
    for n, damage in enumerate(damages):
        kept.write_bytes(damage(clean))
        parent = json.loads(path.read_bytes().splitlines()[-1])["id"]
        append_message(path, parent, f"after damage {n}", f"dddd{n:04d}")
        got = run(stree, path, ("--graph",), **env)
        assert got.raw == run(stree, path, ("--graph",), "--no-cache").raw, n
        assert how(got.err) == "drawn", (n, got.err)
        run(stree, path, ("--graph",), **env)  # kept again: the next damage starts from a good file
        (kept,) = kept_graphs(isolated_home)
        clean = kept.read_bytes()
        meta = read_meta(kept)
        data_end = len(MAGIC) + meta["length"]


def _flip(data, pos):
    return data[:pos] + bytes([data[pos] ^ 0x20]) + data[pos + 1:]
