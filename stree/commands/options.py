"""What every command shares: the machine output options and the warning line."""

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
