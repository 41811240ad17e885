"""A session's usage summed as `stats --all` sums it (stree.core.usage_totals.Across), kept in the
catalogue beside its rows so that a warm `stats --all` adds up a few sums per session rather
than every entry's usage (stree.core.stats_catalog).

The sums are the ones Across makes, made the same way: each a running sum in file order (an
appended line adds to it, which is what summing the file again from the start does, float
for float), in all, by model key and by local day (each day with the first and last time
it holds). A day is the local date of the TZ of the process that read the lines; another
TZ reading them finds them again only where both ends of every day are that day there too
(a date only moves forward with time: then every time between is), else the caller sums
the entries' usage instead (stree.storage.catalog.usage keeps them). A session with a time
that has no date (out of range) keeps no sums."""

import json

from ..format.timestamp import local_day as day_of


def new_vector():
    return [0, 0, 0, 0, 0.0, 0]  # input, output, cacheRead, cacheWrite, cost (as Totals starts), count


def add(vector, values):
    """values added as Totals.add adds them."""
    i, o, r, w, c = values
    vector[0] += i
    vector[1] += o
    vector[2] += r
    vector[3] += w
    vector[4] += c
    vector[5] += 1


def extend(kept, usages):
    """The sums `kept` (decoded, or None to start) with `usages` ((row, key, ms, values) in
    file order) added; None when they cannot be kept."""
    if kept is None:
        kept = {"t": new_vector(), "m": {}, "d": {}}
    models, days = kept["m"], kept["d"]
    for _, key, ms, values in usages:
        add(kept["t"], values)
        add(models.setdefault(key, new_vector()), values)
        day = day_of(ms)
        if ms is not None and day == "unknown":
            return None
        found = days.get(day)
        if found is None:
            found = days[day] = new_vector() + [ms, ms]
        elif ms is not None:
            found[6] = min(found[6], ms)
            found[7] = max(found[7], ms)
        add(found, values)
    return kept


def encode(kept):
    return None if kept is None else json.dumps(kept)


def decode(text):
    return None if text is None else json.loads(text)


def days_hold(kept):
    """True when every day of `kept` is, in this process's TZ, the local date of its first and
    last time (the days were found in another TZ, or under other rules, otherwise)."""
    for day, vector in kept["d"].items():
        lo, hi = vector[6], vector[7]
        if lo is None:
            if day != "unknown":
                return False
        elif day_of(lo) != day or day_of(hi) != day:
            return False
    return True
