import click

from .options import output_options
from ..output.fields import REV_FIELDS, describe
from ..core.revs import Resolver


@click.command("merge-base", epilog=f"""\b
Examples:
  stree merge-base @ bug-found           where @ and bug-found diverged
  stree merge-base --is-ancestor root @ && echo yes
  stree log $(stree merge-base @ try-2)..try-2

\b
Fields for --json / --format:
{describe(REV_FIELDS)}""")
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option("--is-ancestor", is_flag=True,
              help="Print nothing; exit 0 if A is on the path to B (an entry is its own ancestor), 1 if not.")
@output_options(REV_FIELDS)
@click.pass_obj
def command(env, a, b, is_ancestor, json_mode, fmt, nul):
    """Print the deepest entry on both the path to A and the path to B.

    Exits 1 when the two have no common ancestor (they hang from different roots).
    """
    session, tree = env.load()
    resolver = Resolver(tree)
    a_id, b_id = resolver.resolve(a), resolver.resolve(b)
    if is_ancestor:
        return 0 if tree.is_ancestor(a_id, b_id) else 1
    base = tree.merge_base(a_id, b_id)
    if base is None:
        return 1
    out = env.output(json_mode, fmt, nul, REV_FIELDS)
    out.record({"rev": f"{a} {b}", "id": base}, base)
    out.close()
