"""plans_q07_q12.py: TPC-H Q7 to Q12 as TorchPlan-style array programs
(prep / core / finish, see plans.py).

  Q7  volume shipping   lines of the two nations' suppliers, customer nation
                        by gathers, sums per (supp nation, cust nation, year)
  Q8  market share      lines of the part type, region customers, per-year
                        total and nation sums (their quotient is a double)
  Q9  product profit    LIKE '%green%' on p_name bytes, partsupp cost by
                        searchsorted on sorted (partkey, suppkey) keys
  Q10 returned items    revenue per customer row, top 20 by one sort
  Q11 important stock   value per part row; the HAVING threshold
                        floor(total * fraction) exact in int64
  Q12 shipping modes    masked counts per ship mode, priority by code table"""
from fractions import Fraction

from plans_util import (NYEARS, YEAR0, code_of, code_table, dict_eq, nation_bins, nation_key,
                        nation_keys, region_nations, scalar, text, text_contains, year_of)
from store import add_months, days


def _rev(L, sel):
    """l_extendedprice * (1 - l_discount) of the lines sel, scale 4."""
    c, ops = L.col, L.ops
    return ops.take(c["l_extendedprice"], sel) * (100 - ops.take(c["l_discount"], sel))


# ---- Q7: volume shipping ----
def q07_prep(L, p):
    n1, n2 = nation_key(L, p["nation1"]), nation_key(L, p["nation2"])
    return {"n1": n1, "n2": n2, "lo": days("1995-01-01"), "hi": days("1996-12-31"), "nb": nation_bins(L)}


def q07_core(L, s):
    ops, c = L.ops, L.col
    n1, n2, nb = s["n1"], s["n2"], s["nb"]
    s_nat = c["s_nationkey"]
    s_in = (s_nat == n1) | (s_nat == n2)                                      # per supplier row
    l_srow = ops.take(L.keymap["supplier"], c["l_suppkey"])
    ship = c["l_shipdate"]
    sel = ops.nonzero((ship >= s["lo"]) & (ship <= s["hi"]) & ops.take(s_in, l_srow))
    snat = ops.i64(ops.take(s_nat, ops.take(l_srow, sel)))
    orow = ops.take(L.keymap["orders"], ops.take(c["l_orderkey"], sel))
    cnat = ops.i64(ops.take(c["c_nationkey"], ops.take(L.keymap["customer"], ops.take(c["o_custkey"], orow))))
    keep = ops.nonzero(((snat == n1) & (cnat == n2)) | ((snat == n2) & (cnat == n1)))
    ls = ops.take(sel, keep)
    g = ((ops.take(snat, keep) * nb + ops.take(cnat, keep)) * NYEARS +
         year_of(L, ops.take(ship, ls)))
    n = nb * nb * NYEARS
    return (ops.index_add(ops.zeros(n, "i64"), g, _rev(L, ls)),
            ops.index_add(ops.zeros(n, "i64"), g, ops.i64(g >= 0)))


def q07_finish(L, p, out):
    rev, cnt = (L.ops.host(x) for x in out)
    names, nb = nation_keys(L), nation_bins(L)
    rows = []
    for g in cnt.nonzero()[0]:
        sn, cn, y = int(g) // NYEARS // nb, int(g) // NYEARS % nb, int(g) % NYEARS
        rows.append([names[sn], names[cn], YEAR0 + y, int(rev[g]) / 10**4])
    rows.sort(key=lambda r: (r[0].encode(), r[1].encode(), r[2]))
    return rows


# ---- Q8: national market share ----
def q08_prep(L, p):
    return {"type": p["type"], "nation_ok": region_nations(L, p["region"]),
            "nation": nation_key(L, p["nation"]), "lo": days("1995-01-01"), "hi": days("1996-12-31")}


def q08_core(L, s):
    ops, c = L.ops, L.col
    p_ok = dict_eq(L, "p_type", s["type"])                                   # per part row
    lsel = ops.nonzero(ops.take(p_ok, ops.take(L.keymap["part"], c["l_partkey"])))
    orow = ops.take(L.keymap["orders"], ops.take(c["l_orderkey"], lsel))
    od = ops.take(c["o_orderdate"], orow)
    cnat = ops.take(c["c_nationkey"], ops.take(L.keymap["customer"], ops.take(c["o_custkey"], orow)))
    keep = ops.nonzero((od >= s["lo"]) & (od <= s["hi"]) & ops.take(s["nation_ok"], cnat))
    ls = ops.take(lsel, keep)
    rev = _rev(L, ls)
    snat = ops.take(c["s_nationkey"], ops.take(L.keymap["supplier"], ops.take(c["l_suppkey"], ls)))
    y = year_of(L, ops.take(od, keep))
    return (ops.index_add(ops.zeros(NYEARS, "i64"), y, rev),
            ops.index_add(ops.zeros(NYEARS, "i64"), y, ops.where(snat == s["nation"], rev, 0)),
            ops.index_add(ops.zeros(NYEARS, "i64"), y, ops.i64(y >= 0)))


def q08_finish(L, p, out):
    tot, nat, cnt = (L.ops.host(x) for x in out)
    return [[YEAR0 + int(y), (int(nat[y]) / 1e4) / (int(tot[y]) / 1e4) if tot[y] else None]
            for y in cnt.nonzero()[0]]


# ---- Q9: product type profit measure ----
def q09_prep(L, p):
    return {"color": p["color"]}


def q09_core(L, s):
    ops, c = L.ops, L.col
    green = text_contains(L, "p_name", s["color"], L.store.rows("part"))
    sel = ops.nonzero(ops.take(green, ops.take(L.keymap["part"], c["l_partkey"])))
    pk, sk = ops.i64(ops.take(c["l_partkey"], sel)), ops.i64(ops.take(c["l_suppkey"], sel))
    ps = ops.take(L.ps_row, ops.searchsorted(L.ps_sorted, pk * L.ps_smax + sk))
    amount = (ops.take(c["l_extendedprice"], sel) * (100 - ops.take(c["l_discount"], sel)) -
              ops.take(c["ps_supplycost"], ps) * ops.take(c["l_quantity"], sel))        # scale 4
    nat = ops.i64(ops.take(c["s_nationkey"], ops.take(L.keymap["supplier"], sk)))
    od = ops.take(c["o_orderdate"], ops.take(L.keymap["orders"], ops.take(c["l_orderkey"], sel)))
    g = nat * NYEARS + year_of(L, od)
    n = 32 * NYEARS
    return ops.index_add(ops.zeros(n, "i64"), g, amount), ops.index_add(ops.zeros(n, "i64"), g, ops.i64(g >= 0))


def q09_finish(L, p, out):
    s, cnt = (L.ops.host(x) for x in out)
    names = nation_keys(L)
    rows = [[names[g // NYEARS], YEAR0 + g % NYEARS, int(s[g]) / 10**4] for g in range(len(s))
            if cnt[g] and g // NYEARS in names]
    rows.sort(key=lambda r: (r[0], -r[1]))
    return rows


# ---- Q10: returned item reporting ----
def q10_prep(L, p):
    return {"lo": days(p["date"]), "hi": days(add_months(p["date"], 3))}


def q10_core(L, s):
    ops, c = L.ops, L.col
    od = c["o_orderdate"]
    o_ok = (od >= s["lo"]) & (od < s["hi"])                                   # per order row
    l_orow = ops.take(L.keymap["orders"], c["l_orderkey"])
    sel = ops.nonzero(dict_eq(L, "l_returnflag", "R") & ops.take(o_ok, l_orow))
    crow = ops.take(L.keymap["customer"], ops.take(c["o_custkey"], ops.take(l_orow, sel)))
    revc = ops.index_add(ops.zeros(L.store.rows("customer"), "i64"), crow, _rev(L, sel))
    cand = ops.nonzero(revc > 0)                                              # customer rows
    top = ops.take(cand, ops.argsort(ops.take(revc, cand), descending=True)[:20])
    return top, ops.take(revc, top)


def q10_finish(L, p, out):
    top, rev = (L.ops.host(x) for x in out)
    h, names = L.host, nation_keys(L)
    return [[int(h["c_custkey"][r]), text(L, "c_name", r), int(v) / 10**4, int(h["c_acctbal"][r]) / 100,
             names[int(h["c_nationkey"][r])], text(L, "c_address", r), text(L, "c_phone", r),
             text(L, "c_comment", r)] for r, v in zip(top, rev)]


# ---- Q11: important stock identification ----
def q11_prep(L, p):
    f = Fraction(str(p["fraction"]))
    return {"nation": nation_key(L, p["nation"]), "num": f.numerator, "den": f.denominator}


def q11_core(L, s):
    ops, c = L.ops, L.col
    s_ok = c["s_nationkey"] == s["nation"]                                    # per supplier row
    sel = ops.nonzero(ops.take(s_ok, ops.take(L.keymap["supplier"], c["ps_suppkey"])))
    val = ops.take(c["ps_supplycost"], sel) * ops.i64(ops.take(c["ps_availqty"], sel))   # scale 2
    prow = ops.take(L.keymap["part"], ops.take(c["ps_partkey"], sel))
    vp = ops.index_add(ops.zeros(L.store.rows("part"), "i64"), prow, val)
    total = ops.sum(val)
    num, den = s["num"], s["den"]
    thr = (total // den) * num + (total % den) * num // den                  # floor(total * fraction), total >= 0
    cand = ops.nonzero(vp > thr)
    top = ops.take(cand, ops.argsort(ops.take(vp, cand), descending=True))
    return top, ops.take(vp, top)


def q11_finish(L, p, out):
    top, val = (L.ops.host(x) for x in out)
    h = L.host
    return [[int(h["p_partkey"][r]), int(v) / 100] for r, v in zip(top, val)]


# ---- Q12: shipping modes and order priority ----
def _q12_modes(L, p):
    """The codes of the two ship modes present in the dictionary, ascending (= string order)."""
    return sorted({k for k in (code_of(L, "l_shipmode", p["shipmode1"]), code_of(L, "l_shipmode", p["shipmode2"]))
                   if k is not None})


def q12_prep(L, p):
    return {"modes": _q12_modes(L, p), "lo": days(p["date"]), "hi": days(add_months(p["date"], 12)),
            "high": code_table(L, "o_orderpriority", lambda v: v in ("1-URGENT", "2-HIGH"))}


def q12_core(L, s):
    ops, c = L.ops, L.col
    mode, commit, receipt = c["l_shipmode"], c["l_commitdate"], c["l_receiptdate"]
    m = (commit < receipt) & (c["l_shipdate"] < commit) & (receipt >= s["lo"]) & (receipt < s["hi"])
    mm = m & (mode != mode)
    for k in s["modes"]:
        mm = mm | (m & (mode == k))
    sel = ops.nonzero(mm)
    orow = ops.take(L.keymap["orders"], ops.take(c["l_orderkey"], sel))
    high = ops.take(s["high"], ops.i64(ops.take(c["o_orderpriority"], orow)))
    ms = ops.take(mode, sel)
    return [(ops.sum(ops.i64((ms == k) & high)), ops.sum(ops.i64(ms == k))) for k in s["modes"]]


def q12_finish(L, p, out):
    rows = []
    for k, (hi, n) in zip(_q12_modes(L, p), out):
        hi, n = scalar(L.ops, hi), scalar(L.ops, n)
        if n:
            rows.append([L.dict["l_shipmode"][k], hi, n - hi])
    return rows


PLANS = {
    "q07": (q07_prep, q07_core, q07_finish),
    "q08": (q08_prep, q08_core, q08_finish),
    "q09": (q09_prep, q09_core, q09_finish),
    "q10": (q10_prep, q10_core, q10_finish),
    "q11": (q11_prep, q11_core, q11_finish),
    "q12": (q12_prep, q12_core, q12_finish),
}
