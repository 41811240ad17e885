"""The query layer (stree.questions): a read question defined once is offered by `stree serve`,
MCP and the CLI through their adapters, each reading its arguments and saying a bad one its own
way. A made-up question, registered at run time, is answered by all three with no other
change; the questions stree has answer as the commands' --json do.

The query layer serves several commands and front ends: one concern, so one module."""

import json

import pytest
from click.testing import CliRunner

from stree.questions import questions
from stree.questions.base import Arg, Question, Refused


def _models(place, session=None, revision="@", min_messages=0, roles=()):
    """The models of the assistant messages on the path to `revision`, with how many each wrote."""
    from stree.core.revs import Resolver

    _, tree = place.load(session)
    counts = {}
    for row in Resolver(tree).rows_of(revision):
        node = tree.node(row)
        if node.type == "message" and node.role == "assistant":
            message = tree.load(node)["message"]
            key = f"{message.get('provider')}/{message.get('model')}"
            counts[key] = counts.get(key, 0) + 1
    return [{"model": m, "messages": n} for m, n in sorted(counts.items()) if n >= min_messages]


def _check(args):
    if args.get("min_messages") and args.get("roles"):
        raise Refused("{0} and {1} do not go together", "min_messages", "roles")


MODELS = Question("made_up_models", _models, [
    Arg("session", str, "The session.", serve=False, cli=False),
    Arg("revision", str, "A revision.", default="@", positional=True),
    Arg("min_messages", int, "Only models with this many messages.", minimum=1),
    Arg("roles", list, "Roles (made up, to check a list's choices).", choices=("user", "assistant"))],
    check=_check, serve=("made_up_models", "records"),
    mcp=("made_up_models", "models", "Models", "The models of a path.", {"type": "object"}),
    cli=("made-up-models", "Show the models of a path", {"model": "provider/model", "messages": "how many"}, None,
         [("stree made-up-models", "the models on the path to @"), ("stree made-up-models --json @~3", "as JSON")]))


@pytest.fixture
def registered(monkeypatch):
    """MODELS among the questions, as a row in stree/questions/table.py would put it, and in the
    table of commands (stree.commands.ask:made_up_models)."""
    import stree.commands
    import stree.questions.table as table

    monkeypatch.setattr(table, "QUESTIONS", table.QUESTIONS + [MODELS])
    monkeypatch.setitem(stree.commands.SUBCOMMANDS, "made-up-models", ("stree.commands.ask:made_up_models", MODELS.cli[1]))
    return MODELS


def _cli(*args):
    from stree.cli import main

    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result


def test_a_made_up_question_is_answered_by_the_cli_serve_and_mcp(registered):
    import os

    from stree.mcp.reads import tool
    from stree.mcp.tools import Workspace
    from stree.service.handlers import handle
    from stree.service.queries import handler
    from stree.service.state import Served
    from stree.core.store import resolve_session

    cli = _cli("-s", "demo", "made-up-models", "--json")
    assert cli.exit_code == 0, cli.output
    by_cli = [json.loads(line) for line in cli.output.splitlines()]
    assert by_cli and all(r["messages"] >= 1 and "/" in r["model"] for r in by_cli)
    people = _cli("-s", "demo", "made-up-models", "@~3")
    assert people.exit_code == 0 and people.output.splitlines()[0].split("\t")[0] == by_cli[0]["model"]
    helped = _cli("made-up-models", "--help").output
    assert "Examples:\n    stree made-up-models " in helped and "--min-messages N" in helped and "--roles" in helped

    served = Served(resolve_session("demo", os.getcwd(), None, None), os.getcwd())
    import stree.service.handlers as handlers

    # (at import, service.queries.HANDLERS holds a handler of every question offered to serve)
    handlers.HANDLERS["made_up_models"] = handler(registered)
    try:
        by_serve = handle(served, {"id": "1", "type": "made_up_models"}, None)
        assert by_serve["success"] and by_serve["data"] == {"records": by_cli}, by_serve
        bad = handle(served, {"type": "made_up_models", "minMessages": 0}, None)
        assert (bad["errorCode"], bad["error"]) == ("bad_params",
                                                    "made_up_models: field 'minMessages' must be 1 or more")
        bad = handle(served, {"type": "made_up_models", "roles": ["robot"]}, None)
        assert bad["error"] == "made_up_models: field 'roles' holds 'robot'; each must be one of user, assistant"
        bad = handle(served, {"type": "made_up_models", "minMessages": 1, "roles": ["user"]}, None)
        assert bad["error"] == "made_up_models: minMessages and roles do not go together"
    finally:
        del handlers.HANDLERS["made_up_models"]

    mcp = tool(registered)
    assert list(mcp.input_schema["properties"]) == ["session", "revision", "min_messages", "roles"]
    data, _ = mcp.call(Workspace(session="demo"), {})
    assert data == {"models": by_cli}
    from stree.errors import UsageError

    with pytest.raises(UsageError, match="argument 'min_messages' must be at least 1"):
        mcp.call(Workspace(session="demo"), {"min_messages": 0})
    with pytest.raises(UsageError, match="argument 'roles' holds 'robot'"):
        mcp.call(Workspace(session="demo"), {"roles": ["robot"]})

    with pytest.raises(UsageError, match="^--min-messages and --roles do not go together$"):  # (exit 2)
        _cli("-s", "demo", "made-up-models", "--min-messages", "1", "--roles", "user")
    assert _cli("-s", "demo", "made-up-models", "--min-messages", "0").exit_code == 2  # click's own check


def test_the_questions_answer_what_the_commands_json_prints(stree):
    """serve's log, show and context and MCP's labels, through the layer, as the CLI's --json."""
    import os

    from stree.core.store import resolve_session
    from stree.mcp.tools import Workspace
    from stree.service.handlers import handle
    from stree.service.state import Served

    served = Served(resolve_session("demo", os.getcwd(), None, None), os.getcwd())

    def lines(*args):
        r = stree("-s", "demo", *args)
        assert r.code == 0, r.err
        return [json.loads(line) for line in r.out.splitlines()]
    for request, args in (({"type": "log", "maxCount": 4}, ("log", "-n", "4", "--json")),
                          ({"type": "log", "graph": True, "filter": "user-only"},
                           ("log", "--graph", "--filter", "user-only", "--json")),
                          ({"type": "log", "revision": "@~5..@", "reverse": True},
                           ("log", "@~5..@", "--reverse", "--json")),
                          ({"type": "show", "revisions": ["@", "@^"]}, ("show", "@", "@^", "--json")),
                          ({"type": "rev_parse", "revisions": ["@~2"]}, ("rev-parse", "@~2", "--json"))):
        answer = handle(served, dict(request, id="1"), None)
        assert answer["success"], answer
        assert answer["data"]["records"] == lines(*args), request
    context = handle(served, {"type": "context", "revision": "@~2"}, None)["data"]
    assert context == lines("context", "@~2", "--json")[0]
    labels = {q.name: q for q in questions()}["labels"].answer(Workspace(session="demo"))
    assert labels == lines("label", "--json")
    assert {q.name for q in questions()} >= {"log", "tree", "show", "context", "labels", "grep", "list_sessions"}
