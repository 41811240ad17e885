import click

SHELLS = ("bash", "zsh")


@click.command("completion", epilog="""\b
Examples:
  stree completion bash > ~/.local/share/bash-completion/completions/stree
  mkdir -p ~/.zfunc && stree completion zsh > ~/.zfunc/_stree
  eval "$(stree completion bash)"     for this shell only (~/.bashrc works too)
  source <(stree completion zsh)      the same in zsh, after compinit

\b
zsh loads ~/.zfunc/_stree when ~/.zshrc has, before compinit:
  fpath=(~/.zfunc $fpath); autoload -Uz compinit && compinit
The same scripts are in completions/ of the source tree; 'make install-completions'
installs both.""")
@click.argument("shell", type=click.Choice(SHELLS))
def command(shell):
    """Print the tab-completion script for SHELL (bash or zsh).

    The script completes subcommands and options, revisions (labels, then entry
    ids with a preview, then @, root and :/) from the session named earlier on the
    line with -s (or the default session), session ids and .jsonl files for -s,
    and the values of choices such as --filter and --provider.
    """
    click.echo(script(shell), nl=False)


def script(shell):
    """The completion script for `shell`, as shipped in completions/."""
    from pathlib import Path

    name = {"bash": "stree.bash", "zsh": "_stree"}[shell]
    return (Path(__file__).resolve().parent.parent / "data" / name).read_text(encoding="utf-8")
