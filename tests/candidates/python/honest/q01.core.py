"""q01.core.py: an honest core-mode Python candidate for TPC-H Q1 (CPU
torch): ten outputs returned as values, which the harness copies into its
buffers (U8 codes, I128 sums from int64 tensors, F64 averages, an I64
count).

  in:  l_shipdate I32; l_returnflag, l_linestatus U8 codes; l_quantity,
       l_extendedprice, l_discount, l_tax I64 hundredths; ship_hi (days,
       inclusive)
  out: one element per group present, in order: l_returnflag,
       l_linestatus U8; sum_qty, sum_base_price I128 scale 2;
       sum_disc_price I128 scale 4; sum_charge I128 scale 6; avg_qty,
       avg_price, avg_disc F64; count_order I64
"""
import torch


def core(inputs, outputs, env):
    keep = inputs["l_shipdate"] <= inputs["ship_hi"]
    rf = inputs["l_returnflag"][keep].to(torch.int64)
    ls = inputs["l_linestatus"][keep].to(torch.int64)
    nls = len(env.dicts["l_linestatus"])
    groups, inv = torch.unique(rf * nls + ls, sorted=True, return_inverse=True)
    g = groups.numel()

    def gsum(x):
        return torch.zeros(g, dtype=torch.int64, device=x.device).index_add_(0, inv, x[keep])

    price, disc, tax = inputs["l_extendedprice"], inputs["l_discount"], inputs["l_tax"]
    disc_price = price * (100 - disc)
    count = torch.bincount(inv, minlength=g)
    n = count.to(torch.float64)
    sum_qty, sum_price, sum_disc = gsum(inputs["l_quantity"]), gsum(price), gsum(disc)
    return {
        "l_returnflag": (groups // nls).to(torch.uint8),
        "l_linestatus": (groups % nls).to(torch.uint8),
        "sum_qty": sum_qty,
        "sum_base_price": sum_price,
        "sum_disc_price": gsum(disc_price),
        "sum_charge": gsum(disc_price * (100 + tax)),
        "avg_qty": sum_qty.to(torch.float64) / 100 / n,
        "avg_price": sum_price.to(torch.float64) / 100 / n,
        "avg_disc": sum_disc.to(torch.float64) / 100 / n,
        "count_order": count,
    }
