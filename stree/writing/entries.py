"""New entries as pi writes them: ids, timestamps, pi's key order, new session headers and
the bytes of a forked session."""

import os
import re
import time
from datetime import datetime, timezone

from ..format.jsjson import stringify


# -- ids, timestamps, JSON like pi's JSON.stringify ----------------------------


def now_iso():
    """`new Date().toISOString()`: 2026-11-22T10:15:03.123Z."""
    dt = datetime.now(timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def new_id(taken):
    """8 random hex chars (as the first 8 of a random UUID: those bits are all random), unique
    against `taken` (which it extends). (Not uuid: its import costs a warm write ~3 ms.)"""
    while True:
        candidate = os.urandom(4).hex()
        if candidate not in taken:
            taken.add(candidate)
            return candidate


def uuid7():
    """A UUIDv7 (time-ordered), as pi uses for session ids."""
    ms = int(time.time() * 1000)
    rand = bytearray(os.urandom(10))
    raw = ms.to_bytes(6, "big") + bytes([0x70 | (rand[0] & 0x0F), rand[1], 0x80 | (rand[2] & 0x3F)]) + rand[3:]
    import uuid

    return str(uuid.UUID(bytes=bytes(raw)))


def js_dumps(obj):
    """Compact JSON exactly as JSON.stringify writes it (None values kept as null)."""
    return stringify(obj)


def line_of(entry):
    return js_dumps(entry).encode("utf-8") + b"\n"


# -- entries in pi's key order ---------------------------------------------------


class Taken:
    """The ids of a tree, as a set new_id() can check and extend, without a set of
    every id (a new id is checked against the tree's id column)."""

    def __init__(self, tree):
        self.tree = tree
        self.added = set()

    def __contains__(self, id):
        return id in self.added or self.tree.get(id) is not None

    def add(self, id):
        self.added.add(id)


class NewEntries:
    """Builds entries to append: fresh unique ids, pi's timestamp, pi's key order."""

    def __init__(self, taken):
        self.taken = taken if isinstance(taken, Taken) else set(taken)

    def entry(self, type, parent, **fields):
        """type, id, parentId, timestamp, then the fields (undefined -> omitted, as pi)."""
        e = {"type": type, "id": new_id(self.taken), "parentId": parent, "timestamp": now_iso()}
        e.update((k, v) for k, v in fields.items() if v is not _UNDEFINED)
        return e

    def custom(self, custom_type, data, parent):
        """pi's appendCustomEntry: customType and data come before the id."""
        e = {"type": "custom", "customType": custom_type}
        if data is not _UNDEFINED:
            e["data"] = data
        e.update(id=new_id(self.taken), parentId=parent, timestamp=now_iso())
        return e

    def label(self, target, label, parent):
        """pi's appendLabelChange: a blank label clears (the key is left out)."""
        label = (label or "").strip()
        return self.entry("label", parent, targetId=target, label=label or _UNDEFINED)

    def branch_summary(self, parent, summary, details, from_hook, old_leaf, usage=None):
        """pi's branchWithSummary (1.6.0): fromId is the leaf navigated away from ("root" for
        the empty leaf); usage, when the summary came from a model, before fromHook."""
        return self.entry("branch_summary", parent, fromId=old_leaf if old_leaf is not None else "root",
                          summary=summary, details=_UNDEFINED if details is None else details,
                          usage=_UNDEFINED if usage is None else usage, fromHook=bool(from_hook))

    def session_info(self, name, parent):
        from ..format.decode import JS_WHITESPACE

        # pi 1.5: name.replace(/[\r\n]+/g, " ").trim()
        return self.entry("session_info", parent, name=re.sub(r"[\r\n]+", " ", name).strip(JS_WHITESPACE))


class _Undefined:
    def __repr__(self):
        return "undefined"


_UNDEFINED = _Undefined()


# -- new sessions ----------------------------------------------------------------


def session_header(cwd, parent_session):
    """A v3 header with a fresh UUIDv7, in pi's key order."""
    header = {"type": "session", "version": 3, "id": uuid7(), "timestamp": now_iso(), "cwd": cwd}
    if parent_session is not None:
        header["parentSession"] = parent_session
    return header


def session_file_name(header):
    """pi's file name: <timestamp with : and . as -> _ <session id>.jsonl."""
    return re.sub(r"[:.]", "-", header["timestamp"]) + "_" + header["id"] + ".jsonl"


def forked(session, tree, leaf, header, full=False, transform=None):
    """The bytes of a new session holding the path root -> leaf (pi's createBranchedSession),
    or every entry with `full` (pi's forkFrom). Returns (data, the new file's leaf id).
    `transform` (writing.images.ImageStripper): applied to each entry its touches() picks.

    As pi 0.79.2 and later: label entries on the path are dropped and the entries after one
    re-chained to the entry before it; a compaction's firstKeptEntryId that named a dropped
    label names the next kept entry. The labels of kept entries are appended at the end."""
    if full:
        kept, rewired = list(session.nodes), {}
    else:
        kept, rewired = _without_labels(tree.path(leaf) if leaf is not None else [], session.load)
    lines = [js_dumps(header).encode("utf-8")]
    for node in kept:
        changed = transform is not None and transform.touches(session.raw(node))
        if node.id in rewired or session.needs_migration or changed:
            entry = session.load(node)
            if node.id in rewired:
                entry = dict(entry, **rewired[node.id])  # in place: pi's {...entry, parentId}
            if changed:
                entry = transform(entry)
            lines.append(js_dumps(entry).encode("utf-8"))
        else:
            lines.append(session.raw(node).strip())  # the entry's bytes as they are
    last = kept[-1].id if kept else None
    if not full:
        # labels of kept entries, re-appended with their original timestamps
        ids = {n.id for n in kept}
        new = NewEntries(ids)
        stamps = tree.label_timestamps
        for target, label in tree.labels.items():
            if target in ids:
                entry = {"type": "label", "id": new_id(new.taken), "parentId": last,
                         "timestamp": stamps.get(target), "targetId": target, "label": label}
                lines.append(js_dumps(entry).encode("utf-8"))
                last = entry["id"]
    return b"\n".join(lines) + b"\n", last


def _without_labels(path, load):
    """(the path's Nodes without label entries, {id: changed fields}) for pi's re-chaining."""
    kept, rewired, pending, replacement = [], {}, [], {}
    parent = None
    for node in path:
        if node.type == "label":
            pending.append(node.id)
            continue
        for label in pending:
            replacement[label] = node.id
        pending.clear()
        changes = {}
        if node.parent != parent:
            changes["parentId"] = parent
        if node.type == "compaction" and replacement:
            first = load(node).get("firstKeptEntryId")
            if isinstance(first, str) and first in replacement and first != node.id:
                changes["firstKeptEntryId"] = replacement[first]
        if changes:
            rewired[node.id] = changes
        kept.append(node)
        parent = node.id
    return kept, rewired
