import os
from pathlib import Path

import click

from ..errors import UsageError
from ..format.text import full_text as message_text
from ..format.terminal import inert
from ..output.modes import to_json
from ..core.revs import Resolver
from ..core.store import demo_path, project_session_dir
from ..writing.atomic import NEW_FILE_MODE, write_atomic
from ..writing.entries import forked, session_file_name, session_header


@click.command("fork", epilog="""\b
Examples:
  stree fork                         a new session with the path root -> @ (pi /clone)
  stree fork --before :/"Change of"  fork before a user message, its text on stderr (pi /fork)
  stree fork --full -o copy.jsonl    copy every entry (pi --fork)
  stree fork bug-found --cwd ~/src/other   file the new session under another project
  pi --session "$(stree fork @~4)"   continue in pi from an earlier point

\b
As pi 1.5.2: label entries on the path are dropped, the entries after one are
re-chained to the entry before it, and the labels of the kept entries are appended
at the end with their timestamps. The new header has a fresh id, the source's cwd
(or --cwd) and parentSession = the source file.
The new file goes next to the source (or in --cwd's session directory), with the
source's permissions; its path is printed on stdout (alone: p=$(stree fork ...) works),
and with --before the message's text on stderr (--json: both on stdout).""")
@click.argument("revision", required=False, metavar="[REV]")
@click.option("--before", is_flag=True,
              help="REV is a user message: fork at its parent and print its text (on stderr).")
@click.option("--full", is_flag=True, help="Copy every entry, not just the path to REV.")
@click.option("--cwd", "new_cwd", metavar="DIR", help="The new session's working directory (and project).")
@click.option("-o", "--output", metavar="PATH", help="Write the new session here.")
@click.option("--json", "json_mode", is_flag=True,
              help="Print {path, sessionId, leafId, text} as JSON instead.")
@click.pass_obj
def command(env, revision, before, full, new_cwd, output, json_mode):
    """Write a new session file holding the path root -> REV (default @)."""
    if full and (revision or before):
        raise UsageError("--full copies every entry; it takes no REV and no --before")
    session, tree = env.load()
    leaf = Resolver(tree).resolve(revision or "@") if tree.nodes else None
    text = None
    if before:
        node = tree.get(leaf)
        if not (node.type == "message" and node.role == "user"):
            raise UsageError(f"--before needs a user message; {revision or '@'} ({leaf}) is a {node.type}"
                             + (f" ({node.role})" if node.role else ""))
        text = message_text(tree.load(node)["message"].get("content"))
        parent = tree.parent_of(node)
        leaf = parent.id if parent is not None else None

    source = os.path.abspath(str(session.path))
    is_demo = Path(source).resolve() == demo_path()
    cwd = os.path.abspath(os.path.expanduser(new_cwd)) if new_cwd else session.header.get("cwd")
    header = session_header(cwd, source)
    data, new_leaf = forked(session, tree, leaf, header, full=full)
    if output:
        target = Path(os.path.expanduser(output))
    else:
        if new_cwd:
            directory = project_session_dir(cwd, env.agent_dir)
        elif is_demo:
            directory = project_session_dir(env.cwd, env.agent_dir, env.session_dir)
        else:
            directory = Path(source).parent
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        target = directory / session_file_name(header)
    mode = NEW_FILE_MODE if is_demo else os.stat(source).st_mode & 0o777
    write_atomic(target, data, mode=mode, replace=False)
    path = os.path.abspath(str(target))
    if json_mode:
        click.echo(to_json({"path": path, "sessionId": header["id"], "leafId": new_leaf, "text": text}))
        return
    click.echo(path)  # stdout holds the path alone: p=$(stree fork --before REV) works
    if text is not None:  # the message to send again (pi puts it in its editor): on stderr
        click.echo(inert(text) if click.get_text_stream("stderr").isatty() else text, err=True)
