"""The shape of the code (ARCHITECTURE.md): no import cycle among stree's modules, no
private name imported from another module, no module past ~500 lines, and the layer
contracts of pyproject.toml kept (import-linter)."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "stree"
MAX_LINES = 500


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        package = parts[-1] == "__init__"
        if package:
            parts.pop()
        yield path, ".".join(parts), package


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.find_modules_directly_imported_by(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycle_among_stree_modules():
    """Every import counts, the ones inside functions too: a lazy import is still a dependency."""
    graph = grimp.build_graph("stree")
    assert len(graph.modules) > 50  # the whole package was read
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_cycle_finder_sees_a_cycle():
    graph = grimp.ImportGraph()
    for name in ("a", "a.b", "a.c", "a.d"):
        graph.add_module(name)
    graph.add_import(importer="a.b", imported="a.c")
    graph.add_import(importer="a.c", imported="a.d")
    assert cycles(graph) == []
    graph.add_import(importer="a.d", imported="a.b")
    assert cycles(graph) == [["a.b", "a.c", "a.d"]]


def imported_names(path, module, package):
    """(line, source module, name) of every `from X import name` of a stree module."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = module.split(".") if package else module.split(".")[:-1]
            base = base[:len(base) - node.level + 1]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        if source == "stree" or source.startswith("stree."):
            for alias in node.names:
                yield node.lineno, source, alias.name


def test_no_private_name_is_imported_from_another_module():
    """A module's `_name` is its own: what another module needs is made public."""
    found = [f"{path.relative_to(ROOT)}:{line}: from {source} import {name}"
             for path, module, package in modules()
             for line, source, name in imported_names(path, module, package)
             if name.startswith("_") and not (name.startswith("__") and name.endswith("__"))]
    assert not found, "\n".join(found)


def test_no_module_is_over_500_lines():
    """Split by responsibility long before a file is too long to hold in one's head."""
    long = {str(path.relative_to(ROOT)): n for path, _, _ in modules()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, long


def test_modules_that_share_a_name_say_why():
    """Two modules of one name in two layers are the same concept at two depths, and one of
    their docstrings names the other (issue 23: core/context.py and commands/context.py); a
    new module that takes a name already used elsewhere fails here until its docstring says
    how the two relate."""
    by_name = {}
    for path in sorted((ROOT / "stree").rglob("*.py")):
        if "__pycache__" not in path.parts and path.name not in ("__init__.py", "__main__.py"):
            by_name.setdefault(path.name, []).append(path)
    silent = []
    for name, paths in by_name.items():
        for a, b in ((a, b) for i, a in enumerate(paths) for b in paths[i + 1:]):
            dotted = {p: ".".join(p.relative_to(ROOT).with_suffix("").parts) for p in (a, b)}
            docs = {p: ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) or "" for p in (a, b)}
            if dotted[b] not in docs[a] and dotted[a] not in docs[b]:
                silent.append(f"{dotted[a]} / {dotted[b]}")
    assert not silent, silent


@pytest.mark.skipif(not shutil.which("lint-imports", path=str(Path(sys.executable).parent)),
                    reason="import-linter is not installed (pip install -e .[test])")
def test_the_layer_contracts_are_kept():
    """import-linter's contracts in pyproject.toml (also run by `make test`)."""
    r = subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


def test_every_test_module_has_a_name_of_its_own():
    """pytest imports tests/AREA/test_x.py as the top-level module `test_x` (no packages under
    tests/): two areas with a test_checkout.py make the second one a collection error in
    `make test`, which `make check` (unit and CLI only) would not see."""
    seen = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if "node_modules" not in path.parts:
            seen.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert not {name: paths for name, paths in seen.items() if len(paths) > 1}
