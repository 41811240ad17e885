"""What one entry cost: the `usage` pi records, read as pi 1.6.0 sums it (summed over sessions
by stree.core.usage_totals, printed by stree.output.usage_tables: the same concept higher up).

pi's getSessionStats / getUsageCostBreakdown (core/usage-totals.ts) add up, over every entry:
an assistant message's `usage` (by `provider/responseModel ?? model`), a `usage` entry's (a
separate call pi made, e.g. cache warming: `kind`, `provider`, `model`; the answer itself is
not stored, so nothing is counted twice), and the `usage` of a toolResult message, a
compaction or a branch summary when present (no model: "Tools/summaries"). Which entries
those are is their types' rows (stree.core.entrytypes: `usage`, `usage_at`); this module
reads the numbers."""

FIELDS = ("input", "output", "cacheRead", "cacheWrite", "cost")
SUMMARIES = "Tools/summaries"  # pi's bucket for usage without a model


def _number(value):
    """A finite number, else 0 (a hand-edited or damaged file must not make totals NaN)."""
    if value.__class__ in (int, float) and value == value and value not in (float("inf"), float("-inf")):
        return value
    return 0


def _str(value):
    return value if isinstance(value, str) else "?"


def model_key(provider, model):
    """The bucket of a usage: `provider/model` ("?" for a missing one)."""
    return f"{_str(provider)}/{_str(model)}"


def assistant_key(message):
    """An assistant message's bucket: pi's `provider/(responseModel ?? model)`."""
    model = message.get("responseModel")
    if model is None:
        model = message.get("model")
    return model_key(message.get("provider"), model)


def counted(key, usage):
    """(key, (input, output, cacheRead, cacheWrite, cost)) of a `usage` object, None if it is
    none. Where an entry keeps its usage and in which bucket is its type's row
    (stree.core.entrytypes.usage_of)."""
    if not isinstance(usage, dict):
        return None
    cost = usage.get("cost")
    total = _number(cost.get("total")) if isinstance(cost, dict) else 0
    return key, (_number(usage.get("input")), _number(usage.get("output")), _number(usage.get("cacheRead")),
                 _number(usage.get("cacheWrite")), total)
