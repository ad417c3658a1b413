"""q06.core.py: an honest core-mode Python candidate for TPC-H Q6 (CPU
torch).

Inputs (the baseline's prepare step, read-only tensors, no copy):
l_shipdate int32 days, l_discount, l_quantity, l_extendedprice int64
hundredths; scalars ship_lo, ship_hi (days, inclusive), disc_lo, disc_hi
(hundredths, inclusive), qty_lt (hundredths). Output: revenue, I128 at
scale 4, one element or none (no row qualifies: NULL). It writes the
harness's output buffer in place (outputs["revenue"] is an int64 (cap, 2)
view of the 128-bit slots: low, high) and returns how many it filled.
"""
import torch


def core(inputs, outputs, env):
    ship, disc = inputs["l_shipdate"], inputs["l_discount"]
    qty, price = inputs["l_quantity"], inputs["l_extendedprice"]
    keep = ((ship >= inputs["ship_lo"]) & (ship <= inputs["ship_hi"]) & (disc >= inputs["disc_lo"]) &
            (disc <= inputs["disc_hi"]) & (qty < inputs["qty_lt"]))
    if not bool(keep.any()):
        return {"revenue": 0}
    total = (price[keep] * disc[keep]).sum()
    out = outputs["revenue"]
    out[0, 0] = total
    out[0, 1] = -1 if int(total) < 0 else 0
    return {"revenue": 1}
