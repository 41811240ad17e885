"""The agents whose session files stree reads: pi and the forks that write its format, one
record each.

What stree knows about an agent is its record: where its sessions live (its homes under ~,
the environment variables that move them, the layout below a home), what its files may hold
that pi's do not (a title slot before the header, no header at all) and the kept copies it
leaves beside them (OpenClaw's `<id>.jsonl.reset.<time>`). Discovery (stree.core.store),
`--agent` (stree.cli, its completion, serve's grep and MCP's enum), the `agent` field of
`ls`/`grep` records and the headerless rule (stree.storage.session) all read AGENTS: adding
a fork is one more record here.

Data and pure functions only: it sits at the bottom so that the parser (storage, below the
core) can read it too.
"""

import os

PI = "pi"  # the agent of this project's sessions: -s, --agent-dir and --session-dir address its layout


class Agent:
    """One agent's record (keyword arguments beyond the first three; plain, not a dataclass:
    the fast paths do not import dataclasses)."""

    def __init__(self, name, title, homes, sessions="sessions", per_project=True, env=(), title_slot=False,
                 headerless=False, states=(), blobs=False):
        self.name = name  # the --agent value and the `agent` field of ls / grep records
        self.title = title  # how people call it (help texts)
        self.homes = homes  # its directories under ~ (its current name first, then earlier names)
        self.sessions = sessions  # where the session directories are below a home (`*`: any one name)
        self.per_project = per_project  # one directory per project below them (pi's --home-dev-app--), else flat
        self.env = env  # environment variables naming its home instead (the first set wins)
        self.title_slot = title_slot  # line 1 may be a {"type": "title"} slot before the header
        self.headerless = headerless  # a file without a header is read (read-only) in its session directories
        self.states = states  # kept copies beside a live session: <id>.jsonl.<state>.<timestamp>
        self.blobs = blobs  # image blobs kept in <home>/blobs, named by an image's `blob:sha256:` reference

    def __repr__(self):
        return f"Agent({self.name!r})"


AGENTS = (
    Agent("pi", "pi", (".pi/agent",), env=("PI_CODING_AGENT_DIR",)),
    Agent("omp", "oh-my-pi", (".omp/agent",), title_slot=True, blobs=True),
    Agent("openclaw", "OpenClaw", (".openclaw", ".clawdbot", ".moltbot"),  # and its earlier names
          sessions="agents/*/sessions", per_project=False, headerless=True, states=("reset", "deleted")),
)


def names():
    """The agents' names, pi first: what --agent takes besides `all`."""
    return tuple(agent.name for agent in AGENTS)


def choices():
    """What --agent (and serve's and MCP's `agent`) accepts."""
    return names() + ("all",)


def named(name):
    """The record of an agent by name."""
    return next(agent for agent in AGENTS if agent.name == name)


def help_text():
    """`pi (~/.pi/agent), omp (oh-my-pi, ~/.omp/agent) or ...`: the agents and their homes."""
    parts = []
    for agent in AGENTS:
        where = ", ".join("~/" + home for home in agent.homes)
        parts.append(f"{agent.name} ({where})" if agent.title.lower() == agent.name
                     else f"{agent.name} ({agent.title}, {where})")
    return ", ".join(parts)


def spoken(words):
    """`a`, `a or b`, `a, b or c`."""
    words = list(words)
    return " or ".join(words) if len(words) < 3 else ", ".join(words[:-1]) + " or " + words[-1]


def described():
    """`pi, omp (oh-my-pi) or openclaw`: the names, with what people call them when it differs."""
    return spoken(agent.name if agent.title.lower() == agent.name else f"{agent.name} ({agent.title})"
                  for agent in AGENTS)


def with_states():
    """The agents that leave kept copies beside their sessions."""
    return [agent for agent in AGENTS if agent.states]


def states_text(short=False):
    """What the `state` of a session file may be: `live; reset or deleted for OpenClaw's kept
    copies (<id>.jsonl.reset.<time>, .deleted.<time>)` (`short`: `live, or reset / deleted
    (OpenClaw's kept copies)`)."""
    if short:
        return "live" + "".join(f", or {' / '.join(a.states)} ({a.title}'s kept copies)" for a in with_states())
    parts = [f"{spoken(a.states)} for {a.title}'s kept copies (<id>.jsonl.{a.states[0]}.<time>"
             + "".join(f", .{state}.<time>" for state in a.states[1:]) + ")" for a in with_states()]
    return "; ".join(["live", *parts])


def headerless_titles():
    """`OpenClaw`: who keeps session files without a header."""
    return spoken(agent.title for agent in AGENTS if agent.headerless)


def title_slots():
    """Whether a file's line 1 may be a title slot before its header (oh-my-pi writes one).
    Read in any file, wherever it lives: such files are copied around (the headerless rule
    instead is kept to the agent's own directories)."""
    return any(agent.title_slot for agent in AGENTS)


def file_state(agent, name):
    """'live' for a session file of this agent, the state of one of its kept copies
    (OpenClaw: <id>.jsonl.reset.<timestamp> is 'reset'), None for anything else."""
    if name.endswith(".jsonl"):
        return "live"
    if agent.states:
        import re

        m = re.search(r"\.jsonl\.(" + "|".join(map(re.escape, agent.states)) + r")\.[^/]+$", name)
        if m:
            return m.group(1)
    return None


def headerless_allowed(path):
    """A file without a header is read (read-only) only inside the session directories of
    an agent that writes such files (OpenClaw: .../.openclaw/agents/<agent>/sessions/).
    Anywhere else it is refused (exit 4) as pi refuses it."""
    parts = os.path.abspath(str(path)).split(os.sep)
    for agent in AGENTS:
        if not agent.headerless:
            continue
        for home in agent.homes:
            pattern = home.split("/") + agent.sessions.split("/")
            for i in range(len(parts) - len(pattern)):  # (a file below them: one part more)
                if all(p == "*" or p == parts[i + k] for k, p in enumerate(pattern)):
                    return True
    return False
