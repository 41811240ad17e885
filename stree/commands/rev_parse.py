import click

from .options import output_options
from ..errors import NotFound, StreeError
from ..format.terminal import inert
from ..output.fields import REV_FIELDS, describe
from ..output.reads import shortest
from ..core.revs import Resolver


@click.command("rev-parse", epilog=f"""\b
Examples:
  stree rev-parse @                  the leaf's id
  stree rev-parse --short bug-found  the shortest unique prefix of a labelled entry
  stree rev-parse main..@            @'s id, then ^ and main's id (as git prints ranges)
  id=$(stree rev-parse --verify -q ':/flaky test') || echo "no such entry"

\b
Fields for --json / --format:
{describe(REV_FIELDS)}""")
@click.argument("revisions", nargs=-1, metavar="[REV...]")
@click.option("--short", is_flag=True, help="Print the shortest unique id prefix (4+ chars).")
@click.option("--verify", is_flag=True, help="Require exactly one revision that names an entry.")
@click.option("-q", "--quiet", is_flag=True, help="With --verify: no error message, only the exit code.")
@output_options(REV_FIELDS)
@click.pass_obj
def command(env, revisions, short, verify, quiet, json_mode, fmt, nul):
    """Resolve revisions (default @) to full entry ids, one per line.

    A range A..B prints B then ^A; A...B prints A, B and ^ before their merge base.
    """
    revisions = revisions or ("@",)
    if verify and len(revisions) != 1:
        raise StreeError("--verify takes exactly one revision", code=2)
    session, tree = env.load(warn=not quiet)
    resolver = Resolver(tree)
    out = env.output(json_mode, fmt, nul, REV_FIELDS)
    ids = tree.by_id

    def shown(id):
        return shortest(id, ids) if short else id

    for rev in revisions:
        try:
            results = resolver.parsed(rev, verify)
        except NotFound:
            if quiet:
                return 3
            raise
        for mark, id in results:
            out.record({"rev": rev, "id": id, "negated": bool(mark)} if mark else {"rev": rev, "id": id},
                       mark + inert(shown(id), oneline=True))  # an id is file text
    out.close()
