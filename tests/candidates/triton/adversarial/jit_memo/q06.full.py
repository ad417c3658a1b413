"""jit_memo: a Q6 that keeps its answer on its @triton.jit object (an
attribute stored after the launch) and returns that answer in later calls
whenever the object has it. Every call's module makes a new object, and
the warm set-up gives it only Triton's own state, so the memo is never
there: ok. If state leaked from an earlier call's object, later seeds
would get the first call's answer: wrong_answer.
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


@triton.jit(do_not_specialize=["lo", "hi", "dlo", "dhi", "qlt"])
def q06_partials(ship, disc, qty, price, n, lo, hi, dlo, dhi, qlt, sums, counts, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    s = tl.load(ship + offs, mask=m, other=0)
    keep = m & (s >= lo) & (s < hi)
    d = tl.load(disc + offs, mask=keep, other=0)
    keep = keep & (d >= dlo) & (d <= dhi)
    q = tl.load(qty + offs, mask=keep, other=0)
    keep = keep & (q < qlt)
    p = tl.load(price + offs, mask=keep, other=0)
    tl.store(sums + pid, tl.sum(tl.where(keep, p * d, 0), axis=0))
    tl.store(counts + pid, tl.sum(keep.to(tl.int32), axis=0))


def full(db, params, env):
    li = db["lineitem"]
    ship, disc, qty, price = li["l_shipdate"], li["l_discount"], li["l_quantity"], li["l_extendedprice"]
    lo = params["date"]
    y, m, d = civil_from_days(lo)
    hi = days_from_civil(y + 1, m, d)                      # exclusive
    kind, centre, scale = env.params["discount"]           # ("decimal", 6, 2): 0.06
    centre = centre * 10 ** 2 // 10 ** scale               # in l_discount's hundredths
    qlt = params["quantity"] * 100                         # l_quantity in hundredths
    try:
        return q06_partials.dkb_memo      # an earlier call's answer, if it leaked
    except AttributeError:
        pass
    n = ship.numel()
    grid = max(1, triton.cdiv(n, BLOCK))
    sums = torch.empty(grid, dtype=torch.int64, device="cuda")
    counts = torch.empty(grid, dtype=torch.int32, device="cuda")
    q06_partials[(grid,)](ship, disc, qty, price, n, lo, hi, centre - 1, centre + 1, qlt, sums, counts,
                          BLOCK=BLOCK, num_warps=8)
    if int(counts.sum()) == 0:
        out = {"revenue": [None]}
    else:
        out = {"revenue": sums.sum().reshape(1).clone()}
    q06_partials.dkb_memo = out
    return out
