/* q06.full.cu: expert CUDA full-mode candidate for TPC-H Q6 (Forecasting
 * Revenue Change).
 *
 *   select sum(l_extendedprice * l_discount) as revenue
 *   from lineitem
 *   where l_shipdate >= date ':date'
 *     and l_shipdate < date ':date' + interval '1' year
 *     and l_discount between :discount - 0.01 and :discount + 0.01
 *     and l_quantity < :quantity;
 *
 * Plan: one fused filter-multiply-sum pass over the four device-resident
 * columns (floor: 4 + 8 + 8 + 8 bytes per row; SF10 ~60M rows = 1.68 GB).
 * Each thread reads four dates with one 16-byte load (grid-stride,
 * coalesced); only rows whose date is in the year (~1/7) read discount and
 * quantity, and only those that pass read the price (late
 * materialization: the sectors of a warp whose rows all fail are never
 * read). Range tests are unsigned compares. Measured in isolation
 * (bench/gpu/scan_probe.cu, H200, SF10 rows): 0.30 ms against 0.39 ms for
 * reading every column. Products are exact int64 at scale 4; a thread's
 * and a block's sums stay int64 (a block reads at most 2^20 rows, so its sum
 * stays below 2^20 * 1.1e8), the per-block (sum, count) pairs go to the
 * host, which adds them in __int128. No atomics, deterministic.
 *
 * Parameters are converted on the host as in the honest C candidate
 * (date + 1 year with Feb 29 -> Feb 28, discount rescaled exactly).
 *
 * Under a memory budget (env->budget streams lineitem) the four columns
 * come load by load through a dkb_stream walk with DKB_STREAM_OVERLAP (the
 * next load's copy overlaps this load's scan); without one the walk is one
 * pass over the whole columns, as before. Every pass launches the same
 * grid (sized by the whole table's rows): the first pass writes each
 * block's (sum, count), later passes add to it, so the partials are those
 * of the whole table whatever the loads (integer sums: exact). A block's
 * int64 sum stays safe: over all passes it reads at most n / grid + passes
 * * 5 * TPB rows (n / grid <= 2^20), each below 2^27 at scale 4, far from
 * 2^63. No sync per pass; one round trip after the walk.
 *
 * Across ranks (DKB_CANDIDATE_RANKS, env->nranks > 1): each rank scans its
 * share of lineitem as above (its first row need not be 16-byte aligned:
 * the host's alignment test covers it); the exact (revenue, rows) pair is
 * summed over the ranks in one __int128 all-reduce (dkb_ranks_sum_i128; a
 * rank with an empty share adds zeros); rank 0 writes the row. On one rank
 * nothing changes. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_ranks.h" // defines: dkb_ranks_sum_i128, dkb_ranks_writes
#include "dkb/cand_stream.h" // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)

enum { TPB = 256, MAX_ROWS_PER_BLOCK = 1 << 20 };

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: each on its share of lineitem */

/* the streamed columns, in the order the walk hands them out */
static const char *const Q06_COLS[] = {"l_shipdate", "l_discount", "l_quantity", "l_extendedprice"};


/* Row i's contribution to (sum, count); the date already passed. The other
 * columns are read only now: a warp whose rows all fail the date test
 * skips their sectors (late materialization; ~1/7 of the rows pass). */
__device__ __forceinline__ void q06_row(int64_t i, const int64_t *__restrict__ disc, const int64_t *__restrict__ qty,
                                        const int64_t *__restrict__ price, int64_t dlo, uint64_t dw, int64_t qlt,
                                        int64_t &sum, int64_t &cnt) {
    const int64_t d = __ldg(disc + i), q = __ldg(qty + i);
    if (((uint64_t)(d - dlo) <= dw) & (q < qlt)) {
        sum += __ldg(price + i) * d;
        cnt++;
    }
}

/* partial[2 * block] = sum of price * discount (scale 4) over the block's
 * qualifying rows, partial[2 * block + 1] = their count (add: added to the
 * partials already there). The first 4 * n4
 * dates are read four at a time (16-byte loads; the host passes n4 = 0 when
 * ship is not 16-byte aligned), the rest one by one. */
__global__ void __launch_bounds__(TPB) q06_scan(const int32_t *__restrict__ ship, const int64_t *__restrict__ disc,
                                                const int64_t *__restrict__ qty, const int64_t *__restrict__ price,
                                                int64_t n, int64_t n4, int32_t slo, uint32_t sw, int64_t dlo,
                                                uint64_t dw, int64_t qlt, int64_t *__restrict__ partial, int add) {
    const int64_t stride = (int64_t)gridDim.x * TPB;
    int64_t sum = 0, cnt = 0;
    for (int64_t v = (int64_t)blockIdx.x * TPB + threadIdx.x; v < n4; v += stride) {
        const int4 s4 = __ldg((const int4 *)ship + v);
        const int32_t s[4] = {s4.x, s4.y, s4.z, s4.w};
#pragma unroll
        for (int u = 0; u < 4; u++)
            if ((uint32_t)(s[u] - slo) <= sw) q06_row(4 * v + u, disc, qty, price, dlo, dw, qlt, sum, cnt);
    }
    for (int64_t i = 4 * n4 + (int64_t)blockIdx.x * TPB + threadIdx.x; i < n; i += stride)
        if ((uint32_t)(__ldg(ship + i) - slo) <= sw) q06_row(i, disc, qty, price, dlo, dw, qlt, sum, cnt);
    int64_t v[2] = {sum, cnt};
    dkb_block_sums_add<TPB, 2>(v, partial, add);
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *ship, *disc, *qty, *price;
    const dkb_cand_param *date, *discount, *quantity;
    if (DKB_BIND_COLS(db, "lineitem", "l_shipdate:i32 l_discount:i64 l_quantity:i64 l_extendedprice:i64", &ship, &disc,
                      &qty, &price) ||
        DKB_BIND_PARAMS(params, "date discount quantity", &date, &discount, &quantity))
        return DKB_CAND_EINVAL;
    if (res->ncols != 1 || res->cols[0].type != DKB_CAND_RES_DECIMAL || res->cap < 1) return DKB_CAND_EINVAL;
    dkb_cand_res_col *revenue = &res->cols[0];

    /* parameters in the columns' units; the date range inclusive */
    const int64_t slo = date->i, shi = dkb_add_years(date->i, 1) - 1;
    int64_t centre, one_cent, qlt;
    if (!dkb_rescale(discount->i, discount->scale, disc->scale, &centre) ||
        !dkb_rescale(1, 2, disc->scale, &one_cent) || !dkb_rescale(quantity->i, 0, qty->scale, &qlt))
        return DKB_CAND_EINVAL;
    const int64_t dlo = centre - one_cent, dhi = centre + one_cent;
    const int out_scale = price->scale + disc->scale;
    if (revenue->scale < out_scale) return DKB_CAND_EINVAL;
    if (slo < INT32_MIN || shi > INT32_MAX || shi < slo) return DKB_CAND_EINVAL;

    cudaStream_t stream = dkb_cand_stream(env);
    const int64_t n = ship->n; /* the whole table's rows (kept in db when lineitem streams) */
    int rc = 0, sms = 0, passes = 0;
    int64_t *d_part = NULL;
    void *d_block = NULL;
    __int128 sums[2] = {0, 0}; /* revenue, rows */
    dkb_stream st;
    memset(&st, 0, sizeof st); /* nothing held until the walk begins (done: ends it) */
    if (n > 0) {
        DKB_CUDA_TRY("SM count", dkb_sm_count(&sms));
        const int64_t grid = dkb_scan_grid((int64_t)sms * 8, n, TPB, MAX_ROWS_PER_BLOCK);
        const dkb_dev_part parts[] = {{(void **)&d_part, sizeof(int64_t) * 2 * grid, DKB_NO_FILL}};
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
        /* the whole columns in one pass, or under a budget load by load: every
         * pass the same grid, the first writing the partials, the rest adding */
        for (dkb_stream_begin_ex(&st, db, env, 4, Q06_COLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st); passes++) {
            const dkb_cand_vec *c = st.cols;
            const int64_t m = c[0].n;
            q06_scan<<<(unsigned)grid, TPB, 0, stream>>>(
                (const int32_t *)c[0].data, (const int64_t *)c[1].data, (const int64_t *)c[2].data,
                (const int64_t *)c[3].data, m, (uintptr_t)c[0].data % 16 == 0 ? m / 4 : 0, (int32_t)slo,
                (uint32_t)(shi - slo), dlo, (uint64_t)(dhi - dlo), qlt, d_part, passes > 0);
            DKB_CUDA_TRY("q06_scan launch", cudaGetLastError());
        }
        DKB_TRY(dkb_stream_end(&st));
        if (passes > 0) DKB_TRY(dkb_partials_to_host(d_part, grid, 2, sums, NULL, NULL, stream));
    }
    if (env->nranks > 1) { /* across ranks: (revenue, rows) summed exactly, one all-reduce (an empty share adds zeros) */
        DKB_TRY(dkb_ranks_sum_i128(env, sums, 2));
        if (!dkb_ranks_writes(env, res)) goto done; /* rank 0 writes the row */
    }
    res->nrows = 1;
    dkb_put_dec(revenue, 0, sums[1] > 0 ? sums[0] : 0, out_scale);
    revenue->is_null[0] = sums[1] == 0;
done:
    dkb_stream_end(&st); /* a load still held after a failure inside the walk (none otherwise) */
    if (d_block) {
        cudaFreeAsync(d_block, stream);
        cudaStreamSynchronize(stream);
    }
    return rc;
}
