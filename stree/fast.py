"""The entry point's old name, kept for console scripts installed before it was renamed (their
`stree` says `from stree.fast import main`): the entry point is stree.entrypoint. Delete this
once every install has run `pip install` again (pyproject names stree.entrypoint:main)."""

from .entrypoint import main  # noqa: F401
