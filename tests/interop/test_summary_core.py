"""The summary core against pi itself: conversation text, budget, file lists, prompts."""

import json
import subprocess

import pytest

from builders import SessionBuilder
from pi_harness import REFERENCE, VERSIONS, each_version, pi_batch, pi_constant, run_pi
from stree.core import summary
from stree.format.jsjson import stringify
from stree.providers import Options, resolve_options
from stree.errors import UsageError

DEMO = "stree/data/demo.jsonl"


def tricky(tmp_path):
    """A branch with everything pi's serializer and estimator treat specially."""
    b = SessionBuilder()
    root = b.user("start")
    b.assistant("ok")
    base = b.leaf
    other = b.user("other side")
    b.at(base)
    b.append("message", message={"role": "user", "timestamp": 1, "content": [
        {"type": "text", "text": "look 😀 at "}, {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        {"type": "text", "text": "this\ttab"}]})
    b.assistant("Thinking done", thinking="weigh\noptions", tools=[
        ("read", {"path": "src/a.py", "offset": 10, "limit": 2.5}),
        ("grep", {"pattern": "x", "2": "two", "10": "ten", "a": [1.0, 1e-7, 1e21, 0.000001, None, True]}),
        ("edit", {"path": "src/b.py", "oldText": "é", "newText": "\u2028"}),
    ])
    b.tool_result("call_x", "read", "R" * 5000)
    b.append("message", message={"role": "bashExecution", "command": "ls -la", "output": "a\nb", "exitCode": 2,
                                 "cancelled": False, "truncated": False, "timestamp": 1})
    b.append("message", message={"role": "bashExecution", "command": "secret", "output": "", "exitCode": 0,
                                 "cancelled": False, "truncated": False, "excludeFromContext": True,
                                 "timestamp": 1})
    b.custom_message("note", [{"type": "text", "text": "custom "}, {"type": "image", "data": "x",
                                                                     "mimeType": "image/png"}])
    b.branch_summary("hook-made", from_id="leaf", details={"readFiles": ["hook.py"], "modifiedFiles": ["hook2.py"]})
    b.entries[-1]["fromHook"] = True
    b.branch_summary("pi-made", from_id="leaf", details={"readFiles": ["z.py", "src/b.py", "Ä.py"],
                                                         "modifiedFiles": ["m.py"]})
    b.compaction("compacted text " * 14, first_kept=root)
    b.label(root, "here")
    b.model_change("openai", "gpt-4o")
    b.assistant("", tools=[("write", {"path": "new.py", "content": "x"}), ("bash", {"command": "echo"})])
    b.user("last words")
    tip = b.leaf
    path = b.write(tmp_path / "tricky.jsonl")
    return path, tip, base, other


def prompt(stree, path, *args):
    r = stree("-s", path, "summarize", *args, "--prompt", "--json")
    assert r.code == 0, r
    return json.loads(r.out)


WINDOWS = [None, 16384 + 14, 16384 + 40, 16384 + 400, 16384 + 1300, 16384 + 3000]
DEMO_TARGETS = ["459e8d8a", "1b889d05", "9bd41591", "45dc3e92", "ba27091f"]
DEMO_LEAF = "f7e0df1c"


def budget_of(window):
    return 128000 - 16384 if window is None else window - 16384


@pytest.fixture(scope="module")
def pi_preps(tmp_path_factory):
    """pi's branch-prep of tricky() at every window and of the demo at every target: per version,
    from one node process (tricky() is deterministic: the same ids in every test's copy)."""
    cache = {}

    def get(version):
        if version not in cache:
            path, tip, _, other = tricky(tmp_path_factory.mktemp(f"tricky-{version}"))
            keys = [("tricky", w) for w in WINDOWS] + [("demo", t) for t in DEMO_TARGETS]
            requests = [["branch-prep", path, "--from", tip, "--to", other, "--budget", budget_of(w)]
                        for w in WINDOWS]
            requests += [["branch-prep", DEMO, "--from", DEMO_LEAF, "--to", t, "--budget", 128000 - 16384]
                         for t in DEMO_TARGETS]
            cache[version] = dict(zip(keys, pi_batch(requests, version=version)))
        return cache[version]

    return get


@pytest.mark.parametrize("window", WINDOWS)
def test_conversation_and_file_lists_equal_pis(stree, tmp_path, pi_preps, window):
    """pi 1.5.2's text (no thinking), budget (images counted) and file lists; how older pis
    differ: test_older_pis_summarize_differently."""
    path, tip, base, other = tricky(tmp_path)
    budget = budget_of(window)
    want = pi_preps(REFERENCE)["tricky", window]
    args = ["--to", other] + ([] if window is None else ["--context-window", window])
    got = prompt(stree, path, *args)
    assert got["entryIds"] == want["entryIds"]
    assert got["user"].startswith("<conversation>\n" + want["conversation"] + "\n</conversation>\n\n")
    assert got["readFiles"] == want["readFiles"]
    assert got["modifiedFiles"] == want["modifiedFiles"]
    assert got["totalTokens"] == want["totalTokens"]
    assert got["tokenBudget"] == budget


@pytest.mark.parametrize("target", DEMO_TARGETS)
def test_demo_prompt_text_is_pis(stree, pi_preps, target):
    want = pi_preps(REFERENCE)["demo", target]
    r = stree("-s", "demo", "summarize", "--to", target, "--prompt")
    assert r.code == 0, r
    system = pi_constant("SUMMARIZATION_SYSTEM_PROMPT", "core/compaction/utils.js")
    instructions = pi_constant("BRANCH_SUMMARY_PROMPT")
    assert r.out == f"{system}\n\n<conversation>\n{want['conversation']}\n</conversation>\n\n{instructions}\n"


def test_instructions_added_or_replacing(stree):
    base = pi_constant("BRANCH_SUMMARY_PROMPT")
    added = prompt(stree, "demo", "--to", "459e8d8a", "--instructions", "focus on tests")
    assert added["user"].endswith(f"</conversation>\n\n{base}\n\nAdditional focus: focus on tests")
    replaced = prompt(stree, "demo", "--to", "459e8d8a", "--instructions", "Just list files.",
                      "--replace-instructions")
    assert replaced["user"].endswith("</conversation>\n\nJust list files.")
    assert replaced["maxTokens"] == summary.MAX_TOKENS
    assert replaced["system"] == pi_constant("SUMMARIZATION_SYSTEM_PROMPT", "core/compaction/utils.js")


@pytest.mark.parametrize("pi_version", [v for v in VERSIONS if v != REFERENCE])
def test_older_pis_summarize_differently(tmp_path, pi_version):
    """Documented: pi before 1.2 put `[Assistant thinking]` paragraphs in the conversation,
    0.73.1 said "AI coding assistant" in the system prompt and did not count a user
    message's images in the budget; 1.5.2 prepared it as 1.6.0 does. stree follows 1.6.0."""
    path, tip, base, other = tricky(tmp_path)
    old = run_pi("branch-prep", path, "--from", tip, "--to", other, version=pi_version)
    new = run_pi("branch-prep", path, "--from", tip, "--to", other)
    if pi_version not in ("0.73.1", "0.87.1"):
        assert old == new
        assert pi_constant("SUMMARIZATION_SYSTEM_PROMPT", "core/compaction/utils.js", version=pi_version) == \
            pi_constant("SUMMARIZATION_SYSTEM_PROMPT", "core/compaction/utils.js")
        return
    assert "[Assistant thinking]: weigh\noptions\n\n" in old["conversation"]
    assert "[Assistant thinking]" not in new["conversation"]
    assert old["conversation"].replace("[Assistant thinking]: weigh\noptions\n\n", "") == new["conversation"]
    old_system = pi_constant("SUMMARIZATION_SYSTEM_PROMPT", "core/compaction/utils.js", version=pi_version)
    new_system = pi_constant("SUMMARIZATION_SYSTEM_PROMPT", "core/compaction/utils.js")
    if pi_version == "0.73.1":
        assert old_system.replace("an AI coding assistant", "an AI assistant") == new_system != old_system
        assert old["totalTokens"] < new["totalTokens"]  # the user's image: 1200 tokens since 1.5
    else:
        assert old_system == new_system


def test_ranges_and_paths_select_entries(stree):
    r = prompt(stree, "demo", "9bd41591..b08eb4e0")
    log = stree("-s", "demo", "log", "--reverse", "--format", "{id}", "9bd41591..b08eb4e0")
    assert r["entryIds"] == log.out.split()
    whole = prompt(stree, "demo", "9bd41591")
    assert whole["entryIds"][0] == "45dc3e92" and whole["entryIds"][-1] == "9bd41591"
    sym = stree("-s", "demo", "summarize", "9bd41591...b08eb4e0", "--prompt")
    assert sym.code == 2 and "A..B" in sym.err
    both = stree("-s", "demo", "summarize", "@", "--to", "root", "--prompt")
    assert both.code == 2
    neither = stree("-s", "demo", "summarize")
    assert neither.code == 2 and "--to" in neither.err
    nothing = stree("-s", "demo", "summarize", "--to", "@", "--prompt")
    assert nothing.code == 1 and "nothing to summarize" in nothing.err and nothing.out == ""


@each_version
def test_stored_text_is_pis_shape(pi_version):
    text = summary.stored_summary("BODY", ["a.py"], ["b.py", "c.py"])
    assert text == pi_constant("BRANCH_SUMMARY_PREAMBLE", version=pi_version) + \
        "BODY\n\n<read-files>\na.py\n</read-files>\n\n<modified-files>\nb.py\nc.py\n</modified-files>"
    assert summary.stored_summary("BODY", [], []).endswith("BODY")


def test_js_stringify_matches_node():
    texts = ["1.0", "1e-7", "1e21", "1e20", "0.000001", "123.456", "-0.5", "1152921504606846976",
             "12345678901234567890", "5e-324", "0.1", "1.5e300", "-0", "[1E2, 2.50]",
             '{"b": 1, "10": 2, "2": 3, "a": {"1": null, "01": 1}}', r'"\u00e9\u2028\u0001\"\ud83d\ude00\u007f"',
             r'"\ud800 lone"']
    node = subprocess.run(["node", "-e", "for (const t of JSON.parse(require('fs').readFileSync(0, 'utf8')))"
                           " console.log(JSON.stringify(JSON.parse(t)))"],
                          input=json.dumps(texts).encode(), capture_output=True, check=True)
    want = node.stdout.decode().split("\n")[:-1]  # not splitlines(): U+2028 is in the data
    assert [stringify(json.loads(t)) for t in texts] == want


def test_estimate_tokens_counts_utf16_units():
    assert summary.estimate_tokens({"role": "user", "content": "😀"}) == 1  # 2 units -> ceil(2/4)
    assert summary.estimate_tokens({"role": "user", "content": "a" * 9}) == 3
    assert summary.estimate_tokens({"role": "custom", "content": [{"type": "image"}]}) == 1200
    # pi 1.5.2: a user message's images count too, and system messages (text, sections, tools)
    assert summary.estimate_tokens({"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "ab"}]}) \
        == 1201
    assert summary.estimate_tokens({"role": "system", "content": "abcd", "sections": {"a": "efgh", "b": None},
                                    "toolsAdded": [{"name": "x"}]}) == 2 + 4  # 8 chars + 14 ([{"name":"x"}])
    assert summary.estimate_tokens({"role": "bashExecution", "command": "ab", "output": "cd"}) == 1
    assert summary.estimate_tokens({"role": "other"}) == 0


# -- choosing the model ---------------------------------------------------------


def test_precedence_flags_env_config_session():
    config = {"provider": "openai", "model": "cfg", "base_url": "http://cfg/v1"}
    env = {"STREE_MODEL": "envmodel", "OPENAI_API_KEY": "k"}
    o = resolve_options({"model": "flag"}, None, config, "c.toml", env)
    assert (o.provider, o.model, o.base_url, o.source) == ("openai", "flag", "http://cfg/v1", "c.toml")
    o = resolve_options({}, None, config, "c.toml", env)
    assert o.model == "envmodel"
    o = resolve_options({}, None, config, "c.toml", {"OPENAI_API_KEY": "k"})
    assert o.model == "cfg"
    # the config's top-level settings belong to its provider; [anthropic] to anthropic
    o = resolve_options({"provider": "anthropic"}, None, dict(config, anthropic={"model": "claude-x"}),
                        "c.toml", {"ANTHROPIC_API_KEY": "a"})
    assert (o.model, o.base_url, o.api_key) == ("claude-x", "https://api.anthropic.com", "a")
    # the session's model when nothing else is set and its key is there
    o = resolve_options({}, {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}, {}, "c.toml",
                        {"ANTHROPIC_API_KEY": "a", "ANTHROPIC_BASE_URL": "http://proxy"})
    assert (o.provider, o.model, o.base_url, o.source) == ("anthropic", "claude-sonnet-4-5", "http://proxy",
                                                           "the session's model")
    assert o.window() == 200000
    with pytest.raises(UsageError) as e:
        resolve_options({}, {"provider": "anthropic", "modelId": "c"}, {}, "c.toml", {})
    assert "--provider extractive" in e.value.hint
    with pytest.raises(UsageError):
        resolve_options({}, {"provider": "google", "modelId": "gemini"}, {}, "c.toml", {"GEMINI_API_KEY": "g"})
    # a local server needs no key; api.openai.com does
    o = resolve_options({"provider": "openai", "model": "m", "base_url": "http://localhost:1/v1"}, None, {}, "c", {})
    assert o.api_key is None
    with pytest.raises(UsageError) as e:
        resolve_options({"provider": "openai", "model": "m"}, None, {}, "c", {})
    assert "OPENAI_API_KEY" in str(e.value)
    assert resolve_options({"provider": "extractive"}, None, {}, "c", {}).provider == "extractive"


def test_options_never_show_the_key():
    o = Options(provider="openai", model="m", api_key="sk-very-secret")
    assert "sk-very-secret" not in repr(o)


@each_version
def test_file_ops_of_a_whole_branch_equal_pis(tmp_path, pi_version):
    from stree.core.fileops import file_ops
    from stree.storage.session import parse
    from stree.core.tree import Tree

    path, tip, base, other = tricky(tmp_path)
    want = run_pi("branch-prep", path, "--from", tip, "--to", other, version=pi_version)  # budget 0: no limit
    session = parse(str(path))
    tree = Tree(session.nodes, session.load)
    entries, common = tree.abandoned(tip, other)
    assert common == base
    assert list(file_ops(tree, entries)) == [want["readFiles"], want["modifiedFiles"]]
