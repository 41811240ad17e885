import os

import click

from ..cli import output_options
from ..errors import StreeError
from ..fields import SESSION_FIELDS, describe
from ..output import inert
from ..preview import full_text, normalize
from ..progress import Progress
from ..session import parse
from ..store import all_session_dirs, project_session_dir, project_sessions, session_files
from ..tree import Tree, ts_millis


@click.command("ls", epilog=f"""\b
Examples:
  stree ls                           this project's sessions, newest first
  stree ls --all --format '{{modified}}\\t{{cwd}}\\t{{name}}'
  stree -s "$(stree ls --format '{{path}}' | sed -n 2p)" log --graph   the second newest
  stree ls -z --format '{{path}}' | xargs -0 -n1 stree fsck -s

\b
Fields for --json / --format:
{describe(SESSION_FIELDS)}""")
@click.option("-a", "--all", "all_", is_flag=True, help="Sessions of every project, not only this directory's.")
@output_options(SESSION_FIELDS)
@click.pass_obj
def command(env, all_, json_mode, fmt, nul):
    """List sessions, newest first (by last activity, as pi's session picker sorts them)."""
    if all_:
        dirs = all_session_dirs(env.agent_dir, env.session_dir, env.cwd)
    else:
        dirs = [project_session_dir(env.cwd, env.agent_dir, env.session_dir)]
    paths = []
    seen = set()
    for directory in dirs:
        # this project's: in a custom session dir, only this directory's sessions (as pi lists them)
        for path in session_files(directory) if all_ else project_sessions(env.cwd, env.agent_dir, env.session_dir):
            if str(path) not in seen:
                seen.add(str(path))
                paths.append(str(path))
    infos = []
    with Progress("reading sessions", total=len(paths), enabled=not (json_mode or fmt)) as progress:
        for path in paths:
            info = session_info(path)
            if info is not None:
                infos.append(info)
            progress.advance()
    infos.sort(key=lambda i: i["_sort"], reverse=True)
    if not infos:
        where = "any project" if all_ else str(dirs[0])
        click.echo(f"stree: no sessions found in {where}", err=True)
    out = env.output(json_mode, fmt, nul, SESSION_FIELDS)
    for info in infos:
        info.pop("_sort")
        human = None
        if not out.machine:
            when = (info["modified"] or "")[:16].replace("T", " ")
            title = info["name"] or info["firstMessage"]
            where = f"  {out.style('muted', inert(info['cwd'] or '', True))}" if all_ else ""
            human = (f"{out.style('id', info['id'][:8])}  {out.style('muted', when)}  "
                     f"{info['entries']:>5} entries  {inert(title[:80], True)}{where}")
        out.record(info, human)
    out.close()


def session_info(path):
    """The ls record of one file, or None when it is not a readable session."""
    try:
        session = parse(path)
    except StreeError:
        return None
    try:
        tree = Tree(session.nodes, session.load)
        header = session.header
        messages = [n for n in session.nodes if n.type == "message"]
        first = ""
        last_activity = None
        for node in messages:
            if node.role not in ("user", "assistant"):
                continue
            entry = None
            if not first and node.role == "user":
                entry = session.load(node)
                first = normalize(full_text(entry["message"].get("content")))
            ms = ts_millis(node.ts)
            if ms is not None and (last_activity is None or ms > last_activity):
                last_activity = ms
        created = header.get("timestamp")
        if last_activity is None:
            last_activity = ts_millis(created)
        if last_activity is None:
            last_activity = int(os.stat(path).st_mtime * 1000)
        return {
            "id": header.get("id"),
            "path": os.path.abspath(path),
            "cwd": header.get("cwd"),
            "name": tree.name(),
            "created": created,
            "modified": _iso(last_activity),
            "messages": len(messages),
            "entries": len(session.nodes),
            "firstMessage": first or "(no messages)",
            "parentSession": header.get("parentSession"),
            "_sort": last_activity,
        }
    finally:
        session.close()


def _iso(ms):
    from datetime import datetime, timezone

    dt = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"
