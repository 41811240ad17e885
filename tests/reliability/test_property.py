"""Property tests: stree's core against a reference model (tests/lib/model.py) on random sessions.

Sessions are built the way pi builds them: entries of every kind appended under a leaf
that moves at random (pi's /tree), labels set and cleared, timestamps that tie and go
back. A sample of the generated files is confirmed by the real pi.
"""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model import KINDS, Model, pi_entry, random_session
from pi_harness import VERSIONS, pi_batch

import pytest

from stree.storage.session import parse
from stree.core.tree import Tree

EXAMPLES = 80
PI_SAMPLE = 25

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
steps = st.sampled_from([0, 1, 1000, 1000, 1000, -700])


@st.composite
def sessions(draw, max_entries=40):
    rng = draw(st.randoms(use_true_random=False))
    m = Model()
    at = None
    for _ in range(draw(st.integers(0, max_entries))):
        if m.entries and draw(st.booleans()) and draw(st.booleans()):
            at = draw(st.sampled_from([None] + [e["id"] for e in m.entries]))  # /tree moves the leaf
        entry = pi_entry(m, rng, draw(st.sampled_from(KINDS)), at, draw(steps), draw(texts))
        m.add(entry)
        at = entry["id"]
    return m


def load(path):
    s = parse(str(path))
    assert not s.malformed
    return Tree(s.nodes, s.load)


def check_against_model(tree, m, rng):
    """Everything stree's core answers about the file equals the model's answer."""
    assert tree.leaf == m.leaf
    assert [n.id for n in tree.roots] == m.roots()
    for e in m.entries:
        assert [c.id for c in tree.children(e["id"])] == m.children(e["id"]), e["id"]
    assert tree.labels == m.labels()
    assert tree.name() == m.name()
    ids = [e["id"] for e in m.entries]
    if not ids:
        assert tree.build_context(None) == m.context(None)
        return
    for id in rng.sample(ids, min(6, len(ids))) + [m.leaf]:
        assert tree.path_ids(id) == m.path_ids(id)
        assert json.loads(json.dumps(tree.build_context(id))) == m.context(id), id
    for _ in range(6):
        a, b = rng.choice(ids), rng.choice(ids)
        assert tree.merge_base(a, b) == m.merge_base(a, b)
        assert [n.id for n in tree.range(a, b)] == m.range(a, b)
        assert tree.is_ancestor(a, b) == (a in m.path_ids(b))
        nodes, common = tree.abandoned(a, b)
        assert ([n.id for n in nodes], common) == m.abandoned(a, b)


def pi_confirms(files):
    """The real pi (each version) reads each file exactly as the model says: leaf, tree, labels, contexts."""
    requests = []
    for path, m, at in files:
        req = ["inspect", path]
        for id in at:
            req += ["--context-at", id]
        requests.append(req)
    for version in VERSIONS:
        _pi_confirms_at(files, requests, version)
    return len(files)


def _pi_confirms_at(files, requests, version):
    for (file, m, at), seen in zip(files, pi_batch(requests, version=version)):
        path = f"{file} (pi {version})"
        assert seen["leafId"] == m.leaf, path
        assert seen["tree"]["roots"] == m.roots(), path
        for node in seen["tree"]["nodes"]:
            assert node["children"] == m.children(node["id"]), (path, node["id"])
        assert seen["labels"] == m.labels(), path
        assert seen["name"] == m.name(), path
        assert seen["context"] == json.loads(json.dumps(m.context(m.leaf))), path
        for id in at:
            assert seen["contexts"][id] == json.loads(json.dumps(m.context(id))), (path, id)


def test_core_equals_model_and_pi_agrees(tmp_path):
    files = []

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(m=sessions(), rng=st.randoms(use_true_random=False))
    def check(m, rng):
        path = tmp_path / f"s{len(files)}.jsonl"
        m.write(path)
        check_against_model(load(path), m, rng)
        ids = [e["id"] for e in m.entries]
        at = rng.sample(ids, min(3, len(ids)))  # drawn every time: hypothesis replays draws exactly
        if len(files) < PI_SAMPLE and m.entries:
            files.append((path, m, at))
        else:
            path.unlink()

    check()
    assert pi_confirms(files) == PI_SAMPLE


@pytest.mark.soak
def test_core_equals_model_soak(tmp_path):
    import random

    files = []
    for seed in range(3000):
        m = random_session(seed, random.Random(seed).randint(0, 300))
        path = tmp_path / f"s{seed % 200}.jsonl"
        m.write(path)
        check_against_model(load(path), m, random.Random(seed))
        if seed % 30 == 0 and m.entries:
            keep = tmp_path / f"pi{seed}.jsonl"
            m.write(keep)
            files.append((keep, m, [m.entries[0]["id"]]))
    print(f"{len(files)} soak files confirmed by pi")
    pi_confirms(files)
