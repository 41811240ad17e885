"""What `stree catalog push` prints for people (stree.commands.catalog, and stree.fastpush
without click)."""


def pushed(rec):
    """The human text of a push's record (stree.core.catalog_shared.push_record)."""
    human = (f"pushed     {rec['pushed']} session file(s), {rec['sent']} entries, to {rec['path']}\n"
             f"unchanged  {rec['unchanged']}\n"
             f"dropped    {rec['dropped']}")
    if rec["skipped"]:
        human += f"\nskipped    {rec['skipped']}"
    return human
