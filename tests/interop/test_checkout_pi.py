"""stree checkout, confirmed against pi's own /tree navigation (the real pi, via the harness)."""

import json
import stat

import pytest
from builders import branchy
from pi_harness import each_version, pi, pi_batch, without_timestamps

SUMMARY = "## Goal\nTry the csv module.\n\n## Next Steps\n1. Compare with the regex parser"


def build_session(tmp_path):
    """branchy() plus a custom message on a side branch; the leaf is a user message's answer."""
    b = branchy()
    b.at("0000000b")
    note = b.custom_message("reminder", "Remember the regex edge cases")
    b.assistant("Noted.")
    b.at("00000013")
    b.user("Continue with the newline test")
    b.assistant("Done: tests/test_newlines.py passes.", tools=[("write", {"path": "tests/test_newlines.py"})])
    path = b.write(tmp_path / "s.jsonl")
    return path, note


@pytest.fixture
def session(tmp_path):
    return build_session(tmp_path)


TARGETS = {
    "root user": "00000001",
    "user": "00000006",
    "assistant": "00000009",
    "tool result": "00000003",
    "compaction": "00000011",
    "branch summary": "0000000a",
    "custom message": "custom",
}


def entries_of(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def shape(entries):
    """Appended entries without what differs per write (ids, timestamps), ids as references."""
    ids = {e["id"]: f"<new{i}>" for i, e in enumerate(entries)}
    out = []
    for e in entries:
        e = {k: ids.get(v, v) if isinstance(v, str) else v for k, v in e.items() if k not in ("id", "timestamp")}
        out.append(e)
    return out


VARIANTS = ["plain", "summary", "label", "summary+label"]


def variant_args(variant):
    """pi's navigate arguments for a variant (stree's: the summary from a file)."""
    pi_args = []
    if "summary" in variant:
        pi_args += ["--summary", SUMMARY]
    if "label" in variant:
        pi_args += ["--label", "here"]
    return pi_args


@pytest.fixture(scope="module")
def checkouts(tmp_path_factory):
    """stree checkout to every target with every variant, each on its own copy of the session:
    run once (on first use, inside a test) and compared with every pi version."""
    done = {}

    def get():
        if not done:
            from conftest import run_stree

            for kind in TARGETS:
                for variant in VARIANTS:
                    tmp = tmp_path_factory.mktemp("checkout")
                    path, note = build_session(tmp)
                    target = note if TARGETS[kind] == "custom" else TARGETS[kind]
                    summary_file = tmp / "summary.md"
                    summary_file.write_text(SUMMARY)
                    args = []
                    if "summary" in variant:
                        args += ["--summary", summary_file]
                    if "label" in variant:
                        args += ["--label", "here"]
                    original = path.read_bytes()
                    done[kind, variant] = path, target, original, run_stree("-s", path, "checkout", target, *args)
        return done

    return get


@pytest.fixture(scope="module")
def navigations(tmp_path_factory, checkouts):
    """Per version, from one node process: pi's own /tree navigation (on a copy) to every target
    with every variant, the labels before, and what pi sees in each file stree checked out."""
    cache = {}

    def get(version):
        if version not in cache:
            path, note = build_session(tmp_path_factory.mktemp(f"nav-{version}"))
            keys = [(kind, variant) for kind in TARGETS for variant in VARIANTS]
            requests = [["navigate", path, note if TARGETS[k] == "custom" else TARGETS[k], *variant_args(v)]
                        for k, v in keys]
            ours = checkouts()
            requests += [["inspect", path]] + [["inspect", ours[key][0]] for key in keys]
            results = pi_batch(requests, version=version)
            n = len(keys)
            cache[version] = dict(zip(keys, results[:n])), results[n]["labels"], dict(zip(keys, results[n + 1:]))
        return cache[version]

    return get


def pre_080_from_id(expected):
    """Documented: pi 0.73.1 wrote the new position as a branch summary's fromId; 1.5.2 (and
    0.87.1) the leaf navigated away from, as stree does. pi's answer with 1.5.2's fromId."""
    old, new = expected["summaryEntry"]["fromId"], expected["oldLeafId"]
    assert old == (expected["summaryEntry"]["parentId"] or "root") != new

    def fix(value):
        if isinstance(value, dict):
            if value.get("type") == "branch_summary" or value.get("role") == "branchSummary":
                if value.get("fromId") == old and value.get("summary") == expected["summaryEntry"]["summary"]:
                    value = dict(value, fromId=new)
            return {k: fix(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fix(v) for v in value]
        return value

    return fix(expected)


@each_version
@pytest.mark.parametrize("kind", list(TARGETS))
@pytest.mark.parametrize("variant", VARIANTS)
def test_checkout_matches_pi_navigation(checkouts, navigations, kind, variant, pi_version):
    path, target, original, r = checkouts()[kind, variant]  # (the same stree checkout for every version)
    assert r.code == 0, r
    by_case, labels_before, after = navigations(pi_version)
    expected = by_case[kind, variant]  # pi's own /tree, on a copy
    if pi_version == "0.73.1" and expected["summaryEntry"]:
        expected = pre_080_from_id(expected)

    data = path.read_bytes()
    assert data.startswith(original), "checkout must only append"
    appended = [json.loads(line) for line in data[len(original):].decode().splitlines()]
    seen = after[kind, variant]  # pi's inspect of stree's file
    assert not seen["rewritten"]
    assert without_timestamps(seen["context"]) == without_timestamps(expected["context"])
    assert seen["leafId"] == appended[-1]["id"]
    # the text to re-submit, on stdout, as pi puts it in the editor
    assert r.out == (expected["editorText"] + "\n" if expected["editorText"] is not None else "")

    ours = {e["id"]: e for e in appended}
    if expected["summaryEntry"]:
        # the same entries pi writes: branch_summary with pi's details, then the label
        assert shape(appended) == shape(expected["appendedEntries"])
        pi_summary_id = expected["summaryEntry"]["id"]
    else:
        marker = appended[0]
        assert list(marker) == ["type", "customType", "data", "id", "parentId", "timestamp"]
        assert marker["customType"] == "stree/checkout"
        assert marker["data"] == {"from": expected["oldLeafId"], "to": target}
        pi_position = expected["appendedEntries"][0]["parentId"] if "label" in variant else expected["leafId"]
        assert marker["parentId"] == pi_position
        pi_summary_id = None
        assert [(e["type"], e.get("targetId"), e.get("label")) for e in appended[1:]] == \
            [(e["type"], e.get("targetId"), e.get("label")) for e in expected["appendedEntries"]]
    # pi sees the same labels as after its own navigation
    new_labels = {(appended[0]["id"] if e["targetId"] == pi_summary_id else e["targetId"]): e["label"]
                  for e in expected["appendedEntries"] if e["type"] == "label"}
    assert seen["labels"] == {**labels_before, **new_labels}
    assert all(ours[e["id"]]["parentId"] in ours for e in appended[1:])


@each_version
def test_marker_is_hidden_in_pis_default_tree_and_resume_continues_there(stree, session, pi_version):
    path, _ = session
    assert stree("-s", path, "checkout", "00000009").code == 0
    marker = entries_of(path)[-1]
    default, full, seen = pi_batch([["graph", path], ["graph", path, "--filter", "all"],
                                    ["inspect", path, "--context-at", "00000009"]], version=pi_version)
    assert marker["id"] not in default["ids"]
    assert marker["id"] in full["ids"]
    # pi resumes at the marker: its next message is a child of it, and the context is the target's
    assert seen["leafId"] == marker["id"]
    assert seen["context"] == seen["contexts"]["00000009"]


@each_version
def test_exact_puts_the_leaf_on_a_user_message(stree, session, pi_version):
    path, _ = session
    r = stree("-s", path, "checkout", "--exact", "00000006")
    assert r.code == 0 and r.out == ""
    seen = pi("inspect", path, "--context-at", "00000006", version=pi_version)
    assert seen["context"] == seen["contexts"]["00000006"]
    assert seen["context"]["messages"][-1]["content"][0]["text"] == "Try the csv module"


def test_current_position_is_a_noop(stree, session):
    path, _ = session
    assert stree("-s", path, "checkout", "00000009").code == 0
    before = path.read_bytes()
    for rev in ("00000009", "@"):
        r = stree("-s", path, "checkout", rev)
        assert r.code == 0 and "already at this point" in r.err
    assert path.read_bytes() == before


@each_version
def test_summary_from_stdin_is_stored_exactly(stree, session, pi_version):
    path, _ = session
    text = "Tried csv; it broke on embedded newlines.\n  (kept verbatim)  \n"
    r = stree("-s", path, "checkout", "00000003", "--summary", "-", input=text.encode())
    assert r.code == 0, r
    entry = entries_of(path)[-1]
    assert entry["type"] == "branch_summary" and entry["summary"] == text
    old_leaf = entries_of(path)[-2]["id"]
    # pi 0.87.1 and 1.5.2: fromId is the leaf navigated away from (0.73.1 wrote the new position)
    assert entry["parentId"] == "00000003" and entry["fromId"] == old_leaf and entry["fromHook"] is False
    assert list(entry) == ["type", "id", "parentId", "timestamp", "fromId", "summary", "details", "fromHook"]
    prep = pi("branch-prep", path, "--from", entries_of(path)[-2]["id"], "--to", "00000003", version=pi_version)
    assert entry["details"] == {"readFiles": prep["readFiles"], "modifiedFiles": prep["modifiedFiles"]}


def test_dry_run_prints_and_writes_nothing(stree, session):
    path, _ = session
    before = path.read_bytes()
    r = stree("-s", path, "checkout", "00000006", "--label", "retry", "--dry-run")
    assert r.code == 0 and path.read_bytes() == before
    lines = [json.loads(x) for x in r.out.splitlines()[:2]]
    assert [e["type"] for e in lines] == ["custom", "label"]
    assert r.out.splitlines()[2] == "Try the csv module"


def test_summarize_without_a_model_fails_clearly_and_writes_nothing(stree, session):
    path, _ = session
    before = path.read_bytes()
    r = stree("-s", path, "checkout", "00000003", "--summarize")
    assert r.code == 2 and "no model to summarize with" in r.err and "--provider extractive" in r.err
    assert path.read_bytes() == before


def test_the_bundled_demo_is_read_only(stree, tmp_path):
    r = stree("-s", "demo", "checkout", "@~1")
    assert r.code == 6 and "bundled demo" in r.err and "fork --full -o demo.jsonl" in r.err
    assert stree("-s", "demo", "fork", "--full", "-o", tmp_path / "demo.jsonl").code == 0
    assert stree("-s", tmp_path / "demo.jsonl", "checkout", "@~1").code == 0


# -- hooks ---------------------------------------------------------------------


def hook(tmp_path, name, script):
    d = tmp_path / "hooks"
    d.mkdir(exist_ok=True)
    p = d / name
    p.write_text("#!/bin/sh\n" + script)
    p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return {"STREE_HOOKS_DIR": str(d)}


@each_version
def test_before_tree_hook_sees_the_preparation_and_supplies_summary_and_label(stree, session, tmp_path, pi_version):
    path, _ = session
    env = hook(tmp_path, "before-tree", f"cat > {tmp_path}/prep.json\n"
               'echo \'{"summary": {"summary": "from the hook", "details": {"x": 1}}, "label": "hooked"}\'\n')
    env.update(hook(tmp_path, "tree", f"cat > {tmp_path}/after.json\n"))
    r = stree("-s", path, "checkout", "00000009", "--summarize", env=env)
    assert r.code == 0, r
    prep = json.loads((tmp_path / "prep.json").read_text())
    assert prep["targetId"] == "00000009" and prep["userWantsSummary"] is True
    assert prep["commonAncestorId"] == "00000003"
    assert [e["id"] for e in prep["entriesToSummarize"]][:2] == ["0000000a", "0000000b"]
    summary, label = entries_of(path)[-2:]
    assert summary["summary"] == "from the hook" and summary["fromHook"] is True and summary["details"] == {"x": 1}
    assert label["targetId"] == summary["id"] and label["label"] == "hooked"
    after = json.loads((tmp_path / "after.json").read_text())
    assert after["newLeafId"] == label["id"] and after["summaryEntry"]["id"] == summary["id"]
    assert after["fromHook"] is True
    assert pi("inspect", path, version=pi_version)["labels"][summary["id"]] == "hooked"


@pytest.mark.parametrize("script,message", [
    ("exit 3\n", "exited with status 3"),
    ("sleep 30\n", "did not finish within 1 s"),
    ("echo 'not json'\n", "printed invalid JSON"),
    ('echo \'{"cancel": true}\'\n', "cancelled by the before-tree hook"),
    ('echo \'{"label": 5}\'\n', "invalid 'label'"),
])
def test_before_tree_hook_failure_cancels_and_writes_nothing(stree, session, tmp_path, script, message):
    path, _ = session
    before = path.read_bytes()
    env = hook(tmp_path, "before-tree", script)
    # a 1 s limit only where it is what must stop the hook: a loaded machine may take longer
    # than that to start the others' shell
    env["STREE_HOOK_TIMEOUT"] = "1" if "sleep" in script else "45"
    r = stree("-s", path, "checkout", "00000009", env=env, timeout=60)
    assert r.code == 6 and message in r.err, r
    assert path.read_bytes() == before
    assert stree("-s", path, "checkout", "00000009", "--no-hooks", env=env).code == 0


def test_hooks_that_are_not_executable_are_ignored_and_tree_hook_failure_only_warns(stree, session, tmp_path):
    path, _ = session
    env = hook(tmp_path, "tree", "echo broken >&2; exit 1\n")
    (tmp_path / "hooks" / "before-tree").write_text("#!/bin/sh\necho '{\"cancel\": true}'\n")  # not executable
    r = stree("-s", path, "checkout", "00000009", env=env)
    assert r.code == 0, r
    assert "'before-tree' hook was ignored because it is not executable" in r.err
    assert "'tree' hook" in r.err and "exited with status 1" in r.err and "checkout itself is done" in r.err
    assert entries_of(path)[-1]["customType"] == "stree/checkout"
