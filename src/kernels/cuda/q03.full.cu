/* q03.full.cu: expert CUDA full-mode candidate for TPC-H Q3 (Shipping
 * Priority).
 *
 *   select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue,
 *          o_orderdate, o_shippriority
 *   from customer, orders, lineitem
 *   where c_mktsegment = ':segment' and c_custkey = o_custkey
 *     and l_orderkey = o_orderkey
 *     and o_orderdate < date ':date' and l_shipdate > date ':date'
 *   group by l_orderkey, o_orderdate, o_shippriority
 *   order by revenue desc, o_orderdate limit 10;
 *
 * Plan (all on env->stream):
 *  1. cust_bitmap: the segment test on the dictionary code, as a semi-join
 *     bitmap over the dense custkeys 1..N (atomicOr on distinct words).
 *  2. chunk_bounds: orders are cut into chunks of OCHUNK rows; lineitem is
 *     grouped by orderkey in orders' order, so each chunk's line items are
 *     one range, found by a warp per chunk (a 65-ary search on l_orderkey:
 *     4 dependent rounds at SF10).
 *  3. q03_join (partition-local join, persistent blocks over chunks): the
 *     chunk's orders are tested (date, customer bit) into shared memory;
 *     then the chunk's line items are read in tiles, each row's order found
 *     by counting run starts (ballot + popc + a per-warp prefix), and only
 *     rows of passing orders read l_shipdate, then price and discount (late
 *     materialization); revenue is summed per order in shared memory
 *     (int64, scale 4, <= 7 items per order, cold keys). Each finished order
 *     is offered to its warp's top-10 list (a threshold test and a ballot;
 *     lane 0 inserts the rare winners); at the end each block merges its
 *     warps' lists.
 *  4. top_merge: one block merges the blocks' lists: each warp keeps a
 *     sorted list of 32 in registers (candidates that beat its 10th entry
 *     are bitonic-sorted and merged in), then a tree of warp merges; 10
 *     rows come back.
 * The result order is revenue desc, o_orderdate, then l_orderkey (a fixed
 * order for ties, as the CPU expert).
 *
 * Across ranks (DKB_CANDIDATE_RANKS, env->nranks > 1): orders and lineitem
 * are co-partitioned by orderkey and an order is one group, so each rank's
 * orders' revenues are final on its share; each rank's top 10 (copied back
 * as on one rank) is gathered in rank order and merged on the host
 * (dkb_ranks_topk, the same total order), on every rank; rank 0 writes. A
 * rank with an empty share takes part with an empty list.
 *
 * Under a memory budget (env->budget streaming orders and lineitem,
 * co-partitioned by orderkey: a load's line items are exactly those of its
 * orders, so each order's revenue is final within its load) steps 2 and 3
 * run once per load (a dkb_stream walk over both tables' columns,
 * DKB_STREAM_OVERLAP: the next load's copy overlaps this load's kernels):
 * the chunks are the load's orders' chunks, their bounds found in the
 * load's l_orderkey. Each block's top-10 list (blist, bcount: zeroed once)
 * carries over from pass to pass: q03_join starts warp 0's list from its
 * block's list of the earlier passes, so after the last pass the blocks'
 * lists hold the top 10 of all the orders they saw (the order is total:
 * the same 10 rows for any partitioning). top_merge runs once at the end;
 * no host sync per load. Without a budget the walk is one pass over the
 * whole columns and the carried lists are empty, as before.
 *
 * A line item whose order index does not match o_orderkey is reported as
 * an error instead of a wrong answer.
 *
 * Bytes read (floor, SF10): l_orderkey, l_shipdate 4 + 4, l_extendedprice,
 * l_discount 8 + 8 per item (60M: 1.44 GB; in practice only the passing
 * orders' sectors of the last three), o_orderdate, o_custkey (+ o_orderkey,
 * o_shippriority for winners) 8-16 B per order (15M: 0.12-0.24 GB),
 * c_custkey, c_mktsegment 5 B per customer (7.5 MB). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_stream.h" // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)
#include "dkb/cand_ranks.h"  // defines: dkb_ranks_topk, dkb_ranks_writes (the ranks' partials merged)

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: orders and lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its top lists merged through env->comm */

enum { TOPK = 10, TPB = 256, NWARP = TPB / 32, OCHUNK = 2048, MERGE_TPB = 1024 };
static_assert(TOPK <= 32, "the final merge keeps lists of 32 per warp");

/* The streamed columns, orders' then lineitem's (st.cols[0..3] have the
 * load's orders rows, st.cols[4..7] its lineitem rows). */
static const char *const Q03_COLS[] = {"o_orderkey", "o_custkey",  "o_orderdate",     "o_shippriority",
                                       "l_orderkey", "l_shipdate", "l_extendedprice", "l_discount"};

typedef struct {
    int64_t revenue; /* scale 4 */
    int64_t key;
    int32_t date;
    int32_t prio;
} cand;

/* a before b in the result order */
__host__ __device__ static inline bool before(const cand &a, const cand &b) {
    if (a.revenue != b.revenue) return a.revenue > b.revenue;
    if (a.date != b.date) return a.date < b.date;
    return a.key < b.key;
}

/* before, as dkb_topk_insert's comparator (the ranks' merge, host) */
static int before_v(const void *a, const void *b) { return before(*(const cand *)a, *(const cand *)b); }

/* Insert x into the sorted list top[0..*n) (at most TOPK). */
__host__ __device__ static inline void top_insert(cand *top, int *n, const cand &x) {
    if (*n == TOPK && !before(x, top[TOPK - 1])) return;
    int i = *n < TOPK ? (*n)++ : TOPK - 1;
    while (i > 0 && before(x, top[i - 1])) {
        top[i] = top[i - 1];
        i--;
    }
    top[i] = x;
}

/* Every lane of the warp calls this; lanes with has offer c to the warp's
 * shared list (list, *cnt). Only candidates that beat the list's last
 * entry are moved (by shuffles) to lane 0, which inserts them. */
__device__ static void warp_offer(cand *list, int *cnt, bool has, const cand &c) {
    const int lane = threadIdx.x & 31;
    __syncwarp();
    const int n = *cnt;
    const bool want = has && (n < TOPK || before(c, list[TOPK - 1]));
    unsigned m = __ballot_sync(DKB_FULL_MASK, want);
    while (m) {
        const int src = __ffs(m) - 1;
        m &= m - 1;
        cand x;
        x.revenue = __shfl_sync(DKB_FULL_MASK, c.revenue, src);
        x.key = __shfl_sync(DKB_FULL_MASK, c.key, src);
        x.date = __shfl_sync(DKB_FULL_MASK, c.date, src);
        x.prio = __shfl_sync(DKB_FULL_MASK, c.prio, src);
        if (lane == 0) top_insert(list, cnt, x);
    }
    __syncwarp();
}

/* Warp lists for the final merge: lane i holds entry i of a list sorted in
 * the result order; v = false marks an empty entry (after all others).
 * cand_shfl and first_of are what cand_cuda.cuh's top-k lists
 * (dkb_list_offer, dkb_block_merge) call for cand. */
__device__ static inline cand cand_shfl(const cand &x, int src) {
    cand y;
    y.revenue = __shfl_sync(DKB_FULL_MASK, x.revenue, src);
    y.key = __shfl_sync(DKB_FULL_MASK, x.key, src);
    y.date = __shfl_sync(DKB_FULL_MASK, x.date, src);
    y.prio = __shfl_sync(DKB_FULL_MASK, x.prio, src);
    return y;
}

/* (a, av) comes before (b, bv): a is an entry and b empty or after a. */
__device__ static inline bool first_of(const cand &a, bool av, const cand &b, bool bv) {
    return av && (!bv || before(a, b));
}

/* bits[k >> 5] bit (k & 31) for every customer key k of the segment;
 * a key outside 0..maxkey sets *bad. */
__global__ void cust_bitmap(const int32_t *__restrict__ ckey, const uint8_t *__restrict__ cseg, int64_t nc, int seg,
                            int64_t maxkey, uint32_t *__restrict__ bits, int *__restrict__ bad) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nc; i += (int64_t)gridDim.x * blockDim.x) {
        if (cseg[i] != seg) continue;
        const int64_t k = ckey[i];
        if (k < 0 || k > maxkey) {
            *bad = 1;
            continue;
        }
        atomicOr(&bits[k >> 5], 1u << (k & 31));
    }
}

/* The chunks' qualifying orders into the blocks' top lists: block b's list
 * (blist[b * TOPK ..], bcount[b]) is read at the start (an earlier pass's,
 * or empty) and written back at the end with this pass's orders merged in. */
__global__ void __launch_bounds__(TPB) q03_join(const int32_t *__restrict__ okey, const int32_t *__restrict__ ocust,
                                                const int32_t *__restrict__ odate, const int32_t *__restrict__ oprio,
                                                int64_t no, const int32_t *__restrict__ lkey,
                                                const int32_t *__restrict__ lship, const int64_t *__restrict__ lprice,
                                                const int64_t *__restrict__ ldisc, const int64_t *__restrict__ bound,
                                                int64_t nchunks, const uint32_t *__restrict__ cbits, int64_t maxc,
                                                int32_t day, cand *__restrict__ blist, int *__restrict__ bcount,
                                                int *__restrict__ bad) {
    __shared__ unsigned long long sum_s[OCHUNK];
    __shared__ uint8_t pass_s[OCHUNK], hit_s[OCHUNK];
    __shared__ int wtot[2][NWARP];
    __shared__ cand wlist[NWARP][TOPK];
    __shared__ int wcnt[NWARP];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    /* warp 0's list starts as this block's list of the earlier passes (sorted; none in the first) */
    if (lane == 0) {
        int n0 = 0;
        if (warp == 0) {
            n0 = bcount[blockIdx.x];
            for (int i = 0; i < n0; i++) wlist[0][i] = blist[(int64_t)blockIdx.x * TOPK + i];
        }
        wcnt[warp] = n0;
    }
    __syncthreads();
    int oops = 0;

    for (int64_t c = blockIdx.x; c < nchunks; c += gridDim.x) {
        const dkb_chunk ch = dkb_chunk_at<OCHUNK>(c, no, bound);
        const int64_t o0 = ch.o0;
        const int nord = ch.nord;
        /* 1. the chunk's orders: date and customer tests */
        for (int o = tid; o < OCHUNK; o += TPB) {
            bool pass = false;
            if (o < nord) {
                const int64_t cu = ocust[o0 + o];
                pass = odate[o0 + o] < day && cu >= 0 && cu <= maxc && ((cbits[cu >> 5] >> (cu & 31)) & 1u);
            }
            pass_s[o] = pass;
            hit_s[o] = 0;
            sum_s[o] = 0;
        }
        __syncthreads();
        /* 2. the chunk's line items, tile by tile; idx = the row's order in the chunk */
        dkb_chunk_items<NWARP>(lkey, ch, wtot, oops, [&](int64_t j, int idx, bool start, int32_t key) {
            if (!pass_s[idx]) return;
            if (start && okey[o0 + idx] != key) oops = 1;
            if (lship[j] <= day) return;
            const int64_t v = lprice[j] * (100 - ldisc[j]);
            atomicAdd(&sum_s[idx], (unsigned long long)v);
            hit_s[idx] = 1;
        });
        __syncthreads();
        /* 3. the chunk's finished orders, offered to the warps' top lists */
        for (int r = 0; r < OCHUNK; r += TPB) {
            const int o = r + tid;
            const bool has = o < nord && hit_s[o];
            cand x = {0, 0, 0, 0};
            if (has) {
                x.revenue = (int64_t)sum_s[o];
                x.key = okey[o0 + o];
                x.date = odate[o0 + o];
                x.prio = oprio[o0 + o];
            }
            warp_offer(wlist[warp], &wcnt[warp], has, x);
        }
        __syncthreads();
    }
    if (oops) *bad = 1;
    __syncthreads();
    if (tid == 0) {
        cand top[TOPK];
        int n = 0;
        for (int w = 0; w < NWARP; w++)
            for (int i = 0; i < wcnt[w]; i++) top_insert(top, &n, wlist[w][i]);
        for (int i = 0; i < n; i++) blist[(int64_t)blockIdx.x * TOPK + i] = top[i];
        bcount[blockIdx.x] = n;
    }
}

/* One block: the union of the nb blocks' lists -> out[0..*nout). Each warp
 * keeps a sorted list in registers (bitonic sort and merge, no serial
 * inserts); the warps' lists are merged in a tree. */
__global__ void __launch_bounds__(MERGE_TPB) top_merge(const cand *__restrict__ blist, const int *__restrict__ bcount,
                                                       int64_t nb, cand *__restrict__ out, int *__restrict__ nout) {
    __shared__ cand sl[MERGE_TPB / 32][32];
    __shared__ bool slv[MERGE_TPB / 32][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    cand x = {0, 0, 0, 0};
    bool v = false;
    const int64_t total = nb * TOPK;
    /* every lane of a warp runs the same number of rounds (list_offer syncs the warp) */
    for (int64_t base = (int64_t)warp * 32; base < total; base += MERGE_TPB) {
        const int64_t i = base + lane;
        const bool has = i < total && (int)(i % TOPK) < bcount[i / TOPK];
        cand c = {0, 0, 0, 0};
        if (has) c = blist[i];
        dkb_list_offer<TOPK>(x, v, has, c);
    }
    dkb_block_merge<MERGE_TPB / 32>(x, v, sl, slv);
    if (warp == 0) {
        const bool keep = lane < TOPK && v; /* the entries are a prefix */
        if (keep) out[lane] = x;
        const unsigned kept = __ballot_sync(DKB_FULL_MASK, keep);
        if (lane == 0) *nout = __popc(kept);
    }
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *ckey, *cseg, *okey, *ocust, *odate, *oprio, *lkey, *lship, *lprice, *ldisc;
    const dkb_cand_param *segment, *date;
    if (DKB_BIND_COLS(db, "customer", "c_custkey:i32 c_mktsegment:u8", &ckey, &cseg) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_custkey:i32 o_orderdate:i32 o_shippriority:i32", &okey, &ocust,
                      &odate, &oprio) ||
        DKB_BIND_COLS(db, "lineitem", "l_orderkey:i32 l_shipdate:i32 l_extendedprice:dec2 l_discount:dec2", &lkey,
                      &lship, &lprice, &ldisc) ||
        DKB_BIND_PARAMS(params, "segment:str date", &segment, &date))
        return DKB_CAND_EINVAL;
    if (res->ncols != 4) return DKB_CAND_EINVAL;
    dkb_cand_res_col *c_key = &res->cols[0], *c_rev = &res->cols[1], *c_date = &res->cols[2], *c_prio = &res->cols[3];
    if (c_key->type != DKB_CAND_RES_INT || c_rev->type != DKB_CAND_RES_DECIMAL || c_rev->scale < 4 ||
        c_date->type != DKB_CAND_RES_DATE || c_prio->type != DKB_CAND_RES_INT)
        return DKB_CAND_EINVAL;
    if (date->i < INT32_MIN || date->i > INT32_MAX) return DKB_CAND_EINVAL;

    const int seg = dkb_cand_dict_code(cseg->dict, segment->s);
    const int64_t nc = ckey->n, no = okey->n, nl = lkey->n; /* the whole tables' rows (also under a budget) */
    const int64_t maxc = nc; /* dense custkeys 1..N */
    const int64_t nwords = (maxc >> 5) + 1;
    const int64_t nchunks = (no + OCHUNK - 1) / OCHUNK;
    cudaStream_t stream = dkb_cand_stream(env);
    int rc = 0, sms = 0, h_bad = 0, h_n = 0;
    int64_t grid = 0;
    uint32_t *d_bits = NULL;
    int64_t *d_bound = NULL;
    cand *d_blist = NULL, *d_out = NULL, h_out[TOPK];
    int *d_bcount = NULL, *d_flags = NULL; /* d_flags[0]: bad, [1]: rows out */
    void *d_block = NULL;
    dkb_stream st;
    memset(&st, 0, sizeof st); /* dkb_stream_end at done: is a no-op until the walk begins */
    if (seg >= 0 && no > 0 && nl > 0 && nc > 0) {
        DKB_CUDA_TRY("resident grid", dkb_resident_grid(q03_join, TPB, 0, &sms, &grid));
        if (grid > nchunks) grid = nchunks;
        const dkb_dev_part parts[] = {
            {(void **)&d_bits, sizeof(uint32_t) * nwords, 0},
            {(void **)&d_flags, sizeof(int) * 2, 0},
            {(void **)&d_bcount, sizeof(int) * grid, 0}, /* the blocks' lists start empty */
            {(void **)&d_bound, sizeof(int64_t) * (nchunks + 1), DKB_NO_FILL},
            {(void **)&d_blist, sizeof(cand) * TOPK * grid, DKB_NO_FILL},
            {(void **)&d_out, sizeof(cand) * TOPK, DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
        /* customers of the segment */
        cust_bitmap<<<(unsigned)(sms * 4), 256, 0, stream>>>((const int32_t *)ckey->data, (const uint8_t *)cseg->data,
                                                             nc, seg, maxc, d_bits, d_flags);
        DKB_CUDA_TRY("cust_bitmap launch", cudaGetLastError());
        /* the whole columns (one pass), or under a budget one pass per load of
         * orders and lineitem partitions: the load's chunks' line item ranges
         * and the join, into the blocks' lists (blocks past this pass's grid
         * keep theirs) */
        for (dkb_stream_begin_ex(&st, db, env, 8, Q03_COLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st);) {
            const int64_t pno = st.cols[0].n, pnl = st.cols[4].n; /* this pass's orders and line items */
            if (pno <= 0 || pnl <= 0) continue;                   /* no order with a line item */
            const int64_t pch = (pno + OCHUNK - 1) / OCHUNK;
            DKB_FAIL_IF(pch > nchunks, DKB_CAND_EINTERNAL, "q03.full.cu: a load with more orders than the table\n");
            const int32_t *p_okey = (const int32_t *)st.cols[0].data, *p_lkey = (const int32_t *)st.cols[4].data;
            DKB_CUDA_TRY("chunk_bounds launch",
                         dkb_launch_chunk_bounds<OCHUNK>(p_okey, p_lkey, pnl, pch, d_bound, stream));
            q03_join<<<(unsigned)(grid < pch ? grid : pch), TPB, 0, stream>>>(
                p_okey, (const int32_t *)st.cols[1].data, (const int32_t *)st.cols[2].data,
                (const int32_t *)st.cols[3].data, pno, p_lkey, (const int32_t *)st.cols[5].data,
                (const int64_t *)st.cols[6].data, (const int64_t *)st.cols[7].data, d_bound, pch, d_bits, maxc,
                (int32_t)date->i, d_blist, d_bcount, d_flags);
            DKB_CUDA_TRY("q03_join launch", cudaGetLastError());
        }
        DKB_TRY(dkb_stream_end(&st));
        /* the final top 10 */
        top_merge<<<1, MERGE_TPB, 0, stream>>>(d_blist, d_bcount, grid, d_out, d_flags + 1);
        DKB_CUDA_TRY("top_merge launch", cudaGetLastError());
        const dkb_host_copy back[] = {
            {h_out, d_out, sizeof(cand) * TOPK}, {&h_bad, d_flags, sizeof(int)}, {&h_n, d_flags + 1, sizeof(int)}};
        DKB_CUDA_TRY("copy back", dkb_copy_back(back, DKB_COUNT(back), stream));
        DKB_FAIL_IF(h_bad, DKB_CAND_EINTERNAL,
                    "q03.full.cu: a customer key outside 1..N or lineitem not grouped in orders' order\n");
    }
    if (env->nranks > 1) { /* every rank's top 10 merged on every rank; rank 0 writes */
        DKB_TRY(dkb_ranks_topk(env, h_out, &h_n, TOPK, sizeof(cand), before_v));
        if (!dkb_ranks_writes(env, res)) goto done;
    }
    if (h_n > res->cap) DKB_FAIL(DKB_CAND_ECAP);
    for (int r = 0; r < h_n; r++) {
        c_key->i64[r] = h_out[r].key;
        dkb_put_dec(c_rev, r, h_out[r].revenue, 4);
        c_date->date[r] = h_out[r].date;
        c_prio->i64[r] = h_out[r].prio;
        c_key->is_null[r] = c_date->is_null[r] = c_prio->is_null[r] = 0;
    }
    res->nrows = h_n;
done:
    dkb_stream_end(&st); /* a load still held after a failure (its work is enqueued) */
    dkb_dev_release(d_block, stream);
    return rc;
}
