"""Sessions in a temporary HOME for the catalogue's tests and grep's: a small one of pi's
(`session`), under pi's directory of one project (PROJECT), sessions of the bench's generator
with a word planted (`generated`), and a random corpus of hostile text (`build_corpus`) with
the text grep searches in each entry, computed from the JSON (`brute_text`)."""

import json

from builders import SessionBuilder


PROJECT = "--home-dev-proj--"


def session(id, text="hello", n=3, cwd="/home/dev/proj", start=1_795_000_000_000):
    b = SessionBuilder(cwd=cwd, id=id, start_ms=start)
    for i in range(n):
        b.user(f"{text} question {i}")
        b.assistant(f"{text} answer {i}")
    return b


def generated(home, word, planted, count, seed, entries):
    """`count` sessions of tools/bench/gen.py (session i: seed + i, entries + i entries) under
    pi's directory of PROJECT; `word` put at the start of text entries: planted[i] lists which
    of session i's text entries (their places among its text entries) get it. Their paths."""
    import io
    import sys

    from conftest import ROOT

    sys.path.insert(0, str(ROOT / "tools" / "bench"))
    from gen import Gen

    d = home / ".pi/agent/sessions" / PROJECT
    d.mkdir(parents=True)
    paths = []
    for i in range(count):
        buf = io.StringIO()
        Gen(seed + i, out=buf).run(entries + i)
        lines = buf.getvalue().splitlines()
        texts = [k for k, line in enumerate(lines) if '"text":"' in line]
        for n in planted.get(i, ()):
            lines[texts[n]] = lines[texts[n]].replace('"text":"', f'"text":"{word} ', 1)
        path = d / f"s{i}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    return paths


HOSTILE = ["Straße İstanbul ıdea ſtop Kelvin", "café au lait — naïve", "tab\there", "\x1b[31mred\x1b[0m",
           "a\u0301ccent", "x_foo_y foo-bar foo.bar", "FOO foo Foo fOo", "日本語のテキスト foo", "line1\nline2 foo\n\nend",
           "quote \" and \\ backslash", "emoji 🎉 party", "parse_line(rows, 'x')", "ǅungla ǆ", "ﬁle ligature"]


def build_corpus(home, rng):
    d = home / ".pi/agent/sessions" / PROJECT
    d.mkdir(parents=True)
    files = []
    for s in range(6):
        b = SessionBuilder(id=f"0199eeee-0000-7000-8000-{s:012d}", start_ms=1_795_000_000_000 + s * 10_000_000)
        for i in range(25):
            pick = lambda: " ".join(rng.choice(HOSTILE + ["foo", "bar", "baz quux", "FooBar", "foobar"])
                                    for _ in range(rng.randint(1, 3)))
            kind = rng.randrange(6)
            if kind == 0:
                b.user(pick())
            elif kind == 1:
                b.assistant(pick(), thinking=pick() if rng.random() < 0.3 else None)
            elif kind == 2:
                b.tool_round("bash", {"command": pick()}, pick())
            elif kind == 3:
                b.branch_summary(pick())
            elif kind == 4:
                b.compaction(pick(), first_kept=b.entries[0]["id"] if b.entries else None)
            else:
                b.custom_message("note", pick())
            if rng.random() < 0.15 and len(b.entries) > 3:
                b.at(b.entries[rng.randrange(len(b.entries))]["id"])
        files.append(b.write(d / f"g{s}.jsonl"))
    return files


def brute_text(entry):
    """The searched text, computed here from the JSON (as documented in stree grep --help)."""
    t = entry.get("type")
    if t == "message":
        m = entry["message"]
        c = m.get("content")
        parts = []
        if isinstance(c, str):
            parts.append(c)
        elif isinstance(c, list):
            for block in c:
                if block.get("type") == "text":
                    parts.append(block["text"])
                elif block.get("type") == "thinking":
                    parts.append(block["thinking"])
                elif block.get("type") == "toolCall":
                    parts.append(f"{block['name']} {json.dumps(block['arguments'], separators=(',', ':'), ensure_ascii=False)}")
        return "\n".join(parts)
    if t == "custom_message":
        c = entry.get("content")
        return c if isinstance(c, str) else "\n".join(x.get("text", "") for x in c if x.get("type") == "text")
    if t in ("compaction", "branch_summary"):
        return entry.get("summary") or ""
    return ""
