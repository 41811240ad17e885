"""`log --graph` into a pipe keeps its output and prints it again while the session
file is unchanged: byte for byte what a fresh render (--no-cache) prints, and never
once the file, the options or $HOME differ."""

import json
import os
import stat

from builders import branchy as _branchy, dumps
from clock import past_the_tick

from test_index import stats

def branchy(*args, **kwargs):
    """builders.branchy, its write() waiting past the racy window: a graph drawn within it of
    the file's last change is (rightly) not kept, and stree may well draw that fast."""
    b = _branchy(*args, **kwargs)
    write = b.write

    def settled(path):
        written = write(path)
        past_the_tick(written)
        return written
    b.write = settled
    return b


OPTION_SETS = (
    ("--graph",),
    ("--graph", "--filter", "all"),
    ("--graph", "--filter", "user-only", "--no-ids"),
    ("--graph", "--json"),
    ("--graph", "--format", "{id}\\t{row}", "-z"),
    ("--graph", "--search", "csv"),
    ("--graph", "-n", "3", "--no-ids"),  # (--reverse is refused with --graph)
    ("--graph", "--color", "always"),
)


def graph_files(home):
    d = home / ".cache" / "stree" / "index"
    return sorted(d.glob("*.graph")) if d.exists() else []


def log(stree, path, *args, **env):
    args = list(args)
    global_opts = []
    if "--color" in args:  # a global option: before the command
        i = args.index("--color")
        global_opts = args[i:i + 2]
        del args[i:i + 2]
    return stree(*global_opts, "-s", path, "log", *args, env=dict({"STREE_DEBUG_STATS": "1"}, **env))


def fresh(stree, path, *args):
    args = list(args)
    global_opts = ["--no-cache"]
    if "--color" in args:
        i = args.index("--color")
        global_opts += args[i:i + 2]
        del args[i:i + 2]
    return stree(*global_opts, "-s", path, "log", *args)


def test_a_second_graph_is_printed_from_the_cache_exactly(stree, tmp_path, isolated_home):
    path = branchy().write(tmp_path / "s.jsonl")
    for options in OPTION_SETS:
        expected = fresh(stree, path, *options).raw
        first = log(stree, path, *options)
        assert first.code == 0 and first.raw == expected, options
        assert stats(first)[1] != "graph-cache"
        again = log(stree, path, *options)
        assert again.code == 0 and again.raw == expected, options
        assert stats(again) == (0, "graph-cache"), options
    assert len(graph_files(isolated_home)) == len(OPTION_SETS)
    for f in graph_files(isolated_home):
        assert stat.S_IMODE(f.stat().st_mode) == 0o600


def test_an_append_draws_again(stree, tmp_path, isolated_home):
    b = branchy()
    path = b.write(tmp_path / "s.jsonl")
    log(stree, path, "--graph")
    assert stats(log(stree, path, "--graph"))[1] == "graph-cache"
    b.user("one more question about csv")
    with open(path, "a", encoding="utf-8") as f:
        f.write(dumps(b.entries[-1]) + "\n")
    past_the_tick(path)  # an output drawn within the file's tick is not kept (the patch is that fast)
    r = log(stree, path, "--graph")
    assert stats(r)[1] == "updated" and "one more question" in r.out
    assert r.raw == fresh(stree, path, "--graph").raw
    assert stats(log(stree, path, "--graph"))[1] == "graph-cache"


def test_a_rewrite_of_the_same_size_draws_again(stree, tmp_path, isolated_home):
    path = branchy().write(tmp_path / "s.jsonl")
    log(stree, path, "--graph")
    text = path.read_text(encoding="utf-8")
    assert "csv" in text
    path.write_text(text.replace("csv", "tsv"), encoding="utf-8")  # same length, new bytes
    r = log(stree, path, "--graph")
    assert stats(r)[1] != "graph-cache" and "tsv" in r.out and "csv" not in r.out
    assert r.raw == fresh(stree, path, "--graph").raw


def test_another_home_draws_again(stree, tmp_path, isolated_home):
    """Previews shorten paths under $HOME: the kept output belongs to one $HOME."""
    path = branchy(cwd=str(isolated_home / "proj")).write(tmp_path / "s.jsonl")
    first = log(stree, path, "--graph", "--filter", "all")
    other = tmp_path / "elsewhere"
    other.mkdir()
    r = log(stree, path, "--graph", "--filter", "all", HOME=str(other))
    assert stats(r)[1] != "graph-cache"
    assert r.raw == stree("--no-cache", "-s", path, "log", "--graph", "--filter", "all",
                          env={"HOME": str(other)}).raw
    assert stats(log(stree, path, "--graph", "--filter", "all"))[1] == "graph-cache"
    assert first.raw == log(stree, path, "--graph", "--filter", "all").raw


def test_a_session_with_warnings_is_never_kept(stree, tmp_path, isolated_home):
    """The warning about skipped lines goes to stderr every time: such output is not kept."""
    b = branchy()
    path = b.write(tmp_path / "s.jsonl")
    with open(path, "a", encoding="utf-8") as f:
        f.write("{garbage\n")
    for _ in range(2):
        r = log(stree, path, "--graph")
        assert r.code == 0 and "skipped 1 malformed line" in r.err and stats(r)[1] != "graph-cache"
    assert graph_files(isolated_home) == []


def test_no_cache_keeps_nothing(stree, tmp_path, isolated_home):
    path = branchy().write(tmp_path / "s.jsonl")
    stree("--no-cache", "-s", path, "log", "--graph")
    stree("-s", path, "log", "--graph", env={"STREE_NO_CACHE": "1"})
    assert graph_files(isolated_home) == []


def test_a_damaged_kept_graph_is_drawn_again(stree, tmp_path, isolated_home):
    path = branchy().write(tmp_path / "s.jsonl")
    expected = log(stree, path, "--graph").raw
    (kept,) = graph_files(isolated_home)
    for damage in (lambda data: data[:-10], lambda data: b"garbage", lambda data: b""):
        kept.write_bytes(damage(kept.read_bytes()) if kept.exists() else b"")
        r = log(stree, path, "--graph")
        assert r.code == 0 and r.raw == expected and stats(r)[1] != "graph-cache"


def test_each_session_keeps_a_few_option_sets(stree, tmp_path, isolated_home):
    from stree.storage.keptgraph import KEEP

    path = branchy().write(tmp_path / "s.jsonl")
    for n in range(KEEP + 3):
        log(stree, path, "--graph", "-n", str(n + 1))
    assert len(graph_files(isolated_home)) == KEEP


def test_cache_lists_and_gc_removes_kept_graphs_of_changed_sessions(stree, tmp_path, isolated_home):
    keep = branchy().write(tmp_path / "keep.jsonl")
    changed = branchy().write(tmp_path / "changed.jsonl")
    for p in (keep, changed):
        log(stree, p, "--graph")
    with open(changed, "a", encoding="utf-8") as f:
        f.write(dumps({"type": "session_info", "id": "abcd0001", "parentId": None,
                       "timestamp": "2026-01-01T00:00:00.000Z", "name": "renamed"}) + "\n")
    listing = [json.loads(x) for x in stree("cache", "--json").out.splitlines()]
    graphs = {(x["session"], x["stale"]) for x in listing if x["kind"] == "graph"}
    assert graphs == {(str(keep), False), (str(changed), True)}
    assert {x["kind"] for x in listing} == {"graph", "index"}
    r = stree("gc")
    assert r.code == 0 and "removed 1 cache file(s)" in r.err  # the changed session's index is still good
    remaining = [json.loads(x) for x in stree("cache", "--json").out.splitlines()]
    assert {(x["kind"], x["session"]) for x in remaining} == {("graph", str(keep)), ("index", str(keep)),
                                                              ("index", str(changed))}
    assert stats(log(stree, keep, "--graph"))[1] == "graph-cache"
    r = stree("cache", "clear")
    assert r.code == 0 and graph_files(isolated_home) == []


def test_a_terminal_gets_kept_output_for_its_width_and_colours(tmp_path, isolated_home):
    """Rows cut to the terminal's width, colours, the pager: kept per width and colour choice,
    printed again as drawn; an append is patched as into a pipe."""
    import pty
    import subprocess
    import sys

    from conftest import read_pty

    b = branchy()
    path = b.write(tmp_path / "s.jsonl")

    def run(columns, *extra, **more):
        env = dict(os.environ, STREE_DEBUG_STATS="1", COLUMNS=str(columns), PAGER="cat", **more)
        master, slave = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "stree", *extra, "-s", str(path), "log", "--graph"],
                                stdin=slave, stdout=slave, stderr=slave, env=env)
        os.close(slave)
        out = read_pty(master, proc).decode("utf-8", "replace")
        proc.wait(timeout=30)
        assert proc.returncode == 0, out
        rows, _, stats_line = out.rpartition("stree: stats:")
        return rows, stats_line

    first, said = run(60)
    assert "graph-cache" not in said
    again, said = run(60)
    assert "index graph-cache" in said and again == first
    narrow, said = run(40)
    assert "graph-cache" not in said and narrow != first
    plain, said = run(60, "--color", "never")
    assert "graph-cache" not in said and "\x1b[" not in plain and "\x1b[" in first
    b.user("one more question about csv")
    with open(path, "a", encoding="utf-8") as f:
        f.write(dumps(b.entries[-1]) + "\n")
    patched, said = run(60)
    drawn, _ = run(60, STREE_NO_CACHE="1")
    assert "graph rows drawn 2," in said and patched == drawn and "one more question" in patched


SPELLINGS = (
    ["log", "--graph"],
    ["--color=never", "log", "--graph", "--filter=all"],
    ["--no-pager", "log", "--filter", "no-tools", "--graph", "@"],
    ["log", "--graph", "-n5"],  # click's spellings the fast path leaves to click
    ["-C", ".", "log", "--graph", "--max-count=3"],
    ["--debug", "log", "--graph", "--no-ids", "-n", "4"],
    ["log", "--graph", "-z", "--format", "{id}"],
    ["log", "--graph", "--search", "csv"],
    ["log", "--graph", "--search", "no such words"],  # nothing to show: said on stderr, never kept
)


def test_every_spelling_prints_what_a_fresh_render_prints(stree, tmp_path, isolated_home):
    path = branchy().write(tmp_path / "s.jsonl")
    for args in SPELLINGS:
        i = args.index("log")
        expected = stree(*args[:i], "--no-cache", "-s", path, *args[i:])
        assert expected.code == (1 if "no such words" in args else 0), args  # a search finding nothing: 1
        for _ in range(3):  # drawn, then kept: by click's path or before click loads
            r = stree(*args[:i], "-s", path, *args[i:])
            assert (r.code, r.raw, r.err) == (expected.code, expected.raw, expected.err), args


def test_a_kept_graph_is_printed_without_loading_click(stree, tmp_path, isolated_home):
    import subprocess
    import sys

    path = branchy().write(tmp_path / "s.jsonl")
    log(stree, path, "--graph")
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "stree", "-s", str(path), "log", "--graph"],
                          capture_output=True)
    assert proc.returncode == 0 and proc.stdout == fresh(stree, path, "--graph").raw
    imported = {line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines()}
    assert "stree.storage.keptgraph" in imported and "click" not in imported and "stree.cli" not in imported


def test_bad_options_get_clicks_errors_even_with_a_kept_graph(stree, tmp_path, isolated_home):
    path = branchy().write(tmp_path / "s.jsonl")
    log(stree, path, "--graph")
    for args in (["-n", "x"], ["--filter", "bogus"], ["--json", "--format", "{id}"], ["--format", "{nope}"]):
        r = stree("-s", path, "log", "--graph", *args)
        assert r.code == 2 and r.out == "" and r.err, args


def test_the_fast_path_reads_only_plain_spellings():
    from stree.entrypoint import parse_log_graph

    assert parse_log_graph(["-s", "f", "log", "--graph", "--filter=all", "-n", "3", "x"]) == {
        "session": "f", "as_graph": True, "filter_": "all", "max_count": 3, "revision": "x"}
    assert parse_log_graph(["--session=f", "--color", "always", "log", "--json", "--graph"]) == {
        "session": "f", "color": "always", "json_mode": True, "as_graph": True}
    for declined in (["log"], ["log", "--graph", "a", "b"], ["-C", "d", "log", "--graph"], ["log", "--graph", "-n5"],
                     ["log", "--graph", "--"], ["log", "--graph", "-zn", "3"], ["show", "--graph"],
                     ["-s"], ["log", "--graph", "--filter"], ["--no-pager=1", "log", "--graph"],
                     ["log", "--graph", "--help"], ["--version", "log", "--graph"],
                     ["log", "--graph", "--filter", "bogus"], ["log", "--graph", "-n", "x"]):
        assert parse_log_graph(declined) is None, declined


def test_closed_or_full_stdout_is_an_io_error(tmp_path, isolated_home):
    """The kept graph's writer fails as stree's other output does: a full disk is one line,
    exit 4; a closed stdout is a reader that went away (issue 14): exit 0, nothing said."""
    import subprocess
    import sys

    path = branchy().write(tmp_path / "s.jsonl")
    cmd = [sys.executable, "-m", "stree", "-s", str(path), "log", "--graph"]
    subprocess.run(cmd, capture_output=True, check=True)  # kept
    for kept in (True, False):
        if not kept:
            for f in graph_files(isolated_home):
                f.unlink()
        closed = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, close_fds=True,
                                preexec_fn=lambda: os.close(1))
        assert closed.returncode == 0 and closed.stderr == b"", (kept, closed.stderr)
        with open("/dev/full", "wb") as full:
            r = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE)
        assert r.returncode == 4 and b"No space left" in r.stderr, (kept, r.stderr)


def test_an_edited_stree_draws_again(tmp_path, isolated_home):
    """A checkout whose code changed (same version number) does not print what the old code drew.
    The checkout is a copy of stree's package, edited there: the tests beside this one (another
    worker's) keep drawing with the package as it is."""
    import shutil
    import subprocess
    import sys
    from types import SimpleNamespace

    import stree as package

    checkout = tmp_path / "checkout"
    shutil.copytree(os.path.dirname(package.__file__), checkout / "stree",
                    ignore=shutil.ignore_patterns("__pycache__"))
    path = branchy().write(tmp_path / "s.jsonl")
    env = {**os.environ, "PYTHONPATH": str(checkout), "STREE_DEBUG_STATS": "1"}

    def run(*argv):
        r = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
        assert r.returncode == 0, r.stderr
        return r

    assert run("-c", "import stree; print(stree.__file__)").stdout.startswith(str(checkout))  # (the copy runs)

    def graph():
        return stats(SimpleNamespace(err=run("-m", "stree", "-s", str(path), "log", "--graph").stderr))[1]

    graph()
    assert graph() == "graph-cache"
    render = checkout / "stree" / "output" / "graph.py"
    newest = max(os.stat(os.path.join(d, f)).st_mtime_ns for d, _, files in os.walk(checkout / "stree")
                 for f in files if f.endswith(".py"))
    os.utime(render, ns=(newest, newest + 10**9 * 3600))  # newer than any of its files
    assert graph() != "graph-cache"


def test_a_kept_file_copied_by_ranges_many_times_stays_whole_and_its_blocks_few(tmp_path, monkeypatch):
    """stree.storage.keptgraph.file as the patches use it: ranges of the kept file copied around new
    bytes, again and again; each file reads back as what was put in, every block's CRC right, and
    the blocks the ranges cut are made whole again before there are too many."""
    from stree.storage.keptgraph import file as graphfile

    monkeypatch.setenv("STREE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("STREE_GRAPH_BLOCK", "100")
    target = str(tmp_path / "1-1-00000000.graph")
    expected = bytes(range(256)) * 40
    writer = graphfile.Writer(target, 1 << 30)
    writer.add(expected)
    writer.commit(b"rows", {"n": 0})
    most = 0
    for n in range(300):
        kept = graphfile.open_kept(target)
        assert kept.verify() and kept.rows() == b"rows" and kept.meta["n"] == n
        assert kept.read(0, kept.length) == expected
        most = max(most, len(kept.blocks))
        cut = (n * 37) % kept.length
        new = b"new %d\n" % n
        writer = graphfile.Writer(target, 1 << 30)
        writer.copy(kept, 0, cut)
        writer.add(new)
        writer.copy(kept, cut, kept.length)
        writer.commit(b"rows", {"n": n + 1})
        kept.close()
        expected = expected[:cut] + new + expected[cut:]
    assert most <= 2 * (len(expected) // 100) + 256 + 4
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
