"""q18.full.py: the Triton expert for TPC-H Q18 (large volume customer), full
mode.

    select c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity)
    from customer, orders, lineitem
    where o_orderkey in (select l_orderkey from lineitem
                         group by l_orderkey having sum(l_quantity) > :quantity)
      and c_custkey = o_custkey and o_orderkey = l_orderkey
    group by c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
    order by o_totalprice desc, o_orderdate limit 100;

Plan:
  1. q18_order_qty: sum(l_quantity) per orderkey (int64 hundredths, exact)
     into a dense array over 0..max(o_orderkey). Each program reads BLOCK
     consecutive line items and pre-reduces runs of equal keys with a
     segmented inclusive scan (tl.associative_scan over (key, quantity,
     run-is-uniform)); only the last item of each run adds its run's sum
     (relaxed int64 atomics). lineitem is grouped by orderkey, so that is
     about one atomic per order (~4x fewer than one per item); the scan is
     exact for any row order, grouped or not.
  2. q18_large: an order is large when its sum is over the limit (the
     subquery; the outer sum(l_quantity) is over the same items, so it is
     reused): a flag per order row.
  3. torch: the few large orders; their customers through a dense map
     custkey -> customer row (orders without a customer drop out: the inner
     join); a stable sort by o_orderdate, then by o_totalprice descending,
     gives the query's order; the first 100 and their c_name bytes (one
     gather) come back to the host.
"""
import torch
import triton
import triton.language as tl

BLOCK = 1024
LIMIT = 100


@triton.jit
def q18_runs(k1, v1, u1, k2, v2, u2):
    """The segmented sum: (key of the range's last item, sum of the range's
    trailing run of that key, whether the whole range has one key)."""
    same = k1 == k2
    v = tl.where(same & (u2 != 0), v1 + v2, v2)
    u = u1 & u2 & same.to(tl.int32)
    return k2, v, u


@triton.jit
def q18_order_qty(lkey, lqty, nl, maxo, qsum, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    lane = tl.arange(0, BLOCK)
    offs = pid * BLOCK + lane
    m = offs < nl
    k = tl.load(lkey + offs, mask=m, other=-1).to(tl.int64)
    q = tl.load(lqty + offs, mask=m, other=0)
    u = tl.full([BLOCK], 1, tl.int32)
    kk, runsum, uu = tl.associative_scan((k, q, u), 0, q18_runs)
    nxt = tl.load(lkey + offs + 1, mask=offs + 1 < nl, other=-1).to(tl.int64)
    last = (lane == BLOCK - 1) | (offs + 1 >= nl) | (nxt != k)
    keep = m & last & (k >= 0) & (k <= maxo)
    tl.atomic_add(qsum + k, runsum, mask=keep, sem="relaxed")


@triton.jit(do_not_specialize=["lim"])
def q18_large(okey, no, maxo, qsum, lim, big, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < no
    k = tl.load(okey + offs, mask=m, other=-1).to(tl.int64)
    keep = m & (k >= 0) & (k <= maxo)
    s = tl.load(qsum + k, mask=keep, other=0)
    tl.store(big + offs, (keep & (s > lim)).to(tl.uint8), mask=m)


def full(db, params, env):
    cu, od, li = db["customer"], db["orders"], db["lineitem"]
    ckey, cname = cu["c_custkey"], cu["c_name"]
    okey, ocust, odate, oprice = od["o_orderkey"], od["o_custkey"], od["o_orderdate"], od["o_totalprice"]
    lkey, lqty = li["l_orderkey"], li["l_quantity"]
    scale = {c[0]: c[2] for c in (env.result or ())}
    cols = ("c_name", "c_custkey", "o_orderkey", "o_orderdate", "o_totalprice", "sum(l_quantity)")
    nc, no, nl = ckey.numel(), okey.numel(), lkey.numel()
    if nc == 0 or no == 0 or nl == 0:
        return {c: [] for c in cols}
    dev = okey.device
    lim = params["quantity"] * 100                     # l_quantity in hundredths
    mx = torch.stack([ckey.max().to(torch.int64), okey.max().to(torch.int64)]).cpu().tolist()
    maxc, maxo = max(mx[0], 0), max(mx[1], 0)

    qsum = torch.zeros(maxo + 1, dtype=torch.int64, device=dev)
    big = torch.empty(no, dtype=torch.uint8, device=dev)
    q18_order_qty[(triton.cdiv(nl, BLOCK),)](lkey, lqty, nl, maxo, qsum, BLOCK=BLOCK, num_warps=8)
    q18_large[(triton.cdiv(no, BLOCK),)](okey, no, maxo, qsum, lim, big, BLOCK=BLOCK, num_warps=4)

    rows = torch.nonzero(big).squeeze(1)               # the large orders (few)
    ck = ocust[rows].to(torch.int64)
    cmap = torch.full((maxc + 1,), -1, dtype=torch.int64, device=dev)
    cks = ckey.to(torch.int64)
    pos = cks >= 0
    cmap[cks[pos]] = torch.arange(nc, dtype=torch.int64, device=dev)[pos]
    crow = torch.where((ck >= 0) & (ck <= maxc), cmap[ck.clamp(0, maxc)], torch.full_like(ck, -1))
    sel = torch.nonzero(crow >= 0).squeeze(1)
    rows, crow = rows[sel], crow[sel]
    # order by o_totalprice desc, o_orderdate: a stable sort by the second key, then by the first
    perm = torch.sort(odate[rows], stable=True).indices
    rows, crow = rows[perm], crow[perm]
    perm = torch.sort(oprice[rows], descending=True, stable=True).indices[:LIMIT]
    rows, crow = rows[perm], crow[perm]
    noff = cname.offsets
    start, end = noff[crow], noff[crow + 1]
    top = torch.stack([start, end - start, ocust[rows].to(torch.int64), okey[rows].to(torch.int64),
                       odate[rows].to(torch.int64), oprice[rows], qsum[okey[rows].to(torch.int64)]]).cpu().tolist()
    nbytes = sum(top[1])
    flat = []
    for a, n in zip(top[0], top[1]):
        flat.extend(range(a, a + n))
    blob = bytes(cname.data[torch.tensor(flat, dtype=torch.int64).to(dev)].cpu().tolist()) if nbytes else b""
    names, at = [], 0
    for n in top[1]:
        names.append(blob[at:at + n])
        at += n
    fp = 10 ** (scale.get("o_totalprice", 2) - 2)
    fq = 10 ** (scale.get("sum(l_quantity)", 2) - 2)
    return {
        "c_name": names,
        "c_custkey": top[2],
        "o_orderkey": top[3],
        "o_orderdate": top[4],
        "o_totalprice": [v * fp for v in top[5]],
        "sum(l_quantity)": [v * fq for v in top[6]],
    }
