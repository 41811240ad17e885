"""One door to a session (stree.core.loading): every reader gets its session, its tree and what
the read cost from open_session; a Tree is made of a session in one place; the front ends (the
CLI, serve, MCP) are one Workspace (stree.core.workspace)."""

import ast
import os
import re
from pathlib import Path

from builders import branchy, dumps
from stree.core.loading import LoadReport, open_session

PACKAGE = Path(__file__).resolve().parents[2] / "stree"


def calls(predicate):
    """(module file, line) of every call in stree for which predicate(call node, imports) holds."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {}  # local name -> module it was imported from
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    imported[alias.asname or alias.name] = (node.module or "", alias.name)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and predicate(node, imported):
                found.append((str(path.relative_to(PACKAGE.parent)), node.lineno))
    return found


def test_a_tree_is_made_of_a_session_in_one_place():
    """`Tree(...)` outside core/tree.py: only the door's tree_of."""
    def builds_tree(call, imported):
        return isinstance(call.func, ast.Name) and call.func.id == "Tree"
    sites = [(f, line) for f, line in calls(builds_tree) if f != "stree/core/tree.py"]
    assert [f for f, _ in sites] == ["stree/core/loading.py"], sites


def test_a_session_file_is_read_in_one_place():
    """Above storage, only the door reads a session file (its index, or a whole parse)."""
    def reads(call, imported):
        f = call.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            return f.value.id == "index" and f.attr == "load"
        return isinstance(f, ast.Name) and imported.get(f.id, ("", ""))[1] == "parse" and \
            imported[f.id][0].endswith("storage.session")
    sites = [(f, line) for f, line in calls(reads) if not f.startswith("stree/storage/")]
    assert sorted({f for f, _ in sites}) == ["stree/core/loading.py"], sites


def test_the_report_says_how_the_index_served(tmp_path):
    b = branchy()
    path = str(b.write(tmp_path / "s.jsonl"))
    assert open_session(path).report.index == "built"
    session, tree, report = open_session(path)
    assert report.index == "fresh" and tree.leaf == b.entries[-1]["id"] and tree.nodes is session.nodes
    with open(path, "a") as f:
        b.user("one more")
        f.write(dumps(b.entries[-1]) + "\n")
    session, tree, report = open_session(path)
    assert report.index == "updated" and tree.leaf == b.entries[-1]["id"]
    session, tree, report = open_session(path, no_cache=True)
    assert report.index == "off" and tree.leaf == b.entries[-1]["id"] and session.previews is None


def test_a_commands_report_keeps_its_first_read(tmp_path):
    """A command's report says how its first read went (a later read of the same file, a
    writer's, is fresh)."""
    path = str(branchy().write(tmp_path / "s.jsonl"))
    command = LoadReport()
    parsed, decoded = command.parsed, command.decoded  # (the process's counts so far)
    first = open_session(path, report=command)
    again = open_session(path, report=command)
    assert first.report is command and again.report is command and command.index == "built"
    assert command.parsed - parsed == len(branchy().entries) + 1  # the header and every entry, once
    first.tree.load(first.tree.node(0))
    assert command.decoded - decoded == 1


def test_no_cache_in_the_environment_parses_whole(tmp_path, monkeypatch):
    path = str(branchy().write(tmp_path / "s.jsonl"))
    monkeypatch.setenv("STREE_NO_CACHE", "1")
    assert open_session(path).report.index == "off"
    assert not (tmp_path / "home" / ".cache" / "stree" / "index").exists()


def test_an_unreadable_file_is_one_error(tmp_path):
    from stree.errors import StreeError

    path = tmp_path / "s.jsonl"
    try:
        open_session(str(path))
    except StreeError as e:
        assert str(path) in str(e)
    else:
        raise AssertionError("no error for a missing file")


def test_the_three_front_ends_are_one_workspace(tmp_path):
    """The CLI's Env, serve's Served and MCP's Workspace name sessions as -s does, from the same
    options (stree.core.workspace.Workspace.where)."""
    from stree.cli import Env
    from stree.core.workspace import Workspace
    from stree.mcp.tools import Workspace as McpWorkspace
    from stree.service.state import Served

    path = branchy().write(tmp_path / "s.jsonl")
    env = Env(str(path), None, None, str(tmp_path), "never", False, False)
    mcp = McpWorkspace(allow_writes=False, **env.where())
    served = Served(env.session_path(), **env.where())
    try:
        for front in (env, mcp, served):
            assert isinstance(front, Workspace)
            assert os.path.samefile(front.session_path(), path)
        assert os.path.samefile(mcp.path(), path) and os.path.samefile(served.path, path)
        assert served.load()[1].leaf == mcp.load()[1].leaf == env.open().tree.leaf == branchy().entries[-1]["id"]
    finally:
        served.close()


def test_debug_stats_line_is_the_reports(stree, tmp_path):
    """What STREE_DEBUG_STATS prints is the command's report: the same line from click's path and
    the fast path, for a first read and the next one."""
    path = branchy().write(tmp_path / "s.jsonl")
    lines = []
    for no_fast in ("1", "", "", "1"):
        r = stree("-s", path, "log", "-n", "2", env={"STREE_DEBUG_STATS": "1", "STREE_NO_FAST": no_fast})
        assert r.code == 0, r
        (line,) = [x for x in r.err.splitlines() if x.startswith("stree: stats:")]
        lines.append(re.sub(r"peak rss \d+ KiB", "peak rss N KiB", line))
    assert lines[0].startswith(f"stree: stats: parsed {len(branchy().entries) + 1} lines, index built, "), lines
    assert lines[1] == lines[2] == lines[3] and "parsed 0 lines, index fresh" in lines[1], lines
