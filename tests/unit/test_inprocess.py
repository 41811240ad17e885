"""The `stree` fixture runs stree in the test's process (tests/lib/inprocess.py): what it gives
is what `python -m stree` gives, and what a command changes for the whole process is put back."""

import gc
import os
import signal

import inprocess
from conftest import run_process


def test_same_output_status_and_errors_as_a_process(demo, tmp_path):
    for args in (["-s", demo, "log", "--graph"], ["-s", demo, "show", "@"], ["-s", demo, "rev-parse", "nope"],
                 ["-s", tmp_path / "missing.jsonl", "log"], ["log", "--no-such-option"], ["--version"]):
        args = [str(a) for a in args]
        code, out, err = inprocess.run(args)
        child = run_process(*args)
        assert (code, out.decode(), err.decode()) == (child.code, child.out, child.err), args


def test_stdin_cwd_and_environment_reach_the_command(stree, demo, tmp_path):
    r = stree("-s", demo, "checkout", "--summary", "-", "@~2", input=b"a summary from stdin\n")
    assert r.code == 0 and b"a summary from stdin" in demo.read_bytes(), r
    label = stree("-s", demo, "label", "here", "@")
    assert label.code == 0, label
    r = stree("-s", demo.name, "rev-parse", "here", cwd=tmp_path)  # a relative -s: the cwd given
    assert r.code == 0 and r.out.strip() == stree("-s", demo, "rev-parse", "@").out.strip(), r
    r = stree("rev-parse", "@", env={"STREE_SESSION": str(demo)})
    assert r.code == 0 and r.out.strip(), r


def test_what_a_command_changes_for_the_process_is_put_back(stree, demo, tmp_path):
    before = (os.getcwd(), dict(os.environ), signal.getsignal(signal.SIGINT), gc.isenabled(),
              gc.get_freeze_count())
    modules = {name for name in __import__("sys").modules if name.startswith("stree")}
    (tmp_path / "elsewhere").mkdir()
    r = stree("-C", tmp_path / "elsewhere", "--no-cache", "-s", demo, "log", "--graph")  # chdir, env, gc.freeze
    assert r.code == 0 and r.out, r
    after = (os.getcwd(), dict(os.environ), signal.getsignal(signal.SIGINT), gc.isenabled(),
             gc.get_freeze_count())
    assert after[:4] == before[:4]
    assert after[4] <= before[4]  # the command's gc.freeze undone (an earlier test's frozen objects may be thawed too)
    assert {name for name in __import__("sys").modules if name.startswith("stree")} == modules


def test_a_startup_variable_or_a_timeout_needs_a_process():
    assert inprocess.needs_process({"PYTHONIOENCODING": "latin-1"}, None, None)
    assert inprocess.needs_process({"LC_ALL": "C"}, None, None)
    assert inprocess.needs_process(None, 30, None)
    assert inprocess.needs_process({"STREE_TEST_CRASH_BEFORE_RENAME": "1"}, None, None)  # (os._exit)
    assert inprocess.needs_process({"STREE_NO_CACHE": "1"}, None, b"") is None
