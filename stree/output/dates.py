"""Times for people: --date=local|iso|relative|unix|utc, as git's --date (local time with the
zone by default). Machine output (--json, --format) keeps pi's own ISO timestamps."""

import time
from datetime import datetime, timezone

STYLES = ("local", "iso", "relative", "unix", "utc")


def date_option(f):
    import click  # (the fast read path shows dates without click)

    return click.option("--date", "date_style", type=click.Choice(STYLES), default="local", show_default=True,
                        help="How times are shown: local time with the zone (iso: the same), relative "
                             "(3 hours ago), unix (seconds), utc.")(f)


def millis(value):
    """Epoch milliseconds of an ISO timestamp (pi's entry time) or a number; None when neither."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    from ..format.timestamp import ts_millis

    return ts_millis(value)


def show(value, style="local", now=None):
    """`value` (ISO string or epoch ms) as `style`; the raw text when it is not a time."""
    ms = millis(value)
    if ms is None:
        return value if isinstance(value, str) else "?"
    seconds = ms / 1000
    if style == "unix":
        return str(int(seconds // 1))
    if style == "relative":
        return relative(seconds, time.time() if now is None else now)
    try:
        dt = datetime.fromtimestamp(seconds, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return value if isinstance(value, str) else "?"
    if style != "utc":
        dt = dt.astimezone()  # local time (TZ)
    return dt.strftime("%Y-%m-%d %H:%M:%S %z")


def relative(seconds, now):
    diff = now - seconds
    if diff < 0:
        return "in the future"
    for limit, size, unit in ((90, 1, "second"), (90 * 60, 60, "minute"), (36 * 3600, 3600, "hour"),
                              (14 * 86400, 86400, "day"), (70 * 86400, 7 * 86400, "week"),
                              (365 * 86400, 30 * 86400, "month")):
        if diff < limit:
            n = int(round(diff / size))
            return f"{n} {unit}{'' if n == 1 else 's'} ago"
    years = int(diff // (365 * 86400))
    return f"{years} year{'' if years == 1 else 's'} ago"
