import os
from pathlib import Path

import click

from .options import output_options
from ..errors import StreeError
from ..output.fields import SESSION_FIELDS, describe
from ..output.dates import date_option, show as show_date
from ..output.modes import fit, terminal_width
from ..format.terminal import inert
from ..format.text import full_text, normalize
from ..output.progress import Progress
from ..storage.session import parse
from ..core.store import (agent_files, all_session_dirs, encode_cwd, project_session_dir, project_sessions,
                          selected_agents, session_files, shortest_prefixes)
from ..core.tree import Tree
from ..format.timestamp import ts_millis


@click.command("ls", epilog=f"""\b
Examples:
  stree ls                           this project's sessions, newest first; * marks the one stree opens
  stree ls --date=relative           last activity as "3 hours ago" (also iso, unix, utc)
  stree ls --all --format '{{modified}}\\t{{cwd}}\\t{{name}}'
  stree -s "$(stree ls --format '{{path}}' | sed -n 2p)" log --graph   the second newest
  stree ls -z --format '{{path}}' | xargs -0 -n1 stree fsck -s

\b
Session ids are shown as their shortest unique prefix (8+ characters; pi's ids are
time-ordered, so their first characters often agree): each one works with -s.
Fields for --json / --format:
{describe(SESSION_FIELDS)}""")
@click.option("-a", "--all", "all_", is_flag=True, help="Sessions of every project, not only this directory's.")
@date_option
@output_options(SESSION_FIELDS)
@click.pass_obj
def command(env, all_, date_style, json_mode, fmt, nul):
    """List sessions, newest first (by last activity, as pi's session picker sorts them)."""
    agents = selected_agents(env.agent)
    dirs = []
    if "pi" in agents:
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
                paths.append((str(path), "pi", "live"))
    others = [a for a in agents if a != "pi"]
    if all_:
        found = agent_files(others)
    else:
        found = [(str(p), "omp", "live", None) for p in
                 session_files(Path.home() / ".omp" / "agent" / "sessions" / encode_cwd(env.cwd))] if "omp" in others else []
    for path, agent, state, _ in found:
        if path not in seen:
            seen.add(path)
            paths.append((path, agent, state))
    infos = _infos(env, paths, {str(d) for d in dirs} | {os.path.dirname(p) for p, *_ in found},
                   not (json_mode or fmt))
    infos.sort(key=lambda i: i["_sort"], reverse=True)
    if not infos:
        where = "any project" if all_ else str(dirs[0]) if dirs else "this project"
        click.echo(inert(f"stree: no sessions found in {where}", oneline=True), err=True)
    try:  # the session a bare `stree log` opens here
        current = os.path.abspath(str(env.session_path()))
    except (StreeError, OSError):
        current = None
    short = shortest_prefixes([info["id"] or "" for info in infos])
    out = env.output(json_mode, fmt, nul, SESSION_FIELDS)
    rows = []
    for info in infos:
        info.pop("_sort")
        info["current"] = info["path"] == current
        rows.append((info, short.get(info["id"] or "", "?"), show_date(info["modified"], date_style)))
    id_width = max((len(r[1]) for r in rows), default=8)
    when_width = max((len(r[2]) for r in rows), default=0)
    width = terminal_width() if out.tty else None
    for info, abbrev, when in rows:
        human = None
        if not out.machine:
            title = inert(info["name"] or info["firstMessage"], True)
            where = inert(info["cwd"] or "", True) if all_ else ""
            mark = "*" if info["current"] else " "
            kind = "" if info["agent"] == "pi" else \
                f"  [{info['agent']}{'' if info['state'] == 'live' else ', ' + info['state']}]"
            head = f"{mark} {abbrev.ljust(id_width)}  {when.ljust(when_width)}  {info['entries']:>5} entries  "
            if width is not None:  # one terminal line per session: cut the title (and cwd)
                room = max(1, width - len(head) - (len(where) + 2 if where else 0) - len(kind))
                title = "".join(text for _, text in fit([("", title)], room))
            human = (f"{out.style('accent', mark)} {out.style('id', abbrev.ljust(id_width))}  "
                     f"{out.style('muted', when.ljust(when_width))}  {info['entries']:>5} entries  {title}"
                     + (f"  {out.style('muted', where)}" if where else "") + (out.style("muted", kind) if kind else ""))
        out.record(info, human)
    out.close()


def _infos(env, paths, listed, show_progress):
    """The ls records of `paths` ((path, agent, state) each): from the catalogue, which reads
    only the files changed since; without it (--no-cache, no SQLite), each file parsed."""
    from ..core import catalog

    with Progress("reading sessions", total=len(paths), enabled=show_progress) as progress:
        if catalog.enabled(env.no_cache):
            from ..storage.catalog import Unavailable

            try:
                files = [(p, agent, state, os.path.dirname(os.path.abspath(p))) for p, agent, state in paths]
                cat, rows = catalog.sync(files, prune_roots=listed, progress=progress.advance)
                cat.close()
                return [catalog.record(rows[full]) for full in (os.path.abspath(p) for p, _, _ in paths)
                        if full in rows and rows[full]["ok"]]
            except Unavailable as e:
                from ..storage.cachedir import debug

                debug(f"no catalogue: {e}")
        infos = []
        for path, agent, state in paths:
            info = session_info(path)
            if info is not None:
                info["agent"], info["state"] = agent, state
                infos.append(info)
            progress.advance()
        return infos


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
            message = session.load(node).get("message")
            if not isinstance(message, dict) or "content" not in message:
                continue
            if not first and node.role == "user":
                first = normalize(full_text(message.get("content")))
            # pi's getMessageActivityTime: the message's own timestamp, else the entry's
            stamp = message.get("timestamp")
            ms = stamp if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) else ts_millis(node.ts)
            if ms is not None and (last_activity is None or ms > last_activity):
                last_activity = ms
        created = header.get("timestamp")
        if last_activity is None or last_activity <= 0:
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
