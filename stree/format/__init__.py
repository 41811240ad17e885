"""Bytes and lines: JSON as pi reads and writes it, the header, migrations (imports nothing of stree above it)."""
