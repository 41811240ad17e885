"""stree/data/serve.schema.json against the implementation: every request the server handles is
in it (request and response) and nothing else is; every line the server prints in the serve
tests validates (tests/serve_kit.py checks each one); the man page lists them all."""

import json
from pathlib import Path

from schema_check import check_record, errors, load

from stree.service.handlers import names

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = load()


def defined(prefix):
    return sorted(k.split(".", 1)[1] for k in SCHEMA["$defs"] if k.startswith(prefix + "."))


def test_every_handled_request_is_in_the_schema_and_nothing_else():
    assert defined("request") == names()
    assert defined("response") == names()
    assert defined("event") == ["entries_appended", "watch_stopped"]
    refs = {s["$ref"].removeprefix("#/$defs/") for s in SCHEMA["oneOf"]}
    assert refs == {k for k in SCHEMA["$defs"] if k.split(".")[0] in ("request", "response", "event", "error")}


def test_each_read_question_s_request_has_its_arguments_and_nothing_else():
    """serve's requests for stree's read questions (stree.questions) take the fields the
    question's arguments declare: a field added to a question and not here fails."""
    from stree.questions import questions

    asked = [q for q in questions() if q.serve is not None]
    assert {q.serve[0] for q in asked} == {"log", "show", "rev_parse", "context", "grep", "stats"}
    for q in asked:
        schema = SCHEMA["$defs"]["request." + q.serve[0]]
        args = q.offered("serve")
        assert list(schema["properties"])[2:] == [a.wire for a in args], q.name
        assert schema["required"] == ["type"] + [a.wire for a in args if a.required], q.name
        for a in args:
            spec = schema["properties"][a.wire]
            kind = {str: "string", bool: "boolean", int: "integer", list: "array"}[a.kind]
            assert spec.get("type", "string") == kind, (q.name, a.name)
            values = spec["items"] if a.kind is list else spec
            if a.choices is not None:  # the choices, or a set left open (agents, entry types) and described
                assert values.get("enum") == list(a.choices) or "description" in values, (q.name, a.name)
            if a.minimum is not None:
                assert spec["minimum"] == a.minimum, (q.name, a.name)


def test_the_checker_refuses_what_breaks_the_schema():
    ok = {"id": "1", "type": "response", "command": "set_label", "success": True}
    assert check_record(ok, SCHEMA) == []
    assert check_record(dict(ok, data={}), SCHEMA)  # set_label answers no data
    assert check_record({"type": "response", "command": "get_entries", "success": True,
                         "data": {"entries": [{"id": "x"}], "leafId": None}}, SCHEMA)  # an entry has a type
    assert check_record({"type": "response", "success": False, "error": "x", "errorCode": "oops"}, SCHEMA)
    assert check_record({"type": "entries_appended", "sessionFile": "/f", "ids": ["a"]}, SCHEMA)  # no leafId
    assert check_record({"type": "response", "command": "log", "success": True,
                         "data": {"records": [{"id": "a"}]}}, SCHEMA)


def test_documented_requests_validate():
    samples = {
        "get_state": {}, "get_messages": {}, "get_last_assistant_text": {}, "get_fork_messages": {},
        "get_entries": {"since": "abc"}, "get_tree": {"lightweight": True},
        "get_session_stats": {}, "export_html": {"outputPath": "/tmp/s.html", "overwrite": True},
        "switch_session": {"sessionPath": "/s.jsonl"}, "fork": {"entryId": "abc"}, "clone": {},
        "set_session_name": {"name": "n"}, "list_sessions": {"scope": "all"},
        "navigate_tree": {"targetId": "a", "summarize": True, "customInstructions": "x", "replaceInstructions": False,
                          "label": "l"},
        "set_label": {"entryId": "a", "label": "l"}, "abort_branch_summary": {}, "abort": {},
        "rename_session": {"sessionPath": "/s.jsonl", "name": "n"},
        "delete_session": {"sessionPath": "/s.jsonl", "confirm": True},
        "log": {"revision": "@", "graph": True, "filter": "all", "search": "x", "maxCount": 3, "since": "3d",
                "until": "2026-01-31", "roles": ["assistant"], "models": ["gpt-*"], "reverse": False},
        "show": {"revisions": ["@"]}, "stats": {"revision": "@~2", "all": False, "since": "2026-01-01",
                                                "until": "2026-12-31"},
        "rev_parse": {"revisions": ["@"], "verify": True}, "context": {"revision": "@"},
        "grep": {"pattern": "x", "ignoreCase": True, "word": True, "regex": False, "filesOnly": False, "count": True,
                 "maxCount": 3, "roles": ["user"], "types": ["message"], "since": "3d", "until": "2026-01-31",
                 "cwd": "/tmp", "agent": "all", "session": "abc"},
    }
    assert sorted(samples) == names()
    for name, fields in samples.items():
        request = {"id": "1", "type": name, **fields}
        assert errors(request, {"$ref": f"#/$defs/request.{name}"}, SCHEMA) == [], name
    assert errors({"type": "delete_session", "sessionPath": "/s"}, {"$ref": "#/$defs/request.delete_session"},
                  SCHEMA)  # no confirmation
    assert errors({"type": "grep"}, {"$ref": "#/$defs/request.grep"}, SCHEMA)  # no pattern
    assert errors({"type": "grep", "pattern": "x", "roles": ["robot"]}, {"$ref": "#/$defs/request.grep"}, SCHEMA)


def test_the_man_page_and_help_list_every_request(stree):
    page = (ROOT / "man" / "stree-serve.1").read_text()
    text = stree("serve", "--help").out
    for name in names():
        assert name.replace("_", "\\_") in page or name in page, name
        assert name in text, name
    assert "serve.schema.json" in page and json.loads((ROOT / "stree" / "data" / "serve.schema.json").read_text())
