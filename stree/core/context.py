"""The context pi sends to the model: messages projected from entries, and the latest edits.
The same concept one layer up is the command that shows it, stree.commands.context."""

from ..format.timestamp import ts_millis
from ..storage import register_counters

STATS = register_counters("path", {"walked": 0})  # rows walked up a path for a context (STREE_DEBUG_STATS):
#                                                   by context_suffix, or by the tree's whole path_rows


def _js_object(entry, role, fields, timestamp):
    """An object literal as JSON.stringify shows it: fields pi reads as undefined are left out."""
    out = {"role": role}
    for name, key in fields:
        if key in entry:
            out[name] = entry[key]
    out["timestamp"] = ts_millis(timestamp)
    return out


def custom_message(entry, empty=False):
    """pi's createCustomMessage of a custom_message entry; `empty`: missing or null content
    becomes [] (buildSessionContext since 1.5: entry.content ?? [])."""
    if empty and entry.get("content") is None:
        entry = dict(entry, content=[])
    return _js_object(entry, "custom", (("customType", "customType"), ("content", "content"),
                                        ("display", "display"), ("details", "details")), entry.get("timestamp"))


def branch_summary_message(entry):
    return _js_object(entry, "branchSummary", (("summary", "summary"), ("fromId", "fromId")), entry.get("timestamp"))


def compaction_message(entry):
    return _js_object(entry, "compactionSummary", (("summary", "summary"), ("tokensBefore", "tokensBefore")),
                      entry.get("timestamp"))


def entry_model(entry):
    """(provider, modelId) set by a model_change entry, tolerating oh-my-pi's `model`."""
    provider, model_id = entry.get("provider"), entry.get("modelId")
    if provider is None and model_id is None and isinstance(entry.get("model"), str):
        provider, _, model_id = entry["model"].partition("/")
        return {"provider": provider, "modelId": model_id}
    return _defined(("provider", entry, "provider"), ("modelId", entry, "modelId"))


def _defined(*fields):
    """An object literal of fields as JSON.stringify writes it: a missing one is left out."""
    return {name: source[key] for name, source, key in fields if key in source}


def _js_truthy(value):
    return value not in (None, False, 0, "") and value == value  # NaN is falsy


_EMPTY_CONTENT = {"user": list, "assistant": list, "toolResult": list, "system": str}


def entry_messages(entry):
    """pi's sessionEntryToContextMessages: the messages one entry gives the model, before
    context edits. Missing or null content is normalised as pi 1.5 does."""
    etype = entry.get("type")
    if etype == "message":
        msg = entry.get("message")
        if msg.__class__ is dict and msg.get("content") is None:
            empty = _EMPTY_CONTENT.get(msg.get("role"))
            if empty is not None:
                msg = dict(msg)
                msg["content"] = empty()
        return [msg]
    if etype == "custom_message":
        return [custom_message(entry, empty=True)]
    if etype == "branch_summary" and _js_truthy(entry.get("summary")):
        return [branch_summary_message(entry)]
    if etype == "compaction":
        summary = compaction_message(entry)
        system = entry.get("systemMessage")
        return [system, summary] if _js_truthy(system) else [summary]
    return []


_EDITABLE = ("user", "assistant", "toolResult", "custom")


def latest_edits(entries):
    """targetId -> the latest context_edit entry among `entries` (loaded, in path order)."""
    edits = {}
    for entry in entries:
        if entry.get("type") == "context_edit":
            target = entry.get("targetId")
            if target.__class__ is str:  # only a string can name an entry
                edits[target] = entry
    return edits


def project_entry(entry, edit=None):
    """pi's projectContextEntry: the messages of one entry after its latest context edit
    (`edit`, or None). A null replacement omits the entry; otherwise the replacement's
    content takes the place of the message's content (a string becomes one text block
    for assistant and tool results). Branch summaries apply edits with this too."""
    messages = entry_messages(entry)
    if edit is None:
        return messages
    if "replacement" not in edit:
        return messages  # pi would fail on this edit; stree leaves the target as it is
    replacement = edit["replacement"]
    if replacement is None:
        return []
    missing = replacement.__class__ is not dict or "content" not in replacement
    content = None if missing else replacement["content"]
    out = []
    for msg in messages:
        role = msg.get("role") if msg.__class__ is dict else None
        if role not in _EDITABLE:
            out.append(msg)
            continue
        msg = dict(msg)
        if missing:
            msg.pop("content", None)  # `content: undefined`: JSON.stringify leaves it out
        elif role in ("assistant", "toolResult") and content.__class__ is str:
            msg["content"] = [{"type": "text", "text": content}]
        else:
            msg["content"] = content
        out.append(msg)
    return out


def context_entries(path):
    """pi's buildContextEntries over a root-first path of loaded entries: the latest
    compaction, the kept entries from its firstKeptEntryId (system messages left out),
    then every entry after it. A compaction keeping its own id keeps nothing. oh-my-pi's
    compactions that a provider replays (kept_from) keep the entries after the replayed one."""
    at = -1
    for i, entry in enumerate(path):
        if entry.get("type") == "compaction":
            at = i
    if at < 0:
        return list(path)
    compaction = path[at]
    key, after = kept_from(compaction)
    out = [compaction]
    found = False
    for entry in path[:at]:
        if found and not _is_system_message(entry):
            out.append(entry)
        if key is not None and not found and entry.get("id") == key:
            found = True
            if not after and not _is_system_message(entry):
                out.append(entry)
    out.extend(path[at + 1:])
    return out


def kept_from(compaction):
    """(id, after) where the kept entries of a compaction start: at the entry `id`, or after it;
    (None, False) keeps none. pi: at firstKeptEntryId. oh-my-pi 18 (buildSessionContext in
    src/session/session-context.ts) also writes compactions a provider replays natively: one
    with OpenAI's remote replacement history (preserveData.openaiRemoteCompaction) keeps the
    entries after providerReplayThroughEntryId (the history stands for those up to it), or
    none without one; an Anthropic one (preserveData.anthropicCompaction) with firstKeptEntryId
    "" (a snapshot) keeps those after providerReplayThroughEntryId."""
    first = compaction.get("firstKeptEntryId")
    replay = compaction.get("providerReplayThroughEntryId")
    replay = replay if replay.__class__ is str and replay else None
    preserve = compaction.get("preserveData")
    preserve = preserve if preserve.__class__ is dict else {}
    remote = preserve.get("openaiRemoteCompaction")
    if remote.__class__ is dict and remote.get("provider").__class__ is str and remote["provider"] \
            and remote.get("replacementHistory").__class__ is list \
            and all(item.__class__ is dict for item in remote["replacementHistory"]):
        return replay, True
    native = preserve.get("anthropicCompaction")
    if first == "" and replay and native.__class__ is dict and all(
            native.get(k).__class__ is str and native[k] for k in ("provider", "content")):
        return replay, True
    return first, False


def _is_system_message(entry):
    msg = entry.get("message")
    return entry.get("type") == "message" and msg.__class__ is dict and msg.get("role") == "system"


def build_context(path):
    """pi's buildSessionContext (1.5.2 and 1.6.0: buildSessionProjection) over a root-first list of
    loaded entries: compaction, context edits, content normalisation."""
    if not path:
        return {"messages": [], "thinkingLevel": "off", "model": None}
    thinking = "off"
    model = None
    for entry in path:
        etype = entry.get("type")
        if etype == "thinking_level_change":
            thinking = entry.get("thinkingLevel")
        elif etype == "model_change":
            model = entry_model(entry)
        elif etype == "message" and isinstance(entry.get("message"), dict) \
                and entry["message"].get("role") == "assistant":
            msg = entry["message"]
            model = _defined(("provider", msg, "provider"), ("modelId", msg, "model"))
    entries = context_entries(path)
    edits = latest_edits(entries)
    messages = []
    for index, entry in enumerate(entries):
        if index and entry.get("type") == "compaction":
            continue  # an older compaction inside the kept range gives nothing
        id = entry.get("id")
        messages.extend(project_entry(entry, edits.get(id) if id.__class__ is str else None))
    return {"messages": messages, "thinkingLevel": thinking, "model": model}


def build_context_lazy(path, load, types=None, roles=None, find=None):
    """build_context over a root-first path of Nodes, loading (decoding) only the entries the
    answer reads: the newest compaction, the entries from its firstKeptEntryId on (context
    edits, kept and later entries), and the last thinking-level and model setters before
    them. The Nodes' structure (type, role, id) finds these without decoding the rest.

    `types`, `roles`: the path's entry types and roles, when the caller has them from the
    columns (then `path` may make its Nodes on demand: only those read are made); `find(id,
    stop)`: the position of the path's entry `id` before `stop`, or None."""
    if types is None:
        types = [n.type for n in path]
        roles = [n.role for n in path]
    compaction = thinking = model = -1
    for i in range(len(types) - 1, -1, -1):  # the last of each, newest first
        etype = types[i]
        if etype == "compaction":
            if compaction < 0:
                compaction = i
        elif etype == "thinking_level_change":
            if thinking < 0:
                thinking = i
        elif etype == "model_change" or (etype == "message" and roles[i] == "assistant"):
            if model < 0:
                model = i
        if compaction >= 0 and thinking >= 0 and model >= 0:
            break
    if compaction < 0:
        return build_context([load(n) for n in path])
    entry = load(path[compaction])
    first, _ = kept_from(entry)  # (the entry itself is loaded when the kept ones start after it)
    start = compaction
    if first is None:
        pass
    elif find is not None:
        at = find(first, compaction)
        start = compaction if at is None else at
    else:
        for i in range(compaction):
            if path[i].id == first:  # a Node's id is its entry's id (migrated files: the same stable id)
                start = i
                break
    loaded = [load(n) for n in path[start:compaction]] + [entry] + [load(n) for n in path[compaction + 1:]]
    # the setters before the kept range, in path order: build_context reads them and
    # context_entries leaves them out (they come before firstKeptEntryId); the index holds
    # what they set (their aux), so they are decoded only when it does not
    before = [setter(path[i]) or load(path[i]) for i in sorted({thinking, model}) if 0 <= i < start]
    return build_context(before + loaded)


def setter(node):
    """What build_context reads of a thinking_level_change or model_change Node, from its
    structure (stree.format.entry keeps the level and the model as its aux), or None when
    the structure does not hold it (a value that is not a string): then the entry is loaded."""
    etype = node.type
    if etype != "thinking_level_change" and etype != "model_change":
        return None  # (an assistant message's aux, its toolCall ids, is not read: no decoding)
    aux = node.aux
    if aux is None:
        return None
    if etype == "thinking_level_change":
        return {"type": "thinking_level_change", "thinkingLevel": aux}
    if node.type == "model_change" and aux.__class__ is tuple and len(aux) == 2:
        return {"type": "model_change", "provider": aux[0], "modelId": aux[1]}
    return None


def model_lazy(path, load, types=None, roles=None):
    """build_context's model over a root-first path of Nodes, loading only its last setter
    (not even that for a model_change: the index holds its model). `types`, `roles`: as
    for build_context_lazy."""
    if types is None:
        types = [n.type for n in path]
        roles = [n.role for n in path]
    for i in range(len(types) - 1, -1, -1):
        if types[i] == "model_change" or (types[i] == "message" and roles[i] == "assistant"):
            node = path[i]
            return build_context([setter(node) or load(node)])["model"]
    return None


def context_suffix(value, prow, r, load_row, row_of, model_only=False, loaded=None, setters=None):
    """The rows build_context reads of the path to row `r`, oldest first: its newest part, up to
    the newest compaction and the rows from that compaction's firstKeptEntryId on, and the last
    thinking-level and model setters (`model_only`: the last model setter only); the whole
    path when it has no compaction. Walked up `prow` from `r`, reading the type and role of
    each row only (value(field, row): an index's columns stay undecoded). Only for a tree whose
    parents all come before their children (stree.storage.shape.Shape.ordered): then no path
    has a loop, and the rows of a walk fall, so a row the walk has passed (the first kept
    entry's) is not on the rest of the path. `setters`: Shape.setters, the last setters on
    each row's path (else the walk goes on until it meets them): the setters older than the
    rows walked come first, alone. The work is the context's, not the session's.
    `load_row(row)`: a row's entry (the compaction's is read for its kept entries; `loaded` is
    given it by row); `row_of(id)`: pi's byId, a row or None."""
    if setters is not None and model_only:
        m = setters[1][r]
        STATS["walked"] += 1
        return [m] if m >= 0 else []
    out = []
    thinking = model = setters is not None  # (then found through `setters`, below)
    compaction = False
    need = -1  # the first kept entry's row, until the walk reaches or passes it
    while r >= 0:
        out.append(r)
        if r <= need:
            need = -1
        etype = value("type", r)
        if etype == "model_change" or (etype == "message" and value("role", r) == "assistant"):
            model = True
            if model_only:
                break
        elif model_only:
            pass
        elif etype == "compaction" and not compaction:
            compaction = True
            entry = load_row(r)
            if loaded is not None:
                loaded[r] = entry
            first, _ = kept_from(entry)
            f = row_of(first) if first is not None else None
            if f is not None and f < r:
                need = f
        elif etype == "thinking_level_change":
            thinking = True
        if compaction and thinking and model and need < 0:
            break
        r = prow[r]
    STATS["walked"] += len(out)
    out.reverse()
    above = prow[out[0]] if out and setters is not None else -1
    if above >= 0:  # the path goes on above the rows walked: its last setters up there
        older = sorted({setters[0][above], setters[1][above]} - {-1})
        STATS["walked"] += len(older)
        out[:0] = older
    return out
