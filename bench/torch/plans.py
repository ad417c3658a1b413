"""plans.py: TPC-H Q1, Q3, Q5, Q6, Q9 and Q18 as carefully written
TorchPlan-style array programs (the PyTorch calibration of docs/gpu.md).

Each query is prep(L, p) -> integer constants (dates as days, strings as
dictionary codes; host, untimed), core(L, s) -> small arrays (what
torch.compile compiles) and finish(L, p, out) -> result rows on the host. L is a store.Loaded (columns on
the device, key maps), p the parameters from dkb (seed 0). Written as one
would by hand for a GPU:
  - PK-FK joins through dense key maps (key -> row index tensors, built at
    load time like an index), so a join is one gather;
  - few groups (Q1's 4-6, Q6's one) as masked reductions, not atomics;
  - decimals stay int64 hundredths and sums are exact int64 (Q1's
    sum_charge is scale 6: exact up to about SF 100);
  - strings: dictionary codes compared as integers; LIKE '%green%' as a
    byte-window match over the p_name bytes, rows found by searchsorted.
The same code runs on numpy (store.NumpyOps) to check the logic without a
GPU."""
from store import add_months, date_str, days


def _scalar(ops, a):
    return int(ops.host(a.reshape(1))[0]) if hasattr(a, "reshape") else int(a)


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
        qty, price, dp, ch, disc, n = (_scalar(L.ops, s) for s in sums)
        if n == 0:
            continue
        rows.append([L.dict["l_returnflag"][k // nls], L.dict["l_linestatus"][k % nls], qty / 100, price / 100,
                     dp / 1e4, ch / 1e6, qty / 100 / n, price / 100 / n, disc / 100 / n, n])
    return rows


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
    return [[int(h["o_orderkey"][r]), int(v) / 1e4, date_str(h["o_orderdate"][r]), int(h["o_shippriority"][r])]
            for r, v in zip(top, rev)]


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
    h = L.host
    names = {int(k): L.dict["n_name"][code] for k, code in zip(h["n_nationkey"], h["n_name"])}
    rows = [[names[k], int(rev[k]) / 1e4] for k in names if n_ok[k] and rev[k] != 0]
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
    s, n = (_scalar(L.ops, x) for x in out)
    return [[s / 1e4 if n else None]]


# ---- Q9: product type profit measure ----
def green_parts(L, word):
    """BOOL per part row: p_name contains word (LIKE '%word%')."""
    ops, c = L.ops, L.col
    b, off = c["p_name.bytes"], c["p_name"]
    pat = word.encode()
    n = b.shape[0] - len(pat) + 1
    if n <= 0:
        return ops.zeros(L.store.rows("part"), "bool")
    hit = b[0:n] == pat[0]
    for j in range(1, len(pat)):
        hit = hit & (b[j:j + n] == pat[j])
    pos = ops.nonzero(hit)
    row = ops.searchsorted(off, pos, right=True) - 1
    end = ops.take(off, row + 1)
    row = ops.take(row, ops.nonzero(pos + len(pat) <= end))
    green = ops.zeros(L.store.rows("part"), "bool")
    green[row] = True
    return green


YEAR0, NYEARS = 1970, 80   # o_orderdate years handled: 1970..2049


def q09_prep(L, p):
    return {"color": p["color"]}


def q09_core(L, s):
    ops, c = L.ops, L.col
    green = green_parts(L, s["color"])
    sel = ops.nonzero(ops.take(green, ops.take(L.keymap["part"], c["l_partkey"])))
    pk, sk = ops.i64(ops.take(c["l_partkey"], sel)), ops.i64(ops.take(c["l_suppkey"], sel))
    ps = ops.take(L.ps_row, ops.searchsorted(L.ps_sorted, pk * L.ps_smax + sk))
    amount = (ops.take(c["l_extendedprice"], sel) * (100 - ops.take(c["l_discount"], sel)) -
              ops.take(c["ps_supplycost"], ps) * ops.take(c["l_quantity"], sel))        # scale 4
    nat = ops.i64(ops.take(c["s_nationkey"], ops.take(L.keymap["supplier"], sk)))
    od = ops.take(c["o_orderdate"], ops.take(L.keymap["orders"], ops.take(c["l_orderkey"], sel)))
    year = ops.searchsorted(L.year_starts, od, right=True) - 1                           # 0 = YEAR0
    g = nat * NYEARS + year
    n = 32 * NYEARS
    return ops.index_add(ops.zeros(n, "i64"), g, amount), ops.index_add(ops.zeros(n, "i64"), g, ops.i64(g >= 0))


def q09_finish(L, p, out):
    s, cnt = (L.ops.host(x) for x in out)
    h = L.host
    names = {int(k): L.dict["n_name"][code] for k, code in zip(h["n_nationkey"], h["n_name"])}
    rows = [[names[g // NYEARS], YEAR0 + g % NYEARS, int(s[g]) / 1e4] for g in range(len(s))
            if cnt[g] and g // NYEARS in names]
    rows.sort(key=lambda r: (r[0], -r[1]))
    return rows


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
    h, st = L.host, L.store
    cmap = {}
    rows = []
    for r, q in zip(top, qty):
        ck = int(h["o_custkey"][r])
        if ck not in cmap:
            crow = int(L.ops.host(L.keymap["customer"][ck:ck + 1])[0])
            cmap[ck] = (st.text("c_name", crow), int(h["c_custkey"][crow]))
        name, custkey = cmap[ck]
        rows.append([name, custkey, int(h["o_orderkey"][r]), date_str(h["o_orderdate"][r]),
                     int(h["o_totalprice"][r]) / 100, int(q) / 100])
    return rows


# query -> (prep: parameters -> integer constants, host, untimed;
#           core: the array program, timed (what torch.compile compiles);
#           finish: core outputs -> result rows on the host, timed)
PLANS = {
    "q01": (q01_prep, q01_core, q01_finish),
    "q03": (q03_prep, q03_core, q03_finish),
    "q05": (q05_prep, q05_core, q05_finish),
    "q06": (q06_prep, q06_core, q06_finish),
    "q09": (q09_prep, q09_core, q09_finish),
    "q18": (q18_prep, q18_core, q18_finish),
}


def prepare_extra(L):
    """Load-time constants some plans need (not timed)."""
    import numpy as np
    starts = np.array([days("%04d-01-01" % (YEAR0 + k)) for k in range(NYEARS + 1)], dtype=np.int32)
    L.year_starts = L.ops.put(starts)
