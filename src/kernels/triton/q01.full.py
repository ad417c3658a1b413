"""q01.full.py: the Triton expert for TPC-H Q1 (pricing summary), full mode.

One pass over lineitem: each Triton program takes BLOCK rows, keeps those
shipped on or before the cut-off, and for each of the NG groups
(l_returnflag code x l_linestatus code: their dictionaries are sorted, so
the group index rf * nls + ls is ORDER BY's order) writes its partial sums
of quantity, price, discounted price (scale 4), charge (scale 6), discount
and its count, exact in int64. torch adds the partials; the few groups are
assembled on the host.
"""
import torch
import triton
import triton.language as tl

BLOCK = 2048
NSUM = 6   # qty, price, disc_price, charge, disc, count


@triton.jit(do_not_specialize=["hi"])
def q01_partials(ship, rflag, lstat, qty, price, disc, tax, n, hi, part, NLS: tl.constexpr, NG: tl.constexpr,
                 BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    s = tl.load(ship + offs, mask=m, other=0)
    keep = m & (s <= hi)
    rf = tl.load(rflag + offs, mask=keep, other=0).to(tl.int32)
    ls = tl.load(lstat + offs, mask=keep, other=0).to(tl.int32)
    q = tl.load(qty + offs, mask=keep, other=0)
    p = tl.load(price + offs, mask=keep, other=0)
    d = tl.load(disc + offs, mask=keep, other=0)
    t = tl.load(tax + offs, mask=keep, other=0)
    dp = p * (100 - d)
    ch = dp * (100 + t)
    key = rf * NLS + ls
    base = part + pid * (NG * 6)
    for g in tl.static_range(NG):
        sel = keep & (key == g)
        tl.store(base + g * 6 + 0, tl.sum(tl.where(sel, q, 0), axis=0))
        tl.store(base + g * 6 + 1, tl.sum(tl.where(sel, p, 0), axis=0))
        tl.store(base + g * 6 + 2, tl.sum(tl.where(sel, dp, 0), axis=0))
        tl.store(base + g * 6 + 3, tl.sum(tl.where(sel, ch, 0), axis=0))
        tl.store(base + g * 6 + 4, tl.sum(tl.where(sel, d, 0), axis=0))
        tl.store(base + g * 6 + 5, tl.sum(sel.to(tl.int64), axis=0))


def full(db, params, env):
    li = db["lineitem"]
    ship = li["l_shipdate"]
    hi = 10561 - params["delta"]                   # DATE '1998-12-01' is day 10561
    rfd, lsd = li.dict("l_returnflag"), li.dict("l_linestatus")
    nls, ng = len(lsd), len(rfd) * len(lsd)
    n = ship.numel()
    grid = max(1, triton.cdiv(n, BLOCK))
    part = torch.empty(grid, ng * NSUM, dtype=torch.int64, device="cuda")
    q01_partials[(grid,)](ship, li["l_returnflag"], li["l_linestatus"], li["l_quantity"], li["l_extendedprice"],
                          li["l_discount"], li["l_tax"], n, hi, part, NLS=nls, NG=ng, BLOCK=BLOCK, num_warps=8)
    tot = part.sum(0).view(ng, NSUM).cpu().tolist()
    rows = [(g, r) for g, r in enumerate(tot) if r[5] > 0]
    cnt = [r[5] for _, r in rows]
    return {
        "l_returnflag": [rfd[g // nls] for g, _ in rows],
        "l_linestatus": [lsd[g % nls] for g, _ in rows],
        "sum_qty": [r[0] for _, r in rows],
        "sum_base_price": [r[1] for _, r in rows],
        "sum_disc_price": [r[2] for _, r in rows],
        "sum_charge": [r[3] for _, r in rows],
        "avg_qty": [r[0] / 100 / c for (_, r), c in zip(rows, cnt)],
        "avg_price": [r[1] / 100 / c for (_, r), c in zip(rows, cnt)],
        "avg_disc": [r[4] / 100 / c for (_, r), c in zip(rows, cnt)],
        "count_order": cnt,
    }
