"""pi's timestamps: ISO strings read as JavaScript's Date reads them."""

from datetime import datetime, timezone


def ts_millis(ts):
    """`new Date(ts).getTime()` for pi's ISO timestamps; None when it does not parse."""
    if not isinstance(ts, str):
        return None
    try:
        text = ts[:-1] + "+00:00" if ts.endswith("Z") else ts
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        return None
    delta = dt - _EPOCH
    return delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def activity_millis(message, entry_ts):
    """pi's getMessageActivityTime: a message's own timestamp (epoch ms), else its entry's."""
    stamp = message.get("timestamp")
    return stamp if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) else ts_millis(entry_ts)


def iso_millis(ms):
    """`new Date(ms).toISOString()` for epoch milliseconds: 2026-01-31T12:00:00.000Z."""
    dt = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"
