"""q13.full.py: the Triton expert for TPC-H Q13 (customer distribution), full
mode.

    select c_count, count(*) as custdist
    from (select c_custkey, count(o_orderkey)
          from customer left outer join orders
               on c_custkey = o_custkey and o_comment not like '%:word1%:word2%'
          group by c_custkey) as c_orders (c_custkey, c_count)
    group by c_count order by custdist desc, c_count desc;

Plan:
  1. q13_order_counts: a thread per order walks its comment's bytes once
     with a shift-and (bitap) automaton: one 64-bit state and a 256-entry
     mask table per word; word1 is found at its leftmost end, then word2 is
     sought only after it (exactly LIKE '%w1%w2%': the leftmost word1 leaves
     the most room). An order whose comment does not match adds 1 to its
     customer's count (relaxed int32 atomics into a dense array over
     custkey 0..max(c_custkey); ~1 address per customer, no hot key).
  2. torch: each customer row's count (a customer with no counted order
     has 0: the outer join), a histogram of the counts (bincount), its
     non-empty bins to the host, sorted by (custdist desc, c_count desc).
Integer counts: exact.
"""
import torch
import triton
import triton.language as tl

LBLOCK = 128   # orders per program


def like_tables(pattern, dev):
    """A LIKE pattern (bytes) -> its bitap tables: (masks [nseg * 256] int64,
    tops [nseg] int64, nseg). Segments are the pattern's runs between '%';
    mask[s * 256 + c] has bit k when segment s's byte k is c or '_'."""
    segs = [s for s in pattern.split(b"%") if s]
    if any(len(s) > 62 for s in segs):
        raise ValueError("q13.full.py: a LIKE segment over 62 bytes")
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
def q13_order_counts(ocust, off, data, n, masks, tops, nseg, maxc, cnt, BLOCK: tl.constexpr):
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
    keep = m & (stage < nseg)   # not like the pattern: the order counts
    c = tl.load(ocust + rows, mask=keep, other=-1).to(tl.int64)
    keep = keep & (c >= 0) & (c <= maxc)
    tl.atomic_add(cnt + c, keep.to(tl.int32), mask=keep, sem="relaxed")


def full(db, params, env):
    cu, od = db["customer"], db["orders"]
    ckey, ocust, ocomment = cu["c_custkey"], od["o_custkey"], od["o_comment"]
    nc, no = ckey.numel(), ocust.numel()
    if nc == 0:
        return {"c_count": [], "custdist": []}
    dev = ckey.device
    maxc = max(int(ckey.max()), 0)
    cnt = torch.zeros(maxc + 1, dtype=torch.int32, device=dev)
    if no > 0:
        pattern = b"%" + params["word1"].encode("utf-8") + b"%" + params["word2"].encode("utf-8") + b"%"
        masks, tops, nseg = like_tables(pattern, dev)
        q13_order_counts[(triton.cdiv(no, LBLOCK),)](ocust, ocomment.offsets, ocomment.data, no, masks, tops, nseg,
                                                     maxc, cnt, BLOCK=LBLOCK, num_warps=4)
    ck = ckey.to(torch.int64)
    per_cust = torch.where(ck >= 0, cnt[ck.clamp(min=0)], torch.zeros_like(cnt[:1]))
    hist = torch.bincount(per_cust.to(torch.int64))
    bins = torch.nonzero(hist).squeeze(1)
    rows = torch.stack([bins, hist[bins]]).cpu().tolist()
    res = sorted(zip(*rows), key=lambda t: (-t[1], -t[0]))
    return {"c_count": [t[0] for t in res], "custdist": [t[1] for t in res]}
