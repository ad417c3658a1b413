"""q01.full.py: an honest full-mode Python candidate for TPC-H Q1 (CPU
torch): string result columns from dictionaries, exact decimal sums at
scales 2, 4 and 6, float averages, a count.

l_returnflag and l_linestatus are uint8 codes into sorted dictionaries, so
code order is string order and the group key rf * nls + ls sorts the groups
as ORDER BY does. Sums are int64 (exact at SF 1: the largest, sum_charge at
scale 6, stays below 2^63 up to a few SF).
"""
import torch


def full(db, params, env):
    li = db["lineitem"]
    ship = li["l_shipdate"]
    hi = 10561 - params["delta"]                   # DATE '1998-12-01' is day 10561
    keep = ship <= hi
    rf, ls = li["l_returnflag"][keep].to(torch.int64), li["l_linestatus"][keep].to(torch.int64)
    qty, price = li["l_quantity"][keep], li["l_extendedprice"][keep]
    disc, tax = li["l_discount"][keep], li["l_tax"][keep]
    rfd, lsd = li.dict("l_returnflag"), li.dict("l_linestatus")
    key = rf * len(lsd) + ls
    groups, inv = torch.unique(key, sorted=True, return_inverse=True)
    g = groups.numel()

    def gsum(x):
        return torch.zeros(g, dtype=torch.int64, device=x.device).index_add_(0, inv, x)

    disc_price = price * (100 - disc)              # scale 4
    charge = disc_price * (100 + tax)              # scale 6
    count = torch.bincount(inv, minlength=g)
    sum_qty, sum_price, sum_disc = gsum(qty), gsum(price), gsum(disc)
    n = count.to(torch.float64)
    return {
        "l_returnflag": [rfd[int(k) // len(lsd)] for k in groups],
        "l_linestatus": [lsd[int(k) % len(lsd)] for k in groups],
        "sum_qty": sum_qty,
        "sum_base_price": sum_price,
        "sum_disc_price": gsum(disc_price),
        "sum_charge": gsum(charge),
        "avg_qty": sum_qty.to(torch.float64) / 100 / n,
        "avg_price": sum_price.to(torch.float64) / 100 / n,
        "avg_disc": sum_disc.to(torch.float64) / 100 / n,
        "count_order": count,
    }
