"""plans_q01_q06.py: TPC-H Q1 to Q6 as TorchPlan-style array programs
(prep / core / finish, see plans.py).

  Q1 pricing summary    masked reductions per (returnflag, linestatus)
  Q2 minimum cost supp. partsupp of region suppliers and wanted parts, min
                        cost per part by scatter-min, ORDER BY on the device
  Q3 shipping priority  joins by key-map gathers, revenue per order row
  Q4 order priority     late lines mark their orders, masked counts per priority
  Q5 local supplier     customer and supplier nation equal, sums per nation
  Q6 revenue change     one masked sum"""
import numpy as np

from plans_util import (code_table, dict_in, nation_bins, nation_keys, order_by, region_nations, scalar,
                        text, text_rank)
from store import add_months, date_str, days


# ---- Q1: pricing summary report ----
def q01_prep(L, p):
    return {"cutoff": days("1998-12-01") - int(p["delta"])}


def q01_core(L, s):
    ops, c = L.ops, L.col
    ok = c["l_shipdate"] <= s["cutoff"]
    nls = len(L.dict["l_linestatus"])
    g = ops.where(ok, ops.i64(c["l_returnflag"]) * nls + ops.i64(c["l_linestatus"]), -1)
    qty, price, disc, tax = c["l_quantity"], c["l_extendedprice"], c["l_discount"], c["l_tax"]
    disc_price = price * (100 - disc)                  # scale 4
    charge = disc_price * (100 + tax)                  # scale 6
    out = []
    for k in range(len(L.dict["l_returnflag"]) * nls):
        m = g == k
        z = 0
        out.append([ops.sum(ops.where(m, v, z)) for v in (qty, price, disc_price, charge, disc)] +
                   [ops.sum(ops.i64(m))])
    return out


def q01_finish(L, p, out):
    nls = len(L.dict["l_linestatus"])
    rows = []
    for k, sums in enumerate(out):
        qty, price, dp, ch, disc, n = (scalar(L.ops, s) for s in sums)
        if n == 0:
            continue
        rows.append([L.dict["l_returnflag"][k // nls], L.dict["l_linestatus"][k % nls], qty / 100, price / 100,
                     dp / 10**4, ch / 10**6, qty / 100 / n, price / 100 / n, disc / 100 / n, n])
    return rows


# ---- Q2: minimum cost supplier ----
def q02_prep(L, p):
    h = L.host
    name_code = np.zeros(nation_bins(L), dtype=np.int64)   # n_nationkey -> n_name code (string order)
    name_code[np.asarray(h["n_nationkey"], dtype=np.int64)] = h["n_name"]
    return {"size": int(p["size"]), "type_ok": code_table(L, "p_type", lambda v: v.endswith(p["type"])),
            "nation_ok": region_nations(L, p["region"]), "name_code": L.ops.put(name_code),
            "s_name_rank": text_rank(L, "s_name")}


def q02_core(L, s):
    ops, c = L.ops, L.col
    p_ok = (c["p_size"] == s["size"]) & dict_in(L, "p_type", s["type_ok"])          # per part row
    s_ok = ops.take(s["nation_ok"], c["s_nationkey"])                                 # per supplier row
    ps_prow = ops.take(L.keymap["part"], c["ps_partkey"])
    ps_srow = ops.take(L.keymap["supplier"], c["ps_suppkey"])
    sel = ops.nonzero(ops.take(p_ok, ps_prow) & ops.take(s_ok, ps_srow))            # partsupp rows
    cost, prow = ops.take(c["ps_supplycost"], sel), ops.take(ps_prow, sel)
    least = ops.scatter_min(ops.full(L.store.rows("part"), 1 << 62, "i64"), prow, cost)
    win = ops.nonzero(cost == ops.take(least, prow))
    srow, prow = ops.take(ops.take(ps_srow, sel), win), ops.take(prow, win)
    perm = order_by(ops, [(ops.take(c["s_acctbal"], srow), True),
                          (ops.take(s["name_code"], ops.take(c["s_nationkey"], srow)), False),
                          (ops.take(s["s_name_rank"], srow), False),
                          (ops.take(c["p_partkey"], prow), False)])[:100]
    return ops.take(srow, perm), ops.take(prow, perm)


def q02_finish(L, p, out):
    srows, prows = (L.ops.host(x) for x in out)
    h, names = L.host, nation_keys(L)
    return [[int(h["s_acctbal"][sr]) / 100, text(L, "s_name", sr), names[int(h["s_nationkey"][sr])],
             int(h["p_partkey"][pr]), L.dict["p_mfgr"][h["p_mfgr"][pr]], text(L, "s_address", sr),
             text(L, "s_phone", sr), text(L, "s_comment", sr)] for sr, pr in zip(srows, prows)]


# ---- Q3: shipping priority ----
def q03_prep(L, p):
    return {"date": days(p["date"]), "segment": L.dict["c_mktsegment"].index(p["segment"])}


def q03_core(L, s):
    ops, c = L.ops, L.col
    d = s["date"]
    cust_ok = c["c_mktsegment"] == s["segment"]                                  # per customer row
    o_cust_row = ops.take(L.keymap["customer"], c["o_custkey"])
    o_ok = (c["o_orderdate"] < d) & ops.take(cust_ok, o_cust_row)        # per order row
    l_orow = ops.take(L.keymap["orders"], c["l_orderkey"])
    lm = (c["l_shipdate"] > d) & ops.take(o_ok, l_orow)
    sel = ops.nonzero(lm)
    rev = ops.take(c["l_extendedprice"], sel) * (100 - ops.take(c["l_discount"], sel))
    revk = ops.index_add(ops.zeros(L.store.rows("orders"), "i64"), ops.take(l_orow, sel), rev)
    cand = ops.nonzero(revk > 0)                                         # order rows
    r, od = ops.take(revk, cand), ops.take(c["o_orderdate"], cand)
    o1 = ops.argsort(od)                                                 # date asc, then
    o2 = ops.argsort(ops.take(r, o1), descending=True)                   # revenue desc (stable)
    top = ops.take(cand, ops.take(o1, o2)[:10])
    return top, ops.take(revk, top)


def q03_finish(L, p, out):
    top, rev = (L.ops.host(x) for x in out)
    h = L.host
    return [[int(h["o_orderkey"][r]), int(v) / 10**4, date_str(h["o_orderdate"][r]), int(h["o_shippriority"][r])]
            for r, v in zip(top, rev)]


# ---- Q4: order priority checking ----
def q04_prep(L, p):
    return {"lo": days(p["date"]), "hi": days(add_months(p["date"], 3))}


def q04_core(L, s):
    ops, c = L.ops, L.col
    od = c["o_orderdate"]
    o_ok = (od >= s["lo"]) & (od < s["hi"])                                     # per order row
    l_orow = ops.take(L.keymap["orders"], c["l_orderkey"])
    late = ops.nonzero((c["l_commitdate"] < c["l_receiptdate"]) & ops.take(o_ok, l_orow))
    has = ops.mark(L.store.rows("orders"), ops.take(l_orow, late))               # EXISTS: a late line
    prio = c["o_orderpriority"]
    return [ops.sum(ops.i64(has & (prio == k))) for k in range(len(L.dict["o_orderpriority"]))]


def q04_finish(L, p, out):
    counts = [scalar(L.ops, x) for x in out]
    return [[L.dict["o_orderpriority"][k], n] for k, n in enumerate(counts) if n]


# ---- Q5: local supplier volume ----
def q05_prep(L, p):
    region = L.dict["r_name"].index(p["region"])
    return {"lo": days(p["date"]), "hi": days(add_months(p["date"], 12)),
            "n_ok": _region_mask(L, region)}   # per nation row (25 bools on the device)


def q05_core(L, s):
    ops, c = L.ops, L.col
    lo, hi = s["lo"], s["hi"]
    n_ok = s["n_ok"]
    o_ok = (c["o_orderdate"] >= lo) & (c["o_orderdate"] < hi)
    o_nat = ops.where(o_ok, ops.i64(ops.take(c["c_nationkey"], ops.take(L.keymap["customer"], c["o_custkey"]))), -1)
    l_onat = ops.take(o_nat, ops.take(L.keymap["orders"], c["l_orderkey"]))
    l_snat = ops.i64(ops.take(c["s_nationkey"], ops.take(L.keymap["supplier"], c["l_suppkey"])))
    n_ok_by_key = ops.index_add(ops.zeros(32, "i64"), ops.i64(c["n_nationkey"]), ops.i64(n_ok))
    lm = (l_onat == l_snat) & (ops.take(n_ok_by_key, l_snat) > 0)
    sel = ops.nonzero(lm)
    rev = ops.take(c["l_extendedprice"], sel) * (100 - ops.take(c["l_discount"], sel))
    return ops.index_add(ops.zeros(32, "i64"), ops.take(l_snat, sel), rev), n_ok_by_key


def _region_mask(L, region):
    """Per nation row: its region is `region` (r_regionkey is the row + 0 in
    TPC-H; looked up by value to stay general)."""
    ops, h = L.ops, L.host
    rk = [int(k) for k, code in zip(h["r_regionkey"], h["r_name"]) if code == region]
    return ops.put((h["n_regionkey"] == (rk[0] if rk else -1)))


def q05_finish(L, p, out):
    rev, n_ok = (L.ops.host(x) for x in out)
    names = nation_keys(L)
    rows = [[names[k], int(rev[k]) / 10**4] for k in names if n_ok[k] and rev[k] != 0]
    rows.sort(key=lambda r: -r[1])
    return rows


# ---- Q6: forecasting revenue change ----
def q06_prep(L, p):
    return {"lo": days(p["date"]), "hi": days(add_months(p["date"], 12)),
            "disc": int(round(float(p["discount"]) * 100)), "qty": int(p["quantity"]) * 100}


def q06_core(L, s):
    ops, c = L.ops, L.col
    lo, hi, disc, qty = s["lo"], s["hi"], s["disc"], s["qty"]
    m = ((c["l_shipdate"] >= lo) & (c["l_shipdate"] < hi) & (c["l_discount"] >= disc - 1) &
         (c["l_discount"] <= disc + 1) & (c["l_quantity"] < qty))
    return ops.sum(ops.where(m, c["l_extendedprice"] * c["l_discount"], 0)), ops.sum(ops.i64(m))


def q06_finish(L, p, out):
    s, n = (scalar(L.ops, x) for x in out)
    return [[s / 10**4 if n else None]]


PLANS = {
    "q01": (q01_prep, q01_core, q01_finish),
    "q02": (q02_prep, q02_core, q02_finish),
    "q03": (q03_prep, q03_core, q03_finish),
    "q04": (q04_prep, q04_core, q04_finish),
    "q05": (q05_prep, q05_core, q05_finish),
    "q06": (q06_prep, q06_core, q06_finish),
}
