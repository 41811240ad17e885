"""A cold parse shared among worker processes gives exactly what one process gives.

STREE_JOBS forces the number of processes, so small files are split too: every
file of the corpus, and files built to put their trouble (malformed and torn
lines, duplicate ids, a second header, JavaScript whitespace) on the share
boundaries, parse to the same rows, problems and counters with 1 to 8 processes.
"""

import os
import signal
import time

import pytest

from builders import SessionBuilder, branchy, dumps
from corpus import build

from stree.storage import parallel, scan, session
from stree.storage.nodes import FIELDS

JOBS = (2, 3, 5, 8)


def parse(path, jobs, monkeypatch):
    monkeypatch.setenv("STREE_JOBS", str(jobs))
    scan.STATS["parsed"] = 0
    s = session.parse(str(path))
    try:
        nodes = s.nodes
        return {
            "columns": {name: list(nodes.col(name)) for name in FIELDS},
            "nodes": [repr(n) for n in nodes],
            "malformed": s.malformed, "line": s.line, "index": s.index, "newline": s.ends_with_newline,
            "header": s.header, "title": s.title, "version": s.version, "parsed": scan.STATS["parsed"],
        }
    finally:
        s.close()


def no_children_left():
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def troubled():
    """Every kind of line the parser treats specially, many times over, so that whatever
    the cut, some land at the edges of shares."""
    b = SessionBuilder()
    lines = [b.lines()[0]]
    for i in range(60):
        b.user(f"question {i} — ünïcödé")
        b.assistant(f"answer {i}", tools=[("read", {"path": f"src/f{i}.py"})])
        lines.extend(b.lines()[-2:])
        kind = i % 6
        if kind == 0:
            lines.append("{garbage")
        elif kind == 1:
            lines.append("   ")
        elif kind == 2:
            lines.append(dumps({"type": "session", "id": "second-header", "version": 3}))
        elif kind == 3:
            lines.append(dumps(b.entries[-1]))  # a duplicate id
        elif kind == 4:
            lines.append(dumps({"type": "message", "parentId": b.leaf, "message": {"role": "user"}}))
        else:
            lines.append("[1, 2, 3]")
    lines.insert(3, "\ufeff{}")  # a BOM makes a line malformed (pi 1.5 does not trim the file)
    return "\n".join(lines) + "\n\u00a0\n{\"type\":\"message\",\"id\":\"torn"


@pytest.mark.slow  # (big inputs: left out of `make check`)
def test_every_corpus_file_parses_the_same_with_any_number_of_processes(tmp_path, isolated_home, monkeypatch):
    files = build(tmp_path / "corpus", isolated_home)
    extra = tmp_path / "troubled.jsonl"
    extra.write_text(troubled(), encoding="utf-8")
    files["troubled"] = extra
    omp = tmp_path / "omp.jsonl"
    omp.write_text(dumps({"type": "title", "v": 1, "title": "omp"}) + "\n"
                   + branchy().write(tmp_path / "b.jsonl").read_text(), encoding="utf-8")
    files["omp"] = omp
    for name, path in files.items():
        one = parse(path, 1, monkeypatch)
        for jobs in JOBS:
            assert parse(path, jobs, monkeypatch) == one, (name, jobs)
    assert no_children_left()


def record_forks(monkeypatch):
    """The pids of the workers parallel.scan starts from now on."""
    pids = []
    real_fork = parallel._fork

    def recording(*args):
        worker = real_fork(*args)
        pids.append(worker[0])
        return worker

    monkeypatch.setattr(parallel, "_fork", recording)
    return pids


def questions(n):
    b = SessionBuilder()
    for i in range(n):
        b.user(f"q {i}")
    return b


def test_the_shares_really_are_parsed_elsewhere(tmp_path, monkeypatch):
    """The equality tests above mean something: with STREE_JOBS=3, two workers parse."""
    b = questions(300)
    path = b.write(tmp_path / "s.jsonl")
    forked = record_forks(monkeypatch)
    monkeypatch.setenv("STREE_JOBS", "3")
    s = session.parse(str(path))
    assert len(forked) == 2 and len(s.nodes) == 300
    assert s.nodes.nbase == 300  # every share's rows, as encoded segments
    assert [n.id for n in s.nodes] == [e["id"] for e in b.entries]


@pytest.mark.parametrize("failure", ["exception", "killed"])
def test_a_failed_worker_costs_time_not_rows(tmp_path, monkeypatch, failure):
    b = SessionBuilder()
    for i in range(200):
        b.user(f"q {i}")
        b.assistant(f"a {i}")
    path = b.write(tmp_path / "s.jsonl")
    one = parse(path, 1, monkeypatch)

    def broken(*args):
        if failure == "killed":
            os.kill(os.getpid(), signal.SIGKILL)
        raise MemoryError("out of memory")

    monkeypatch.setattr(parallel, "_work", broken)
    assert parse(path, 3, monkeypatch) == one
    assert no_children_left()


def test_an_interrupted_parse_leaves_no_worker_behind(tmp_path, monkeypatch):
    path = questions(200).write(tmp_path / "s.jsonl")
    pids = record_forks(monkeypatch)

    def slow_worker(*args):
        time.sleep(60)

    real_range = scan.scan_range

    def interrupted(s, fd, start, stop, end):
        if pids:  # this process's own share, after the workers started
            raise KeyboardInterrupt
        return real_range(s, fd, start, stop, end)

    monkeypatch.setattr(parallel, "_work", slow_worker)
    monkeypatch.setattr(scan, "scan_range", interrupted)
    monkeypatch.setenv("STREE_JOBS", "3")
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        session.parse(str(path))
    assert time.monotonic() - started < 30
    assert len(pids) == 2
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # killed and reaped: not even a zombie
    assert no_children_left()


@pytest.mark.slow  # (big inputs: left out of `make check`)
def test_index_built_by_workers_reads_back_the_same(stree, tmp_path, isolated_home):
    """The workers' segments go into the index unchanged: a warm read of an index built
    by 4 processes gives what a plain one-process parse gives, for every view."""
    from test_index import VIEWS, run, stats, views

    files = build(tmp_path / "corpus", isolated_home)
    for name, path in files.items():
        plain = views(stree, path, "--no-cache", STREE_JOBS="1")
        assert views(stree, path, STREE_JOBS="4") == plain, name  # built by workers
        assert stats(run(stree, path, "rev-parse", "@"))[1] == "fresh", name  # read back as it is
        assert views(stree, path, STREE_JOBS="1") == plain, name
    assert len(VIEWS) >= 5


def test_the_cli_parses_with_workers_by_default_on_a_large_file(stree, tmp_path):
    """No STREE_JOBS: a file over twice PER_JOB is shared when the machine has cores."""
    b = SessionBuilder()
    filler = "x" * 2000
    while len(b.entries) * 2100 < 2 * parallel.PER_JOB + (1 << 20):
        b.user(f"q {len(b.entries)} {filler}")
    path = b.write(tmp_path / "big.jsonl")
    assert os.path.getsize(path) > 2 * parallel.PER_JOB
    shared = stree("--no-cache", "-s", path, "log", "--format", "{id} {line}", env={"STREE_DEBUG_STATS": "1"})
    alone = stree("--no-cache", "-s", path, "log", "--format", "{id} {line}",
                  env={"STREE_JOBS": "1", "STREE_DEBUG_STATS": "1"})
    assert shared.code == 0 and shared.out == alone.out and len(shared.out.splitlines()) == len(b.entries)
    assert "parse worker" not in alone.err
    if len(os.sched_getaffinity(0)) > 1:
        assert "1 parse worker(s)" in shared.err or "2 parse worker(s)" in shared.err, shared.err


@pytest.mark.slow  # (big inputs: left out of `make check`)
def test_the_shape_the_shares_make_is_the_one_compute_shape_makes(tmp_path, isolated_home, monkeypatch):
    """Parents, child counts, missing parents, label targets: found from each share's own
    links, or handed to compute_shape() (repeated ids, many links across shares)."""
    import random

    from stree.storage.shape import compute_shape

    files = build(tmp_path / "corpus", isolated_home)
    for seed in range(40):  # random forests: forward references, missing parents, self-parents, repeats
        rnd = random.Random(seed)
        b = SessionBuilder()
        lines = [b.lines()[0]]
        ids = [f"{k:08x}" for k in range(rnd.randint(5, 120))]
        pool = ids + ["ffffffff", None]
        for k, id in enumerate(ids if seed % 4 else ids + ids[:3]):
            parent = rnd.choice(pool) if rnd.random() < 0.3 else (ids[(k - 1) % len(ids)] if k else None)
            entry = {"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z",
                     "message": {"role": "user", "content": f"m{k}", "timestamp": 1}}
            if rnd.random() < 0.1:
                entry = {"type": "label", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z",
                         "targetId": rnd.choice(pool), "label": rnd.choice(["a", "b", ""])}
            lines.append(dumps(entry))
        path = tmp_path / f"r{seed}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        files[f"random{seed}"] = path
    made = 0
    for name, path in files.items():
        for jobs in JOBS:
            monkeypatch.setenv("STREE_JOBS", str(jobs))
            s = session.parse(str(path))
            if s.nodes.shape is not None:
                made += 1
                assert s.nodes.shape.state() == compute_shape(s.nodes)[0].state(), (name, jobs)
            s.close()
    assert made > len(files) * len(JOBS) // 2  # most of them by the shares, not by the fallback


def test_each_process_encodes_its_share_a_piece_at_a_time(tmp_path, monkeypatch):
    """A long file is parsed in pieces, in one process too: the rows of a piece are encoded
    (as the index keeps them) before the next piece is parsed. Rows, problems, counters and
    the tree's shape are those of a plain parse, whatever the cut."""
    from stree.storage.shape import compute_shape

    files = {"troubled": tmp_path / "troubled.jsonl", "branchy": branchy().write(tmp_path / "b.jsonl")}
    files["troubled"].write_text(troubled(), encoding="utf-8")
    big = questions(400)
    for i in range(0, 400, 7):  # branches across the pieces
        big.user(f"again {i}", parent=big.entries[i]["id"])
    files["questions"] = big.write(tmp_path / "q.jsonl")
    for name, path in files.items():
        plain = parse(path, 1, monkeypatch)  # (short: not cut)
        monkeypatch.setattr(parallel, "PIECE_MIN", 1024)
        for jobs in (1, 2, 3):
            assert parse(path, jobs, monkeypatch) == plain, (name, jobs)
            monkeypatch.setenv("STREE_JOBS", str(jobs))
            s = session.parse(str(path))
            try:
                assert len(s.ready[1]) > 1 and s.nodes.nbase == len(s.nodes), (name, jobs)  # encoded pieces
                if s.nodes.shape is not None:
                    assert s.nodes.shape.state() == compute_shape(s.nodes)[0].state(), (name, jobs)
            finally:
                s.close()
        monkeypatch.undo()
    assert no_children_left()
