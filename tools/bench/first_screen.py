"""`make bench`, the rows about the first `log --graph` and flat warm costs (issue 28): the
first screen of `log --graph` on a terminal (the time until its first row reaches a pseudo-
terminal, the index warm, no kept output: it should not depend on the file's size), and warm
`context` at the largest size next to 10k."""

import os
import select
import signal
import statistics
import subprocess
import time

from measure import ENV, ROOT, STATS_ENV, STREE, clear_graphs, rounds, run


def first_row(argv, deadline=120.0):
    """Seconds until the first line `argv` prints on a pseudo-terminal (120×40, its pager `less -R`
    as a user's), then the process and its pager are stopped."""
    master, slave = os.openpty()
    env = dict(ENV, TERM="xterm-256color", COLUMNS="120", LINES="40", PAGER="less -R")
    env.pop("NO_COLOR", None)
    t = time.perf_counter()
    proc = subprocess.Popen([str(a) for a in argv], stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT,
                            start_new_session=True)
    os.close(slave)
    seen = b""
    try:
        while time.perf_counter() - t < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(master, 1 << 16)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
                if b"\n" in seen:
                    break
        return time.perf_counter() - t
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)  # (its own session: stree and its pager, nothing else)
        except ProcessLookupError:
            pass
        proc.wait()
        os.close(master)


def first_screen(files, small, large, runs):
    """{size name: median seconds to the first row on a terminal} for `small` and `large`."""
    out = {}
    for name in (small, large):
        argv = STREE + ["-s", files[name][0], "log", "--graph"]
        run(STREE + ["-s", files[name][0], "log", "-n", "1"])  # the index
        times = []
        for _ in range(runs):
            clear_graphs()
            times.append(first_row(argv))
        out[name] = statistics.median(times)
    return out


def flat_context(files, small, large, runs):
    """(median seconds of warm `context` on `small`, on `large`), run in turns."""
    a, b = (STREE + ["-s", files[name][0], "context"] for name in (small, large))
    run(a)
    run(b)
    t = rounds({"small": (a, None, STATS_ENV), "large": (b, None, STATS_ENV)}, runs)
    return t["small"][0], t["large"][0]
