"""Ctrl-C at every line of stree's code that a writing command runs, one attempt per line.

Each attempt is a forked child of this process (stree imported here once, nothing run: every
child starts as a new process would): a fresh copy of the session, its index built by a
`log -n 1` in a child of its own, then the command under a trace function that, at the chosen
line, does what a Ctrl-C arriving there does: it calls the process's SIGINT handler (Python's
raises KeyboardInterrupt; SIG_DFL ends the process at once, as the kernel would; SIG_IGN does
nothing). A line is chosen by its first run in an uninterrupted run of the command.

After each attempt a checker child reads what was left, as a user would next:
- the session file is what it was with whole lines appended, or unchanged (`fsck` finds it
  sound), and a new file the command makes (a fork's) is whole or absent;
- `log --json` through the caches says what `--no-cache log --json` says;
- no lock, lease or temp file is left beside the session.

    python interrupt_anywhere.py SESSION STRIDE ARGV_JSON

SESSION: a pi session file in a temporary HOME (its copies are made beside it); STRIDE: every
STRIDE-th line is tried, and every line of stree/writing (the write itself); ARGV_JSON: the command's arguments after `stree -s SESSION` ({dir}:
the directory of the copies, where a new file the command writes should go).
stdout: one JSON object {"lines": tried, "files": the modules they are in, "outcomes": {exit
status: n}, "diverged": attempts whose run went another way than the uninterrupted one before
reaching its line (stopped elsewhere, and checked all the same), "wrong": [{"line", "status",
"why"}]}."""

import dis
import json
import os
import shutil
import signal
import sys
import tempfile

import stree.cli  # noqa: F401  (imported before forking: every child starts at once)
import stree.entrypoint
import stree.commands.checkout  # noqa: F401
import stree.commands.fork  # noqa: F401
import stree.commands.label  # noqa: F401
import stree.commands.log  # noqa: F401
import stree.commands.fsck  # noqa: F401
from stree.storage.cachedir import cache_dir

pristine, stride, argv = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(stree.__file__)))
work = tempfile.mkdtemp(prefix="interrupt-", dir=os.path.dirname(pristine))
session = os.path.join(work, "session.jsonl")
argv = [a.replace("{dir}", work) for a in argv]  # (where a new file is written: beside the session)
before = open(pristine, "rb").read()


def in_child(run, out=None):
    """Run `run()` in a forked child, its stdout and stderr to `out` (a path) or /dev/null;
    its exit status (128 + N when a signal ended it)."""
    pid = os.fork()
    if pid == 0:
        fd = os.open(out or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        status = 70
        try:
            status = run()
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
        except BaseException:  # (a KeyboardInterrupt past stree's boundary: a traceback, said)
            import traceback

            traceback.print_exc()
            status = 99
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(status)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def stree_main(*args):
    def run():
        sys.argv = ["stree", *args]
        stree.entrypoint.main()
    return run


def fresh():
    """A new copy of the session and an empty cache (no index of it yet, none of an earlier
    copy that had the same inode number), its index then built."""
    shutil.rmtree(cache_dir(), ignore_errors=True)
    for name in os.listdir(work):
        path = os.path.join(work, name)
        shutil.rmtree(path) if os.path.isdir(path) else os.unlink(path)
    with open(session, "wb") as f:
        f.write(before)
    assert in_child(stree_main("-s", session, "log", "-n", "1")) == 0
    from clock import settle

    settle(work)  # (the session and its index past their tick of the clock: every run takes the same way)
    settle(cache_dir())


count = [0]
at = [None]  # the line event the Ctrl-C comes at (None: only counting)
first = {}  # (file, line) -> the line event it first ran at
fired = [False]
NOP = dis.opmap["NOP"]


def local(frame, event, arg):
    if fired[0]:
        return None
    if event == "line":
        count[0] += 1
        if at[0] is None:
            first.setdefault((frame.f_code.co_filename, frame.f_lineno), count[0])
        elif count[0] >= at[0]:
            if count[0] == at[0]:
                with open(os.path.join(work, "at"), "w") as f:  # (where it came, to check it is the line chosen)
                    f.write(f"{os.path.relpath(frame.f_code.co_filename, ROOT)}:{frame.f_lineno}")
            if frame.f_code.co_code[frame.f_lasti] == NOP:
                return local  # (a `try:` line: no signal is ever handled at its NOP; at the next line, then)
            sys.settrace(None)  # (one Ctrl-C)
            fired[0] = True
            handler = signal.getsignal(signal.SIGINT)
            if handler == signal.SIG_DFL:
                os._exit(128 + signal.SIGINT)  # (the kernel ends the process there)
            if callable(handler):
                handler(signal.SIGINT, frame)
    return local


def calls(frame, event, arg):
    return local if frame.f_code.co_filename.startswith(os.path.join(ROOT, "stree")) else None


def traced(line_event, report=None):
    def run():
        count[0] = 0
        at[0] = line_event
        sys.argv = ["stree", "-s", session, *argv]
        sys.settrace(calls)
        try:
            stree.entrypoint.main(hard_exit=False)
        finally:
            sys.settrace(None)
            if report is not None:
                with open(report, "w") as f:
                    json.dump([[name, line, n] for (name, line), n in first.items()], f)
    return run


def check():
    """Why what the attempt left is wrong, or None."""
    now = open(session, "rb").read()
    if not now.startswith(before):
        return "the session file was changed, not appended to"
    if now[len(before):] and not now.endswith(b"\n"):
        return "a torn line was left at the end of the session file"
    out = os.path.join(work, "out")
    if in_child(stree_main("-s", session, "fsck"), out) != 0:
        return "fsck: " + open(out).read()[-500:]
    for name in os.listdir(work):
        path = os.path.join(work, name)
        if name in ("session.jsonl", "out", "cached", "direct", "at") or os.path.isdir(path):
            continue
        if name.endswith(".jsonl"):  # (a fork's new file: whole, or not there)
            if in_child(stree_main("-s", path, "fsck"), out) != 0:
                return f"{name}: fsck: " + open(out).read()[-500:]
            continue
        return f"left beside the session: {name}"
    cached, direct = os.path.join(work, "cached"), os.path.join(work, "direct")
    a = in_child(stree_main("-s", session, "log", "--json"), cached)
    b = in_child(stree_main("--no-cache", "-s", session, "log", "--json"), direct)
    if (a, open(cached, "rb").read()) != (b, open(direct, "rb").read()):
        return "log --json through the caches differs from --no-cache"
    return None


fresh()
report = os.path.join(os.path.dirname(work), "first-lines.json")
assert in_child(traced(None, report)) == 0, "the command failed uninterrupted"
first = {(f, line): n for f, line, n in json.load(open(report))}
os.unlink(report)
writing = os.path.join(ROOT, "stree", "writing") + os.sep
chosen = sorted(set(sorted(set(first.values()))[::stride])  # (and every line of the writing itself)
                | {n for (name, _), n in first.items() if name.startswith(writing)})
where = {n: f"{os.path.relpath(f, ROOT)}:{line}" for (f, line), n in first.items()}
outcomes, wrong, diverged = {}, [], 0
for n in chosen:
    fresh()
    status = in_child(traced(n))
    came = open(os.path.join(work, "at")).read() if os.path.exists(os.path.join(work, "at")) else None
    if came != where[n]:  # (another way than the uninterrupted run (a clock, a random id): stopped elsewhere,
        diverged += 1     # which is checked all the same)
    outcomes[str(status)] = outcomes.get(str(status), 0) + 1
    # (the entry point's own first and last lines are outside any handler a Python program can
    # have: a Ctrl-C there ends it with Python's KeyboardInterrupt traceback; what it left is checked)
    edge = status == 99 and where[n].startswith("stree/entrypoint.py:")
    why = check() if status in (0, 130) or edge else f"exit status {status}"
    if why is not None:
        wrong.append({"line": where[n], "status": status, "why": why})
shutil.rmtree(work)
print(json.dumps({"lines": len(chosen), "files": sorted({where[n].split(":")[0] for n in chosen}),
                  "outcomes": outcomes, "diverged": diverged, "wrong": wrong[:10]}))
