"""`stree context`: the context question's command (stree.questions: its arguments and
answer), drawn for people. The same concept one layer down, the context itself:
stree.core.context."""

import click

from .adapter import answer, parameters, question
from .options import output_options
from ..core.convert import convert_to_llm
from ..output.fields import MESSAGE_FIELDS, describe
from ..format.terminal import inert
from ..output.modes import to_json
from ..format.text import full_text, normalize

CONTEXT = question("context")


@click.command("context", epilog=f"""\b
Examples:
  stree context                       what the model sees at @
  stree context bug-found~1 --json    pi's context object at an earlier entry
  stree context --as openai | curl -s $URL -H 'content-type: application/json' -d @-
  stree context bug-found --as anthropic --model claude-sonnet-4-5 --max-tokens 8192
  stree context --format '{{role}}\\t{{text}}' | cut -c1-120

\b
--json prints one object {{messages, thinkingLevel, model}}, exactly as pi 1.6.0's
buildSessionContext returns it. --as openai|anthropic prints the request body pi-ai 1.6.0
would send with this context (OpenAI chat completions, Anthropic messages): a tool call
without a result gets pi-ai's error result "No result provided"; thinking is kept only for
the model that wrote it; max_tokens, the reasoning fields and the instructions role
("developer" only on OpenAI's own API) as pi sends them. The session stores no system
prompt and no tool definitions: --system-prompt FILE and --tools FILE (a JSON array of
{{name, description, parameters}}) give them, or the config's system_prompt and tools;
else pi's default tools (read, bash, edit, write) are offered, plus any other tool the
session calls (pi's definition, or a permissive schema). The model: --model, --provider
(pi's provider name), --base-url; default the session's model on the API's own server.
Fields for --format (one record per message):
{describe(MESSAGE_FIELDS)}""")
@parameters(CONTEXT)
@output_options(MESSAGE_FIELDS)
@click.pass_obj
def command(env, revision, as_, model, provider, base_url, max_tokens, system_prompt_file, tools_file,
            json_mode, fmt, nul):
    """Show the LLM context pi builds at REV (default @).

    The same rules as pi 1.6.0: a compaction on the path puts its system message and
    summary first, then the kept entries from firstKeptEntryId (system messages left
    out), then everything after it; the latest context_edit of an entry among those
    replaces its content or omits it; branch summaries and custom messages join as user
    messages; missing content reads as empty; thinking level and model are the last
    ones set on the path.
    """
    context = answer(CONTEXT, env, revision=revision, as_=as_, model=model, provider=provider, base_url=base_url,
                     max_tokens=max_tokens, system_prompt_file=system_prompt_file, tools_file=tools_file)
    out = env.output(json_mode, fmt, nul, MESSAGE_FIELDS)
    if as_ != "pi":  # (the request body)
        click.echo(to_json(context) + out.end, nl=False)
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
