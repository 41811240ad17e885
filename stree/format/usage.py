"""What one entry cost: the `usage` pi records, read as pi 1.6.0 sums it (summed over sessions
by stree.core.usage_totals, printed by stree.output.usage_tables: the same concept higher up).

pi's getSessionStats / getUsageCostBreakdown (core/usage-totals.ts) add up, over every entry:
an assistant message's `usage` (by `provider/responseModel ?? model`), a `usage` entry's (a
separate call pi made, e.g. cache warming: `kind`, `provider`, `model`; the answer itself is
not stored, so nothing is counted twice), and the `usage` of a toolResult message, a
compaction or a branch summary when present (no model: "Tools/summaries")."""

FIELDS = ("input", "output", "cacheRead", "cacheWrite", "cost")
SUMMARIES = "Tools/summaries"  # pi's bucket for usage without a model


def _number(value):
    """A finite number, else 0 (a hand-edited or damaged file must not make totals NaN)."""
    if value.__class__ in (int, float) and value == value and value not in (float("inf"), float("-inf")):
        return value
    return 0


def _str(value):
    return value if isinstance(value, str) else "?"


def usage_of(entry):
    """(model key, (input, output, cacheRead, cacheWrite, cost)) of one entry (migrated to v3,
    as parsed from its line), or None when it records no usage."""
    if not isinstance(entry, dict):
        return None
    etype = entry.get("type")
    key = None
    if etype == "message":
        message = entry.get("message")
        if not isinstance(message, dict):
            return None
        role = message.get("role")
        usage = message.get("usage")
        if role == "assistant":
            model = message.get("responseModel")
            if model is None:  # pi: responseModel ?? model
                model = message.get("model")
            key = f"{_str(message.get('provider'))}/{_str(model)}"
        elif role == "toolResult":
            key = SUMMARIES
        else:
            return None
    elif etype == "usage":
        usage = entry.get("usage")
        key = f"{_str(entry.get('provider'))}/{_str(entry.get('model'))}"
    elif etype in ("compaction", "branch_summary"):
        usage = entry.get("usage")
        key = SUMMARIES
    else:
        return None
    if not isinstance(usage, dict):
        return None
    cost = usage.get("cost")
    total = _number(cost.get("total")) if isinstance(cost, dict) else 0
    return key, (_number(usage.get("input")), _number(usage.get("output")), _number(usage.get("cacheRead")),
                 _number(usage.get("cacheWrite")), total)
