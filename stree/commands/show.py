import json

import click

from .options import output_options
from ..output.dates import date_option, show as show_date
from ..output.fields import ENTRY_FIELDS, describe, entry_record
from ..format.terminal import inert
from ..core.preview import Previewer, entry_text
from ..format.text import full_text
from ..core.revs import Resolver

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
@click.argument("revisions", nargs=-1, metavar="[REV|RANGE...]")
@date_option
@output_options(SHOW_FIELDS)
@click.pass_obj
def command(env, revisions, date_style, json_mode, fmt, nul):
    """Show entries in full (default: the leaf); a range A..B or A...B shows each of its entries."""
    session, tree = env.load()
    resolver = Resolver(tree)
    ids = []
    for rev in revisions or ("@",):
        kind, *ends = resolver.resolve_range(rev)
        if kind == "single":
            ids.append(ends[0])
        else:  # newest first, as log lists a range
            ids += [tree.id_of(r) for r in resolver.rows_of(rev)[::-1]]
    previewer = Previewer(tree)
    out = env.output(json_mode, fmt, nul, SHOW_FIELDS)
    for n, id in enumerate(ids):
        node = tree.get(id)
        entry = tree.load(node)
        if out.json:
            out.record(entry)
            continue
        rec = entry_record(tree, node, previewer, text=entry_text(entry))
        if out.machine:
            out.record(rec)
            continue
        if n:
            out.line()
        for line in _describe(out, tree, node, entry, date_style):
            out.line(line)
    out.close()


def _describe(out, tree, node, entry, date_style="local"):
    from ..core.navigate import position

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
    for line in _body(out, entry, msg):
        yield line


def _indent(text, prefix="    "):
    return "\n".join(prefix + line for line in inert(text).split("\n"))


def _body(out, entry, msg):
    etype = entry.get("type")
    if msg is not None:
        role = msg.get("role")
        if role == "bashExecution":
            yield _indent(f"$ {msg.get('command', '')}")
            if msg.get("output"):
                yield _indent(str(msg["output"]))
            yield _indent(f"(exit code {msg.get('exitCode')})")
            return
        if role == "toolResult":
            state = " (error)" if msg.get("isError") else ""
            yield out.style("muted", f"    result of {inert(str(msg.get('toolName')), True)} "
                                     f"{inert(str(msg.get('toolCallId')), True)}{state}")
        content = msg.get("content")
        if isinstance(content, str):
            yield _indent(content)
        elif isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                btype = block.get("type")
                if btype == "text":
                    yield _indent(str(block.get("text", "")))
                elif btype == "thinking":
                    yield out.style("muted", _indent(str(block.get("thinking", "")), "    thinking: "))
                elif btype == "toolCall":
                    args = json.dumps(block.get("arguments"), indent=2, ensure_ascii=False)
                    yield out.style("accent", f"    → {inert(str(block.get('name')), True)} "
                                              f"({inert(str(block.get('id')), True)})")
                    yield _indent(args, "      ")
                elif btype == "image":
                    yield f"    [image: {inert(str(block.get('mimeType', '?')), True)}]"
                else:
                    yield f"    [{inert(str(btype), True)}]"
        if msg.get("errorMessage"):
            yield out.style("error", _indent(str(msg["errorMessage"])))
        return
    if etype in ("compaction", "branch_summary"):
        if etype == "compaction":
            yield f"    tokens before: {entry.get('tokensBefore')}, first kept: {inert(str(entry.get('firstKeptEntryId')), True)}"
        else:
            yield f"    from: {inert(str(entry.get('fromId')), True)}"
        yield ""
        yield _indent(str(entry.get("summary") or ""))
        return
    if etype == "custom_message":
        yield out.style("customMessageLabel", f"    [{inert(str(entry.get('customType')), True)}]")
        yield _indent(full_text(entry.get("content")) if not isinstance(entry.get("content"), str)
                      else entry["content"])
        return
    text = entry_text(entry)
    if text:
        yield _indent(text)
    rest = {k: v for k, v in entry.items() if k not in ("type", "id", "parentId", "timestamp")}
    if rest:
        yield _indent(json.dumps(rest, indent=2, ensure_ascii=False))
