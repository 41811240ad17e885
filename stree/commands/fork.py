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
from ..writing.images import human_size


@click.command("fork", epilog="""\b
Examples:
  stree fork                         a new session with the path root -> @ (pi /clone)
  stree fork --before :/"Change of"  fork before a user message, its text on stderr (pi /fork)
  stree fork --full -o copy.jsonl    copy every entry (pi --fork)
  stree fork bug-found --cwd ~/src/other   file the new session under another project
  pi --session "$(stree fork @~4)"   continue in pi from an earlier point
  stree fork --full --extract-images ~/shots   a copy pi can open again, its images in ~/shots

\b
As pi 1.6.0: label entries on the path are dropped, the entries after one are
re-chained to the entry before it, and the labels of the kept entries are appended
at the end with their timestamps. At @ a session name (session_info) given at the
position is kept, as pi's /clone keeps it (it copies the path to the file's last
entry); --before (pi's /fork) keeps the names given on the path before the message.
The new header has a fresh id, the source's cwd (or --cwd) and parentSession = the
source file. The new file goes next to the source (or in --cwd's session
directory), with the source's permissions; its path is printed on stdout (alone:
p=$(stree fork ...) works), and with --before the message's text on stderr (--json: both
on stdout).

\b
--drop-images / --extract-images DIR: a session grown by inline base64 images (pasted
screenshots, images a tool read) until pi runs out of memory opening it (pi#9613) is
copied without them. Each image block becomes a text block that pi shows in its place
and sends to the model, e.g. "[image removed: image/png, 1.2 MB, sha256 3f2a...,
saved as DIR/3f2a....png]". The tree, ids and text are kept; stree reads the source
an entry at a time, so its memory does not grow with the file.""")
@click.argument("revision", required=False, metavar="[REV]")
@click.option("--before", is_flag=True,
              help="REV is a user message: fork at its parent and print its text (on stderr).")
@click.option("--full", is_flag=True, help="Copy every entry, not just the path to REV.")
@click.option("--cwd", "new_cwd", metavar="DIR", help="The new session's working directory (and project).")
@click.option("--drop-images", is_flag=True,
              help="Replace each inline image by a text block naming it (mime type, size, sha256).")
@click.option("--extract-images", "images_dir", metavar="DIR",
              help="As --drop-images, saving each image in DIR first (named by its sha256).")
@click.option("-o", "--output", metavar="PATH", help="Write the new session here.")
@click.option("--json", "json_mode", is_flag=True,
              help="Print {path, sessionId, leafId, text} as JSON instead.")
@click.pass_obj
def command(env, revision, before, full, new_cwd, output, json_mode, drop_images, images_dir):
    """Write a new session file holding the path root -> REV (default @)."""
    if full and (revision or before):
        raise UsageError("--full copies every entry; it takes no REV and no --before")
    if drop_images and images_dir:
        raise UsageError("--drop-images and --extract-images cannot be combined",
                         hint="--extract-images DIR drops them too, after saving them in DIR")
    strip = None
    if drop_images or images_dir:
        from ..writing.images import ImageStripper

        if images_dir:
            images_dir = os.path.expanduser(images_dir)
            try:
                os.makedirs(images_dir, mode=0o700, exist_ok=True)
            except OSError as e:
                raise UsageError(f"--extract-images {images_dir}: {e.strerror}") from None
        strip = ImageStripper(images_dir)
    session, tree = env.load()
    resolver = Resolver(tree)
    leaf = resolver.resolve(revision or "@") if tree.nodes else None
    if leaf is not None and not before and (revision or "@") in ("@", "HEAD"):
        leaf = _named_leaf(tree, leaf)
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
    data, new_leaf = forked(session, tree, leaf, header, full=full, transform=strip)
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
    if strip is not None:
        where = f", saved in {strip.directory}" if strip.directory else ""
        click.echo(f"stree: {strip.count} image(s) taken out ({human_size(strip.size)}){where}", err=True)
    if json_mode:
        click.echo(to_json({"path": path, "sessionId": header["id"], "leafId": new_leaf, "text": text}))
        return
    click.echo(path)  # stdout holds the path alone: p=$(stree fork --before REV) works
    if text is not None:  # the message to send again (pi puts it in its editor): on stderr
        click.echo(inert(text) if click.get_text_stream("stderr").isatty() else text, err=True)


def _named_leaf(tree, position):
    """Where a fork at @ ends: pi's /clone copies the path to its leaf, the file's last entry, so
    a session name (session_info) appended at the position is kept; stree's checkout markers and
    labels after the newest such name are left out (as a fork at the position leaves them)."""
    from ..core.leaf import is_bookkeeping

    node = tree.get(tree.leaf) if tree.leaf is not None else None
    seen = set()
    while is_bookkeeping(node) and node.id != position and node.id not in seen:
        if node.type == "session_info":
            return node.id
        seen.add(node.id)
        node = tree.parent_of(node)
    return position
