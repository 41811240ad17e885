#!/usr/bin/env python3
"""Startup A/B: this tree's stree against another's (e.g. `git archive REV | tar -x -C DIR`), warm
commands on bench/data's 100k session and --version/--help, in turns with `import click`
(tools/bench/measure.rounds), bytecode compiled in both. Run from anywhere: each tree is put
first on PYTHONPATH and the commands run from /tmp, so `-m stree` loads the tree asked for
(the current directory would come first otherwise).

    python3 tools/bench/ab_startup.py OTHER_TREE [ROUNDS]      (default 21 rounds)

Prints each command's median as a ratio to `import click` in both trees, and new/old."""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from measure import ENV, PY, ROOT, clear_cache, data_file, rounds, run  # noqa: E402

COMMANDS = (("--version", ["--version"]), ("--help", ["--help"]), ("log -n 20", ["log", "-n", "20"]),
            ("rev-parse @~100", ["rev-parse", "@~100"]), ("label", ["label"]), ("show @", ["show", "@"]),
            ("context", ["context"]))


def main(argv):
    if not argv:
        sys.exit(__doc__)
    other = Path(argv[0]).resolve()
    runs = int(argv[1]) if len(argv) > 1 else 21
    os.chdir("/tmp")
    trees = (("new", ROOT), ("old", other))
    for _, root in trees:
        run([PY, "-m", "compileall", "-q", str(root / "stree")])
    big = data_file("100k", 100_000)
    clear_cache()
    cmds = {"click": ([PY, "-c", "import click"], None, None)}
    for tag, root in trees:
        env = dict(ENV, PYTHONPATH=str(root))
        for name, args in COMMANDS:
            argv_ = [PY, "-m", "stree"] + (args if name.startswith("--") else ["-s", str(big)] + args)
            run(argv_, env)  # (the index built, untimed)
            cmds[f"{name} {tag}"] = (argv_, None, env)
    times = rounds(cmds, runs)
    click = times["click"][0]
    print(f"| command | this tree | {other} | new / old |\n|---|---|---|---|")
    for name, _ in COMMANDS:
        new, old = times[f"{name} new"][0], times[f"{name} old"][0]
        print(f"| {name} | {new / click:.2f}× click | {old / click:.2f}× click | {new / old:.3f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
