"""Run stree command lines in forked processes and SIGKILL each after a delay.

stree is imported once here; every job forks a child that runs stree with the job's argv
(a real process doing the real writes: every other job through the entry point, whose fast
path writes plain labels and checkouts without click, the others through stree.cli.run),
and the parent kills it with SIGKILL after `delay` seconds (null: let it finish). This keeps
hundreds of kill points cheap.

stdin: one JSON object per line {"argv": [...], "delay": seconds|null}.
stdout: one JSON line per job {"killed": bool, "status": exit status, "seconds": run time}.
"""

import json
import os
import signal
import sys
import time

import stree.cli  # noqa: F401  (imported before forking, so children start at once)
import stree.entrypoint  # noqa: F401
import stree.fastwrite  # noqa: F401
import stree.commands.checkout  # noqa: F401
import stree.commands.fork  # noqa: F401
import stree.commands.label  # noqa: F401
import stree.commands.migrate  # noqa: F401


def child(argv, fast):
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    sys.argv = ["stree", *argv]
    code = 0
    try:
        (stree.entrypoint.main if fast else stree.cli.run)()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 0
    finally:
        os._exit(code)


def main():
    for n, line in enumerate(sys.stdin):
        job = json.loads(line)
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            child(job["argv"], n % 2)
        killed = False
        if job["delay"] is not None:
            time.sleep(job["delay"])
            done, status = os.waitpid(pid, os.WNOHANG)
            if not done:
                os.kill(pid, signal.SIGKILL)
                killed = True
        if job["delay"] is None or killed:
            _, status = os.waitpid(pid, 0)
        result = {"killed": killed, "status": status, "seconds": time.monotonic() - start}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
