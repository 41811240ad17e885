"""The entry tree, paths, context, revisions, navigation, summaries (over format and storage)."""
