"""`stree catalog export --parquet DIR`: this machine's sessions as Parquet files for the
engines teams already run (DuckDB, ClickHouse, Spark, BigQuery), written with pyarrow (the
`parquet` extra, imported here only).

    DIR/sessions/part-N.parquet          a row per session (ls's fields, stats' totals, host)
    DIR/usage/day=YYYY-MM-DD/*.parquet   a row per entry with usage, as `stats --all` sums it
    DIR/entries/day=YYYY-MM-DD/*.parquet a row per entry grep searches (its text unless --no-text)

Usage is read as `stats --all` reads it (stree.core.usage_totals: a fork's copied prefix belongs to
its parent, not counted twice), so the sums over usage/ are `stats --all`'s. Files are
written a batch of sessions at a time (memory bounded by a batch, not by the team's history)
into a temp directory beside DIR, renamed into place once whole."""

import os
import socket

from ..errors import StreeError

BATCH = 200  # sessions per written file


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise StreeError("export --parquet needs pyarrow, which is not installed",
                         hint="pip install 'stree[parquet]'") from None
    return pyarrow


def export(paths, target, text=True):
    """Write the Parquet files of the sessions at `paths` into the new directory `target`;
    returns {"sessions": n, "usage": rows, "entries": rows}."""
    import shutil
    import tempfile

    pa = _pyarrow()
    target = os.path.abspath(target)
    if os.path.lexists(target):
        raise StreeError(f"{target}: already exists", code=6, hint="name a new directory, or remove that one first")
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        raise StreeError(f"{parent}: no such directory", code=2, hint="create it first")
    work = tempfile.mkdtemp(prefix=".stree-export-", dir=parent)
    try:
        counts = _write(pa, paths, work, text)
        os.rename(work, target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return counts


def _write(pa, paths, work, text):
    from .loading import open_session
    from .usage_totals import ParentIds, day_of, entry_usages, total
    from .preview import entry_text
    from ..format.timestamp import ts_millis

    host = socket.gethostname()
    parents = ParentIds()
    counts = {"sessions": 0, "usage": 0, "entries": 0}
    tables = {"sessions": [], "usage": [], "entries": []}
    part = 0
    for i, path in enumerate(paths):
        try:
            session, tree, _ = open_session(path, no_cache=True)  # (parsed: no index written per file)
        except (StreeError, OSError):
            continue
        try:
            header = session.header
            sid = header.get("id")
            full = os.path.abspath(str(path))
            skip = parents.of(header, path)
            usages = entry_usages(tree, skip, session.raw)
            t = total(usages)
            nodes = tree.nodes
            ids = nodes.col("id")
            tables["sessions"].append({
                "session": sid, "path": full, "host": host, "cwd": header.get("cwd"), "name": tree.name(),
                "created": header.get("timestamp") if isinstance(header.get("timestamp"), str) else None,
                "parent_session": header.get("parentSession") if isinstance(header.get("parentSession"), str) else None,
                "entries": len(nodes) - sum(1 for x in ids if x in skip) if skip else len(nodes),
                "input": t.input, "output": t.output, "cache_read": t.cacheRead, "cache_write": t.cacheWrite,
                "cost": t.cost, "usage_count": t.count})
            for u in usages:
                tables["usage"].append({"session": sid, "path": full, "host": host, "entry": tree.node(u.row).id,
                                        "model": u.key, "ts": u.ms, "day": day_of(u.ms), "input": u.values[0],
                                        "output": u.values[1], "cache_read": u.values[2],
                                        "cache_write": u.values[3], "cost": u.values[4]})
            on_path = set(tree.path_rows(tree.leaf)) if tree.leaf is not None else set()
            for row in range(len(nodes)):
                node = nodes[row]
                if node.type not in ("message", "compaction", "branch_summary", "custom_message"):
                    continue
                body = entry_text(session.load(node))
                if not body:
                    continue
                ms = ts_millis(node.ts)
                rec = {"session": sid, "path": full, "host": host, "entry": node.id, "row": row,
                       "type": node.type, "role": node.role if node.type == "message" else None, "ts": ms,
                       "day": day_of(ms), "on_path": row in on_path}
                if text:
                    rec["text"] = _clean(body)
                tables["entries"].append(rec)
        except StreeError:
            continue
        finally:
            session.close()
        counts["sessions"] += 1
        if counts["sessions"] % BATCH == 0:
            part = _flush(pa, tables, work, part, counts, text)
    _flush(pa, tables, work, part, counts, text)
    return counts


def _clean(text):
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:  # (a lone surrogate: Parquet strings are UTF-8)
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _schemas(pa, text):
    s, i, f, b = pa.string(), pa.int64(), pa.float64(), pa.bool_()
    entries = [("session", s), ("path", s), ("host", s), ("entry", s), ("row", i), ("type", s), ("role", s),
               ("ts", i), ("day", s), ("on_path", b)] + ([("text", s)] if text else [])
    return {
        "sessions": pa.schema([("session", s), ("path", s), ("host", s), ("cwd", s), ("name", s), ("created", s),
                               ("parent_session", s), ("entries", i), ("input", i), ("output", i),
                               ("cache_read", i), ("cache_write", i), ("cost", f), ("usage_count", i)]),
        "usage": pa.schema([("session", s), ("path", s), ("host", s), ("entry", s), ("model", s), ("ts", i),
                            ("day", s), ("input", i), ("output", i), ("cache_read", i), ("cache_write", i),
                            ("cost", f)]),
        "entries": pa.schema(entries),
    }


def _flush(pa, tables, work, part, counts, text):
    import pyarrow.parquet as pq

    schemas = _schemas(pa, text)
    for name, rows in tables.items():
        if not rows and not (name == "sessions" and part == 0):
            continue
        table = pa.Table.from_pylist([{k: _str(v) for k, v in r.items()} for r in rows], schema=schemas[name])
        if name == "sessions":
            os.makedirs(os.path.join(work, name), exist_ok=True)
            pq.write_table(table, os.path.join(work, name, f"part-{part}.parquet"))
        else:
            pq.write_to_dataset(table, os.path.join(work, name), partition_cols=["day"],
                                basename_template=f"part-{part}-{{i}}.parquet")
            counts[name] += len(rows)
        rows.clear()
    return part + 1


def _str(value):
    return _clean(value) if isinstance(value, str) else value
