"""q09.full.py: the Triton expert for TPC-H Q9 (product type profit measure),
full mode.

    select nation, o_year, sum(amount) as sum_profit
    from (select n_name as nation, extract(year from o_orderdate) as o_year,
                 l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
          from part, supplier, lineitem, partsupp, orders, nation
          where s_suppkey = l_suppkey and ps_suppkey = l_suppkey
            and ps_partkey = l_partkey and p_partkey = l_partkey
            and o_orderkey = l_orderkey and s_nationkey = n_nationkey
            and p_name like '%:color%') as profit
    group by nation, o_year order by nation, o_year desc;

Plan (dense maps over the keys, 0..max; a key outside a map joins nothing):
  1. q09_part_match: p_name LIKE '%color%' (any LIKE: the pattern is cut at
     its '%' into segments, found leftmost one after the other, '_' matches
     any byte) by a shift-and (bitap) automaton per part name: a thread per
     name walks its bytes once, with one 64-bit state and a 256-entry mask
     table per segment; matching parts set a flag per partkey.
  2. torch: the matching parts' partsupp rows, their pairs (partkey,
     suppkey) packed into one int64 and made unique and sorted, with the
     sum of their supply costs and how many rows each pair has (dbgen
     repeats pairs at tiny scale factors; each copy is a join row:
     amount = n * price * (1 - discount) - sum(cost) * quantity).
  3. q09_supp_codes: each supplier's nation as its n_name dictionary code
     (code order is name order), in a map over suppkey.
  4. q09_order_years: each order's year (civil-from-days arithmetic in
     int64) minus the first year, in an int16 map over orderkey.
  5. q09_lines: one pass over lineitem: flagged part, supplier code, order
     year, then the pair by a binary search in the sorted pairs; the exact
     amount (int64, scale 4) and a count go by relaxed atomics to
     (nation code, year) slots, replicated R times (program id mod R) so
     that no slot is hot; torch adds the replicas.
Groups with a joined row come out by code, year descending.
"""
import torch
import triton
import triton.language as tl

BLOCK = 1024
LBLOCK = 128   # part names per program of the LIKE kernel
R = 64         # replicas of the group slots


def civil_from_days(z):
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (m <= 2), m, d


def like_tables(pattern, dev):
    """A LIKE pattern (bytes) -> its bitap tables: (masks [nseg * 256] int64,
    tops [nseg] int64, nseg). Segments are the pattern's runs between '%';
    mask[s * 256 + c] has bit k when segment s's byte k is c or '_'."""
    segs = [s for s in pattern.split(b"%") if s]
    if any(len(s) > 62 for s in segs):
        raise ValueError("q09.full.py: a LIKE segment over 62 bytes")
    masks = [0] * (256 * max(1, len(segs)))
    tops = [0] * max(1, len(segs))
    for i, s in enumerate(segs):
        for k, ch in enumerate(s):
            if ch == 95:   # '_'
                for c in range(256):
                    masks[i * 256 + c] |= 1 << k
            else:
                masks[i * 256 + ch] |= 1 << k
        tops[i] = 1 << (len(s) - 1)
    return (torch.tensor(masks, dtype=torch.int64).to(dev), torch.tensor(tops, dtype=torch.int64).to(dev),
            len(segs))


@triton.jit(do_not_specialize=["nseg"])
def q09_part_match(pkey, off, data, n, masks, tops, nseg, pflag, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK + tl.arange(0, BLOCK)
    m = rows < n
    start = tl.load(off + rows, mask=m, other=0)
    ln = tl.load(off + rows + 1, mask=m, other=0) - start
    stage = tl.zeros([BLOCK], dtype=tl.int32)
    state = tl.zeros([BLOCK], dtype=tl.int64)
    longest = tl.max(ln, axis=0)
    for pos in range(0, longest):
        act = m & (pos < ln) & (stage < nseg)
        b = tl.load(data + start + pos, mask=act, other=0).to(tl.int32)
        bits = tl.load(masks + stage * 256 + b, mask=act, other=0)
        top = tl.load(tops + stage, mask=act, other=0)
        state = ((state << 1) | 1) & bits
        done = act & ((state & top) != 0)
        stage = tl.where(done, stage + 1, stage)
        state = tl.where(done, 0, state)
    match = m & (stage >= nseg)
    pk = tl.load(pkey + rows, mask=match, other=0).to(tl.int64)
    match = match & (pk >= 0)
    tl.store(pflag + pk, match.to(tl.uint8), mask=match)


@triton.jit
def q09_supp_codes(skey, snat, ns, nkey, ncode, nn, scode, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < ns
    nk = tl.load(snat + offs, mask=m, other=-1).to(tl.int64)
    code = tl.full([BLOCK], -1, tl.int32)
    for i in range(0, nn):
        k = tl.load(nkey + i).to(tl.int64)
        c = tl.load(ncode + i).to(tl.int32)
        code = tl.where(nk == k, c, code)
    sk = tl.load(skey + offs, mask=m, other=-1).to(tl.int64)
    keep = m & (sk >= 0)
    tl.store(scode + sk, code, mask=keep)


@triton.jit
def q09_order_years(okey, odate, no, y0, oyear, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < no
    z = tl.load(odate + offs, mask=m, other=0).to(tl.int64) + 719468   # >= 0 for dates from year 0 on
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    year = yoe + era * 400 + (mp >= 10).to(tl.int64)   # months 1, 2 (mp 10, 11) belong to the next year
    k = tl.load(okey + offs, mask=m, other=-1).to(tl.int64)
    keep = m & (k >= 0)
    tl.store(oyear + k, (year - y0).to(tl.int16), mask=keep)


@triton.jit(do_not_specialize=["nkeys", "nsteps"])
def q09_lines(lkey, lpart, lsupp, lqty, lprice, ldisc, nl, pflag, maxp, scode, maxs, stride, oyear, maxo,
              ukeys, nkeys, nsteps, pcost, pcnt, ny, ngroups, sums, cnts, R: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < nl
    pk = tl.load(lpart + offs, mask=m, other=-1).to(tl.int64)
    keep = m & (pk >= 0) & (pk <= maxp)
    f = tl.load(pflag + pk, mask=keep, other=0)
    keep = keep & (f != 0)
    sk = tl.load(lsupp + offs, mask=keep, other=-1).to(tl.int64)
    keep = keep & (sk >= 0) & (sk <= maxs)
    code = tl.load(scode + sk, mask=keep, other=-1)
    keep = keep & (code >= 0)
    ok = tl.load(lkey + offs, mask=keep, other=-1).to(tl.int64)
    keep = keep & (ok >= 0) & (ok <= maxo)
    yi = tl.load(oyear + ok, mask=keep, other=-1).to(tl.int32)
    keep = keep & (yi >= 0)
    # the pair (partkey, suppkey): lower bound in the sorted unique pairs
    key = pk * stride + sk   # stride = maxs + 1, as the pairs were packed
    lo = tl.zeros([BLOCK], dtype=tl.int64)
    hi = tl.zeros([BLOCK], dtype=tl.int64) + nkeys
    for step in range(0, nsteps):
        act = keep & (lo < hi)
        mid = (lo + hi) >> 1
        v = tl.load(ukeys + mid, mask=act, other=0)
        lo = tl.where(act & (v < key), mid + 1, lo)
        hi = tl.where(act & (v >= key), mid, hi)
    keep = keep & (lo < nkeys)
    v = tl.load(ukeys + lo, mask=keep, other=-1)
    keep = keep & (v == key)
    cost = tl.load(pcost + lo, mask=keep, other=0)
    cnt = tl.load(pcnt + lo, mask=keep, other=0)
    q = tl.load(lqty + offs, mask=keep, other=0)
    p = tl.load(lprice + offs, mask=keep, other=0)
    d = tl.load(ldisc + offs, mask=keep, other=0)
    amount = cnt * (p * (100 - d)) - cost * q
    slot = (pid % R) * ngroups + code * ny + yi
    tl.atomic_add(sums + slot, amount, mask=keep, sem="relaxed")
    tl.atomic_add(cnts + slot, keep.to(tl.int32), mask=keep, sem="relaxed")


def full(db, params, env):
    pa, su, ps, od, li, na = (db[t] for t in ("part", "supplier", "partsupp", "orders", "lineitem", "nation"))
    pkey, pname = pa["p_partkey"], pa["p_name"]
    skey, snat = su["s_suppkey"], su["s_nationkey"]
    ps_part, ps_supp, ps_cost = ps["ps_partkey"], ps["ps_suppkey"], ps["ps_supplycost"]
    okey, odate = od["o_orderkey"], od["o_orderdate"]
    nkey, nname = na["n_nationkey"], na["n_name"]
    names = na.dict("n_name") or ()
    scale = {c[0]: c[2] for c in (env.result or ())}
    out = {"nation": [], "o_year": [], "sum_profit": []}
    np_, ns, nps, no, nl, nn = (t.numel() for t in (pkey, skey, ps_part, okey, li["l_orderkey"], nkey))
    if min(np_, ns, nps, no, nl, nn) == 0 or not names:
        return out
    dev = okey.device
    mx = torch.stack([pkey.max().to(torch.int64), skey.max().to(torch.int64), okey.max().to(torch.int64),
                      odate.min().to(torch.int64), odate.max().to(torch.int64)]).cpu().tolist()
    maxp, maxs, maxo = max(mx[0], 0), max(mx[1], 0), max(mx[2], 0)
    y0, y1 = civil_from_days(mx[3])[0], civil_from_days(mx[4])[0]
    ny, ncode = y1 - y0 + 1, len(names)
    ngroups = ncode * ny

    # 1. p_name like '%color%'
    masks, tops, nseg = like_tables(b"%" + params["color"].encode("utf-8") + b"%", dev)
    pflag = torch.zeros(maxp + 1, dtype=torch.uint8, device=dev)
    q09_part_match[(triton.cdiv(np_, LBLOCK),)](pkey, pname.offsets, pname.data, np_, masks, tops, nseg, pflag,
                                                BLOCK=LBLOCK, num_warps=4)
    # 2. the matching parts' (partkey, suppkey) pairs, sorted, with cost sums and multiplicities
    pp, pss = ps_part.to(torch.int64), ps_supp.to(torch.int64)
    ok = (pp >= 0) & (pp <= maxp) & (pss >= 0) & (pss <= maxs)
    ok &= pflag[pp.clamp(0, maxp)] != 0
    idx = torch.nonzero(ok).squeeze(1)
    ukeys, inv, pcnt = torch.unique(pp[idx] * (maxs + 1) + pss[idx], sorted=True, return_inverse=True,
                                    return_counts=True)
    nkeys = ukeys.numel()
    if nkeys == 0:
        return out
    pcost = torch.zeros(nkeys, dtype=torch.int64, device=dev).index_add_(0, inv, ps_cost[idx])
    pcnt = pcnt.to(torch.int64)
    # 3. supplier -> nation name code; 4. order -> year index
    scode = torch.full((maxs + 1,), -1, dtype=torch.int32, device=dev)
    q09_supp_codes[(triton.cdiv(ns, BLOCK),)](skey, snat, ns, nkey, nname, nn, scode, BLOCK=BLOCK, num_warps=4)
    oyear = torch.full((maxo + 1,), -1, dtype=torch.int16, device=dev)
    q09_order_years[(triton.cdiv(no, BLOCK),)](okey, odate, no, y0, oyear, BLOCK=BLOCK, num_warps=4)
    # 5. the lineitem pass
    sums = torch.zeros(R * ngroups, dtype=torch.int64, device=dev)
    cnts = torch.zeros(R * ngroups, dtype=torch.int32, device=dev)
    q09_lines[(triton.cdiv(nl, BLOCK),)](li["l_orderkey"], li["l_partkey"], li["l_suppkey"], li["l_quantity"],
                                         li["l_extendedprice"], li["l_discount"], nl, pflag, maxp, scode, maxs,
                                         maxs + 1, oyear, maxo, ukeys, nkeys, nkeys.bit_length(), pcost, pcnt, ny,
                                         ngroups, sums, cnts, R=R, BLOCK=BLOCK, num_warps=4)
    tot = torch.stack([sums.view(R, ngroups).sum(0), cnts.view(R, ngroups).to(torch.int64).sum(0)]).cpu().tolist()
    f = 10 ** (scale.get("sum_profit", 4) - 4)
    for code in range(ncode):
        for yi in range(ny - 1, -1, -1):
            g = code * ny + yi
            if tot[1][g] > 0:
                out["nation"].append(names[code])
                out["o_year"].append(y0 + yi)
                out["sum_profit"].append(tot[0][g] * f)
    return out
