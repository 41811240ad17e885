"""pi's timestamps: ISO strings read as JavaScript's Date reads them."""

import time

_DATETIME = []  # (datetime, timezone, the epoch), once a time is read: datetime is imported then, not
#                 by every reader of this module (stree.core.tree's; a patched `log --graph` reads none)


def _datetime():
    if not _DATETIME:
        from datetime import datetime, timezone

        _DATETIME.append((datetime, timezone, datetime(1970, 1, 1, tzinfo=timezone.utc)))
    return _DATETIME[0]


def ts_millis(ts):
    """`new Date(ts).getTime()` for pi's ISO timestamps; None when it does not parse."""
    if not isinstance(ts, str):
        return None
    datetime, _, epoch = _DATETIME[0] if _DATETIME else _datetime()
    try:
        text = ts[:-1] + "+00:00" if ts.endswith("Z") else ts
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        return None
    delta = dt - epoch
    return delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000


def activity_millis(message, entry_ts):
    """pi's getMessageActivityTime: a message's own timestamp (epoch ms), else its entry's."""
    stamp = message.get("timestamp")
    return stamp if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) else ts_millis(entry_ts)


def iso_millis(ms):
    """`new Date(ms).toISOString()` for epoch milliseconds: 2026-01-31T12:00:00.000Z."""
    datetime, timezone, _ = _datetime()
    dt = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def local_day(ms):
    """The local date (TZ) of epoch milliseconds, YYYY-MM-DD; 'unknown' without a time.
    The local day last found is kept as its span of seconds (checked at both ends: a day
    with a change of UTC offset in it is not kept), so a run of times in one day costs a
    comparison each."""
    if ms is None:
        return "unknown"
    s = ms // 1000 if ms.__class__ is int else None
    if s is not None and _DAY[0] <= s < _DAY[1]:
        return _DAY[2]
    datetime = _datetime()[0]
    try:
        dt = datetime.fromtimestamp(ms / 1000)
        day = dt.strftime("%Y-%m-%d")
    except (OverflowError, OSError, ValueError):
        return "unknown"
    if s is not None:
        _keep_day(s, dt, day)
    return day


_DAY = [0, 0, None]  # [first second, last second + 1, YYYY-MM-DD] of the local day last found


def _keep_day(s, dt, day):
    lo = s - (dt.hour * 3600 + dt.minute * 60 + dt.second)
    hi = lo + 86400
    datetime = _datetime()[0]
    try:
        first, last = datetime.fromtimestamp(lo), datetime.fromtimestamp(hi - 1)
        same = time.localtime(lo).tm_gmtoff == time.localtime(s).tm_gmtoff == time.localtime(hi - 1).tm_gmtoff
    except (OverflowError, OSError, ValueError):
        return
    if same and first.date() == dt.date() == last.date() and (first.hour, first.minute, first.second) == (0, 0, 0) \
            and (last.hour, last.minute, last.second) == (23, 59, 59):
        _DAY[:] = [lo, hi, day]
