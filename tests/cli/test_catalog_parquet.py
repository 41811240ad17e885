"""`stree catalog export --parquet DIR`, read back by the real DuckDB with the README's own
queries, compared with what `stree stats --all --json` and `stree grep --json` answer."""

import json
import re

import pytest

from conftest import ROOT
from test_catalog import corpus, dumps

duckdb = pytest.importorskip("duckdb", reason="the test extra installs duckdb (pip install 'stree[test]')")


def readme_queries():
    """The DuckDB SQL blocks of the README's Team scale section, by their first comment."""
    text = (ROOT / "README.md").read_text()
    out = {}
    for block in re.findall(r"```sql\n(.*?)```", text, re.S):
        first = block.splitlines()[0]
        if first.startswith("-- "):
            out[first[3:].strip()] = block
    return out


def with_fork(home):
    paths = corpus(home, n=6, entries=80)
    parent = paths[0]
    lines = parent.read_text().splitlines()
    header = json.loads(lines[0])
    header.update(id="0199f0f0-0000-7000-8000-0000000000f2", parentSession=str(parent))
    fork = parent.with_name("fork.jsonl")  # the parent's entries (and their usage) copied: counted once
    fork.write_text("\n".join([dumps(header)] + lines[1:]) + "\n")
    return paths + [fork]


def test_the_readme_queries_over_the_export_answer_as_stats_and_grep(stree, isolated_home, tmp_path):
    with_fork(isolated_home)
    target = tmp_path / "export"
    r = stree("catalog", "export", "--parquet", target, "--json")
    assert r.code == 0 and "Traceback" not in r.err, r
    rec = json.loads(r.out)
    assert rec["sessions"] == 7 and rec["usage"] > 0 and rec["entries"] > 0
    assert sorted(p.name for p in target.iterdir()) == ["entries", "sessions", "usage"]
    assert all(p.name.startswith("day=") for p in (target / "usage").iterdir())
    queries = readme_queries()
    con = duckdb.connect()
    # cost by model
    sql = queries["cost by model"].replace("DIR", str(target))
    got = {row[0]: row[1:] for row in con.execute(sql).fetchall()}
    stats = [json.loads(x) for x in stree("stats", "--all", "--json").out.splitlines()]
    want = {s["key"]: (s["cost"], s["input"], s["output"], s["tokens"]) for s in stats if s["group"] == "model"}
    assert got.keys() == want.keys() and want
    for model, (cost, inp, out, tokens) in want.items():
        assert got[model][1:] == (inp, out, tokens), model
        assert got[model][0] == pytest.approx(cost, rel=1e-9, abs=1e-12), model
    total = [s for s in stats if s["group"] == "total"][0]
    assert con.execute(f"SELECT sum(cost), sum(input) FROM read_parquet('{target}/usage/*/*.parquet')").fetchone() \
        == (pytest.approx(total["cost"], rel=1e-9), total["input"])
    # grep
    sql = queries["grep"].replace("DIR", str(target)).replace("parse_line", "timeout")
    got = {(row[0], row[1]) for row in con.execute(sql).fetchall()}
    want = {(json.loads(x)["session"], json.loads(x)["entry"]) for x in stree("grep", "--json", "timeout").out.splitlines()}
    assert got == want and want
    # without the text
    bare = tmp_path / "bare"
    assert stree("catalog", "export", "--parquet", bare, "--no-text").code == 0
    cols = [c[0] for c in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{bare}/entries/*/*.parquet')").fetchall()]
    assert "text" not in cols and "entry" in cols


def test_an_existing_directory_is_refused(stree, isolated_home, tmp_path):
    corpus(isolated_home, n=1, entries=20)
    (tmp_path / "there").mkdir()
    r = stree("catalog", "export", "--parquet", tmp_path / "there")
    assert r.code == 6 and "already exists" in r.err and "hint:" in r.err and "Traceback" not in r.err, r
    r = stree("catalog", "export")
    assert r.code == 2 and "--parquet DIR" in r.err, r


def test_plain_commands_import_neither_psycopg_nor_pyarrow(isolated_home):
    """The extras are imported only where used: a PostgreSQL URL, export --parquet."""
    import subprocess
    import sys

    corpus(isolated_home, n=2, entries=20)
    for args in (["ls", "--all"], ["grep", "-c", "the"], ["stats", "--all"], ["catalog"]):
        r = subprocess.run([sys.executable, "-X", "importtime", "-m", "stree", *args], capture_output=True, text=True)
        assert r.returncode in (0, 1), r.stderr[-2000:]
        imported = {line.split("|")[-1].strip().split(".")[0] for line in r.stderr.splitlines() if "|" in line}
        assert not imported & {"psycopg", "pyarrow", "duckdb"}, args
