import os
import shutil
import subprocess
from pathlib import Path

import click

from . import SUBCOMMANDS
from ..errors import NotFound

# a source checkout keeps its pages next to the package (make man writes them there)
MAN_DIR = Path(__file__).resolve().parent.parent.parent / "man"


@click.command("help", epilog="""\b
Examples:
  stree help                          stree(1): revisions, exit codes, environment
  stree help log                      stree-log(1)
  MANPAGER=cat stree help checkout | grep -A3 EXAMPLES
  stree help ls 2>/dev/null || stree ls --help""")
@click.argument("command_name", required=False, metavar="[COMMAND]")
@click.pass_context
def command(ctx, command_name):
    """Show the manual page of COMMAND, or stree(1) without one.

    Opens the page with man(1): the one in this source tree's man/ directory when
    there is one, else the installed stree-COMMAND(1). Without man, or without an
    installed page, prints 'stree COMMAND --help' instead.
    """
    if command_name is not None and command_name not in SUBCOMMANDS:
        raise NotFound(f"no command '{command_name}'", hint="'stree --help' lists the commands")
    page = "stree" if command_name is None else f"stree-{command_name}"
    if _man(page):
        return
    group = ctx.parent.command
    if command_name is None:
        click.echo(group.get_help(ctx.parent))
        return
    sub = group.get_command(ctx.parent, command_name)
    with click.Context(sub, info_name=command_name, parent=ctx.parent) as sub_ctx:
        click.echo(sub.get_help(sub_ctx))


def _man(page):
    """Show `page` with man; False when man or the page is missing."""
    man = shutil.which("man")
    if man is None:
        return False
    local = MAN_DIR / f"{page}.1"
    if local.is_file():
        args = [man, "-l", str(local)]
    elif subprocess.run([man, "-w", page], capture_output=True).returncode == 0:
        args = [man, page]
    else:
        return False
    try:
        return subprocess.run(args, env=dict(os.environ)).returncode == 0
    except OSError:
        return False
