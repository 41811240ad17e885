import re

import click

from ..core.revs import Resolver
from ..errors import StreeError


@click.command("diff", epilog="""\b
Examples:
  stree diff main try-2                  two branches of this session, from where they part
  stree diff @~6 @ --stat                what the last turns changed, in counts
  stree diff 0199a1b2:@ demo.jsonl:@     two sessions (a recording and its replay), from the root
  stree diff --name-only main try-2      the tool calls that differ, by name
  stree diff --quiet main X || echo differ   exit 1 when the paths differ

\b
A and B are revisions of the selected session (-s), or SESSION:REV with SESSION an id
(prefix), `demo` or a path to a .jsonl file. The conversation entries of the two paths
(messages, custom messages, branch and compaction summaries) are aligned by position:
after the merge base when A and B are in one session, from the root across two files.
Each pair is compared by role, text and tool calls (names, then arguments as JSON);
entry ids, timestamps, usage and tool-call ids are not compared. Only the positions that
differ are printed: "-" lines are A's, "+" lines B's, "~" a tool call whose arguments
changed. --json prints one record per differing position: {index, status (changed,
removed: only in A, added: only in B), a, b ({id, role, text, calls}), calls ([{status,
name, a, b}]), textChanged}; with --stat, one record of counts.

\b
Exit status: 0, whether or not the paths differ; with --exit-code or --quiet, 1 when
they differ and 0 when they are the same (as git diff).""")
@click.argument("left", metavar="A")
@click.argument("right", metavar="B")
@click.option("--stat", is_flag=True, help="Print counts per differing position and in all.")
@click.option("--name-only", is_flag=True, help="Print the names of the tool calls that differ, once each.")
@click.option("--word-diff", is_flag=True, help="Show changed text word by word: [-removed-]{+added+}.")
@click.option("--json", "json_mode", is_flag=True, help="Print JSON Lines, one record per differing position.")
@click.option("--exit-code", is_flag=True, help="Exit 1 when the paths differ, 0 when they are the same.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; implies --exit-code.")
@click.pass_obj
def command(env, left, right, stat, name_only, word_diff, json_mode, exit_code, quiet):
    """Compare the paths to two entries, turn by turn.

    Like git diff between two commits: the messages and tool calls of the path to A
    against those of the path to B.
    """
    from ..core.pathdiff import compare, sides, stats

    if name_only and stat:
        raise StreeError("--name-only and --stat cannot be combined", code=2)
    a_tree, a_id, a_name = _side(env, left)
    b_tree, b_id, b_name = _side(env, right)
    base, a_turns, b_turns = sides(a_tree, a_id, b_tree, b_id)
    records = [r for r in compare(a_turns, b_turns) if r["status"] != "same"]
    if quiet:
        return 1 if records else 0
    out = env.output(json_mode, None, False)
    if stat:
        _stat(out, records, stats(compare(a_turns, b_turns)))
    elif name_only:
        names = dict.fromkeys(c["name"] for r in records for c in r["calls"] if c["status"] != "same")
        for name in names:
            out.record({"name": name}, str(name))
    elif json_mode:
        for rec in records:
            out.record(rec)
    else:
        _human(out, records, a_name, b_name, base, word_diff)
    out.close()
    if exit_code and records:
        return 1


_SESSION_REV = re.compile(r"([0-9A-Za-z][0-9A-Za-z_.-]{3,}):([^/].*)")
_PATH_REV = re.compile(r"(.+\.jsonl):(.+)")


def _side(env, value):
    """(tree, entry id, label) of A or B: SESSION:REV in that session, else REV in -s's."""
    from ..core.store import resolve_session

    path = None
    m = _PATH_REV.fullmatch(value) or _SESSION_REV.fullmatch(value)
    if m is not None:
        try:
            path = resolve_session(m.group(1), env.cwd, env.agent_dir, env.session_dir, agents=env.agent)
        except StreeError:
            if _PATH_REV.fullmatch(value):
                raise
            path = None  # not a session: a revision holding a colon (a label)
    if path is None:
        session, tree = env.load()
        rev = value
    else:
        import os

        rev = m.group(2)
        try:
            selected = os.path.abspath(str(env.session_path()))
        except StreeError:  # no session selected or found: SESSION alone names one
            selected = None
        if os.path.abspath(str(path)) == selected:  # one session: from the merge base
            session, tree = env.load()
        else:
            session, tree = _load(env, str(path))
    entry = Resolver(tree).resolve(rev) if tree.nodes else None
    if entry is None:
        raise StreeError(f"{value}: the session is empty", code=3, hint="pick a session with entries")
    return tree, entry, value


_LOADED = {}


def _load(env, path):
    """(Session, Tree) of another session file than -s's, read through its index."""
    import os

    key = os.path.abspath(path)
    if key not in _LOADED:
        from ..core.loading import open_session

        session, tree, _ = open_session(path, env.no_cache)
        _LOADED[key] = (session, tree)
    return _LOADED[key]


_STYLE = {"-": "error", "+": "success", "~": "warning", "@": "accent"}


def _human(out, records, a_name, b_name, base, word_diff):
    if not records:
        return
    out.line(out.style("bold", f"diff --stree a/{a_name} b/{b_name}"))
    if base is not None:
        out.line(out.style("muted", f"base {base}"))
    for rec in records:
        a, b = rec["a"] or {}, rec["b"] or {}
        role = a.get("role") if a.get("role") == b.get("role") or not b else b.get("role") if not a else \
            f"{a.get('role')} → {b.get('role')}"
        where = " · ".join(p for p in (f"a {a['id']}" if a else "only in b", f"b {b['id']}" if b else "only in a"))
        out.line(out.style("accent", f"@@ {rec['index'] + 1} {role} · {where} @@"))
        if rec["textChanged"]:
            if word_diff:
                out.line(_words(out, a.get("text", ""), b.get("text", "")))
            else:
                from ..core.pathdiff import line_hunks

                for sign, line in line_hunks(a.get("text", ""), b.get("text", "")):
                    out.line(out.style(_STYLE.get(sign), "…" if sign == "@" else f"{sign}{line}"))
        for call in rec["calls"]:
            out.line(_call(out, call))


def _call(out, call):
    from ..format.jsjson import stringify

    name = str(call["name"])
    if call["status"] == "changed":
        return out.style("warning", f"~{name} {stringify(call['a'])} → {stringify(call['b'])}")
    if call["status"] == "added":
        return out.style("success", f"+{name} {stringify(call['b'])}")
    if call["status"] == "removed":
        return out.style("error", f"-{name} {stringify(call['a'])}")
    return f" {name} {stringify(call['a'])}"


def _words(out, a, b):
    from ..core.pathdiff import word_diff

    parts = []
    for kind, text in word_diff(a, b):
        if kind == "-":
            parts.append(out.style("error", f"[-{text}-]"))
        elif kind == "+":
            parts.append(out.style("success", f"{{+{text}+}}"))
        else:
            parts.append(text)
    return "".join(parts)


def _stat(out, records, counts):
    if out.json:
        out.record(counts)
        return
    for rec in records:
        a, b = rec["a"] or {}, rec["b"] or {}
        role = a.get("role") or b.get("role")
        if rec["status"] == "removed":
            what = "only in a"
        elif rec["status"] == "added":
            what = "only in b"
        else:
            from ..core.pathdiff import text_lines

            added, removed = text_lines(a.get("text", ""), b.get("text", ""))
            calls = {s: sum(1 for c in rec["calls"] if c["status"] == s) for s in ("added", "removed", "changed")}
            what = f"text +{added} -{removed}, tools +{calls['added']} -{calls['removed']} ~{calls['changed']}"
        out.line(f" {rec['index'] + 1:>4} {role:<18} | {what}")
    out.line(f" {counts['positions'] - counts['same']} of {counts['positions']} positions differ: "
             f"{counts['changed']} changed, {counts['removed']} only in a, {counts['added']} only in b; "
             f"tool calls {counts['callsAdded']} added, {counts['callsRemoved']} removed, "
             f"{counts['callsChanged']} changed")
