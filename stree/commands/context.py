import click

from .options import output_options
from ..core.convert import convert_to_llm, to_anthropic, to_openai
from ..output.fields import MESSAGE_FIELDS, describe
from ..format.terminal import inert
from ..output.modes import to_json
from ..format.text import full_text, normalize
from ..core.revs import Resolver


@click.command("context", epilog=f"""\b
Examples:
  stree context                       what the model sees at @
  stree context bug-found~1 --json    pi's context object at an earlier entry
  stree context --as openai | curl -s $URL -H 'content-type: application/json' -d @-
  stree context --format '{{role}}\\t{{text}}' | cut -c1-120

\b
--json prints one object {{messages, thinkingLevel, model}}, exactly as pi 1.6.0's
buildSessionContext returns it. --as openai|anthropic prints a request body
({{model, messages}}) for replaying the context against that API; the context's system
messages become its system prompt and tools, as pi's providers send them.
Fields for --format (one record per message):
{describe(MESSAGE_FIELDS)}""")
@click.argument("revision", required=False, default="@", metavar="[REV]")
@click.option("--as", "as_", type=click.Choice(["pi", "openai", "anthropic"]), default="pi", show_default=True,
              help="Message format.")
@output_options(MESSAGE_FIELDS)
@click.pass_obj
def command(env, revision, as_, json_mode, fmt, nul):
    """Show the LLM context pi builds at REV (default @).

    The same rules as pi 1.6.0: a compaction on the path puts its system message and
    summary first, then the kept entries from firstKeptEntryId (system messages left
    out), then everything after it; the latest context_edit of an entry among those
    replaces its content or omits it; branch summaries and custom messages join as user
    messages; missing content reads as empty; thinking level and model are the last
    ones set on the path.
    """
    session, tree = env.load()
    leaf = Resolver(tree).resolve(revision, allow_empty=True) if tree.nodes else None
    context = tree.build_context(leaf)
    out = env.output(json_mode, fmt, nul, MESSAGE_FIELDS)
    if as_ != "pi":
        body = to_openai(context) if as_ == "openai" else to_anthropic(context)
        click.echo(to_json(body) + out.end, nl=False)
        return
    if out.json:
        out.record(context)
        out.close()
        return
    if not out.machine:
        model = context["model"] or {}
        out.line(out.style("muted", f"# model {inert(str(model.get('provider')), True)}/"
                                    f"{inert(str(model.get('modelId')), True)}, thinking "
                                    f"{inert(str(context['thinkingLevel']), True)}, "
                                    f"{len(context['messages'])} messages"))
    for i, msg in enumerate(context["messages"]):
        text = message_text(msg)
        if not isinstance(msg, dict):
            msg = {}  # pi keeps whatever `message` holds; it has no role or timestamp
        rec = {"index": i, "role": msg.get("role"), "text": normalize(text), "timestamp": msg.get("timestamp")}
        human = None
        if not out.machine:
            human = out.style("accent", f"[{i}] {inert(str(msg.get('role')), True)}") + "\n" + \
                "\n".join("    " + line for line in inert(text).split("\n"))
        out.record(rec, human)
    out.close()


def message_text(msg):
    """A pi message as plain text: what convertToLlm would send, tool calls included."""
    llm = convert_to_llm([msg])
    if not llm:
        return ""
    m = llm[0]
    content = m.get("content")
    if isinstance(content, str):
        return content
    parts = []
    for b in content if isinstance(content, list) else []:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text":
            parts.append(str(b.get("text", "")))
        elif b.get("type") == "toolCall":
            parts.append(f"→ {b.get('name')}({to_json(b.get('arguments'))})")
        elif b.get("type") == "image":
            parts.append("[image]")
    return "\n".join(parts) if m.get("role") == "assistant" else full_text(content) or "\n".join(parts)
