"""The answers to the read questions (table.py declares them: their arguments, checks and
records' schemas): each takes the front end's place (load(session) -> (Session, Tree); cwd,
agent, agent_dir, session_dir, no_cache) and the question's arguments, and gives what the
matching command's --json prints: a list (or iterable) of records, or one object. Imports are
made where they are needed: stree.fastread answers rev-parse and label's list from here."""

import os

from ..errors import StreeError


def log(place, session=None, revision="@", graph=False, filter=None, search=None, max_count=None, since=None,
        until=None, roles=(), models=(), reverse=False):
    from ..output.records import entry_filter, graph_records, log_records

    _, tree = place.load(session)
    only = entry_filter(since, until, roles, models)
    if graph:
        return graph_records(tree, filter, search, max_count, only)
    return log_records(tree, revision, filter, search, max_count, reverse, only)


def tree(place, session=None, filter="default", search=None, max_count=None):
    """The drawing's rows, each record made as it is asked for (a long drawing is never held
    as records): (count, record(i))."""
    from ..core.preview import Previewer
    from ..output.fields import entry_record
    from ..output.graph import graph

    _, tree = place.load(session)
    previewer = Previewer(tree)
    rows = graph(tree, filter or "default", search, previewer=previewer)
    if max_count is not None:
        rows = rows[:max_count]

    def record(i):
        row = rows[i]
        return entry_record(tree, row.node, previewer, graph=row.prefix, active=row.active,
                            row=row.text(marker=False))
    return len(rows), record


def show(place, session=None, revisions=None):
    """The entries asked, in full (as in the file, migrated to version 3), each revision's in
    turn; a range's every entry, newest first (as log lists it). Every revision is resolved
    before the first entry is read."""
    from ..core.revs import Resolver

    _, tree = place.load(session)
    resolver = Resolver(tree)
    ids = []
    for rev in revisions or ["@"]:
        kind, *ends = resolver.resolve_range(rev)
        if kind == "single":
            ids.append(ends[0])
        else:
            ids += [tree.id_of(r) for r in resolver.rows_of(rev)[::-1]]
    return (tree.load(tree.get(id)) for id in ids)


def context(place, session=None, revision="@", as_="pi", model=None, provider=None, base_url=None, max_tokens=None,
            system_prompt=None, tools=None):
    """pi's context at `revision` ({messages, thinkingLevel, model}), or with `as_` (openai,
    anthropic) the request body pi-ai would send with it (the instructions and tools read
    from the files `system_prompt` and `tools`, else the config's and pi's own)."""
    from ..core.revs import Resolver

    _, tree = place.load(session)
    leaf = Resolver(tree).resolve(revision, allow_empty=True) if tree.nodes else None
    if as_ == "pi":
        return tree.build_context(leaf)
    from ..core.request import request_at
    from ..core.request.inputs import request_inputs

    instructions, definitions = request_inputs(system_prompt, tools)
    return request_at(tree, leaf, api=as_, model=model, provider=provider, base_url=base_url,
                      system_prompt=instructions, tools=definitions, max_tokens=max_tokens)


def labels(place, session=None):
    from ..core.preview import Previewer
    from ..output.reads import label_records

    _, tree = place.load(session)
    return list(label_records(tree, Previewer(tree)))


def rev_parse(place, revisions=None, verify=False):
    """The records of `stree rev-parse --json`, a revision at a time: its id, or a range's ends
    (B, then ^A; A...B: A, B and ^ their merge base)."""
    from ..core.revs import Resolver

    _, tree = place.load(None)
    resolver = Resolver(tree)
    for rev in revisions or ["@"]:
        for mark, id in resolver.parsed(rev, verify):
            yield {"rev": rev, "id": id, "negated": True} if mark else {"rev": rev, "id": id}


def grep(place, pattern, **args):
    """The records of `stree grep --json`: one per matching line, or per session (files_only,
    count)."""
    return list(searched(place, pattern, **args).records())


def searched(place, pattern, ignore_case=False, word=False, regex=False, files_only=False, count=False,
             max_count=None, roles=(), types=(), since=None, until=None, cwd=None, agent=None, session=None):
    """The search grep's arguments ask for (core.grep_sessions.Grep), ready to give its records."""
    from ..core.grep_sessions import Grep
    from ..core.store import resolve_session

    agent = agent or place.agent
    path = resolve_session(session, place.cwd, place.agent_dir, place.session_dir, agent) if session else None
    return Grep(pattern, regex=regex, ignore_case=ignore_case, word=word, roles=roles, types=types, since=since,
                until=until, cwd=cwd, files_only=files_only, count=count, max_count=max_count, session_path=path,
                agent=agent, agent_dir=place.agent_dir, no_cache=place.no_cache)


def list_sessions(place, query=None, all=False, limit=None):
    """The records of `stree ls --json` (`all`: --all), those holding every word of `query`,
    at most `limit` of them."""
    infos, _ = listed(place, all)
    words = [w for w in (query or "").lower().split() if w]
    if words:
        def text(info):
            return " ".join(str(info.get(k) or "") for k in ("id", "name", "firstMessage", "cwd", "path")).lower()
        infos = [i for i in infos if _all_words(words, text(i))]
    return infos[:limit] if limit is not None else infos


def listed(place, all=False, progress=None):
    """(the session records, newest activity first, and where they were looked for): this
    directory's sessions, or with `all` every project's, of the agents place.agent selects.
    `progress(total)`: a bar (output.progress.Progress: advance(n)) drawn as the files are read
    (ls's), or None."""
    from contextlib import nullcontext

    from ..core.budget import shielded
    from ..core.listing import session_paths, session_records

    paths, found, where = session_paths(place.cwd, place.agent_dir, place.session_dir, all, place.agent)
    try:  # the session a bare `stree log` opens here
        current = os.path.abspath(place.path())
    except (StreeError, OSError):
        current = None
    with shielded(), (progress(len(paths)) if progress else nullcontext()) as bar:
        # (the catalogue is brought up to date whole: never cut short)
        infos = session_records(paths, found, current, bar.advance if bar else None, place.no_cache, everything=all)
    return infos, where


def _all_words(words, text):
    return all(w in text for w in words)  # (list_sessions's `all` is its argument)
