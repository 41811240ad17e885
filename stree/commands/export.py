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
script); every text from the session is escaped. The outline links every entry; each branch
folds (the active path open and marked, the position @ outlined); labels, branch summaries
and compactions show; tool calls and results are folded; the header gives tokens and cost
as 'stree stats' sums them; images are embedded (oh-my-pi's
blob:sha256: references read from <agent dir>/blobs, the file is left as it is).
Markdown escapes <, > and & in the text and fences code, so nothing renders as HTML.""")
@click.argument("revision", required=False, metavar="[REV|RANGE]")
@click.option("-o", "--output", "output_file", required=True, metavar="FILE",
              help="Where to write ('-': stdout). The format follows .md/.markdown/.html/.htm unless --format.")
@click.option("--format", "fmt", type=click.Choice(["md", "html"]), help="md or html (default: from FILE's extension).")
@click.option("-f", "--force", is_flag=True, help="Replace FILE if it exists (it is refused otherwise, exit 6).")
@date_option
@click.pass_obj
def command(env, revision, output_file, fmt, force, date_style):
    target = output_file
    """Write the session (or the path root -> REV, or a range A..B) as Markdown or one self-contained HTML file."""
    if fmt is None:
        fmt = FORMATS.get(os.path.splitext(target)[1].lower()) if target != "-" else None
        if fmt is None:
            raise UsageError(f"-o {target}: cannot tell the format from the name",
                             hint="name the file .md or .html, or pass --format md|html")
    if target != "-" and not force and os.path.lexists(target):
        from ..errors import CONFLICT, StreeError

        raise StreeError(f"{target}: already exists; nothing written", code=CONFLICT,
                         hint="pass --force to replace it, or choose another -o FILE")
    from ..output.transcript import Document
    from ..storage.blobs import blob_dirs, image_base64

    session, tree = env.load()
    if revision:
        from ..core.revs import Resolver
        from ..core.tree import Tree

        resolver = Resolver(tree)
        kind, *ends = resolver.resolve_range(revision)
        # the path root -> REV, or a range's entries (A..B, A...B): their own tree, the last its leaf
        tree = Tree(tree.path(ends[0]) if kind == "single" else resolver.nodes_of(revision), tree.load)
    dirs = blob_dirs(session.path)
    doc = Document(session, tree, images=lambda data: image_base64(data, dirs))
    if fmt == "html":
        from ..output.export_html import render
    else:
        from ..output.export_md import render
    chunks = (chunk.encode("utf-8") for chunk in render(doc, date_style))
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
