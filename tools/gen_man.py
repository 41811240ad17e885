"""Generate man/stree.1 and man/stree-COMMAND.1 from the click definitions.

    python tools/gen_man.py [OUTDIR]        (default: man/; `make man`)

Everything a page says about a command comes from the code: the SUBCOMMANDS table
(summary), the docstring (description), the options, and the epilog (examples,
fields, notes). The sections every page shares are written here once: revision
syntax (stree.1), exit status (errors.EXIT_CODES), environment (cli.ENV_HELP plus
the variables below), files, and the record fields of stree.output.fields.
"""

import inspect
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import click  # noqa: E402

from stree import __version__  # noqa: E402
from stree.output import fields  # noqa: E402
from stree.commands import SUBCOMMANDS  # noqa: E402
from stree.cli import ENV_HELP, LIMITS_HELP, main  # noqa: E402
from stree.errors import EXIT_CODES  # noqa: E402

MANUAL = "stree manual"

REVISIONS = [
    ("ID", "A full entry id (8 hex characters in files pi writes)."),
    ("PREFIX", "A unique prefix of an entry id, 4 characters or more (case-insensitive)."),
    ("LABEL", "The entry a label names (set in pi with /label, or with stree label). "
              "A name is tried as an exact id first, then as a label, then as an id prefix."),
    ("@, HEAD", "The leaf: the entry the session continues from, the current position. stree's own "
                "checkout markers, and label and name entries appended after it, are looked through: "
                "after 'stree checkout X', @ is X (the marker is still reached by its id)."),
    ("@{N}, HEAD@{N}", "Where the leaf went N moves ago, as 'stree reflog' numbers the moves "
                       "(@{0} is the newest). 'stree checkout -' goes back to before the last move."),
    ("root", "The first entry on the path to @."),
    (":/TEXT", "The newest entry whose text (message text, summary, label, tool call) contains TEXT."),
    ("REV~N, REV~", "The Nth ancestor of REV (the parent for ~ alone). Entries have one parent."),
    ("REV^, REV^0", "The parent of REV; REV^0 is REV itself."),
    ("A..B", "Range: the entries on the path to B that are not on the path to A. "
             "An empty side means @: main.. is main..@."),
    ("A...B", "Symmetric range: the entries on either path since the merge base of A and B."),
]

# variables read by commands that document them elsewhere; ENV_HELP (cli.py) wins on a name
MORE_ENVIRONMENT = [
    ("STREE_PROVIDER", "summary provider: extractive (offline), openai or anthropic"),
    ("STREE_MODEL", "model for summaries"),
    ("STREE_BASE_URL", "base URL of the provider's API"),
    ("OPENAI_API_KEY, OPENAI_BASE_URL", "key and endpoint of OpenAI-compatible providers"),
    ("ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL", "key and endpoint of the Anthropic Messages API"),
    ("STREE_HOOKS_DIR", "directory of the before-tree and tree hooks (default: hooks/ in the config directory)"),
    ("STREE_NO_CACHE", "do not read or write the session index (same as --no-cache)"),
    ("XDG_CONFIG_HOME, XDG_CACHE_HOME", "base of the config and cache directories (Linux)"),
    ("MANPAGER, PAGER", "the pager of stree help"),
    ("STREE_PROGRESS_DELAY", "seconds of work before progress shows on a terminal (default 0.5)"),
]

FILES = [
    ("~/.pi/agent/sessions/--CWD--/*.jsonl",
     "pi's session files, one directory per project (CWD with / turned into -); "
     "$PI_CODING_AGENT_DIR or --agent-dir move the agent directory."),
    ("~/.config/stree/config.toml",
     "stree's settings (summary provider, model, base URL, timeouts). The directory is the "
     "platform config directory: $XDG_CONFIG_HOME/stree on Linux, "
     "~/Library/Application Support/stree on macOS."),
    ("~/.config/stree/hooks/",
     "executable before-tree and tree hooks, run around a checkout ($STREE_HOOKS_DIR overrides)."),
    ("~/.cache/stree/",
     "session indexes, rebuilt whenever a file changed other than by growing, and kept "
     "`log --graph` outputs, printed again while their file is unchanged; safe to delete "
     "(stree gc). The platform cache directory: $XDG_CACHE_HOME/stree on Linux, "
     "~/Library/Caches/stree on macOS."),
]


# -- roff ----------------------------------------------------------------------

def esc(text):
    """Text for a roff line: backslashes, minus signs, quotes and line-initial dots safe."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    text = text.replace("'", "\\(aq").replace("`", "\\(ga").replace("^", "\\(ha").replace("~", "\\(ti")
    text = "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in text)
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


def para(text):
    text = " ".join(text.split())
    return esc(text) if text else ""


def section(title):
    return [f".SH {title}"]


def code(lines):
    return [".PP", ".RS 4", ".EX"] + [esc(line) for line in lines] + [".EE", ".RE"]


def tagged(tag, text):
    return [".TP", tag, para(text) or "\\&"]


# -- reading click's text ------------------------------------------------------

def blocks(text):
    """click help text -> [(heading or None, items, prose)], by \\b blocks and paragraphs."""
    out = []
    text = inspect.cleandoc(text or "")
    for chunk in re.split(r"\n\s*\n", text):
        lines = [line for line in chunk.split("\n") if line.strip() != "\b"]
        heading, items, prose = None, [], []
        for line in lines:
            line = line.replace("\b", "").rstrip()
            if not line:
                continue
            if line.startswith((" ", "\t")):
                items.append(line.strip())
            elif line.endswith(":"):
                if heading or items or prose:
                    out.append((heading, items, prose))
                heading, items, prose = line[:-1], [], []
            else:
                if items:
                    out.append((heading, items, prose))
                    heading, items, prose = None, [], []
                prose.append(line)
        if heading or items or prose:
            out.append((heading, items, prose))
    return out


def split_example(item):
    """'stree log -n 5 x      what it does' -> (command, comment)."""
    m = re.match(r"^(.*?\S)\s{2,}(\S.*)$", item)
    return (m.group(1), m.group(2)) if m else (item, None)


def environment():
    rows = []
    for line in ENV_HELP.splitlines():
        m = re.match(r"^\s+(\S+(?:\s/\s\S+)?)\s{2,}(.*)$", line)
        if m:
            rows.append([m.group(1), m.group(2)])
        elif rows and line.strip():
            rows[-1][1] += " " + line.strip()
    names = {n for row in rows for n in re.split(r"[\s,/;]+", row[0] + " " + row[1]) if n.isupper()}
    rows += [[n, t] for n, t in MORE_ENVIRONMENT if not set(re.split(r",\s*", n)) <= names]
    return rows


# -- pages ---------------------------------------------------------------------

def header(name, summary):
    return [
        ".nr HY 0",
        f'.TH {name.upper()} 1 "" "stree {__version__}" "{MANUAL}"',
        ".nh",
        ".ad l",
        ".SH NAME",
        f"{esc(name)} \\- {para(summary)}",
    ]


def options_section(command, ctx, title="OPTIONS"):
    lines = section(title)
    for param in command.get_params(ctx):
        if not isinstance(param, click.Option) or param.hidden:
            continue
        record = param.get_help_record(ctx)
        if record is None:
            continue
        opts, help_text = record
        end = max(opts.rfind(n) + len(n) for n in param.opts + param.secondary_opts if n in opts)
        names, metavar = opts[:end], opts[end:].strip()
        tag = "\\fB" + esc(names).replace(", ", "\\fR, \\fB").replace(" / ", "\\fR / \\fB") + "\\fR"
        if metavar:
            tag += " \\fI" + esc(metavar) + "\\fR"
        lines += tagged(tag, help_text)
    return lines


def common_sections():
    lines = section("EXIT STATUS")
    for code_, text in EXIT_CODES:
        lines += tagged(f"\\fB{code_}\\fR", text[0].upper() + text[1:] + ".")
    lines += section("LIMITS")
    for line in LIMITS_HELP.splitlines():
        text = line.strip()
        lines += [".IP \\(bu 2", para(text[0].upper() + text[1:] + ".")]
    lines += section("ENVIRONMENT")
    for name, text in environment():
        lines += tagged(f"\\fB{esc(name)}\\fR", text + ".")
    lines += section("FILES")
    for path, text in FILES:
        lines += tagged(f"\\fI{esc(path)}\\fR", text)
    return lines


def command_page(name, summary, command, parent_ctx):
    ctx = click.Context(command, info_name=name, parent=parent_ctx)
    usage = " ".join(command.collect_usage_pieces(ctx))
    lines = header(f"stree-{name}", summary)
    lines += section("SYNOPSIS")
    lines += [f".B stree", "[\\fIGLOBAL OPTIONS\\fR]", f".B {esc(name)}", para(usage)]
    lines += section("DESCRIPTION")
    examples, field_parts, notes = [], [], []
    for heading, items, prose in blocks(command.help) + blocks(command.epilog):
        if heading and heading.startswith("Examples"):
            examples += items
            notes += prose
        elif heading and heading.startswith("Fields"):
            field_parts.append((heading, items, prose))
        else:
            notes.append((heading, items, prose))
    first = True
    for note in notes:
        if isinstance(note, str):
            note = (None, [], [note])
        heading, items, prose = note
        if prose:
            lines += ([] if first else [".PP"]) + [para(" ".join(prose))]
            first = False
        if heading:
            lines += [".PP", para(heading + ":")]
        if items:
            lines += code(items)
    if isinstance(command, click.Group):  # e.g. stree cache clear: each subcommand, its usage and options
        lines += section("COMMANDS")
        for sub_name in command.list_commands(ctx):
            sub = command.get_command(ctx, sub_name)
            if sub is None or sub.hidden:
                continue
            sub_ctx = click.Context(sub, info_name=sub_name, parent=ctx)
            usage = " ".join(sub.collect_usage_pieces(sub_ctx))
            lines += tagged(f"\\fBstree {esc(name)} {esc(sub_name)}\\fR {esc(usage)}",
                            inspect.cleandoc(sub.help or sub.short_help or ""))
            for param in sub.get_params(sub_ctx):
                record = param.get_help_record(sub_ctx) if isinstance(param, click.Option) else None
                if record and not param.hidden and "--help" not in param.opts:
                    lines += [".RS", *tagged(f"\\fB{esc(record[0])}\\fR", record[1]), ".RE"]
    if name == "serve":
        lines += serve_sections()
    lines += options_section(command, ctx)
    lines.append(".PP")
    lines.append("Global options (\\fB\\-s\\fR, \\fB\\-C\\fR, \\fB\\-\\-color\\fR, ...) may come before or "
                 f"after the command (stree \\-s demo {esc(name)}, or stree {esc(name)} \\-s demo); see \\fBstree\\fR(1).")
    if field_parts:
        lines += section("JSON FIELDS")
        for heading, items, prose in field_parts:
            if prose:
                lines += [".PP", para(" ".join(prose))]
            lines += [".PP", para(heading + ":")]
            for item in items:
                field, _, text = item.partition(" ")
                lines += tagged(f"\\fB{esc(field)}\\fR", text)
    lines += examples_section(examples)
    lines += common_sections()
    lines += section("SEE ALSO")
    lines += ["\\fBstree\\fR(1)"]
    return "\n".join(lines) + "\n"


def schema_type(schema, defs, depth=0):
    """A JSON Schema (the subset serve.schema.json uses) as a short type: string|null, entry[], {a, b?}."""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[1]
    if "const" in schema:
        import json

        return json.dumps(schema["const"])
    if "enum" in schema:
        return " | ".join(f'"{v}"' for v in schema["enum"])
    if "anyOf" in schema:
        return " | ".join(schema_type(s, defs, depth) for s in schema["anyOf"])
    kind = schema.get("type")
    if kind == "array":
        return schema_type(schema.get("items", {}), defs, depth) + "[]"
    if kind == "object" and "properties" in schema and depth < 2:
        required = set(schema.get("required", []))
        return "{" + ", ".join(k + ("" if k in required else "?") + ": " + schema_type(v, defs, depth + 1)
                               for k, v in schema["properties"].items()) + "}"
    if isinstance(kind, list):
        return "|".join(kind)
    return kind or "any"


def serve_sections():
    """stree serve: every request, its response and the events, from stree/data/serve.schema.json."""
    import json

    schema = json.loads((ROOT / "stree" / "data" / "serve.schema.json").read_text(encoding="utf-8"))
    defs = schema["$defs"]
    lines = section("REQUESTS AND RESPONSES")
    lines += [para("Each request is one JSON object on a line: {\"id\"?, \"type\": NAME, fields}. The response "
                   "repeats the id: {\"id\", \"type\": \"response\", \"command\": NAME, \"success\": true, "
                   "\"data\"} (no data where none is shown). Fields marked ? may be left out. The same list, "
                   "as JSON Schema: stree/data/serve.schema.json in the installed package.")]
    for key in defs:
        if not key.startswith("request."):
            continue
        name = key.split(".", 1)[1]
        request = defs[key]
        fields = {k: v for k, v in request["properties"].items() if k not in ("id", "type")}
        required = set(request.get("required", []))
        shown = ", ".join(k + ("" if k in required else "?") + ": " + schema_type(v, defs, 1) for k, v in fields.items())
        response = defs["response." + name]["properties"].get("data")
        text = request.get("description", "")
        text += (". Data: " + schema_type(response, defs) if response else ". No data") + "."
        lines += tagged(f"\\fB{esc(name)}\\fR" + (" " + esc("{" + shown + "}") if shown else ""), text)
    lines += section("ERRORS AND EVENTS")
    error = defs["error"]
    lines += [para("A failed request answers {\"id\", \"type\": \"response\", \"command\", \"success\": false, "
                   "\"error\": MESSAGE, \"errorCode\", \"hint\"?}; errorCode is one of "
                   + ", ".join(error["properties"]["errorCode"]["enum"]) + ". A line that is not a JSON object "
                   "answers errorCode parse with command \"parse\" and no id; the server goes on.")]
    for key in defs:
        if key.startswith("event."):
            lines += tagged(f"\\fB{esc(key.split('.', 1)[1])}\\fR " + esc(schema_type(defs[key], defs)),
                            defs[key].get("description", "") + ".")
    lines += section("TYPES")
    for key in ("entry", "message", "treeNode", "lightNode", "sessionItem", "entryRecord", "revRecord", "grepMatch",
                "grepSession", "context",
                "tokens"):
        lines += tagged(f"\\fB{esc(key)}\\fR", (defs[key].get("description", "") + ": "
                                                  + schema_type(dict(defs[key], description=None), defs, 1)).lstrip(": "))
    return lines


def examples_section(examples):
    if not examples:
        return []
    lines = section("EXAMPLES")
    for item in examples:
        command, comment = split_example(item)
        if comment:
            lines += [".PP", para(comment[0].upper() + comment[1:] + ("" if comment.endswith(".") else "."))]
        lines += code([command])
    return lines


def main_page(names):
    ctx = click.Context(main, info_name="stree", help_option_names=["-h", "--help"])
    lines = header("stree", "git-style plumbing for pi coding-agent session files")
    lines += section("SYNOPSIS")
    lines += [".B stree", "[\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]"]
    lines += section("DESCRIPTION")
    examples = []
    first = True
    for heading, items, prose in blocks(main.help):
        if heading and heading.startswith("Examples"):
            examples += items
            continue
        if prose:
            text = " ".join(prose)
            if first and text.startswith("stree:"):
                text = text.split(":", 1)[1].strip()
                text = "stree is " + text[0].lower() + text[1:]
            lines += ([] if first else [".PP"]) + [para(text)]
            first = False
        if items:
            lines += code(items)
    lines += section("COMMANDS")
    for name in names:
        lines += tagged(f"\\fBstree\\-{esc(name)}\\fR(1)", SUBCOMMANDS[name][1] + ".")
    lines += options_section(main, ctx, "GLOBAL OPTIONS")
    lines += section("REVISIONS")
    lines += [para("Every command that takes a revision (REV) understands the same syntax:")]
    for syntax, text in REVISIONS:
        lines += tagged(f"\\fB{esc(syntax)}\\fR", text)
    lines += [".PP", para("Suffixes combine: bug-found~2^ is the parent of the grandparent of the entry "
                          "labelled bug-found. When a prefix matches several entries, the error lists them.")]
    lines += section("OUTPUT")
    lines += [para("Human output is coloured on a terminal (--color, NO_COLOR) and paged when long "
                   "(PAGER, --no-pager). Session text is printed inert: control characters and "
                   "terminal escapes show as \\xNN. Read commands also print records for scripts: "
                   "--json (one JSON object per line), --format with {field} placeholders over the same "
                   "fields, and -z to end records with NUL. Field names are stable. stdout carries "
                   "results only; warnings, errors and progress go to stderr, and progress only "
                   "when stdout and stderr are terminals and the output is not --json or --format.")]
    lines += section("JSON FIELDS")
    for attr in sorted(a for a in dir(fields) if a.endswith("_FIELDS")):
        table = getattr(fields, attr)
        if not isinstance(table, dict):
            continue
        kind = attr[:-len("_FIELDS")].lower()
        lines += [".SS " + esc(kind.capitalize() + " records")]
        for field, text in table.items():
            lines += tagged(f"\\fB{esc(field)}\\fR", text)
    lines += examples_section(examples)
    lines += common_sections()
    lines += section("SEE ALSO")
    lines += [", ".join(f"\\fBstree\\-{esc(n)}\\fR(1)" for n in names)]
    return "\n".join(lines) + "\n"


def generate():
    """{file name: page text} for stree and every visible command."""
    ctx = click.Context(main, info_name="stree", help_option_names=["-h", "--help"])
    pages = {}
    names = []
    for name in SUBCOMMANDS:
        command = main.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        names.append(name)
        pages[f"stree-{name}.1"] = command_page(name, SUBCOMMANDS[name][1], command, ctx)
    pages["stree.1"] = main_page(names)
    return pages


def write(outdir):
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    pages = generate()
    for stale in outdir.glob("stree*.1"):
        if stale.name not in pages:
            stale.unlink()
    for name, text in pages.items():
        path = outdir / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    return pages


if __name__ == "__main__":
    written = write(sys.argv[1] if len(sys.argv) > 1 else ROOT / "man")
    print(f"{len(written)} pages", file=sys.stderr)
