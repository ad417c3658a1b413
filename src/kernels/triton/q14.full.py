"""q14.full.py: the Triton expert for TPC-H Q14 (promotion effect), full mode.

One pass over lineitem: a Triton kernel keeps the month's rows, computes
each row's revenue l_extendedprice * (100 - l_discount) (exact int64, scale
4), looks its part up in a PROMO flag per part (torch: the p_type codes of
part through a flag per dictionary code; parts are dense, key k at row
k - 1) and writes per-program partial sums (all, PROMO) and a count. The
answer, 100 * promo / total, in doubles as the baseline computes it.
"""
import torch
import triton
import triton.language as tl

BLOCK = 4096


def days_from_civil(y, m, d):
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


@triton.jit(do_not_specialize=["lo", "hi"])
def q14_partials(ship, pkey, price, disc, promo, n, lo, hi, psum, tsum, cnt, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    s = tl.load(ship + offs, mask=m, other=0)
    keep = m & (s >= lo) & (s < hi)
    pk = tl.load(pkey + offs, mask=keep, other=1)
    pr = tl.load(price + offs, mask=keep, other=0)
    dc = tl.load(disc + offs, mask=keep, other=0)
    rev = tl.where(keep, pr * (100 - dc), 0)
    pm = tl.load(promo + (pk - 1), mask=keep, other=0)
    tl.store(psum + pid, tl.sum(tl.where(pm != 0, rev, 0), axis=0))
    tl.store(tsum + pid, tl.sum(rev, axis=0))
    tl.store(cnt + pid, tl.sum(keep.to(tl.int64), axis=0))


def full(db, params, env):
    li, part = db["lineitem"], db["part"]
    ship = li["l_shipdate"]
    lo = params["date"]
    y, m, d = civil_from_days(lo)
    y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    hi = days_from_civil(y, m, d)                                  # [lo, hi): one month
    flags = [t.startswith("PROMO") for t in part.dict("p_type")]
    code_promo = torch.tensor(flags, dtype=torch.uint8).to("cuda", non_blocking=True)
    promo = code_promo[part["p_type"].to(torch.int64)]             # a flag per part
    n = ship.numel()
    grid = max(1, triton.cdiv(n, BLOCK))
    out = torch.empty(3, grid, dtype=torch.int64, device="cuda")
    q14_partials[(grid,)](ship, li["l_partkey"], li["l_extendedprice"], li["l_discount"], promo, n, lo, hi,
                          out[0], out[1], out[2], BLOCK=BLOCK, num_warps=8)
    p, t, c = (int(v) for v in out.sum(1).cpu())
    if c == 0:
        return {"promo_revenue": [None]}
    x, y = float(p * 10000) / 1e6, float(t) / 1e4                  # scale 6 over scale 4, as the baseline
    return {"promo_revenue": [x / y]}
