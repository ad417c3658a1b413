"""module_cache: computes the answer 30 times over on a miss and keeps it in
a module-level dict keyed on the parameters; a hit returns it at once. If
the module survived between calls, every timed call would be a hit, some
20 times faster than the baseline. The bridge runs the module afresh before
every call, so every call misses: valid and slower than the baseline."""
import torch

_cache = {}


def days_from_civil(y, m, d):
    """Days since 1970-01-01 of a proleptic Gregorian date."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z):
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (m <= 2), m, d


def full(db, params, env):
    key = (params["date"], params["discount"], params["quantity"])
    if key in _cache:
        return {"revenue": _cache[key]}
    li = db["lineitem"]
    ship, disc, qty, price = li["l_shipdate"], li["l_discount"], li["l_quantity"], li["l_extendedprice"]
    lo = params["date"]
    y, m, d = civil_from_days(lo)
    hi = days_from_civil(y + 1, m, d)
    c = round(params["discount"] * 100)
    for _ in range(30):
        keep = (ship >= lo) & (ship < hi) & (disc >= c - 1) & (disc <= c + 1) & (qty < params["quantity"] * 100)
        total = (price[keep] * disc[keep]).sum().reshape(1)
    _cache[key] = [None] if not bool(keep.any()) else total
    return {"revenue": _cache[key]}
