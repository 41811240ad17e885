"""Nodes.may_hold: whether a row before a point holds one of some str values in a column, answered
from an index's bytes without decoding the column (stree.storage.nodes): never "no" for a value
some row holds, whether it is an assistant's toolCall id, a tool result's or a label's."""

from builders import SessionBuilder, dumps
from clock import past_the_tick


def _loaded(tmp_path):
    b = SessionBuilder()
    b.user("read it")
    b.tool_round("read", {"path": "a.py"}, "contents")
    b.assistant(None, tools=[("grep", {"pattern": "é"})])
    b.entries[-1]["message"]["content"][-1]["id"] = "call_é_1"  # (not ASCII: written as UTF-8)
    b.tool_result("call_é_1", "grep", "found")
    b.tool_result("call_orphan", "read", "a result naming no call")
    b.label(b.entries[0]["id"], "start")
    path = b.write(tmp_path / "s.jsonl")
    past_the_tick(path)
    from stree.storage.index import load

    s, state = load(str(path))
    assert state == "built"
    rows = len(s.nodes)
    b.user("appended")  # (a second load, of the file grown: the rows before come from the index)
    with open(path, "a", encoding="utf-8") as f:
        f.write(dumps(b.entries[-1]) + "\n")
    past_the_tick(path)
    s, state = load(str(path))
    assert state in ("updated", "fresh") and len(s.nodes) == rows + 1
    return s.nodes, rows


def test_a_value_some_row_holds_may_be_held(tmp_path, isolated_home):
    nodes, rows = _loaded(tmp_path)
    auxes = nodes.col("aux")
    held = {x for aux in auxes[:rows] if aux is not None
            for x in ((aux,) if isinstance(aux, str) else aux) if isinstance(x, str)}
    assert {"call_é_1", "call_orphan"} <= held
    for value in held:
        assert nodes.may_hold("aux", {value}, rows), value


def test_a_value_no_row_holds_is_told_without_decoding(tmp_path, isolated_home):
    nodes, rows = _loaded(tmp_path)
    from stree.storage.columns import STATS

    before = STATS["values"]
    assert not nodes.may_hold("aux", {"call_never_given", "call_é_2"}, rows)
    assert STATS["values"] == before  # (no value decoded)
    assert nodes.may_hold("aux", {"call_never_given", 7}, rows)  # (not a str: not told)
