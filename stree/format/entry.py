"""What stree keeps of an entry: its structural fields, read from the parsed JSON object."""

from .decode import JS_WHITESPACE

_OK_STOPS = ("stop", "toolUse")
_SCALARS = (str, int, float, bool)



_NAMES = {}  # entry types and roles: one str object per name, so later passes over the columns
#             hash and compare a few hot objects, and rows share their memory


def _name(text):
    if len(_NAMES) < 256:
        _NAMES[text] = text
    return text


def entry_fields(obj):
    """(id, parentId, type, role, timestamp, aux, hidden) of a parsed entry, or None
    when it has no type. Runs once per line of every file read: no helper calls."""
    get = obj.get
    etype = get("type")
    if etype.__class__ is not str:
        return None
    etype = _NAMES.get(etype) or _name(etype)
    role = None
    aux = None
    hidden = False
    if etype == "message":
        msg = get("message")
        if msg.__class__ is dict:
            role = msg.get("role")
            if role.__class__ is str:
                role = _NAMES.get(role) or _name(role)
            if role == "assistant":
                content = msg.get("content")
                text = False
                if content.__class__ is list:
                    calls = None
                    for block in content:
                        if block.__class__ is dict:
                            kind = block.get("type")
                            if kind == "toolCall":
                                cid = block.get("id")
                                if cid is None or cid.__class__ in _SCALARS:  # usable as a map key
                                    if calls is None:
                                        calls = [cid]
                                    else:
                                        calls.append(cid)
                            elif kind == "text" and not text:
                                value = block.get("text")
                                text = value.__class__ is str and bool(value.strip(JS_WHITESPACE))
                    if calls is not None:
                        aux = tuple(calls)  # the toolCall ids: previews of tool results need them
                elif content.__class__ is str:
                    text = bool(content.strip(JS_WHITESPACE))
                if not text:
                    stop = msg.get("stopReason")
                    hidden = not (stop and stop not in _OK_STOPS)
            elif role == "toolResult":
                aux = msg.get("toolCallId")  # which call it answers (for the index's preview cache)
    elif etype == "label":
        label = get("label")
        target = get("targetId")
        if target is not None and target.__class__ not in _SCALARS:
            import json

            target = json.dumps(target)  # a list or object names no entry; keep it printable (fsck)
        aux = (target, label if label.__class__ is str else None)
    elif etype == "session_info":
        name = get("name")
        aux = name if name.__class__ is str else None
    elif etype == "custom" or etype == "custom_message":
        aux = get("customType")
    elif etype == "thinking_level_change":  # the context's thinking level, without decoding the entry
        level = get("thinkingLevel")
        aux = level if level.__class__ is str else None
    elif etype == "model_change":  # (provider, modelId), when both are strings (else: decode it)
        provider, model_id = get("provider"), get("modelId")
        if provider.__class__ is str and model_id.__class__ is str:
            aux = (provider, model_id)
    elif etype == "compaction":
        aux = get("firstKeptEntryId")
        if aux is None and isinstance(get("firstKeptEntryIndex"), int):
            aux = ("index", obj["firstKeptEntryIndex"])
    ts = get("timestamp")
    return (get("id"), get("parentId"), etype, role, ts if ts.__class__ is str else None, aux, hidden)
