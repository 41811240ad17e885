#!/usr/bin/env python3
"""A watch on the next pi (`make test-latest`): the newest pi from npm against the reference.

    python3 tests/pi/latest.py                 ask npm for the newest @earendil-works/pi-coding-agent,
                                               unpack it in tests/pi/latest/V/, report, run the matrix
    python3 tests/pi/latest.py --version V --dir DIR [--quick] [--no-matrix]
                                               a pi already unpacked in DIR/V/ (the tests' fake one)

The report: the same harness requests (tests/pi/harness.mjs) go to the reference pi, whose
answers stree gives (the interop tests check that), and to the new one, on the interop
corpus (files written by pi's own writers, the demo, and the builders' trees). Per area
(context, rows, search, writes, summary request, RPC shapes) it prints how many cases agree,
then each disagreement: the file, the request, and both answers where they first differ.
Then the interop matrix (pytest) runs again with the new pi added (STREE_PI_LATEST=V).
Exit status: 0 when every case agrees (and the matrix passes), 1 otherwise, 2 on a usage
or install error. oh-my-pi is looked up and named, but not run (see the report's last line).
"""

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
ROOT = TESTS.parent
PACKAGE = "@earendil-works/pi-coding-agent"
OMP = "@oh-my-pi/pi-coding-agent"
AREAS = ("context", "rows", "search", "writes", "summary request", "RPC shapes")
FILTERS = ("default", "no-tools", "user-only", "labeled-only", "all")
QUERIES = ("context", "edit", "system", "hello", "ok", "first", "summary", "csv")
INTEROP = ["tests/interop/test_interop.py", "tests/interop/test_pi15_read.py", "tests/interop/test_pi15_write.py",
           "tests/interop/test_serve_pi.py", "tests/interop/test_pi16_corners.py", "tests/interop/test_summarize_pi.py"]


def npm_newest(name):
    proc = subprocess.run(["npm", "view", name, "version", "--json", "--loglevel=error"], capture_output=True,
                          text=True, timeout=120)
    if proc.returncode != 0:
        return None, proc.stderr.strip()[-300:]
    return json.loads(proc.stdout), None


def install(version, latest_dir):
    """npm pack PACKAGE@version, unpacked into latest_dir/version (once); its integrity is shown."""
    dest = latest_dir / version
    if (dest / "package.json").exists():
        return f"{PACKAGE}@{version} already in {dest}"
    with tempfile.TemporaryDirectory(prefix="stree-pi-latest-") as tmp:
        proc = subprocess.run(["npm", "pack", f"{PACKAGE}@{version}", "--json", "--ignore-scripts",
                               "--pack-destination", tmp, "--loglevel=error"], cwd=tmp, capture_output=True,
                              text=True, timeout=600)
        if proc.returncode != 0:
            raise SystemExit(f"latest.py: npm pack {PACKAGE}@{version} failed:\n{proc.stderr[-2000:]}")
        [report] = json.loads(proc.stdout)
        with tarfile.open(Path(tmp) / report["filename"]) as tar:
            members = [m for m in tar.getmembers() if m.name.split("/", 1)[0] == "package"]
            if hasattr(tarfile, "data_filter"):
                tar.extractall(tmp, members=members, filter="data")
            else:
                tar.extractall(tmp, members=members)
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(Path(tmp) / "package", dest)
    return f"installed {PACKAGE}@{version} into {dest} ({report.get('integrity')})"


# -- the cases ------------------------------------------------------------------------------


def corpus(tmp, quick):
    """name -> session file: pi's own writers (corpus_pi15), the demo, the builders' trees."""
    import shutil

    from corpus_pi15 import BUILDERS, write

    home = tmp / "home"
    (home / "proj").mkdir(parents=True)
    os.environ["HOME"] = str(home)  # pi shortens paths under $HOME
    names = sorted(BUILDERS)[:2] if quick else sorted(BUILDERS)
    files = {name: write(tmp / f"{name}.jsonl", BUILDERS[name](str(home)), str(home)) for name in names}
    demo = tmp / "demo.jsonl"
    shutil.copyfile(ROOT / "stree" / "data" / "demo.jsonl", demo)
    header, rest = demo.read_text().split("\n", 1)
    demo.write_text(json.dumps(dict(json.loads(header), cwd=str(home / "proj"))) + "\n" + rest)
    files["demo"] = demo
    if not quick:
        from builders import branchy
        from corpus import compactions, many_roots

        for name, builder in (("branchy", branchy(str(home / "proj"))), ("roots", many_roots()),
                              ("compactions", compactions())):
            files[name] = builder.write(tmp / f"{name}.jsonl")
    return files


def cases(files, quick):
    """(area, file name, request arguments, what of the answer is compared)."""
    from stree.storage.session import parse

    out = []
    for name, path in files.items():
        nodes = parse(str(path)).nodes
        ids = [n.id for n in nodes]
        leaf = ids[-1]
        users = [n.id for n in nodes if n.type == "message" and n.role == "user" and n.parent is not None]
        out.append(("context", name, ["inspect", path, *[a for i in ids for a in ("--context-at", i)]],
                    ("leafId", "context", "contexts", "tree", "labels", "name")))
        out += [("rows", name, ["graph", path, "--filter", f], ("rows", "ids")) for f in FILTERS]
        out += [("search", name, ["graph", path, "--filter", "all", "--search", q], ("rows", "ids"))
                for q in (QUERIES[:3] if quick else QUERIES)]
        out.append(("writes", name, ["clone", path, leaf], ("entries", "leafId", "context")))
        if users:
            out.append(("writes", name, ["clone", path, users[-1], "--position", "before"],
                        ("entries", "leafId", "selectedText")))
            out.append(("writes", name, ["navigate", path, users[0], "--summary", "went back", "--label", "here"],
                        ("appendedEntries", "leafId", "editorText", "summarizedEntryIds", "context")))
            out.append(("summary request", name, ["branch-prep", path, "--from", leaf, "--to", users[0]], None))
        out.append(("RPC shapes", name, ["rpc", path, "--commands", json.dumps(
            ["get_state", "get_messages", "get_entries", "get_tree", "get_session_stats", "get_last_assistant_text",
             "get_fork_messages"])], ("responses",)))
    return out


def normal(value, tmp):
    """An answer with what differs on every run taken out: timestamps (pi stamps what it
    writes with the time), session ids and files, temp paths."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if (k in ("timestamp", "sessionFile", "sessionId") and isinstance(v, str)) or (
                    k == "timestamp" and value.get("role") == "branchSummary"):  # (made now, from the new entry)
                out[k] = "*"
            else:
                out[k] = normal(v, tmp)
        return out
    if isinstance(value, list):
        return [normal(v, tmp) for v in value]
    if isinstance(value, str) and str(tmp) in value:
        return value.replace(str(tmp), "TMP")
    return value


def written(answer):
    """A write's entries with the ids of the entries it created masked (random per run)."""
    new = {e.get("id") for e in answer.get("appendedEntries") or []}
    new |= {e.get("id") for e in answer.get("entries") or [] if e.get("type") == "label"}

    def mask(v):
        if isinstance(v, dict):
            return {k: ("NEW" if isinstance(x, str) and x in new else mask(x)) for k, x in v.items()}
        if isinstance(v, list):
            return [mask(x) for x in v]
        return v
    return mask(answer)


def view(answer, keys, tmp):
    if isinstance(answer, dict) and "error" in answer and "exitCode" in answer:
        return {"error": answer["error"]}
    answer = written(answer)
    if keys is not None:
        answer = {k: answer.get(k) for k in keys}
    if "responses" in answer:
        answer = {"responses": [{k: v for k, v in (r or {}).items() if k != "id"} for r in answer["responses"]]}
    return normal(answer, tmp)


def first_difference(a, b, where="$"):
    """(path, a's value, b's value) where two JSON values first differ, or None."""
    if type(a) is not type(b):
        return where, a, b
    if isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{where}.{k}", a.get(k, "(missing)"), b.get(k, "(missing)")
            d = first_difference(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{where}[{i}]")
            if d:
                return d
        if len(a) != len(b):
            return f"{where} (length)", len(a), len(b)
        return None
    return None if a == b else (where, a, b)


def short(value, width=160):
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[:width - 1] + "…"


def report(reference, version, quick, out=sys.stdout):
    """Run every case on both pis; print the report; return the number of disagreements."""
    from llm_server import LLMServer
    from pi_harness import pi_batch

    with tempfile.TemporaryDirectory(prefix="stree-pi-latest-") as tmp_name:
        tmp = Path(tmp_name)
        files = corpus(tmp, quick)
        todo = cases(files, quick)
        server = LLMServer()
        try:
            for name, path in files.items():  # the summary request pi sends, through pi's own summarize
                nodes = [json.loads(line) for line in Path(path).read_text().splitlines()[1:]]
                users = [e["id"] for e in nodes if e.get("type") == "message" and e.get("parentId")
                         and (e.get("message") or {}).get("role") == "user"]
                if users:
                    todo.append(("summary request", name, ["summarize", path, "--from", nodes[-1]["id"], "--to",
                                                           users[0], "--base-url", f"{server.url}/v1", "--api",
                                                           "openai-completions", "--model", "m", "--api-key", "k"],
                                 "REQUEST"))
            answers = {}
            for v in (reference, version):
                start = len(server.requests)
                got = pi_batch([c[2] for c in todo], version=v, allow_errors=True)
                sent = iter(server.requests[start:])
                answers[v] = [dict(a, request=next(sent).json) if c[3] == "REQUEST" and "error" not in a else a
                              for c, a in zip(todo, got)]
        finally:
            server.close()
        agree = {area: [0, 0] for area in AREAS}
        differences = []
        for case, theirs, new in zip(todo, answers[reference], answers[version]):
            area, name, args, keys = case
            keys = ("request", "summary") if keys == "REQUEST" else keys
            a, b = view(theirs, keys, tmp), view(new, keys, tmp)
            agree[area][1] += 1
            d = first_difference(a, b)
            if d is None:
                agree[area][0] += 1
            else:
                request = " ".join(short(str(x), 40) if i else str(x) for i, x in enumerate(args[:1] + args[2:]))
                differences.append((area, name, request, *d))
    print(f"pi {version} against the reference pi {reference} (whose answers stree gives):", file=out)
    for area in AREAS:
        ok, n = agree[area]
        print(f"  {area:<16} {ok}/{n} agree", file=out)
    if differences:
        print(f"{len(differences)} disagreement(s):", file=out)
        for area, name, request, where, a, b in differences:
            print(f"  [{area}] {name}.jsonl: {request}", file=out)
            print(f"      at {where}", file=out)
            print(f"      {reference}: {short(a)}", file=out)
            print(f"      {version}: {short(b)}", file=out)
    return len(differences)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", help="a pi already unpacked in DIR/VERSION (default: npm's newest)")
    parser.add_argument("--dir", help="where new pis are unpacked (default tests/pi/latest)")
    parser.add_argument("--quick", action="store_true", help="a few files and queries only")
    parser.add_argument("--no-matrix", action="store_true", help="the report only, not the pytest matrix")
    args = parser.parse_args(argv)
    latest_dir = Path(args.dir or HERE / "latest").resolve()
    version = args.version
    notes = []
    pinned = [p["version"] for p in json.loads((HERE / "pins.json").read_text())["packages"]
              if p["name"] == PACKAGE] + ["0.73.1"]
    if version is None:
        version, error = npm_newest(PACKAGE)
        if version is None:
            print(f"latest.py: npm view {PACKAGE} failed: {error}", file=sys.stderr)
            return 2
        if version not in pinned:
            notes.append(install(version, latest_dir))
        omp, error = npm_newest(OMP)
        notes.append(f"oh-my-pi: newest {OMP} is {omp or '(unknown: ' + str(error) + ')'}; not run: some of its "
                     "@oh-my-pi/* 18.x dependencies are missing from the registry (its context rules are "
                     "checked from its source: tests/interop/test_pi16_corners.py)")
    elif version not in pinned and not (latest_dir / version / "package.json").exists():
        print(f"latest.py: no pi {version} in {latest_dir}", file=sys.stderr)
        return 2
    os.environ["STREE_PI_LATEST"] = version
    os.environ["STREE_PI_LATEST_DIR"] = str(latest_dir)
    sys.path[:0] = [str(TESTS / "lib"), str(TESTS), str(ROOT)]
    from pi_harness import PINNED, REFERENCE

    if version in PINNED:
        notes.append(f"pi {version} is a pinned version already: the report compares it with itself")
    for note in notes:
        print(note)
    failed = report(REFERENCE, version, args.quick)
    if not args.no_matrix and version not in PINNED:
        print(f"the interop matrix with pi {version} (pytest -k {version}):", flush=True)
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", version,
                               *INTEROP], cwd=ROOT, env=env)
        failed += proc.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
