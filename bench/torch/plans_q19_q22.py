"""plans_q19_q22.py: TPC-H Q19 to Q22 as TorchPlan-style array programs
(prep / core / finish, see plans.py).

  Q19 discounted revenue   the three OR'ed (brand, containers, size) part
                           predicates as 3 bits per part row, tested per line
  Q20 potential promotion  LIKE 'forest%' on p_name bytes; the year's quantity
                           per partsupp row (searchsorted on sorted keys);
                           availqty > 0.5 sum as 200 availqty > sum
  Q21 suppliers who kept   the candidate lines (late, the nation's supplier,
      orders waiting       'F' order) mark their orders; over those orders'
                           lines, min/max suppkey of all and of the late ones
                           (scatter-min/max): another supplier exists iff
                           min != max, no other late one iff late min = max
  Q22 global sales opp.    the phone's first two bytes as one integer, the
                           average as the exact bal * n > sum, orders mark
                           their customers"""
from plans_util import (code_table, dict_eq, dict_in, nation_key, order_by, scalar, text, text_prefix,
                        text_prefix_codes, text_rank)
from store import add_months, days


# ---- Q19: discounted revenue ----
_Q19 = [(("SM CASE", "SM BOX", "SM PACK", "SM PKG"), 5),
        (("MED BAG", "MED BOX", "MED PKG", "MED PACK"), 10),
        (("LG CASE", "LG BOX", "LG PACK", "LG PKG"), 15)]


def q19_prep(L, p):
    br = []
    for k, (containers, size) in enumerate(_Q19):
        br.append({"brand": p["brand%d" % (k + 1)], "containers": code_table(L, "p_container",
                                                                               lambda v, cs=containers: v in cs),
                   "size": size, "qlo": int(p["quantity%d" % (k + 1)]) * 100,
                   "qhi": (int(p["quantity%d" % (k + 1)]) + 10) * 100})
    return {"branches": br, "modes": code_table(L, "l_shipmode", lambda v: v in ("AIR", "AIR REG"))}


def q19_core(L, s):
    ops, c = L.ops, L.col
    size = c["p_size"]
    bits = None                                                           # per part row: branch k's bit 1 << k
    for k, b in enumerate(s["branches"]):
        ok = (dict_eq(L, "p_brand", b["brand"]) & dict_in(L, "p_container", b["containers"]) &
              (size >= 1) & (size <= b["size"]))
        bits = ops.i64(ok) << k if bits is None else bits | (ops.i64(ok) << k)
    sel = ops.nonzero(dict_in(L, "l_shipmode", s["modes"]) & dict_eq(L, "l_shipinstruct", "DELIVER IN PERSON"))
    pb = ops.take(bits, ops.take(L.keymap["part"], ops.take(c["l_partkey"], sel)))
    q = ops.take(c["l_quantity"], sel)
    keep = None
    for k, b in enumerate(s["branches"]):
        m = ((pb & (1 << k)) != 0) & (q >= b["qlo"]) & (q <= b["qhi"])
        keep = m if keep is None else keep | m
    rev = ops.take(c["l_extendedprice"], sel) * (100 - ops.take(c["l_discount"], sel))
    return ops.sum(ops.where(keep, rev, 0)), ops.sum(ops.i64(keep))


def q19_finish(L, p, out):
    s, n = (scalar(L.ops, x) for x in out)
    return [[s / 10**4 if n else None]]


# ---- Q20: potential part promotion ----
def q20_prep(L, p):
    return {"color": p["color"], "lo": days(p["date"]), "hi": days(add_months(p["date"], 12)),
            "nation": nation_key(L, p["nation"]), "s_name_rank": text_rank(L, "s_name")}


def q20_core(L, s):
    ops, c = L.ops, L.col
    forest = text_prefix(L, "p_name", s["color"])                             # per part row
    l_prow = ops.take(L.keymap["part"], c["l_partkey"])
    ship = c["l_shipdate"]
    sel = ops.nonzero((ship >= s["lo"]) & (ship < s["hi"]) & ops.take(forest, l_prow))
    key = ops.i64(ops.take(c["l_partkey"], sel)) * L.ps_smax + ops.i64(ops.take(c["l_suppkey"], sel))
    ps = ops.take(L.ps_row, ops.searchsorted(L.ps_sorted, key))               # partsupp row of each line
    nps = L.store.rows("partsupp")
    qsum = ops.index_add(ops.zeros(nps, "i64"), ps, ops.take(c["l_quantity"], sel))
    qcnt = ops.index_add(ops.zeros(nps, "i64"), ps, ops.full(sel.shape[0], 1, "i64"))
    ps_ok = (ops.take(forest, ops.take(L.keymap["part"], c["ps_partkey"])) & (qcnt > 0) &
             (ops.i64(c["ps_availqty"]) * 200 > qsum))                       # availqty > 0.5 * sum (hundredths)
    ps_win = ops.nonzero(ps_ok)
    s_in = ops.mark(L.store.rows("supplier"), ops.take(L.keymap["supplier"], ops.take(c["ps_suppkey"], ps_win)))
    win = ops.nonzero(s_in & (c["s_nationkey"] == s["nation"]))
    return ops.take(win, ops.argsort(ops.take(s["s_name_rank"], win)))


def q20_finish(L, p, out):
    return [[text(L, "s_name", r), text(L, "s_address", r)] for r in L.ops.host(out)]


# ---- Q21: suppliers who kept orders waiting ----
def q21_prep(L, p):
    return {"nation": nation_key(L, p["nation"]), "s_name_rank": text_rank(L, "s_name")}


def q21_core(L, s):
    ops, c = L.ops, L.col
    o_f = dict_eq(L, "o_orderstatus", "F")                                    # per order row
    s_in = c["s_nationkey"] == s["nation"]                                    # per supplier row
    l_orow = ops.take(L.keymap["orders"], c["l_orderkey"])
    late = c["l_receiptdate"] > c["l_commitdate"]
    # l1 candidates: late lines of the nation's suppliers in 'F' orders (about 1 % of the lines)
    cand = ops.nonzero(late & ops.take(s_in, ops.take(L.keymap["supplier"], c["l_suppkey"])) &
                       ops.take(o_f, l_orow))
    no = L.store.rows("orders")
    # every line of the candidates' orders, for the EXISTS / NOT EXISTS over the same order
    rel = ops.nonzero(ops.take(ops.mark(no, ops.take(l_orow, cand)), l_orow))
    orow, sk = ops.take(l_orow, rel), ops.i64(ops.take(c["l_suppkey"], rel))
    big = 1 << 62
    smin = ops.scatter_min(ops.full(no, big, "i64"), orow, sk)
    smax = ops.scatter_max(ops.full(no, -1, "i64"), orow, sk)
    lt = ops.nonzero(ops.take(late, rel))
    lmin = ops.scatter_min(ops.full(no, big, "i64"), ops.take(orow, lt), ops.take(sk, lt))
    lmax = ops.scatter_max(ops.full(no, -1, "i64"), ops.take(orow, lt), ops.take(sk, lt))
    co = ops.take(l_orow, cand)
    keep = ops.nonzero((ops.take(smin, co) != ops.take(smax, co)) &           # EXISTS another supplier
                       (ops.take(lmin, co) == ops.take(lmax, co)))            # NOT EXISTS another late one
    srow = ops.take(L.keymap["supplier"], ops.take(c["l_suppkey"], cand))
    ns = L.store.rows("supplier")
    srow = ops.take(srow, keep)
    cnt = ops.index_add(ops.zeros(ns, "i64"), srow, ops.full(srow.shape[0], 1, "i64"))
    sup = ops.nonzero(cnt > 0)
    n = ops.take(cnt, sup)
    perm = order_by(ops, [(n, True), (ops.take(s["s_name_rank"], sup), False)])[:100]
    return ops.take(sup, perm), ops.take(n, perm)


def q21_finish(L, p, out):
    rows, n = (L.ops.host(x) for x in out)
    return [[text(L, "s_name", r), int(k)] for r, k in zip(rows, n)]


# ---- Q22: global sales opportunity ----
def q22_prep(L, p):
    codes = sorted({p["code%d" % k] for k in range(1, 8)}, key=lambda v: v.encode())
    # a code of other than 2 bytes matches no phone prefix (-2; short phones give -1)
    return {"codes": codes, "values": [int.from_bytes(v.encode(), "big") if len(v.encode()) == 2 else -2
                                       for v in codes]}


def q22_core(L, s):
    ops, c = L.ops, L.col
    pc = text_prefix_codes(L, "c_phone", 2)                                   # per customer row
    grp = pc * 0 - 1                                                          # index into the sorted codes, -1 none
    for k, v in enumerate(s["values"]):
        grp = ops.where(pc == v, k, grp)
    bal = c["c_acctbal"]
    pos = (grp >= 0) & (bal > 0)
    total, n = ops.sum(ops.where(pos, bal, 0)), ops.sum(ops.i64(pos))
    has = ops.mark(L.store.rows("customer"), ops.take(L.keymap["customer"], c["o_custkey"]))   # EXISTS an order
    keep = (grp >= 0) & (bal * n > total) & ~has                              # bal > avg, exactly
    return [(ops.sum(ops.i64(keep & (grp == k))), ops.sum(ops.where(keep & (grp == k), bal, 0)))
            for k in range(len(s["values"]))]


def q22_finish(L, p, out):
    codes = sorted({p["code%d" % k] for k in range(1, 8)}, key=lambda v: v.encode())
    rows = []
    for code, (n, total) in zip(codes, out):
        n, total = scalar(L.ops, n), scalar(L.ops, total)
        if n:
            rows.append([code, n, total / 100])
    return rows


PLANS = {
    "q19": (q19_prep, q19_core, q19_finish),
    "q20": (q20_prep, q20_core, q20_finish),
    "q21": (q21_prep, q21_core, q21_finish),
    "q22": (q22_prep, q22_core, q22_finish),
}
