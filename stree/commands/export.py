import os
import sys

import click

from ..errors import UsageError
from ..output.dates import date_option

FORMATS = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html"}


@click.command("export", epilog="""\b
Examples:
  stree export -o session.html           the session as one self-contained page
  stree export -o session.md             as Markdown
  stree export bug-found -o bug.html     only the path root -> bug-found
  stree export bug-found..@ -o since.md  only the entries since bug-found (a range, as log takes)
  stree export --format html -o - | gzip > session.html.gz
  stree -s demo export -o demo.html --force

\b
The HTML is one file with nothing to fetch: stree's own style and script inline, allowed by
their hashes in a Content-Security-Policy that forbids everything else (no network, no other
script). Message text is rendered from Markdown when the page is written (raw HTML shown as
text, links and images as text with their address, code highlighted); every other text is
escaped. The outline is the tree, with pi's /tree filters (Default, No-tools, User, Labeled,
All) and a search over whole entries; labels and branch summaries show in it. Each branch
folds (the active path open, @ outlined) and says its cost; each branch point links to the
branches that leave it; #e-ID links open the entry and the outline. Tool calls are named by
their main argument ([read: path], [bash: command]) and folded with their output. Light and
dark themes, a phone layout and a print view. Images are embedded (oh-my-pi's blob:sha256:
references read from <agent dir>/blobs, the file is left as it is).

\b
The Markdown is inert in any CommonMark viewer, raw HTML on or off: < and & are escaped
outside code spans, a message's code blocks are put in fences longer than any backtick run
inside, tool output is fenced the same way, and links and images stay text (--links lists
the http(s) addresses as links); nothing is fetched when the file is viewed.""")
@click.argument("revision", required=False, metavar="[REV|RANGE]")
@click.option("-o", "--output", "output_file", required=True, metavar="FILE",
              help="Where to write ('-': stdout). The format follows .md/.markdown/.html/.htm unless --format.")
@click.option("--format", "fmt", type=click.Choice(["md", "html"]), help="md or html (default: from FILE's extension).")
@click.option("-f", "--force", is_flag=True, help="Replace FILE if it exists (it is refused otherwise, exit 6).")
@click.option("--links", is_flag=True,
              help="Markdown: list each message's http(s) addresses after it as live links (by default every "
                   "link and image stays text, so viewing the file fetches nothing).")
@date_option
@click.pass_obj
def command(env, revision, output_file, fmt, force, links, date_style):
    """Write the session (or the path root -> REV, or a range A..B) as Markdown or one self-contained HTML file."""
    target = output_file
    if fmt is None:
        fmt = FORMATS.get(os.path.splitext(target)[1].lower()) if target != "-" else None
        if fmt is None:
            raise UsageError(f"-o {target}: cannot tell the format from the name",
                             hint="name the file .md or .html, or pass --format md|html")
    if links and fmt != "md":
        raise UsageError("--links is for Markdown only", hint="the HTML page keeps no live address; drop --links")
    if target != "-" and not force and os.path.lexists(target):
        from ..errors import CONFLICT, StreeError

        raise StreeError(f"{target}: already exists; nothing written", code=CONFLICT,
                         hint="pass --force to replace it, or choose another -o FILE")
    from ..output.transcript import Document
    from ..storage.blobs import blob_dirs, image_base64

    session, tree = env.load()
    if revision:
        from ..core.revs import Resolver

        resolver = Resolver(tree)
        kind, *ends = resolver.resolve_range(revision)
        # the path root -> REV, or a range's entries (A..B, A...B): their own tree, the last its leaf
        tree = tree.of_entries(tree.path(ends[0]) if kind == "single" else resolver.nodes_of(revision))
    dirs = blob_dirs(session.path)
    doc = Document(session, tree, images=lambda data: image_base64(data, dirs))
    if fmt == "html":
        from ..output.export_html import render
    else:
        from functools import partial

        from ..output.export_md import render

        render = partial(render, links=links)
    chunks = (chunk.encode("utf-8", "replace") for chunk in render(doc, date_style))  # a lone surrogate: ?
    if target == "-":
        if sys.stdout.isatty():  # to a terminal: the session's control characters shown, not obeyed
            from ..format.terminal import inert

            chunks = (inert(chunk).encode("utf-8", "replace") for chunk in render(doc, date_style))
        sys.stdout.flush()
        for chunk in chunks:
            sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
        return
    from ..writing.atomic import write_atomic

    write_atomic(target, chunks, mode=0o644, replace=force)
    click.echo(f"wrote {os.path.abspath(target)} ({len(tree.nodes)} entries, {fmt})", err=True)
