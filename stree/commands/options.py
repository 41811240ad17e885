"""What commands share: the machine output options, the model options (summarize and
checkout --summarize) and the warning line."""

import click


def output_options(fields):
    """--json, --format and -z, shared by every read command."""
    def decorate(f):
        f = click.option("-z", "nul", is_flag=True, help="End records with NUL instead of newline.")(f)
        f = click.option("--format", "fmt", metavar="FORMAT",
                         help="Print each record with {field} placeholders (\\t, \\n understood).")(f)
        f = click.option("--json", "json_mode", is_flag=True, help="Print JSON Lines, one record per line.")(f)
        return f
    return decorate


def warn_user(message):
    from ..format.terminal import inert

    click.echo(f"stree: warning: {inert(message)}", err=True)


def model_options(f):
    """--provider/--model/--base-url/--timeout/--context-window/--stream; shared with
    `checkout --summarize`."""
    options = [
        click.option("--provider", type=click.Choice(["openai", "anthropic", "extractive"]),
                     help="Who summarizes: an OpenAI-compatible server, Anthropic, or extractive (offline)."),
        click.option("--model", metavar="ID", help="Model id (default: STREE_MODEL, the config, the session's model)."),
        click.option("--base-url", metavar="URL",
                     help="API base URL, e.g. http://localhost:11434/v1 (default: OPENAI_BASE_URL / ANTHROPIC_BASE_URL)."),
        click.option("--timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
                     help="Give up when the server is silent this long (default 120)."),
        click.option("--context-window", type=click.IntRange(min=16385), metavar="TOKENS",
                     help="The model's context window; the conversation gets this minus 16384 tokens "
                          "(default: known models, else 128000)."),
        click.option("--stream/--no-stream", default=None, help="Stream the answer (SSE; the default)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


MODEL_FLAGS = ("provider", "model", "base_url", "timeout", "context_window", "stream")


def resolve(env, tree, provider=None, model=None, base_url=None, timeout=None, context_window=None, stream=None):
    """providers.Options from the flags, the environment, the config file and the session's model."""
    from ..providers import resolve_options
    from ..core.summary import session_thinking_level

    flags = {"provider": provider, "model": model, "base_url": base_url, "timeout": timeout,
             "context_window": context_window, "stream": stream, "debug": env.debug}
    session_model = tree.context_model(tree.leaf) if tree.leaf else None
    return resolve_options(flags, session_model, session_thinking=session_thinking_level(tree))
