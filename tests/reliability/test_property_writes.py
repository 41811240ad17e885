"""Property tests of the write commands: random sequences of checkout (every kind of
target), label, clear, name, fork, summaries (extractive) and pi-style appends.

After every step: the earlier bytes of the file are unchanged; what was appended is what
the reference model (tests/lib/model.py + pi's navigation rules, written out below) predicts;
and stree's leaf, tree, labels and contexts equal the model's. A sample of the results
is read by the real pi. Commands run through tests/lib/cli_batch.py: stree.cli.run with the
command's argv, as the console script runs it, in one long-lived process.
"""

import base64
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from model import KINDS, Model, pi_entry
from pi_harness import VERSIONS, pi_batch
from test_property import check_against_model, load

MARKER = "stree/checkout"
SEQUENCES = 30  # seeded: a failure names its seed and step
STEPS = 14


class Stree:
    """One cli_batch.py process answering command lines one at a time."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve().parents[1] / "lib" / "cli_batch.py")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def __call__(self, *args, input=None):
        self.proc.stdin.write(json.dumps([str(a) for a in args]) + "\n")
        self.proc.stdin.flush()
        r = json.loads(self.proc.stdout.readline())
        assert not r["timeout"] and "Traceback" not in r["err"] and "internal error" not in r["err"], (args, r)
        return r["code"], base64.b64decode(r["out"]).decode(), r["err"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(30)


@pytest.fixture(scope="module")
def run():
    s = Stree()
    yield s
    s.close()


# -- pi's navigation, as the model sees it ---------------------------------------------


def is_marker(e):
    return e is not None and e["type"] == "custom" and e.get("customType") == MARKER


def is_bookkeeping(e):
    """stree's markers, and the label and name entries appended at a position: @ looks through them."""
    return is_marker(e) or (e is not None and e["type"] in ("label", "session_info"))


def position(m, id="leaf"):
    """The leaf (or `id`) looking through stree's checkout markers, labels and names (None: the
    empty leaf): what `@` names."""
    id = m.leaf if id == "leaf" else id
    e = m.get(id) if id is not None else None
    while is_bookkeeping(e):
        e = m.parent(e)
    return e["id"] if e is not None else None


def expected_checkout(m, target, exact):
    """(target after markers, new leaf, editor text or None) for `checkout target`."""
    e = m.get(target)
    while is_bookkeeping(e):
        parent = m.parent(e)
        if parent is None:  # one at the empty leaf stands for it: the checkout goes there
            return e["id"], None, False
        e = parent
    resubmit = (e["type"] == "message" and e["message"]["role"] == "user") or e["type"] == "custom_message"
    if resubmit and not exact:
        parent = m.parent(e)
        return e["id"], parent["id"] if parent else None, True
    return e["id"], e["id"], False


def revision_for(m, rng, target):
    """Some spelling of `target` that stree's revision syntax resolves to it."""
    at = position(m)
    leaf_path = m.path_ids(at) if at is not None else []
    choices = [target]
    if target in leaf_path:
        n = len(leaf_path) - 1 - leaf_path.index(target)
        choices.append(f"@~{n}" if n else "@")
        if n == len(leaf_path) - 1:
            choices.append("root")
    named = [name for t, name in m.labels().items() if t == target]
    if named and list(m.labels().values()).count(named[0]) == 1:
        choices.append(named[0])
    prefix = target[:6]
    if sum(1 for e in m.entries if e["id"].startswith(prefix)) == 1 and \
            not any(name == prefix for name in m.labels().values()):
        choices.append(prefix)
    return rng.choice(choices)


# -- one step --------------------------------------------------------------------------


def new_entries(path, before):
    data = path.read_bytes()
    assert data.startswith(before), "an earlier byte of the session changed"
    return [json.loads(line) for line in data[len(before):].split(b"\n") if line], data


def step(run, path, m, rng, n, tmp, forks):
    before = path.read_bytes()
    ops = ["pi", "pi", "checkout", "checkout", "label", "clear", "name", "fork", "summarize"]
    op = rng.choice(ops) if m.entries else "pi"
    ids = [e["id"] for e in m.entries]
    if op == "pi":  # pi appends under its in-memory leaf: the last entry of the file
        entry = pi_entry(m, rng, rng.choice(KINDS), m.leaf, rng.choice([0, 1000, 1000, -300]), f"s{n}")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        os.write(fd, (json.dumps(entry, separators=(",", ":"), ensure_ascii=False) + "\n").encode())
        os.close(fd)
        m.add(entry)
        return op
    if op == "label":
        target = rng.choice(ids)
        code, out, err = run("-s", path, "label", f"l{n}", revision_for(m, rng, target))
        assert code == 0, err
        new, _ = new_entries(path, before)
        assert [(e["type"], e["parentId"], e["targetId"], e["label"]) for e in new] == \
            [("label", m.leaf, target, f"l{n}")]
    elif op == "clear":
        labels = m.labels()
        if not labels:
            return op
        target, name = rng.choice(sorted(labels.items()))
        if list(labels.values()).count(name) > 1:
            return op
        code, out, err = run("-s", path, "label", "-d", name)
        assert code == 0, err
        new, _ = new_entries(path, before)
        assert [(e["type"], e["parentId"], e["targetId"], "label" in e) for e in new] == \
            [("label", m.leaf, target, False)]
    elif op == "name":
        text = rng.choice([f"  name {n} ", "", "\u3000x\x85"])
        code, out, err = run("-s", path, "name", text) if text else run("-s", path, "name", "--clear")
        assert code == 0, err
        new, _ = new_entries(path, before)
        assert [(e["type"], e["parentId"]) for e in new] == [("session_info", m.leaf)]
    elif op == "summarize":  # read-only: prints a summary of what checkout would abandon
        target = rng.choice(ids)
        code, out, err = run("-s", path, "summarize", "--to", target, "--provider", "extractive")
        expected = expected_checkout(m, target, exact=True)  # --to: what checkout would abandon
        left_behind, _ = m.abandoned(position(m), expected[0])
        assert (code, bool(out.strip())) == ((0, True) if left_behind else (1, False)), (code, err)
        assert path.read_bytes() == before
        return op
    elif op == "fork":
        target = rng.choice(ids)
        out_path = tmp / f"fork{n}.jsonl"
        revision = revision_for(m, rng, target)
        code, out, err = run("-s", path, "fork", revision, "-o", out_path)
        assert code == 0, err
        assert path.read_bytes() == before
        if revision == "@":  # pi's /clone: a name given at the position is kept
            e = m.get(m.leaf)
            while is_bookkeeping(e) and e["id"] != target:
                if e["type"] == "session_info":
                    target = e["id"]
                    break
                e = m.parent(e)
        # pi's createBranchedSession (1.6.0): the path without label entries, each entry
        # re-chained to the kept one before it (a compaction's firstKeptEntryId that named a
        # dropped label names the next kept entry), then the path's labels
        kept, parent, pending, replaced = [], None, [], {}
        for x in m.path_ids(target):
            e = m.get(x)
            if e["type"] == "label":
                pending.append(e["id"])
                continue
            replaced.update((p, e["id"]) for p in pending)
            pending = []
            e = dict(e, parentId=parent)
            if e["type"] == "compaction" and e.get("firstKeptEntryId") in replaced:
                e["firstKeptEntryId"] = replaced[e["firstKeptEntryId"]]
            kept.append(e)
            parent = e["id"]
        lines = [json.loads(line) for line in out_path.read_bytes().split(b"\n") if line]
        assert lines[0]["type"] == "session" and lines[1:len(kept) + 1] == kept
        relabels = lines[len(kept) + 1:]
        parent = kept[-1]["id"] if kept else None
        for e in relabels:
            assert e["type"] == "label" and e["parentId"] == parent
            parent = e["id"]
        assert {e["targetId"]: e["label"] for e in relabels} == \
            {t: v for t, v in m.labels().items() if t in {k["id"] for k in kept}}
        fm = Model()
        for e in kept + relabels:
            fm.add(e)
        check_against_model(load(out_path), fm, rng)
        forks.append(out_path)
        return op
    else:
        checkout(run, path, m, rng, n, before, ids)
        return op
    m.entries.extend(new)
    m.ids.update(e["id"] for e in new)
    return op


def checkout(run, path, m, rng, n, before, ids):
    target = rng.choice(ids)
    exact = rng.random() < 0.25
    label = f"c{n}" if rng.random() < 0.3 else None
    summary = rng.choice([None, None, "file", "extractive"])
    args = ["-s", path, "checkout", revision_for(m, rng, target), "--no-hooks"]
    if exact:
        args.append("--exact")
    if label:
        args += ["--label", label]
    if summary == "file":
        args += ["--summary", path.with_suffix(".summary")]
        path.with_suffix(".summary").write_text(f"summary {n}\n")
    elif summary == "extractive":
        args += ["--summarize", "--provider", "extractive"]
    expected = expected_checkout(m, target, exact)
    old = position(m)
    code, out, err = run(*args)
    resolved, new_leaf, resubmit = expected
    assert code == 0, err
    new, _ = new_entries(path, before)
    if new_leaf == old:
        assert new == [], "a no-op checkout wrote something"
        return
    abandoned, _ = m.abandoned(old, resolved)
    first = new[0]
    assert first["parentId"] == new_leaf
    if summary and abandoned:
        # pi 1.6.0: fromId is the leaf pi would have on the file (its last entry)
        assert first["type"] == "branch_summary" and first["fromId"] == (m.leaf or "root")
        assert first["summary"]
        labelled = first["id"]
    else:
        assert first["type"] == "custom" and first["customType"] == MARKER
        assert first["data"] == {"from": old, "to": resolved}
        labelled = resolved
    if label:
        assert [(e["type"], e["parentId"], e["targetId"], e["label"]) for e in new[1:]] == \
            [("label", first["id"], labelled, label)]
    else:
        assert len(new) == 1
    m.entries.extend(new)
    m.ids.update(e["id"] for e in new)
    # @ is the new leaf (the marker and a label after it are looked through), or the summary
    assert position(m) == (position(m, new_leaf) if is_marker(first) else first["id"])
    assert m.context(m.leaf)["messages"][:len(m.context(new_leaf)["messages"])] == m.context(new_leaf)["messages"]


def _sequences(tmp_path, run, seeds, steps):
    results = []
    for seed in seeds:
        rng = random.Random(seed)
        tmp = tmp_path / f"r{seed}"
        tmp.mkdir()
        path = tmp / "s.jsonl"
        m = Model()
        for _ in range(rng.randint(0, 6)):  # a session pi started
            m.add(pi_entry(m, rng, rng.choice(KINDS), m.leaf, 1000, "start"))
        m.write(path)
        ops = []
        forks = []
        for i in range(steps):
            try:
                ops.append(step(run, path, m, rng, i, tmp, forks))
                check_against_model(load(path), m, rng)
            except AssertionError as e:
                raise AssertionError(f"seed {seed}, step {i} ({ops[-1:]}): {e}") from e
        results.append((path, m, ops, forks))
    return results


def test_random_write_sequences_match_the_model_and_pi(tmp_path, run):
    results = _sequences(tmp_path, run, range(SEQUENCES), STEPS)
    ops = [op for _, _, o, _ in results for op in o]
    print(f"{len(results)} sequences, {len(ops)} steps: " +
          ", ".join(f"{op} {ops.count(op)}" for op in sorted(set(ops))))
    for op in ("pi", "checkout", "label", "name", "fork", "summarize"):
        assert ops.count(op) >= 3, (op, ops.count(op))
    # the real pi (each version) resumes each session where the model says, and reads the forks
    sample = [(p, m) for p, m, _, _ in results][:25]
    forks = [f for _, _, _, fs in results for f in fs][:20]
    for version in VERSIONS:
        seen = pi_batch([["inspect", p] for p, _ in sample], version=version)
        for (p, m), answer in zip(sample, seen):
            assert answer["leafId"] == m.leaf and answer["labels"] == m.labels() and not answer["rewritten"], \
                (version, p)
            assert answer["context"] == json.loads(json.dumps(m.context(m.leaf))), (version, p)
        for f, answer in zip(forks, pi_batch([["inspect", f] for f in forks], version=version)):
            tree = load(f)
            assert answer["leafId"] == tree.leaf and not answer["rewritten"], (version, f)


@pytest.mark.soak
def test_random_write_sequences_soak(tmp_path, run):
    results = _sequences(tmp_path, run, range(1000, 1400), 40)
    print(f"{len(results)} sequences, {sum(len(o) for _, _, o, _ in results)} steps")
