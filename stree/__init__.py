"""stree: git-style plumbing for pi coding-agent session files."""

__version__ = "0.1.0"
