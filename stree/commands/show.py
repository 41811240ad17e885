import click

from .adapter import answer, parameters, question
from .options import output_options
from ..output.dates import date_option, show as show_date
from ..output.fields import ENTRY_FIELDS, describe, entry_record
from ..format.terminal import inert
from ..core.preview import Previewer, entry_text
from ..output.transcript import parts_of

SHOW = question("show")
SHOW_FIELDS = dict(ENTRY_FIELDS, text="the entry's whole text (message text, summary, label, ...)")


@click.command("show", epilog=f"""\b
Examples:
  stree show                         the leaf in full
  stree show bug-found @^            two entries
  stree show --json @ | jq .message.usage
  stree show --format '{{text}}' ':/Found it' > found.txt
  stree show bug-found..@            every entry since bug-found, newest first (as log lists them)

\b
With --json each entry is printed as it is in the file (migrated to v3).
Fields for --format:
{describe(SHOW_FIELDS)}""")
@parameters(SHOW)
@date_option
@output_options(SHOW_FIELDS)
@click.pass_obj
def command(env, revisions, date_style, json_mode, fmt, nul):
    """Show entries in full (default: the leaf); a range A..B or A...B shows each of its entries."""
    entries = answer(SHOW, env, revisions=revisions)
    session, tree = env.load()
    previewer = Previewer(tree)
    out = env.output(json_mode, fmt, nul, SHOW_FIELDS)
    for n, entry in enumerate(entries):
        if out.json:
            out.record(entry)
            continue
        node = tree.get(entry["id"])
        rec = entry_record(tree, node, previewer, text=entry_text(entry))
        if out.machine:
            out.record(rec)
            continue
        if n:
            out.line()
        for line in _describe(out, tree, node, entry, date_style, previewer):
            out.line(line)
    out.close()


def _describe(out, tree, node, entry, date_style="local", previewer=None):
    from ..core.leaf import position

    deco = ["@"] if node.id == position(tree) else []
    if tree.labels.get(node.id):
        deco.append(inert(tree.labels[node.id], oneline=True))
    head = out.style("id", f"entry {node.id}") + (out.style("warning", " (" + ", ".join(deco) + ")") if deco else "")
    yield head
    kind = node.type + (f" ({node.role})" if node.role else "")
    yield f"Type:    {inert(kind, True)}"
    yield f"Parent:  {inert(node.parent or '(root)', True)}"
    yield f"Date:    {inert(show_date(node.ts, date_style) if node.ts else '?', True)}"
    yield f"Line:    {node.line}"
    msg = entry.get("message") if isinstance(entry.get("message"), dict) else None
    if msg and msg.get("role") == "assistant":
        yield f"Model:   {inert(str(msg.get('provider')), True)}/{inert(str(msg.get('model')), True)}"
        yield f"Stop:    {inert(str(msg.get('stopReason')), True)}"
    yield ""
    from ..output.transcript import previous_drop

    summary = (previewer or Previewer(tree)).text(node) if node.role == "toolResult" else None
    previous = previous_drop(tree, node) if node.role == "assistant" else None
    for line in _body(out, entry, msg, summary, previous):
        yield line


def _indent(text, prefix="    "):
    return "\n".join(prefix + line for line in inert(text).split("\n"))


def _part(out, part, msg):
    """One part of an entry (stree.core.entryparts, as export shows it) as terminal lines."""
    kind = part[0]
    if kind == "text":
        yield _indent(part[1])
    elif kind == "thinking":
        yield out.style("muted", _indent(part[1], "    thinking: "))
    elif kind == "call":
        yield out.style("accent", f"    → {inert(part[4], True)} ({inert(part[3], True)})")
        yield _indent(part[2], "      ")
    elif kind == "result":
        state = " (error)" if part[3] else ""
        yield out.style("muted", f"    result of {inert(part[4], True)} "
                                 f"({inert(str(msg.get('toolCallId')), True)}){state}")
        if part[2]:
            yield _indent(part[2])
    elif kind == "image":
        yield f"    [image: {inert(part[1], True)}]"
    elif kind == "bash":
        yield _indent(f"$ {part[1]}")
        if part[2]:
            yield _indent(part[2])
        yield _indent(f"(exit code {part[3]})")
    elif kind == "error":
        yield out.style("error", _indent(part[1]))
    elif kind == "notice":
        yield out.style("warning", _indent(part[1]))
    elif kind == "summary":
        yield _indent(part[3])
        yield ""
        yield _indent(part[2])
    elif kind == "tag":
        yield out.style("customMessageLabel", f"    {inert(part[1], True)}")
    else:  # meta, data
        yield _indent(part[-1])


def _body(out, entry, msg, summary=None, previous=None):
    """The entry's parts (its row in stree.core.entrytypes: the parts export renders too), in
    full: a settings entry's text and fields rather than export's one-line note."""
    for part in parts_of(entry, lambda data: None, summary=summary, previous=previous, brief=False):
        yield from _part(out, part, msg)
