"""The per-session index, the parallel cold parse, kept outputs, the cache directory (depends on format only)."""
