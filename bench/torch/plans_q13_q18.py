"""plans_q13_q18.py: TPC-H Q13 to Q18 as TorchPlan-style array programs
(prep / core / finish, see plans.py).

  Q13 customer distribution  NOT LIKE '%w1%w2%' on o_comment bytes (first w1
                             against last w2 per row), orders per customer
                             row, then a histogram of those counts
  Q14 promotion effect       promo / total revenue of the month's lines
  Q15 top supplier           revenue per supplier row, rows equal to the max
  Q16 parts/supplier         COUNT(DISTINCT suppkey) per (brand, type, size):
                             sorted (group, suppkey) keys, first of each run
  Q17 small-quantity revenue per-part quantity sum and count of the brand and
                             container's lines; qty < 0.2 avg as 5 qty n < sum
  Q18 large volume customer  quantity per order row, orders above the bound"""
import numpy as np

from plans_util import code_table, dict_eq, dict_in, order_by, scalar, text, text_contains2
from store import add_months, date_str, days


def _rev(L, sel):
    """l_extendedprice * (1 - l_discount) of the lines sel, scale 4."""
    c, ops = L.col, L.ops
    return ops.take(c["l_extendedprice"], sel) * (100 - ops.take(c["l_discount"], sel))


# ---- Q13: customer distribution ----
def q13_prep(L, p):
    ck = np.asarray(L.host["o_custkey"], dtype=np.int64)
    most = int(np.bincount(ck).max()) if len(ck) else 0      # most orders of one customer: the histogram's size
    return {"w1": p["word1"], "w2": p["word2"], "bins": most + 1}


def q13_core(L, s):
    ops, c = L.ops, L.col
    special = text_contains2(L, "o_comment", s["w1"], s["w2"], L.store.rows("orders"))
    crow = ops.take(L.keymap["customer"], ops.take(c["o_custkey"], ops.nonzero(~special)))
    ncust = L.store.rows("customer")
    per_cust = ops.index_add(ops.zeros(ncust, "i64"), crow, ops.full(crow.shape[0], 1, "i64"))
    return ops.index_add(ops.zeros(s["bins"], "i64"), per_cust, ops.full(ncust, 1, "i64"))


def q13_finish(L, p, out):
    hist = L.ops.host(out)
    rows = [[int(k), int(hist[k])] for k in hist.nonzero()[0]]
    rows.sort(key=lambda r: (-r[1], -r[0]))
    return rows


# ---- Q14: promotion effect ----
def q14_prep(L, p):
    return {"lo": days(p["date"]), "hi": days(add_months(p["date"], 1)),
            "promo": code_table(L, "p_type", lambda v: v.startswith("PROMO"))}


def q14_core(L, s):
    ops, c = L.ops, L.col
    ship = c["l_shipdate"]
    sel = ops.nonzero((ship >= s["lo"]) & (ship < s["hi"]))
    prow = ops.take(L.keymap["part"], ops.take(c["l_partkey"], sel))
    promo = ops.take(s["promo"], ops.i64(ops.take(c["p_type"], prow)))
    rev = _rev(L, sel)
    return ops.sum(ops.where(promo, rev, 0)), ops.sum(rev)


def q14_finish(L, p, out):
    promo, total = (scalar(L.ops, x) for x in out)         # every line's revenue is > 0: total 0 = no lines
    return [[100.0 * (promo / 1e4) / (total / 1e4) if total else None]]


# ---- Q15: top supplier ----
def q15_prep(L, p):
    return {"lo": days(p["date"]), "hi": days(add_months(p["date"], 3))}


def q15_core(L, s):
    ops, c = L.ops, L.col
    ship = c["l_shipdate"]
    sel = ops.nonzero((ship >= s["lo"]) & (ship < s["hi"]))
    srow = ops.take(L.keymap["supplier"], ops.take(c["l_suppkey"], sel))
    nsupp = L.store.rows("supplier")
    rs = ops.index_add(ops.zeros(nsupp, "i64"), srow, _rev(L, sel))
    cnt = ops.index_add(ops.zeros(nsupp, "i64"), srow, ops.full(srow.shape[0], 1, "i64"))
    rs = ops.where(cnt > 0, rs, -1)                   # suppliers without lines are not in revenue0
    win = ops.nonzero((rs >= 0) & (rs == rs.max()))
    win = ops.take(win, ops.argsort(ops.take(c["s_suppkey"], win)))
    return win, ops.take(rs, win)


def q15_finish(L, p, out):
    win, rev = (L.ops.host(x) for x in out)
    h = L.host
    return [[int(h["s_suppkey"][r]), text(L, "s_name", r), text(L, "s_address", r), text(L, "s_phone", r),
             int(v) / 10**4] for r, v in zip(win, rev)]


# ---- Q16: parts/supplier relationship ----
def q16_prep(L, p):
    sizes = [int(p["size%d" % k]) for k in range(1, 9)]
    nsize = int(np.max(L.host["p_size"])) + 1 if len(L.host["p_size"]) else 1
    size_ok = np.zeros(nsize, dtype=np.bool_)
    for v in sizes:
        if 0 <= v < nsize:
            size_ok[v] = True
    return {"brand": p["brand"], "type_ok": code_table(L, "p_type", lambda v: not v.startswith(p["type"])),
            "size_ok": L.ops.put(size_ok), "nsize": nsize, "ntype": max(len(L.dict["p_type"]), 1),
            "nbrand": max(len(L.dict["p_brand"]), 1)}


def q16_core(L, s):
    ops, c = L.ops, L.col
    p_ok = (~dict_eq(L, "p_brand", s["brand"]) & dict_in(L, "p_type", s["type_ok"]) &
            ops.take(s["size_ok"], c["p_size"]))                              # per part row
    s_bad = text_contains2(L, "s_comment", "Customer", "Complaints", L.store.rows("supplier"))
    ps_prow = ops.take(L.keymap["part"], c["ps_partkey"])
    sel = ops.nonzero(ops.take(p_ok, ps_prow) &
                      ~ops.take(s_bad, ops.take(L.keymap["supplier"], c["ps_suppkey"])))
    prow = ops.take(ps_prow, sel)
    nsize, ntype = s["nsize"], s["ntype"]
    g = ((ops.i64(ops.take(c["p_brand"], prow)) * ntype + ops.i64(ops.take(c["p_type"], prow))) * nsize +
         ops.i64(ops.take(c["p_size"], prow)))                               # group, in (brand, type, size) order
    pair = ops.sort(g * L.ps_smax + ops.i64(ops.take(c["ps_suppkey"], sel)))
    first = ops.cat([pair[:1] == pair[:1], pair[1:] != pair[:-1]])            # first of each distinct pair
    gd = ops.take(pair, ops.nonzero(first)) // L.ps_smax
    cnt = ops.index_add(ops.zeros(s["nbrand"] * ntype * nsize, "i64"), gd, ops.full(gd.shape[0], 1, "i64"))
    groups = ops.nonzero(cnt > 0)
    n = ops.take(cnt, groups)
    perm = order_by(ops, [(n, True), (groups, False)])
    g = ops.take(groups, perm)
    return g // nsize // ntype, g // nsize % ntype, g % nsize, ops.take(n, perm)   # brand, type codes, size, count


def q16_finish(L, p, out):
    brand, ptype, size, cnt = (L.ops.host(x).tolist() for x in out)
    bd, td = L.dict["p_brand"], L.dict["p_type"]
    return [[bd[b], td[t], z, n] for b, t, z, n in zip(brand, ptype, size, cnt)]


# ---- Q17: small-quantity-order revenue ----
def q17_prep(L, p):
    return {"brand": p["brand"], "container": p["container"]}


def q17_core(L, s):
    ops, c = L.ops, L.col
    p_ok = dict_eq(L, "p_brand", s["brand"]) & dict_eq(L, "p_container", s["container"])   # per part row
    l_prow = ops.take(L.keymap["part"], c["l_partkey"])
    sel = ops.nonzero(ops.take(p_ok, l_prow))
    prow = ops.take(l_prow, sel)
    qty = ops.take(c["l_quantity"], sel)
    nparts = L.store.rows("part")
    qsum = ops.index_add(ops.zeros(nparts, "i64"), prow, qty)
    qcnt = ops.index_add(ops.zeros(nparts, "i64"), prow, ops.full(sel.shape[0], 1, "i64"))
    keep = qty * 5 * ops.take(qcnt, prow) < ops.take(qsum, prow)            # qty < 0.2 * avg(qty), exactly
    return ops.sum(ops.where(keep, ops.take(c["l_extendedprice"], sel), 0)), ops.sum(ops.i64(keep))


def q17_finish(L, p, out):
    total, n = (scalar(L.ops, x) for x in out)
    return [[(total / 100) / 7.0 if n else None]]


# ---- Q18: large volume customer ----
def q18_prep(L, p):
    return {"qty": int(p["quantity"]) * 100}


def q18_core(L, s):
    ops, c = L.ops, L.col
    orow = ops.take(L.keymap["orders"], c["l_orderkey"])
    qsum = ops.index_add(ops.zeros(L.store.rows("orders"), "i64"), orow, c["l_quantity"])
    big = ops.nonzero(qsum > s["qty"])
    o1 = ops.argsort(ops.take(c["o_orderdate"], big))
    o2 = ops.argsort(ops.take(ops.take(c["o_totalprice"], big), o1), descending=True)
    top = ops.take(big, ops.take(o1, o2)[:100])
    return top, ops.take(qsum, top)


def q18_finish(L, p, out):
    top, qty = (L.ops.host(x) for x in out)
    h = L.host
    cmap = {}
    rows = []
    for r, q in zip(top, qty):
        ck = int(h["o_custkey"][r])
        if ck not in cmap:
            crow = int(L.ops.host(L.keymap["customer"][ck:ck + 1])[0])
            cmap[ck] = (text(L, "c_name", crow), int(h["c_custkey"][crow]))
        name, custkey = cmap[ck]
        rows.append([name, custkey, int(h["o_orderkey"][r]), date_str(h["o_orderdate"][r]),
                     int(h["o_totalprice"][r]) / 100, int(q) / 100])
    return rows


PLANS = {
    "q13": (q13_prep, q13_core, q13_finish),
    "q14": (q14_prep, q14_core, q14_finish),
    "q15": (q15_prep, q15_core, q15_finish),
    "q16": (q16_prep, q16_core, q16_finish),
    "q17": (q17_prep, q17_core, q17_finish),
    "q18": (q18_prep, q18_core, q18_finish),
}
