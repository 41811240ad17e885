"""The plain grep answered without click (stree.fastgrep) from a shared catalogue on a real
PostgreSQL server (tests/lib/pgkit.py): `--catalog URL grep ...`, `--catalog=URL` and
STREE_CATALOG say exactly what the click command says, neither click nor psycopg is loaded
(the grep reads through libpq: tests/cli/test_grep_pg_libpq.py), and a server
that cannot be reached is one line with a hint (exit 5), said once."""

import pytest

from pgkit import pg_server, pg_url  # noqa: F401  (fixtures)
from test_catalog import corpus

pytestmark = pytest.mark.pg

PLANTED = "zanzibarquux"
GREPS = [[PLANTED], ["-c", "the"], ["-l", "-i", PLANTED.upper()], ["-w", "-E", "zanzi[a-z]+"], ["qqq-not-there"]]


@pytest.fixture(autouse=True)
def each_command_a_process(monkeypatch):
    """stree in a process of its own: whether click was imported is the process's to say."""
    import inprocess

    monkeypatch.setattr(inprocess, "SUBPROCESS_ONLY", True)


@pytest.fixture
def pushed(stree, isolated_home, pg_url):
    paths = corpus(isolated_home, n=6, entries=60)
    for p in paths[1::2]:
        lines = p.read_text().splitlines()
        at = next(k for k, line in enumerate(lines) if '"text":"' in line)
        lines[at] = lines[at].replace('"text":"', f'"text":"{PLANTED} ', 1)
        p.write_text("\n".join(lines) + "\n")
    r = stree("--catalog", pg_url, "catalog", "push")
    assert r.code == 0, r
    return pg_url


def imported(r):
    return {line.rsplit("|", 1)[-1].strip() for line in r.err.splitlines() if line.startswith("import time:")}


def answer(r):
    return r.code, r.out, "\n".join(x for x in r.err.splitlines() if not x.startswith("import time:"))


@pytest.mark.parametrize("args", GREPS, ids=" ".join)
def test_the_plain_grep_of_a_shared_catalogue_says_what_click_says(stree, pushed, args):
    slow = stree("--catalog", pushed, "grep", *args, env={"STREE_NO_FAST": "1"})
    assert slow.code in (0, 1) and "Traceback" not in slow.err, slow
    for spelled, env in ((["--catalog", pushed], {}), ([f"--catalog={pushed}"], {}),
                         ([], {"STREE_CATALOG": pushed})):
        fast = stree(*spelled, "grep", *args, env={**env, "PYTHONPROFILEIMPORTTIME": "1"})
        assert answer(fast) == answer(slow), (spelled, env)
        names = imported(fast)
        assert "stree.fastgrep" in names and "click" not in names and "psycopg" not in names, (spelled, env)
    if args == [PLANTED]:
        assert slow.code == 0 and len(slow.out.splitlines()) == 3


def test_a_shared_catalogue_out_of_reach_is_one_line_with_a_hint_said_once(stree, tmp_path):
    url = f"postgresql://postgres@/stree?host={tmp_path}&port=1"  # (no server listens there)
    slow = stree("--catalog", url, "grep", PLANTED, env={"STREE_NO_FAST": "1"})
    fast = stree("--catalog", url, "grep", PLANTED, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert answer(fast) == answer(slow)
    assert fast.code == 5 and fast.out == ""
    said = answer(fast)[2].splitlines()
    assert said[0].startswith("stree: error: catalogue postgresql://") and "connection failed" in said[0]
    assert said[1:] and all(line.startswith("hint: ") for line in said[1:])
    assert "click" not in imported(fast)  # (not asked a second time by the click command)


def test_a_machine_without_sessions_of_its_own_greps_the_shared_catalogue(stree, pushed, tmp_path):
    """The shared catalogue answers for every session pushed there, whatever this machine
    holds: a HOME with no session files finds what the pushing HOME finds; `-s SESSION`
    narrows to that session's file, as without a shared catalogue."""
    empty = tmp_path / "empty"
    empty.mkdir()
    elsewhere = {"HOME": str(empty), "XDG_CACHE_HOME": str(empty / ".cache"), "XDG_CONFIG_HOME": str(empty / ".config")}
    here = stree("--catalog", pushed, "grep", PLANTED)
    assert here.code == 0 and len(here.out.splitlines()) == 3, here
    for env in ({}, {"STREE_NO_FAST": "1"}):
        there = stree("--catalog", pushed, "grep", PLANTED, env={**elsewhere, **env})
        assert answer(there) == answer(here), env
    one = stree("grep", "-l", PLANTED).out.splitlines()[0]
    local = stree("-s", one, "grep", PLANTED)
    assert local.code == 0 and local.out, local
    assert answer(stree("--catalog", pushed, "-s", one, "grep", PLANTED)) == answer(local)
