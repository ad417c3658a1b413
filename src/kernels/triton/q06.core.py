"""q06.core.py: the Triton expert for TPC-H Q6 in core mode.

Inputs (the baseline's prepare step; device tensors, zero-copy):
l_shipdate int32 days, l_discount, l_quantity, l_extendedprice int64
hundredths; scalars ship_lo, ship_hi (days, inclusive), disc_lo, disc_hi
(hundredths, inclusive), qty_lt (hundredths). Output: revenue, I128 at
scale 4, one element or none (no row qualifies: NULL); outputs["revenue"]
is an int64 (cap, 2) device view of the harness's 128-bit slots (low,
high), written in place on the device; the call returns how many it
filled (one host synchronisation, for the count).
"""
import torch
import triton
import triton.language as tl

BLOCK = 4096


@triton.jit(do_not_specialize=["lo", "hi", "dlo", "dhi", "qlt"])
def q06_partials(ship, disc, qty, price, n, lo, hi, dlo, dhi, qlt, sums, counts, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    s = tl.load(ship + offs, mask=m, other=0)
    keep = m & (s >= lo) & (s <= hi)
    d = tl.load(disc + offs, mask=keep, other=0)
    keep = keep & (d >= dlo) & (d <= dhi)
    q = tl.load(qty + offs, mask=keep, other=0)
    keep = keep & (q < qlt)
    p = tl.load(price + offs, mask=keep, other=0)
    tl.store(sums + pid, tl.sum(tl.where(keep, p * d, 0), axis=0))
    tl.store(counts + pid, tl.sum(keep.to(tl.int32), axis=0))


def core(inputs, outputs, env):
    ship = inputs["l_shipdate"]
    n = ship.numel()
    grid = max(1, triton.cdiv(n, BLOCK))
    sums = torch.empty(grid, dtype=torch.int64, device="cuda")
    counts = torch.empty(grid, dtype=torch.int32, device="cuda")
    q06_partials[(grid,)](ship, inputs["l_discount"], inputs["l_quantity"], inputs["l_extendedprice"], n,
                          inputs["ship_lo"], inputs["ship_hi"], inputs["disc_lo"], inputs["disc_hi"],
                          inputs["qty_lt"], sums, counts, BLOCK=BLOCK, num_warps=8)
    if int(counts.sum()) == 0:
        return {"revenue": 0}
    total = sums.sum()
    out = outputs["revenue"]
    out[0, 0] = total
    out[0, 1] = torch.where(total < 0, -1, 0)
    return {"revenue": 1}
