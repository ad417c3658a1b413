/* q02.full.cu: expert CUDA full-mode candidate for TPC-H Q2 (Minimum Cost
 * Supplier).
 *
 *   select s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
 *   from part, supplier, partsupp, nation, region
 *   where p_partkey = ps_partkey and s_suppkey = ps_suppkey
 *     and p_size = :size and p_type like '%:type'
 *     and s_nationkey = n_nationkey and n_regionkey = r_regionkey and r_name = ':region'
 *     and ps_supplycost = (select min(ps_supplycost)
 *         from partsupp, supplier, nation, region
 *         where p_partkey = ps_partkey and s_suppkey = ps_suppkey
 *           and s_nationkey = n_nationkey and n_regionkey = r_regionkey
 *           and r_name = ':region')
 *   order by s_acctbal desc, n_name, s_name, p_partkey limit 100;
 *
 * Plan (the CPU expert's logic; everything on env->stream, ONE round trip):
 *  0. Host, no device access: the region's dictionary code and
 *     p_type like '%:type' once per dictionary entry (a 256-entry table
 *     passed by value).
 *  1. nation_prep (1 block): per nation key, "in the region" and its n_name
 *     code (the last nation row of a key wins, as on the CPU).
 *  2. part_mark: parts of the size and type get a compact slot (warp-
 *     aggregated counter) in an array over the dense partkeys; the slot
 *     holds the part's key and p_mfgr code (values, not its row: under a
 *     budget the row is gone after its load) and the running minimum cost
 *     (INT64_MAX).
 *     supp_mark: the region's suppliers get their row in an array over the
 *     dense suppkeys.
 *  3. ps_scan: one pass over partsupp (4 partkeys per 16-byte load) lists
 *     the rows of a marked part and a marked supplier as (cost, slot,
 *     supplier row) and lowers the slot's minimum with atomicMin (a few
 *     rows per part: no hot keys). Every partsupp row counts on its own, so
 *     repeated (partkey, suppkey) pairs (small SFs) behave as in the CPU
 *     expert and the baseline: all of them at the minimum appear.
 *  4. top_partial (grid of SM-count blocks of 1024 threads): the listed rows
 *     at their part's minimum (the decorrelated subquery) are taken 924 at a
 *     time into shared memory, next to the block's best 100 so far, and
 *     bitonic-sorted on the full ORDER BY (acctbal desc, n_name code = string
 *     order, s_name bytes read from the device column only on ties,
 *     partkey); the best 100 stay. Each block appends its best to a partial
 *     list. top_final (1 block) does the same over the partial list: the
 *     first <= 100 rows in order.
 *  5. materialize (50 blocks): lengths of the winners' s_name, s_address,
 *     s_phone, s_comment, a block scan for their places, then
 *     a warp per (row, column) copies the bytes into a text area that sits
 *     right after the control block (counters, flags, the rows) in one
 *     device allocation.
 *  6. Host: one cudaMemcpy of control block + text area (~30 KB), one
 *     synchronize; the result is filled from it (n_name, p_mfgr through the
 *     host dictionaries). Only when the winners' text exceeds TEXT_CAP
 *     (impossible for TPC-H's column widths: <= 173 bytes a row) a second
 *     materialize into an exact-size buffer and a second copy follow.
 *
 * Under a memory budget (env->budget streams partsupp and part, co-
 * partitioned by partkey) steps 2 (part_mark) and 3 (ps_scan) run once
 * per load of both tables' columns (one dkb_stream walk with
 * DKB_STREAM_OVERLAP: the next load's copy overlaps this one's kernels):
 * part_mark gives the load's selected parts their slots, then ps_scan
 * lists the load's partsupp rows, whose parts are all in the same load
 * (and marked by the part_mark before it on the stream). Slots, minimums
 * and hits live in call memory sized by the whole tables; nation_prep and
 * supp_mark run before the walk, steps 4-6 after it, reading only those
 * and the resident supplier and nation columns. Without a budget the walk
 * is one pass over the whole columns (the same launches as before). The
 * hit list's order varies from run to run either way (atomics); the sort
 * is on the full ORDER BY, and rows equal on it (a repeated (partkey,
 * suppkey) pair) are equal in every column.
 *
 * Cost (H200, SF10, `dkb bench --sf 10`): 0.175 and 0.196 ms in two runs,
 * against 2.19 ms for the previous version (host qsorts, ~18
 * synchronizations and per-column gathers); host work is O(100 rows) and
 * one round trip.
 * Device memory: one pool allocation of ~(12 B x parts + 4 B x suppliers +
 * 16 B x partsupp rows) (the list is bounded by the partsupp rows).
 *
 * Bytes read (floor, SF10): ps_partkey 4 B x 8M (+ the hits' suppkey and
 * cost), p_size, p_type 5 B x 2M (+ the selected parts' partkey), supplier
 * 8 B x 100K.
 *
 * Across ranks (DKB_CANDIDATE_RANKS, env->nranks > 1): part and partsupp
 * are split together by partkey (supplier, nation, region whole on every
 * rank), so a part's minimum cost is found on one rank. A share's part keys
 * run from its first row's key, so the array over partkeys reaches the
 * share's last p_partkey (read once from the device; dense keys in row
 * order, else a key past it is reported as an error). After the one round
 * trip each rank's first 100 rows (their keys: acctbal, n_name code,
 * supplier row, p_mfgr code, partkey; a supplier row is the same on every
 * rank) are gathered in rank order (dkb_ranks_gather, as the CPU expert);
 * rank 0 copies them to the device, top_final sorts them on the same full
 * ORDER BY (s_name bytes from the device column) and materialize gathers
 * the winners' text again, one more round trip; the other ranks return no
 * rows. A rank whose share is empty still takes part (its walk is empty). */
#include <cuda_runtime.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_stream.h" // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)
#include "dkb/cand_ranks.h"  // defines: dkb_ranks_gather, dkb_ranks_writes (the ranks' partials merged)

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: part and partsupp load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its first 100 merged through env->comm */

enum {
    LIMIT = 100,                      /* the query's LIMIT */
    MAXNAT = 256,                     /* nation keys are 0..255 (codes in a byte table) */
    TPB = 256,                        /* threads per block of the scans */
    SORT_THREADS = 1024,              /* threads (and shared entries) of the top-100 kernels */
    CHUNK = SORT_THREADS - LIMIT,     /* new entries per sort next to the kept best 100 */
    MAT_THREADS = 256,                /* materialize: threads per block (>= 128 for the scan) */
    MAT_BLOCKS = 50,                  /* materialize: 50 x 8 warps = one warp per (row, column) */
    TEXT_CAP = 24576                  /* text bytes of the winners copied back with the control block */
};

static const unsigned FULL = 0xffffffffu;

typedef struct {
    uint8_t ok[256];
} byte_table;

/* A partsupp row of a selected part from a region supplier. */
typedef struct {
    long long cost;
    int32_t slot, srow;
} hit;

/* A row at its part's minimum cost, with its ORDER BY keys and its part's
 * p_mfgr code. srow < 0 marks padding in a sort. */
typedef struct {
    long long acctbal;
    int32_t ncode, srow, mfgr, partkey;
} cand;

/* A selected part's values, kept per slot (part rows are not readable after
 * their load under a budget). */
typedef struct {
    int32_t partkey, mfgr;
} part_info;

/* One result row as it comes back. */
typedef struct {
    long long acctbal;
    long long start;     /* its first text byte: s_name, s_address, s_phone, s_comment follow each other */
    int32_t partkey, ncode, srow, mfgr;
    int32_t len[4];      /* s_name, s_address, s_phone, s_comment */
} out_row;

/* Counters, flags and the result rows; the text area follows it. */
typedef struct {
    unsigned long long nhits, npartial;
    unsigned int nsel;
    int bad;             /* a key out of range or a negative text length */
    int over;            /* the winners' text did not fit the text area */
    int nout;
    long long total;     /* the winners' text bytes */
    out_row rows[LIMIT];
} control;

/* The four supplier text columns the result carries. */
typedef struct {
    const int64_t *off[4];
    const char *bytes[4];
} text_cols;

static size_t round_up(size_t n) { return (n + 255) & ~(size_t)255; }

/* nat[k] = 1 when nation key k is in the region, nat[256 + k] = its n_name
 * code (the last nation row with key k, as the CPU expert's loop does).
 * One block of 256 threads; nn, nr <= 256. */
__global__ void __launch_bounds__(256) nation_prep(const int32_t *__restrict__ rkey, const uint8_t *__restrict__ rname,
                                                   int nr, const int32_t *__restrict__ nkey,
                                                   const uint8_t *__restrict__ nname,
                                                   const int32_t *__restrict__ nreg, int nn, int region_code,
                                                   int32_t *__restrict__ nat, control *ctl) {
    __shared__ int ok[256], last[256];
    const int t = threadIdx.x;
    ok[t] = 0;
    last[t] = -1;
    __syncthreads();
    for (int i = t; i < nn; i += blockDim.x) {
        const int32_t k = nkey[i];
        if (k < 0 || k > 255) {
            ctl->bad = 1;
            continue;
        }
        int in = 0;
        for (int j = 0; j < nr; j++)
            if ((int)rname[j] == region_code && rkey[j] == nreg[i]) in = 1;
        if (in) atomicOr(&ok[k], 1);
        atomicMax(&last[k], i);
    }
    __syncthreads();
    nat[t] = ok[t];
    nat[256 + t] = last[t] >= 0 ? (int32_t)nname[last[t]] : 0;
}

/* Part row i (of this pass's part rows) passed size and type (sel): it gets
 * the next slot, pslot over its key points there, the slot holds its key,
 * its p_mfgr code and INT64_MAX. Called by all 32 lanes of a warp. */
__device__ __forceinline__ void mark_part(bool sel, int64_t i, const int32_t *__restrict__ pkey,
                                          const uint8_t *__restrict__ pmfgr, int64_t maxp,
                                          int32_t *__restrict__ pslot, part_info *__restrict__ pinfo,
                                          long long *__restrict__ mincost, control *ctl) {
    int64_t k = 0;
    if (sel) {
        k = __ldg(pkey + i);
        if (k < 0 || k > maxp) {
            ctl->bad = 1;
            sel = false;
        }
    }
    const unsigned b = __ballot_sync(FULL, sel);
    if (!b) return;
    const int lane = threadIdx.x & 31, leader = __ffs(b) - 1;
    unsigned base = 0;
    if (lane == leader) base = atomicAdd(&ctl->nsel, (unsigned)__popc(b));
    base = __shfl_sync(FULL, base, leader);
    if (sel) {
        const unsigned slot = base + (unsigned)__popc(b & ((1u << lane) - 1u));
        pslot[k] = (int32_t)slot;
        part_info pi;
        pi.partkey = (int32_t)k;
        pi.mfgr = (int32_t)__ldg(pmfgr + i);
        pinfo[slot] = pi;
        mincost[slot] = LLONG_MAX;
    }
}

/* Parts of the size with an accepted type code get a slot (mark_part).
 * The first 4 * n4 rows four at a time (the host passes n4 = 0 unless
 * p_size is 16-byte and p_type 4-byte aligned). Warp-uniform loops. */
__global__ void __launch_bounds__(TPB) part_mark(const int32_t *__restrict__ pkey, const int32_t *__restrict__ psize,
                                                 const uint8_t *__restrict__ ptype, int64_t np, int64_t n4,
                                                 int64_t size, const byte_table type_ok, int64_t maxp,
                                                 const uint8_t *__restrict__ pmfgr, int32_t *__restrict__ pslot,
                                                 part_info *__restrict__ pinfo,
                                                 long long *__restrict__ mincost, control *ctl) {
    const int lane = threadIdx.x & 31;
    const int64_t stride = (int64_t)gridDim.x * TPB, first = (int64_t)blockIdx.x * TPB + (threadIdx.x & ~31);
    for (int64_t w = first; w < n4; w += stride) {
        const int64_t v = w + lane;
        bool sel[4] = {false, false, false, false};
        if (v < n4) {
            const int4 s = __ldg((const int4 *)psize + v);
            const uchar4 t = __ldg((const uchar4 *)ptype + v);
            sel[0] = s.x == size && type_ok.ok[t.x];
            sel[1] = s.y == size && type_ok.ok[t.y];
            sel[2] = s.z == size && type_ok.ok[t.z];
            sel[3] = s.w == size && type_ok.ok[t.w];
        }
#pragma unroll
        for (int u = 0; u < 4; u++) mark_part(sel[u], 4 * v + u, pkey, pmfgr, maxp, pslot, pinfo, mincost, ctl);
    }
    for (int64_t w = 4 * n4 + first; w < np; w += stride) {
        const int64_t i = w + lane;
        const bool sel = i < np && __ldg(psize + i) == size && type_ok.ok[__ldg(ptype + i)];
        mark_part(sel, i, pkey, pmfgr, maxp, pslot, pinfo, mincost, ctl);
    }
}

/* srow_of[s_suppkey] = supplier row for suppliers of the region's nations
 * (srow_of preset to -1); a key outside 0..maxs sets ctl->bad. */
__global__ void __launch_bounds__(TPB) supp_mark(const int32_t *__restrict__ skey, const int32_t *__restrict__ snat,
                                                 int64_t ns, const int32_t *__restrict__ nat, int64_t maxs,
                                                 int32_t *__restrict__ srow_of, control *ctl) {
    for (int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x; i < ns; i += (int64_t)gridDim.x * TPB) {
        const int64_t k = skey[i];
        if (k < 0 || k > maxs) {
            ctl->bad = 1;
            continue;
        }
        const int32_t n = snat[i];
        if (n >= 0 && n < 256 && nat[n]) srow_of[k] = (int32_t)i;
    }
}

/* Partsupp row i of a part with slot `slot` (-1: not selected): when its
 * supplier is a region supplier, fill h and lower the slot's minimum. */
__device__ __forceinline__ bool ps_match(int64_t i, int32_t slot, const int32_t *__restrict__ pssupp,
                                         const int64_t *__restrict__ pscost, const int32_t *__restrict__ srow_of,
                                         int64_t maxs, long long *__restrict__ mincost, hit &h) {
    if (slot < 0) return false;
    const int64_t s = __ldg(pssupp + i);
    if (s < 0 || s > maxs) return false;
    const int32_t sr = __ldg(srow_of + s);
    if (sr < 0) return false;
    h.cost = (long long)__ldg(pscost + i);
    h.slot = slot;
    h.srow = sr;
    atomicMin(mincost + slot, h.cost);
    return true;
}

/* Appends the lanes' hits that take (warp-aggregated). All 32 lanes call. */
__device__ __forceinline__ void append_hit(bool take, const hit &h, hit *__restrict__ list,
                                           unsigned long long *count) {
    const unsigned b = __ballot_sync(FULL, take);
    if (!b) return;
    const int lane = threadIdx.x & 31, leader = __ffs(b) - 1;
    unsigned long long base = 0;
    if (lane == leader) base = atomicAdd(count, (unsigned long long)__popc(b));
    base = __shfl_sync(FULL, base, leader);
    if (take) list[base + (unsigned long long)__popc(b & ((1u << lane) - 1u))] = h;
}

__device__ __forceinline__ int32_t slot_of(int64_t p, const int32_t *__restrict__ pslot, int64_t maxp) {
    return p >= 0 && p <= maxp ? __ldg(pslot + p) : -1;
}

/* One pass over partsupp: rows of a marked part and a marked supplier go to
 * the hit list; per slot the minimum cost. The first 4 * n4 partkeys four
 * at a time (n4 = 0 unless ps_partkey is 16-byte aligned). */
__global__ void __launch_bounds__(TPB) ps_scan(const int32_t *__restrict__ pspart, const int32_t *__restrict__ pssupp,
                                               const int64_t *__restrict__ pscost, int64_t nps, int64_t n4,
                                               const int32_t *__restrict__ pslot, int64_t maxp,
                                               const int32_t *__restrict__ srow_of, int64_t maxs,
                                               long long *__restrict__ mincost, hit *__restrict__ hits,
                                               unsigned long long *nhits) {
    const int lane = threadIdx.x & 31;
    const int64_t stride = (int64_t)gridDim.x * TPB, first = (int64_t)blockIdx.x * TPB + (threadIdx.x & ~31);
    for (int64_t w = first; w < n4; w += stride) {
        const int64_t v = w + lane;
        int32_t slot[4] = {-1, -1, -1, -1};
        if (v < n4) {
            const int4 p = __ldg((const int4 *)pspart + v);
            slot[0] = slot_of(p.x, pslot, maxp);
            slot[1] = slot_of(p.y, pslot, maxp);
            slot[2] = slot_of(p.z, pslot, maxp);
            slot[3] = slot_of(p.w, pslot, maxp);
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            hit h = {0, 0, 0};
            const bool take = ps_match(4 * v + u, slot[u], pssupp, pscost, srow_of, maxs, mincost, h);
            append_hit(take, h, hits, nhits);
        }
    }
    for (int64_t w = 4 * n4 + first; w < nps; w += stride) {
        const int64_t i = w + lane;
        hit h = {0, 0, 0};
        const bool take =
            i < nps && ps_match(i, slot_of(__ldg(pspart + i), pslot, maxp), pssupp, pscost, srow_of, maxs, mincost, h);
        append_hit(take, h, hits, nhits);
    }
}

/* ---- top 100 on the ORDER BY: acctbal desc, n_name code, s_name, partkey ---- */

/* a comes before b; padding (srow < 0) after every row. s_name bytes are
 * read (unsigned, as memcmp) only when acctbal and nation tie. */
__device__ __forceinline__ bool before(const cand &a, const cand &b, const int64_t *__restrict__ soff,
                                       const char *__restrict__ sbytes) {
    if ((a.srow < 0) != (b.srow < 0)) return b.srow < 0;
    if (a.srow < 0) return false;
    if (a.acctbal != b.acctbal) return a.acctbal > b.acctbal;
    if (a.ncode != b.ncode) return a.ncode < b.ncode;
    if (a.srow != b.srow) {
        const int64_t ao = soff[a.srow], al = soff[a.srow + 1] - ao;
        const int64_t bo = soff[b.srow], bl = soff[b.srow + 1] - bo;
        const int64_t m = al < bl ? al : bl;
        for (int64_t k = 0; k < m; k++) {
            const unsigned char x = (unsigned char)sbytes[ao + k], y = (unsigned char)sbytes[bo + k];
            if (x != y) return x < y;
        }
        if (al != bl) return al < bl;
    }
    return a.partkey < b.partkey;
}

/* Sorts buf[0..total) (total <= SORT_THREADS, entries past it are padding)
 * with a bitonic network over the next power of two; returns how many of
 * the best stay (min(total, LIMIT)). All threads of the block call; it
 * ends with __syncthreads. */
static __device__ int sort_keep(cand *buf, int total, const int64_t *__restrict__ soff, const char *__restrict__ sbytes) {
    int n = 1;
    while (n < total) n <<= 1;
    for (int t = total + (int)threadIdx.x; t < n; t += blockDim.x) buf[t].srow = -1;
    __syncthreads();
    for (int k = 2; k <= n; k <<= 1)
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int i = threadIdx.x; i < n; i += blockDim.x) {
                const int l = i ^ j;
                if (l > i) {
                    const cand x = buf[i], y = buf[l];
                    const bool swap = (i & k) == 0 ? before(y, x, soff, sbytes) : before(x, y, soff, sbytes);
                    if (swap) {
                        buf[i] = y;
                        buf[l] = x;
                    }
                }
            }
            __syncthreads();
        }
    return total < LIMIT ? total : LIMIT;
}

/* Each block: the hits of chunks blockIdx.x, +gridDim.x, ... (CHUNK hits
 * each) that sit at their part's minimum cost, kept to its best LIMIT;
 * appended to partial (ctl->npartial counts). */
__global__ void __launch_bounds__(SORT_THREADS) top_partial(
    const hit *__restrict__ hits, const long long *__restrict__ mincost, const part_info *__restrict__ pinfo,
    const int64_t *__restrict__ sbal, const int32_t *__restrict__ snat,
    const int32_t *__restrict__ nat, const int64_t *__restrict__ soff, const char *__restrict__ sbytes,
    cand *__restrict__ partial, control *ctl) {
    __shared__ cand buf[SORT_THREADS];
    __shared__ int fill;
    __shared__ unsigned long long at;
    const int lane = threadIdx.x & 31;
    const int64_t n = (int64_t)ctl->nhits;
    int kept = 0;
    for (int64_t lo = (int64_t)blockIdx.x * CHUNK; lo < n; lo += (int64_t)gridDim.x * CHUNK) {
        if (threadIdx.x == 0) fill = 0;
        __syncthreads();
        const int64_t i = lo + threadIdx.x;
        bool take = false;
        cand c = {0, 0, -1, 0, 0};
        if (threadIdx.x < CHUNK && i < n) {
            const hit h = hits[i];
            if (h.cost == mincost[h.slot]) {
                const part_info pi = pinfo[h.slot];
                c.acctbal = (long long)sbal[h.srow];
                c.ncode = nat[256 + snat[h.srow]]; /* 0..255: supp_mark checked it */
                c.srow = h.srow;
                c.mfgr = pi.mfgr;
                c.partkey = pi.partkey;
                take = true;
            }
        }
        const unsigned b = __ballot_sync(FULL, take);
        int base = 0;
        if (lane == 0 && b) base = atomicAdd(&fill, __popc(b));
        base = __shfl_sync(FULL, base, 0);
        if (take) buf[kept + base + __popc(b & ((1u << lane) - 1u))] = c;
        __syncthreads();
        kept = sort_keep(buf, kept + fill, soff, sbytes);
    }
    if (kept > 0) {
        if (threadIdx.x == 0) at = atomicAdd(&ctl->npartial, (unsigned long long)kept);
        __syncthreads();
        for (int t = threadIdx.x; t < kept; t += blockDim.x) partial[at + t] = buf[t];
    }
}

/* One block: the best LIMIT of the partial lists, in order, into ctl->rows
 * (keys and rows) and ctl->nout. */
__global__ void __launch_bounds__(SORT_THREADS) top_final(const cand *__restrict__ partial,
                                                          const int64_t *__restrict__ soff,
                                                          const char *__restrict__ sbytes, control *ctl) {
    __shared__ cand buf[SORT_THREADS];
    const int64_t n = (int64_t)ctl->npartial;
    int kept = 0;
    for (int64_t lo = 0; lo < n; lo += CHUNK) {
        const int m = (int)(n - lo < CHUNK ? n - lo : CHUNK);
        for (int t = threadIdx.x; t < m; t += blockDim.x) buf[kept + t] = partial[lo + t];
        __syncthreads();
        kept = sort_keep(buf, kept + m, soff, sbytes);
    }
    for (int t = threadIdx.x; t < kept; t += blockDim.x) {
        out_row *o = &ctl->rows[t];
        o->acctbal = buf[t].acctbal;
        o->partkey = buf[t].partkey;
        o->ncode = buf[t].ncode;
        o->srow = buf[t].srow;
        o->mfgr = buf[t].mfgr;
    }
    if (threadIdx.x == 0) ctl->nout = kept;
}

/* The winners' text: every block computes the lengths of the four text
 * columns of rows 0..nout-1 and their places (block scan); block 0 writes
 * them, total and over into ctl; when total <= cap a warp per (row,
 * column) copies the bytes to text. (The rows' p_mfgr codes came with
 * them from their parts' slots.) */
__global__ void __launch_bounds__(MAT_THREADS) materialize(control *ctl, const text_cols cols, char *__restrict__ text,
                                                           long long cap) {
    __shared__ long long src[LIMIT][4], start[LIMIT], wtot[4];
    __shared__ int len[LIMIT][4];
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const int nout = ctl->nout;
    long long row_total = 0;
    if (t < nout) {
        const int32_t sr = ctl->rows[t].srow;
        for (int c = 0; c < 4; c++) {
            const long long a = cols.off[c][sr];
            long long l = cols.off[c][sr + 1] - a;
            if (l < 0) {
                ctl->bad = 1;
                l = 0;
            }
            src[t][c] = a;
            len[t][c] = (int)l;
            row_total += l;
        }
    }
    long long incl = row_total;
    if (t < 128) {
        for (int o = 1; o < 32; o <<= 1) {
            const long long y = __shfl_up_sync(FULL, incl, o);
            if (lane >= o) incl += y;
        }
        if (lane == 31) wtot[warp] = incl;
    }
    __syncthreads();
    if (t < nout) {
        long long base = 0;
        for (int w = 0; w < warp; w++) base += wtot[w];
        start[t] = base + incl - row_total;
    }
    const long long total = wtot[0] + wtot[1] + wtot[2] + wtot[3];
    __syncthreads();
    if (blockIdx.x == 0) {
        if (t < nout) {
            out_row *o = &ctl->rows[t];
            o->start = start[t];
            for (int c = 0; c < 4; c++) o->len[c] = len[t][c];
        }
        if (t == 0) {
            ctl->total = total;
            ctl->over = total > cap;
        }
    }
    if (total > cap) return;
    const int wpb = MAT_THREADS / 32;
    for (int p = blockIdx.x * wpb + warp; p < nout * 4; p += gridDim.x * wpb) {
        const int r = p >> 2, c = p & 3;
        long long at = start[r];
        for (int k = 0; k < c; k++) at += len[r][k];
        const char *__restrict__ from = cols.bytes[c] + src[r][c];
        char *__restrict__ to = text + at;
        const int l = len[r][c];
#pragma unroll 4
        for (int k = lane; k < l; k += 32) to[k] = from[k];
    }
}

/* ---- host ---- */

static int like(const char *s, int64_t n, const char *p) {
    while (*p) {
        if (*p == '%') {
            while (*p == '%') p++;
            if (!*p) return 1;
            for (int64_t i = 0; i <= n; i++)
                if (like(s + i, n - i, p)) return 1;
            return 0;
        }
        if (n == 0 || (*p != '_' && *p != *s)) return 0;
        p++, s++, n--;
    }
    return n == 0;
}

/* Across ranks (nranks > 1), after the round trip into h_stage (control
 * block h_ctl and text area): every rank's rows h_ctl->rows[0, nout) as
 * cands gathered in rank order; on rank 0 (*writes = 1) they go to the
 * device, top_final and materialize run on them (into ctl and the text
 * area), and h_stage is copied back again; other ranks: *writes = 0 and
 * res->nrows = 0. */
static int ranks_merge(const dkb_cand_env *env, dkb_cand_result *res, char *h_stage, size_t stage_bytes,
                       control *ctl, const int64_t *soff, const char *sbytes, const text_cols &cols,
                       cudaStream_t stream, int *writes) {
    *writes = 1;
    const control *h_ctl = (const control *)h_stage;
    const int n = h_ctl->nout < 0 ? 0 : h_ctl->nout > LIMIT ? LIMIT : h_ctl->nout;
    cand mine[LIMIT];
    for (int r = 0; r < n; r++) {
        const out_row *x = &h_ctl->rows[r];
        mine[r].acctbal = x->acctbal;
        mine[r].ncode = x->ncode;
        mine[r].srow = x->srow;
        mine[r].mfgr = x->mfgr;
        mine[r].partkey = x->partkey;
    }
    void *every = NULL;
    int64_t ne = 0;
    int rc = dkb_ranks_gather(env, mine, n, sizeof(cand), &every, &ne);
    if (rc) return rc;
    if (!dkb_ranks_writes(env, res)) {
        *writes = 0;
        dkb_ranks_gather_free(every, mine);
        return DKB_CAND_OK;
    }
    cand *d_all = NULL;
    unsigned long long count = (unsigned long long)ne;
    cudaError_t e = cudaMallocAsync((void **)&d_all, sizeof(cand) * (size_t)(ne > 0 ? ne : 1), stream);
    if (e == cudaSuccess && ne > 0)
        e = cudaMemcpyAsync(d_all, every, sizeof(cand) * (size_t)ne, cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(&ctl->npartial, &count, sizeof count, cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess) {
        top_final<<<1, SORT_THREADS, 0, stream>>>(d_all, soff, sbytes, ctl);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) {
        materialize<<<MAT_BLOCKS, MAT_THREADS, 0, stream>>>(ctl, cols, (char *)(ctl + 1), TEXT_CAP);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(h_stage, ctl, stage_bytes, cudaMemcpyDeviceToHost, stream);
    if (d_all) {
        const cudaError_t f = cudaFreeAsync(d_all, stream);
        if (e == cudaSuccess) e = f;
    }
    const cudaError_t s = cudaStreamSynchronize(stream); /* also before `every` and `count` go */
    if (e == cudaSuccess) e = s;
    dkb_ranks_gather_free(every, mine);
    if (e != cudaSuccess) {
        fprintf(stderr, "q02.full.cu: the ranks' merge on the device: %s\n", cudaGetErrorString(e));
        return DKB_CAND_ECUDA;
    }
    if (h_ctl->bad) {
        fprintf(stderr, "q02.full.cu: a bad text offset in the ranks' merge\n");
        rc = DKB_CAND_EINTERNAL;
    }
    return rc;
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *rkey, *rname, *nkey, *nname, *nreg, *pkey, *pmfgr, *psize, *ptype, *skey, *sname, *saddr,
        *snat, *sphone, *sbal, *scomment, *pspart, *pssupp, *pscost;
    const dkb_cand_param *size, *type, *region;
    dkb_cand_res_col *r_bal, *r_sname, *r_nname, *r_pkey, *r_mfgr, *r_addr, *r_phone, *r_comment;
    if (DKB_BIND_COLS(db, "region", "r_regionkey:i32 r_name:dict", &rkey, &rname) ||
        DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict n_regionkey:i32", &nkey, &nname, &nreg) ||
        DKB_BIND_COLS(db, "part", "p_partkey:i32 p_mfgr:dict p_size:i32 p_type:dict", &pkey, &pmfgr, &psize, &ptype) ||
        DKB_BIND_COLS(db, "supplier",
                      "s_suppkey:i32 s_name:str s_address:str s_nationkey:i32 s_phone:str s_acctbal:i64 s_comment:str",
                      &skey, &sname, &saddr, &snat, &sphone, &sbal, &scomment) ||
        DKB_BIND_COLS(db, "partsupp", "ps_partkey:i32 ps_suppkey:i32 ps_supplycost:i64", &pspart, &pssupp, &pscost) ||
        DKB_BIND_PARAMS(params, "size type:str region:str", &size, &type, &region) || ptype->dict->size > 256 ||
        nkey->n > MAXNAT || rkey->n > MAXNAT || nreg->n < nkey->n || nname->n < nkey->n || rname->n < rkey->n) {
        fprintf(stderr, "q02.full.cu: a column or parameter is missing or of an unexpected type, or the "
                        "nation/region tables are too large\n");
        return DKB_CAND_EINVAL;
    }
    if (DKB_BIND_RES(
            res, "s_acctbal:dec s_name:str n_name:str p_partkey:int p_mfgr:str s_address:str s_phone:str s_comment:str",
            &r_bal, &r_sname, &r_nname, &r_pkey, &r_mfgr, &r_addr, &r_phone, &r_comment) ||
        r_bal->scale < sbal->scale) {
        fprintf(stderr, "q02.full.cu: the result columns are not as expected\n");
        return DKB_CAND_EINVAL;
    }
    res->nrows = 0;
    r_sname->str_off[0] = r_nname->str_off[0] = r_mfgr->str_off[0] = r_addr->str_off[0] = 0;
    r_phone->str_off[0] = r_comment->str_off[0] = 0;

    cudaStream_t stream = dkb_cand_stream(env);
    const int64_t np = pkey->n, ns = skey->n, nps = pspart->n, maxs = ns; /* dense keys 1..N */
    int64_t maxp = np; /* across ranks: the share's last p_partkey (below) */
    int rc = 0, sms = 0, grid_top = 0;
    byte_table type_ok;
    char *d_mem = NULL, *d_text = NULL, *h_stage = NULL, *h_text = NULL;
    control *h_ctl = NULL;
    const char *text = NULL;
    int nout = 0;
    /* the streamed tables' columns: partsupp's (PS_N of them) then part's */
    enum { PS_N = 3 };
    static const char *const SCOLS[] = {"ps_partkey", "ps_suppkey", "ps_supplycost",
                                        "p_partkey",  "p_mfgr",     "p_size",        "p_type"};
    dkb_stream st;
    memset(&st, 0, sizeof st); /* nothing held until the walk begins (done: ends it) */
    if (nkey->n == 0 || rkey->n == 0 || ns == 0 || ((np == 0 || nps == 0) && env->nranks <= 1))
        return 0; /* across ranks a rank with an empty share still takes part in the merge */

    /* p_type like '%:type', once per dictionary entry */
    memset(&type_ok, 0, sizeof type_ok);
    {
        const size_t tl = strlen(type->s);
        char *pattern = (char *)malloc(tl + 2);
        if (!pattern) {
            fprintf(stderr, "q02.full.cu: out of host memory for the LIKE pattern\n");
            return DKB_CAND_ENOMEM;
        }
        pattern[0] = '%';
        memcpy(pattern + 1, type->s, tl + 1);
        for (int c = 0; c < ptype->dict->size; c++)
            type_ok.ok[c] = (uint8_t)like(ptype->dict->str[c], (int64_t)ptype->dict->len[c], pattern);
        free(pattern);
    }
    const int region_code = dkb_cand_dict_code(rname->dict, region->s);

    DKB_CUDA_TRY("SM count", dkb_sm_count(&sms));
    grid_top = sms < 1 ? 1 : sms > 1024 ? 1024 : sms;
    if (env->nranks > 1 && np > 0) { /* a share's part keys run from its first row's key to its last row's */
        int32_t last = 0;
        DKB_CUDA_TRY("copy the last p_partkey", cudaMemcpyAsync(&last, (const int32_t *)pkey->data + np - 1,
                                                                sizeof last, cudaMemcpyDeviceToHost, stream));
        DKB_CUDA_TRY("cudaStreamSynchronize last p_partkey", cudaStreamSynchronize(stream));
        if (last > maxp) maxp = last;
    }
    {
        /* one pool allocation, carved into 256-byte aligned pieces */
        const size_t stage_bytes = sizeof(control) + TEXT_CAP;
        const size_t o_ctl = 0;
        const size_t o_nat = o_ctl + round_up(stage_bytes);
        const size_t o_pslot = o_nat + round_up(sizeof(int32_t) * 2 * MAXNAT);
        const size_t o_srow = o_pslot + round_up(sizeof(int32_t) * (size_t)(maxp + 1));
        const size_t o_pinfo = o_srow + round_up(sizeof(int32_t) * (size_t)(maxs + 1));
        const size_t o_min = o_pinfo + round_up(sizeof(part_info) * (size_t)np);
        const size_t o_hits = o_min + round_up(sizeof(long long) * (size_t)np);
        const size_t o_part = o_hits + round_up(sizeof(hit) * (size_t)nps);
        const size_t all = o_part + round_up(sizeof(cand) * (size_t)grid_top * LIMIT);
        DKB_CUDA_TRY("cudaMallocAsync temporaries", cudaMallocAsync((void **)&d_mem, all, stream));
        control *ctl = (control *)(d_mem + o_ctl);
        int32_t *nat = (int32_t *)(d_mem + o_nat), *pslot = (int32_t *)(d_mem + o_pslot);
        int32_t *srow_of = (int32_t *)(d_mem + o_srow);
        part_info *pinfo = (part_info *)(d_mem + o_pinfo);
        long long *mincost = (long long *)(d_mem + o_min);
        hit *hits = (hit *)(d_mem + o_hits);
        cand *partial = (cand *)(d_mem + o_part);
        text_cols cols;
        cols.off[0] = (const int64_t *)sname->data, cols.bytes[0] = sname->bytes;
        cols.off[1] = (const int64_t *)saddr->data, cols.bytes[1] = saddr->bytes;
        cols.off[2] = (const int64_t *)sphone->data, cols.bytes[2] = sphone->bytes;
        cols.off[3] = (const int64_t *)scomment->data, cols.bytes[3] = scomment->bytes;

        DKB_CUDA_TRY("cudaMemsetAsync control", cudaMemsetAsync(ctl, 0, sizeof(control), stream));
        DKB_CUDA_TRY("cudaMemsetAsync part slots",
                 cudaMemsetAsync(pslot, 0xff, sizeof(int32_t) * (size_t)(maxp + 1), stream));
        DKB_CUDA_TRY("cudaMemsetAsync supplier rows",
                 cudaMemsetAsync(srow_of, 0xff, sizeof(int32_t) * (size_t)(maxs + 1), stream));
        nation_prep<<<1, 256, 0, stream>>>((const int32_t *)rkey->data, (const uint8_t *)rname->data, (int)rkey->n,
                                           (const int32_t *)nkey->data, (const uint8_t *)nname->data,
                                           (const int32_t *)nreg->data, (int)nkey->n, region_code, nat, ctl);
        DKB_CUDA_TRY("nation_prep launch", cudaGetLastError());
        {
            int64_t grid = (ns + TPB - 1) / TPB;
            if (grid > (int64_t)sms * 16) grid = (int64_t)sms * 16;
            supp_mark<<<(unsigned)grid, TPB, 0, stream>>>((const int32_t *)skey->data, (const int32_t *)snat->data,
                                                          ns, nat, maxs, srow_of, ctl);
            DKB_CUDA_TRY("supp_mark launch", cudaGetLastError());
        }
        /* part and partsupp: the whole columns in one pass, or under a budget
         * load by load (a load's partsupp rows have their parts in the same
         * load: part_mark first, then ps_scan, in stream order) */
        for (dkb_stream_begin_ex(&st, db, env, DKB_COUNT(SCOLS), SCOLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st);) {
            const dkb_cand_vec *c = st.cols; /* [0, PS_N): partsupp's (n: its rows), then part's */
            const int64_t lnp = c[PS_N].n, lnps = c[0].n;
            if (lnp > 0) {
                const int aligned = (uintptr_t)c[PS_N + 2].data % 16 == 0 && (uintptr_t)c[PS_N + 3].data % 4 == 0;
                const int64_t n4 = aligned ? lnp / 4 : 0;
                int64_t grid = (n4 + (lnp - 4 * n4) + TPB - 1) / TPB;
                if (grid > (int64_t)sms * 16) grid = (int64_t)sms * 16;
                if (grid < 1) grid = 1;
                part_mark<<<(unsigned)grid, TPB, 0, stream>>>(
                    (const int32_t *)c[PS_N].data, (const int32_t *)c[PS_N + 2].data,
                    (const uint8_t *)c[PS_N + 3].data, lnp, n4, size->i, type_ok, maxp,
                    (const uint8_t *)c[PS_N + 1].data, pslot, pinfo, mincost, ctl);
                DKB_CUDA_TRY("part_mark launch", cudaGetLastError());
            }
            if (lnps > 0) {
                const int64_t n4 = (uintptr_t)c[0].data % 16 == 0 ? lnps / 4 : 0;
                int64_t grid = (n4 + (lnps - 4 * n4) + TPB - 1) / TPB;
                if (grid > (int64_t)sms * 16) grid = (int64_t)sms * 16;
                if (grid < 1) grid = 1;
                ps_scan<<<(unsigned)grid, TPB, 0, stream>>>((const int32_t *)c[0].data, (const int32_t *)c[1].data,
                                                            (const int64_t *)c[2].data, lnps, n4, pslot, maxp,
                                                            srow_of, maxs, mincost, hits, &ctl->nhits);
                DKB_CUDA_TRY("ps_scan launch", cudaGetLastError());
            }
        }
        rc = dkb_stream_end(&st);
        if (rc) goto done;
        top_partial<<<(unsigned)grid_top, SORT_THREADS, 0, stream>>>(
            hits, mincost, pinfo, (const int64_t *)sbal->data,
            (const int32_t *)snat->data, nat, (const int64_t *)sname->data, sname->bytes, partial, ctl);
        DKB_CUDA_TRY("top_partial launch", cudaGetLastError());
        top_final<<<1, SORT_THREADS, 0, stream>>>(partial, (const int64_t *)sname->data, sname->bytes, ctl);
        DKB_CUDA_TRY("top_final launch", cudaGetLastError());
        materialize<<<MAT_BLOCKS, MAT_THREADS, 0, stream>>>(ctl, cols, d_mem + o_ctl + sizeof(control), TEXT_CAP);
        DKB_CUDA_TRY("materialize launch", cudaGetLastError());

        /* the one round trip: control block and text area */
        h_stage = (char *)malloc(stage_bytes);
        DKB_FAIL_IF(!h_stage, DKB_CAND_ENOMEM, "q02.full.cu: out of host memory for the result staging\n");
        DKB_CUDA_TRY("cudaMemcpyAsync result", cudaMemcpyAsync(h_stage, ctl, stage_bytes, cudaMemcpyDeviceToHost, stream));
        DKB_CUDA_TRY("cudaStreamSynchronize result", cudaStreamSynchronize(stream));
        h_ctl = (control *)h_stage;
        text = h_stage + sizeof(control);
        DKB_FAIL_IF(h_ctl->bad, DKB_CAND_EINTERNAL,
                    "q02.full.cu: a nation, part or supplier key out of range, or a bad text offset\n");
        if (env->nranks > 1) { /* every rank's first 100, sorted again on the device on rank 0; rank 0 writes */
            int writes = 1;
            DKB_TRY(ranks_merge(env, res, h_stage, stage_bytes, ctl, (const int64_t *)sname->data, sname->bytes, cols,
                                stream, &writes));
            if (!writes) goto done;
        }
        nout = h_ctl->nout;
        DKB_FAIL_IF(nout < 0 || nout > LIMIT || nout > res->cap, DKB_CAND_ECAP,
                    "q02.full.cu: %d result rows over the cap %lld\n", nout, (long long)res->cap);
        if (h_ctl->over) {
            /* the winners' text is longer than TEXT_CAP: gather it again
             * into a buffer of its size */
            const long long total = h_ctl->total;
            DKB_CUDA_TRY("cudaMallocAsync long text", cudaMallocAsync((void **)&d_text, (size_t)total + 1, stream));
            materialize<<<MAT_BLOCKS, MAT_THREADS, 0, stream>>>(ctl, cols, d_text, total);
            DKB_CUDA_TRY("materialize (long text) launch", cudaGetLastError());
            h_text = (char *)malloc((size_t)total + 1);
            DKB_FAIL_IF(!h_text, DKB_CAND_ENOMEM, "q02.full.cu: out of host memory for %lld text bytes\n", total);
            DKB_CUDA_TRY("cudaMemcpyAsync long text",
                     cudaMemcpyAsync(h_text, d_text, (size_t)total, cudaMemcpyDeviceToHost, stream));
            DKB_CUDA_TRY("cudaStreamSynchronize long text", cudaStreamSynchronize(stream));
            text = h_text;
        }
    }

    for (int r = 0; r < nout; r++) {
        const out_row *x = &h_ctl->rows[r];
        __int128 b = x->acctbal;
        for (int s = sbal->scale; s < r_bal->scale; s++) b *= 10;
        r_bal->dec[r] = b;
        r_pkey->i64[r] = x->partkey;
        r_bal->is_null[r] = r_pkey->is_null[r] = 0;
        DKB_FAIL_IF(x->ncode < 0 || x->ncode >= nname->dict->size || x->mfgr < 0 || x->mfgr >= pmfgr->dict->size,
                    DKB_CAND_EINTERNAL, "q02.full.cu: an n_name or p_mfgr code outside its dictionary\n");
        const char *t = text + x->start;
        DKB_FAIL_IF((dkb_put_str(r_sname, r, t, x->len[0]) != DKB_CAND_OK) ||
                        (dkb_put_str(r_nname, r, nname->dict->str[x->ncode], (int64_t)nname->dict->len[x->ncode]) !=
                         DKB_CAND_OK) ||
                        (dkb_put_str(r_mfgr, r, pmfgr->dict->str[x->mfgr], (int64_t)pmfgr->dict->len[x->mfgr]) !=
                         DKB_CAND_OK) ||
                        (dkb_put_str(r_addr, r, t + x->len[0], x->len[1]) != DKB_CAND_OK) ||
                        (dkb_put_str(r_phone, r, t + x->len[0] + x->len[1], x->len[2]) != DKB_CAND_OK) ||
                        (dkb_put_str(r_comment, r, t + x->len[0] + x->len[1] + x->len[2], x->len[3]) != DKB_CAND_OK),
                    DKB_CAND_ECAP, "q02.full.cu: result text over its byte cap\n");
    }
    res->nrows = nout;
done:
    dkb_stream_end(&st); /* a load still held after a failure inside the walk (none otherwise) */
    if (d_text) cudaFreeAsync(d_text, stream);
    if (d_mem) cudaFreeAsync(d_mem, stream);
    if (rc) cudaStreamSynchronize(stream); /* nothing of ours left running after a failure */
    free(h_stage);
    free(h_text);
    return rc;
}
