/* q04.full.cu: expert CUDA full-mode candidate for TPC-H Q4 (Order Priority
 * Checking).
 *
 *   select o_orderpriority, count(*) as order_count from orders
 *   where o_orderdate >= date ':date' and o_orderdate < date ':date' + interval '3' month
 *     and exists (select * from lineitem
 *                 where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)
 *   group by o_orderpriority order by o_orderpriority;
 *
 * Plan (all on env->stream):
 *  1. chunk_bounds: orders are cut into chunks of OCHUNK rows; lineitem is
 *     grouped by orderkey in orders' order, so each chunk's line items are
 *     one range, found by a warp per chunk (a 65-ary search on l_orderkey:
 *     4 dependent rounds at SF10).
 *  2. q04_join (partition-local semi-join, persistent blocks over chunks):
 *     the chunk's orders are tested on the date window (one unsigned
 *     compare) into shared memory; the chunk's line items are read in tiles,
 *     each row's order found by counting run starts (ballot + popc + a
 *     per-warp prefix, checked against o_orderkey at run starts); only rows
 *     of orders in the window read l_commitdate and l_receiptdate (late
 *     materialization) and a late line sets its order's byte (EXISTS as a
 *     flag, no count). Then each flagged order adds 1 to the block's count
 *     of its priority code (shared memory); at the end the block adds its
 *     non-zero counts to 256 global counters (integers: exact and
 *     deterministic).
 *  3. 256 counts come back; groups in code order, which is string order.
 *
 * Under a memory budget (env->budget streaming orders and lineitem,
 * co-partitioned by orderkey) steps 1 and 2 run once per load of
 * partitions (dkb_stream walk over both tables' columns, DKB_STREAM_OVERLAP:
 * the next load's copy overlaps this load's kernels): the chunks are the
 * load's orders' chunks, their bounds found in the load's l_orderkey, and
 * the join adds into the same 256 counters (integers: the same counts for
 * any partitioning). No host sync per load; one copy back at the end.
 * Without a budget the walk is one pass over the whole columns, as before.
 *
 * Bytes read (floor, SF10): o_orderkey, o_orderdate 8 B + o_orderpriority
 * 1 B per order (15M: 0.135 GB), l_orderkey, l_commitdate, l_receiptdate
 * 12 B per item (60M: 0.72 GB; in practice the last two only in the
 * window's sectors, ~1/20 of the orders). About 0.86 GB: ~0.2 ms.
 *
 * Across ranks (DKB_CANDIDATE_RANKS, env->nranks > 1): each rank runs steps
 * 1 and 2 over its share (orders and lineitem co-partitioned by orderkey:
 * an order and its lines on one rank, the chunks and bounds relative to
 * the share's first rows); the 256 priority counts are summed over the
 * ranks in one int64 all-reduce (dkb_ranks_sum_i64), which every rank
 * calls, also one with an empty share; rank 0 writes the groups. On one
 * rank nothing changes. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_ranks.h" // defines: dkb_ranks_sum_i64, dkb_ranks_writes
#include "dkb/cand_stream.h" // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: orders and lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: each on its share of orders and lineitem (co-partitioned) */

enum { TPB = 256, NWARP = TPB / 32, OCHUNK = 2048, NCODE = 256 };

/* The streamed columns, orders' then lineitem's (st.cols[0..2] have the
 * load's orders rows, st.cols[3..5] its lineitem rows). */
static const char *const Q04_COLS[] = {"o_orderkey", "o_orderdate",  "o_orderpriority",
                                       "l_orderkey", "l_commitdate", "l_receiptdate"};

/* counts[code] += orders of priority code in the window with a late line. */
__global__ void __launch_bounds__(TPB) q04_join(const int32_t *__restrict__ okey, const int32_t *__restrict__ odate,
                                                const uint8_t *__restrict__ oprio, int64_t no,
                                                const int32_t *__restrict__ lkey, const int32_t *__restrict__ lcommit,
                                                const int32_t *__restrict__ lreceipt,
                                                const int64_t *__restrict__ bound, int64_t nchunks, int32_t lo_day,
                                                uint32_t width, unsigned long long *__restrict__ counts,
                                                int *__restrict__ bad) {
    __shared__ uint8_t pass_s[OCHUNK], late_s[OCHUNK];
    __shared__ int wtot[2][NWARP];
    __shared__ unsigned int cnt_s[NCODE];
    const int tid = threadIdx.x;
    for (int i = tid; i < NCODE; i += TPB) cnt_s[i] = 0;
    int oops = 0;

    for (int64_t c = blockIdx.x; c < nchunks; c += gridDim.x) {
        const dkb_chunk ch = dkb_chunk_at<OCHUNK>(c, no, bound);
        /* 1. the chunk's orders: the date window */
        for (int o = tid; o < OCHUNK; o += TPB) {
            pass_s[o] = o < ch.nord && (uint32_t)(odate[ch.o0 + o] - lo_day) < width;
            late_s[o] = 0;
        }
        __syncthreads();
        /* 2. the chunk's line items, tile by tile; idx = the row's order in the chunk */
        dkb_chunk_items<NWARP>(lkey, ch, wtot, oops, [&](int64_t j, int idx, bool start, int32_t key) {
            if (!pass_s[idx]) return;
            if (start && okey[ch.o0 + idx] != key) oops = 1;
            if (lcommit[j] < lreceipt[j]) late_s[idx] = 1; /* benign race: every writer stores 1 */
        });
        __syncthreads();
        /* 3. the chunk's orders with a late line, counted by priority */
        for (int o = tid; o < ch.nord; o += TPB)
            if (late_s[o]) atomicAdd(&cnt_s[oprio[ch.o0 + o]], 1u);
        __syncthreads();
    }
    if (oops) *bad = 1;
    for (int k = tid; k < NCODE; k += TPB)
        if (cnt_s[k]) atomicAdd(&counts[k], (unsigned long long)cnt_s[k]);
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *okey, *odate, *oprio, *lkey, *lcommit, *lreceipt;
    const dkb_cand_param *date;
    if (DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_orderdate:i32 o_orderpriority:dict", &okey, &odate, &oprio) ||
        DKB_BIND_COLS(db, "lineitem", "l_orderkey:i32 l_commitdate:i32 l_receiptdate:i32", &lkey, &lcommit,
                      &lreceipt) ||
        DKB_BIND_PARAMS(params, "date", &date))
        return DKB_CAND_EINVAL;
    if (res->ncols != 2 || res->cols[0].type != DKB_CAND_RES_STRING || res->cols[1].type != DKB_CAND_RES_INT)
        return DKB_CAND_EINVAL;
    const int64_t hi_day = dkb_add_months(date->i, 3); /* [date, hi_day) */
    if (date->i < INT32_MIN || hi_day > INT32_MAX || hi_day < date->i) return DKB_CAND_EINVAL;

    cudaStream_t stream = dkb_cand_stream(env);
    const int64_t no = okey->n, nl = lkey->n; /* the whole tables' rows (also under a budget) */
    const int64_t nchunks = (no + OCHUNK - 1) / OCHUNK;
    int rc = 0, sms = 0, h_bad = 0;
    int64_t grid = 0, r = 0;
    int64_t *d_bound = NULL;
    unsigned long long *d_counts = NULL, h_counts[NCODE];
    int *d_bad = NULL;
    void *d_block = NULL;
    dkb_cand_res_col *c_prio = &res->cols[0], *c_count = &res->cols[1];
    dkb_stream st;
    memset(&st, 0, sizeof st); /* dkb_stream_end at done: is a no-op until the walk begins */
    memset(h_counts, 0, sizeof h_counts);
    if (no > 0 && nl > 0) {
        DKB_CUDA_TRY("resident grid", dkb_resident_grid(q04_join, TPB, 0, &sms, &grid));
        if (grid > nchunks) grid = nchunks;
        const dkb_dev_part parts[] = {
            {(void **)&d_counts, sizeof h_counts, 0},
            {(void **)&d_bad, sizeof(int), 0},
            {(void **)&d_bound, sizeof(int64_t) * (nchunks + 1), DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
        /* the whole columns (one pass), or under a budget one pass per load of
         * orders and lineitem partitions: each pass's chunks and join add into d_counts */
        for (dkb_stream_begin_ex(&st, db, env, 6, Q04_COLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st);) {
            const int64_t pno = st.cols[0].n, pnl = st.cols[3].n; /* this pass's orders and line items */
            if (pno <= 0 || pnl <= 0) continue;                   /* no order with a line item */
            const int64_t pch = (pno + OCHUNK - 1) / OCHUNK;
            DKB_FAIL_IF(pch > nchunks, DKB_CAND_EINTERNAL, "q04.full.cu: a load with more orders than the table\n");
            const int32_t *p_okey = (const int32_t *)st.cols[0].data, *p_lkey = (const int32_t *)st.cols[3].data;
            DKB_CUDA_TRY("chunk_bounds launch",
                         dkb_launch_chunk_bounds<OCHUNK>(p_okey, p_lkey, pnl, pch, d_bound, stream));
            q04_join<<<(unsigned)(grid < pch ? grid : pch), TPB, 0, stream>>>(
                p_okey, (const int32_t *)st.cols[1].data, (const uint8_t *)st.cols[2].data, pno, p_lkey,
                (const int32_t *)st.cols[4].data, (const int32_t *)st.cols[5].data, d_bound, pch, (int32_t)date->i,
                (uint32_t)(hi_day - date->i), d_counts, d_bad);
            DKB_CUDA_TRY("q04_join launch", cudaGetLastError());
        }
        DKB_TRY(dkb_stream_end(&st));
        const dkb_host_copy back[] = {{h_counts, d_counts, sizeof h_counts}, {&h_bad, d_bad, sizeof(int)}};
        DKB_CUDA_TRY("copy back", dkb_copy_back(back, DKB_COUNT(back), stream));
        DKB_FAIL_IF(h_bad, DKB_CAND_EINTERNAL, "q04.full.cu: lineitem not grouped by orderkey in orders' order\n");
    }
    if (env->nranks > 1) { /* across ranks: the 256 counts summed, one all-reduce (every rank, empty share or not) */
        int64_t sum[NCODE];
        for (int k = 0; k < NCODE; k++) sum[k] = (int64_t)h_counts[k];
        DKB_TRY(dkb_ranks_sum_i64(env, sum, NCODE));
        for (int k = 0; k < NCODE; k++) h_counts[k] = (unsigned long long)sum[k];
        if (!dkb_ranks_writes(env, res)) goto done; /* rank 0 writes the rows */
    }
    /* one row per priority with orders, in code order (string order) */
    c_prio->str_off[0] = 0;
    for (int code = 0; code < oprio->dict->size && code < NCODE; code++) {
        if (!h_counts[code]) continue;
        DKB_FAIL_IF(r >= res->cap || dkb_put_dict(c_prio, r, oprio->dict, code) != DKB_CAND_OK, DKB_CAND_ECAP,
                    "q04.full.cu: result larger than its capacity\n");
        c_count->i64[r] = (int64_t)h_counts[code];
        c_count->is_null[r] = 0;
        r++;
    }
    res->nrows = r;
done:
    dkb_stream_end(&st); /* a load still held after a failure (its work is enqueued) */
    dkb_dev_release(d_block, stream);
    return rc;
}
