"""The `replay --dry-run` case of `make bench`: the requests of every assistant turn of a
1,000-turn path built in one process, next to 1,000 separate `stree context --as openai`
runs (one run timed, times 1,000): the prefix is built once, not once per turn."""

import json

from measure import DATA, STATS_ENV, STREE, rounds

TURNS = 1000


def session_file():
    """bench/data/replay-1000.jsonl: a linear path of 1,000 assistant turns (half call `read`)."""
    path = DATA / f"replay-{TURNS}.jsonl"
    if path.exists():
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    lines = [{"type": "session", "version": 3, "id": "0199a1b2-0000-7000-8000-00000000beef",
              "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}]
    usage = {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 120}

    def add(message):
        lines.append({"type": "message", "id": f"{len(lines):08x}", "parentId": f"{len(lines) - 1:08x}"
                      if len(lines) > 1 else None, "timestamp": "2026-01-01T00:00:01.000Z", "message": message})

    for k in range(TURNS):
        base = {"api": "openai-completions", "provider": "openai", "model": "gpt-4o", "usage": usage, "timestamp": 2}
        if k % 2 == 0:
            add({"role": "user", "content": [{"type": "text", "text": f"step {k}: look at src/{k}.py " * 5}],
                 "timestamp": 1})
            add({"role": "assistant", "content": [{"type": "text", "text": "Let me read it."}, {
                "type": "toolCall", "id": f"call_{k}", "name": "read", "arguments": {"path": f"src/{k}.py"}}],
                 **base, "stopReason": "toolUse"})
            add({"role": "toolResult", "toolCallId": f"call_{k}", "toolName": "read",
                 "content": [{"type": "text", "text": "def f():\n    return 1\n" * 20}], "isError": False,
                 "timestamp": 3})
        else:
            add({"role": "assistant", "content": [{"type": "text", "text": "f returns 1. " * 10}], **base,
                 "stopReason": "stop"})
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    tmp.rename(path)
    return path


def replay_rows(rows, runs):
    path = session_file()
    t = rounds({"dry": (STREE + ["-s", path, "replay", "--dry-run"], None, STATS_ENV),
                "context": (STREE + ["-s", path, "context", "--as", "openai"], None, STATS_ENV)}, runs)
    rows.add(f"`replay --dry-run`, {TURNS} turns", t["dry"][0], f"{TURNS} × `context --as openai`",
             TURNS * t["context"][0], 0.05, "every turn's request built, the prefix once (one `context --as` "
             f"run timed, times {TURNS})")
