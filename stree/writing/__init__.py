"""Writing a session file: append under a lock, atomic rewrite (used by core and commands)."""
