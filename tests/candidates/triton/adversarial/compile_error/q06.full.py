"""compile_error: a Triton kernel that does not compile (a pointer added to a
pointer): Triton raises CompilationError at the first launch:
returned_error.
"""
import torch
import triton
import triton.language as tl

BLOCK = 4096


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


@triton.jit
def bad(x, y, out):
    tl.store(out, tl.load(x + y))


def full(db, params, env):
    li = db["lineitem"]
    ship, disc, qty, price = li["l_shipdate"], li["l_discount"], li["l_quantity"], li["l_extendedprice"]
    lo = params["date"]
    y, m, d = civil_from_days(lo)
    hi = days_from_civil(y + 1, m, d)                      # exclusive
    kind, centre, scale = env.params["discount"]           # ("decimal", 6, 2): 0.06
    centre = centre * 10 ** 2 // 10 ** scale               # in l_discount's hundredths
    qlt = params["quantity"] * 100                         # l_quantity in hundredths
    out = torch.empty(1, dtype=torch.int64, device="cuda")
    bad[(1,)](price, disc, out)
    return {"revenue": out.cpu()}
