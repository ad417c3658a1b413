/* q01.full.cu: expert CUDA full-mode candidate for TPC-H Q1 (Pricing
 * Summary Report).
 *
 *   select l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice),
 *          sum(l_extendedprice * (1 - l_discount)),
 *          sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)),
 *          avg(l_quantity), avg(l_extendedprice), avg(l_discount), count(*)
 *   from lineitem
 *   where l_shipdate <= date '1998-12-01' - interval ':delta' day
 *   group by l_returnflag, l_linestatus
 *   order by l_returnflag, l_linestatus;
 *
 * Plan: one fused pass over the seven device-resident columns (bytes read
 * per row: 4 + 1 + 1 + 4 x 8 = 38; SF10 ~60M rows = 2.28 GB). The group is
 * the pair of dictionary codes (g = flag * nstatus + status). The groups are
 * few and hot (4 present in TPC-H), so there are no atomics at all: every
 * thread owns private accumulators in shared memory, laid out
 * [group][field][thread] so a warp's updates hit distinct banks; a row adds
 * to its group's six slots (count, qty, price, disc, disc_price at scale 4,
 * charge at scale 6), all exact int64 (a block reads at most 2^20 rows, so
 * its charge sum stays below 2^20 * 1.2e11). At the end each block sums its
 * threads' slots (rotated to avoid bank conflicts) into per-block int64
 * partials, and a second kernel adds the partials of each (group, field) in
 * __int128 in a fixed order (deterministic). Only G x 6 __int128 come back.
 *
 * Spec guarantee used: l_returnflag and l_linestatus have small domains
 * (3 and 2 values); more than MAX_GROUPS code pairs is reported as an error.
 * Result filling (strings from the dictionaries, avg as sum/100/count)
 * follows the honest C candidate.
 *
 * Under a memory budget (env->budget streams lineitem) the seven columns
 * come load by load through a dkb_stream walk with DKB_STREAM_OVERLAP (the
 * next load's copy overlaps this load's scan); without one the walk is one
 * pass over the whole columns, as before. Every pass launches the same
 * grid (sized by the whole table's rows): the first pass writes each
 * block's partials, later passes add to them, so after the walk they hold
 * the whole table's sums (exact integers, whatever the loads) and one
 * dkb_sum_partials and one round trip follow, as without a budget. A
 * block's int64 charge sum stays safe: over all passes it reads at most
 * n / grid + passes * UNROLL * TPB rows (n / grid <= 2^20), each below 2^37
 * at scale 6. No sync per pass.
 *
 * Across ranks (DKB_CANDIDATE_RANKS, env->nranks > 1): each rank scans its
 * share of lineitem as above; the G x 6 exact __int128 sums come back as
 * before and are summed over the ranks in one all-reduce
 * (dkb_ranks_sum_i128; a rank with an empty share adds zeros); rank 0
 * writes the rows from the merged sums, the others return no rows. On one
 * rank nothing changes. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_ranks.h" // defines: dkb_ranks_sum_i128, dkb_ranks_writes
#include "dkb/cand_stream.h" // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)

enum { TPB = 256, UNROLL = 4, NFIELD = 6, MAX_GROUPS = 16, MAX_ROWS_PER_BLOCK = 1 << 20, RED_TPB = 256 };
enum { F_COUNT = 0, F_QTY, F_PRICE, F_DISC, F_DISC_PRICE, F_CHARGE };

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: each on its share of lineitem */

/* the streamed columns, in the order the walk hands them out */
static const char *const Q01_COLS[] = {"l_shipdate",      "l_returnflag", "l_linestatus", "l_quantity",
                                       "l_extendedprice", "l_discount",   "l_tax"};

/* partial[(block * G + g) * NFIELD + f]: block's int64 sum of field f of
 * group g (add: added to the partial already there, a later pass of a
 * streamed walk). Dynamic shared memory: G * NFIELD * TPB int64. A row whose
 * group is out of range (cannot happen with valid codes) sets *bad. */
__global__ void __launch_bounds__(TPB) q01_scan(const int32_t *__restrict__ ship, const uint8_t *__restrict__ flag,
                                                const uint8_t *__restrict__ status, const int64_t *__restrict__ qty,
                                                const int64_t *__restrict__ price, const int64_t *__restrict__ disc,
                                                const int64_t *__restrict__ tax, int64_t n, int32_t hi_day, int ns,
                                                int G, int64_t *__restrict__ partial, int *__restrict__ bad,
                                                int add) {
    extern __shared__ int64_t acc[]; /* [G][NFIELD][TPB] */
    const int tid = threadIdx.x;
    for (int i = tid; i < G * NFIELD * TPB; i += TPB) acc[i] = 0;
    __syncthreads();
    const int64_t stride = (int64_t)gridDim.x * TPB;
    int oob = 0;
    for (int64_t base = (int64_t)blockIdx.x * TPB + tid; base < n; base += stride * UNROLL) {
        bool keep[UNROLL];
        int g[UNROLL];
        int64_t q[UNROLL], p[UNROLL], d[UNROLL], t[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int64_t i = base + u * stride;
            const bool in = i < n;
            keep[u] = in && __ldg(ship + i) <= hi_day;
            g[u] = in ? (int)__ldg(flag + i) * ns + (int)__ldg(status + i) : G;
            q[u] = in ? __ldg(qty + i) : 0;
            p[u] = in ? __ldg(price + i) : 0;
            d[u] = in ? __ldg(disc + i) : 0;
            t[u] = in ? __ldg(tax + i) : 0;
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            if (!keep[u]) continue;
            if (g[u] >= G) {
                oob = 1;
                continue;
            }
            int64_t *a = acc + (size_t)g[u] * NFIELD * TPB + tid;
            const int64_t dp = p[u] * (100 - d[u]);
            a[F_COUNT * TPB] += 1;
            a[F_QTY * TPB] += q[u];
            a[F_PRICE * TPB] += p[u];
            a[F_DISC * TPB] += d[u];
            a[F_DISC_PRICE * TPB] += dp;
            a[F_CHARGE * TPB] += dp * (100 + t[u]);
        }
    }
    if (oob) *bad = 1;
    __syncthreads();
    /* block sums: slot k = g * NFIELD + f sums its TPB thread values,
     * starting at a rotated thread so the warp's reads spread over banks */
    for (int k = tid; k < G * NFIELD; k += TPB) {
        const int64_t *row = acc + (size_t)k * TPB;
        int64_t s = 0;
        for (int j = 0; j < TPB; j++) s += row[(j + k) & (TPB - 1)];
        int64_t *o = partial + (size_t)blockIdx.x * G * NFIELD + k;
        *o = add ? *o + s : s;
    }
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *ship, *flag, *status, *qty, *price, *disc, *tax;
    const dkb_cand_param *delta;
    dkb_cand_res_col *c_flag, *c_status, *c_sum_qty, *c_sum_price, *c_sum_disc_price, *c_sum_charge, *c_avg_qty,
        *c_avg_price, *c_avg_disc, *c_count;
    if (DKB_BIND_COLS(db, "lineitem",
                      "l_shipdate:i32 l_returnflag:dict l_linestatus:dict l_quantity:dec2 l_extendedprice:dec2 "
                      "l_discount:dec2 l_tax:dec2",
                      &ship, &flag, &status, &qty, &price, &disc, &tax) ||
        DKB_BIND_PARAMS(params, "delta", &delta) ||
        DKB_BIND_RES(res,
                     "l_returnflag:str l_linestatus:str sum_qty:dec2 sum_base_price:dec2 sum_disc_price:dec4 "
                     "sum_charge:dec avg_qty:float avg_price:float avg_disc:float count_order:int",
                     &c_flag, &c_status, &c_sum_qty, &c_sum_price, &c_sum_disc_price, &c_sum_charge, &c_avg_qty,
                     &c_avg_price, &c_avg_disc, &c_count))
        return DKB_CAND_EINVAL;
    if (c_sum_charge->scale < 6)
        return DKB_CAND_EINVAL;

    const int64_t hi64 = dkb_days_from_civil(1998, 12, 1) - delta->i;
    const int32_t hi_day = hi64 > INT32_MAX ? INT32_MAX : hi64 < INT32_MIN ? INT32_MIN : (int32_t)hi64;
    const int ns = status->dict->size, ngroups = flag->dict->size * ns;
    if (ngroups > MAX_GROUPS) {
        fprintf(stderr, "q01.full.cu: %d flag/status pairs, more than the %d the spec allows for\n", ngroups,
                MAX_GROUPS);
        return DKB_CAND_EINTERNAL;
    }

    cudaStream_t stream = dkb_cand_stream(env);
    const int64_t n = ship->n; /* the whole table's rows (kept in db when lineitem streams) */
    const int K = ngroups * NFIELD;
    const size_t smem = sizeof(int64_t) * (size_t)K * TPB;
    int rc = 0, sms = 0, h_bad = 0, passes = 0;
    int64_t grid = 0;
    int64_t *d_part = NULL;
    __int128 *d_sum = NULL, h_sum[MAX_GROUPS * NFIELD];
    int *d_bad = NULL;
    void *d_block = NULL;
    int64_t r = 0;
    memset(h_sum, 0, sizeof h_sum);
    dkb_stream st;
    memset(&st, 0, sizeof st); /* nothing held until the walk begins (done: ends it) */
    if (n > 0 && K > 0) {
        DKB_CUDA_TRY("SM count", dkb_sm_count(&sms));
        if (smem > 48 * 1024)
            DKB_CUDA_TRY("cudaFuncSetAttribute", cudaFuncSetAttribute(q01_scan, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                                      (int)smem));
        DKB_CUDA_TRY("resident grid", dkb_resident_grid(q01_scan, TPB, smem, &sms, &grid));
        grid = dkb_scan_grid(grid, n, TPB, MAX_ROWS_PER_BLOCK);
        const dkb_dev_part parts[] = {
            {(void **)&d_bad, sizeof(int), 0},
            {(void **)&d_part, sizeof(int64_t) * K * grid, DKB_NO_FILL},
            {(void **)&d_sum, sizeof(__int128) * K, DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
        /* the fused scan into per-block partials: the whole columns in one pass, or
         * under a budget load by load (the first pass writes them, the rest add) */
        for (dkb_stream_begin_ex(&st, db, env, 7, Q01_COLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st); passes++) {
            const dkb_cand_vec *c = st.cols;
            q01_scan<<<(unsigned)grid, TPB, smem, stream>>>(
                (const int32_t *)c[0].data, (const uint8_t *)c[1].data, (const uint8_t *)c[2].data,
                (const int64_t *)c[3].data, (const int64_t *)c[4].data, (const int64_t *)c[5].data,
                (const int64_t *)c[6].data, c[0].n, hi_day, ns, ngroups, d_part, d_bad, passes > 0);
            DKB_CUDA_TRY("q01_scan launch", cudaGetLastError());
        }
        DKB_TRY(dkb_stream_end(&st));
    }
    if (passes > 0) { /* the partials' sums per (group, field) */
        dkb_sum_partials<RED_TPB><<<K, RED_TPB, 0, stream>>>(d_part, grid, K, d_sum);
        DKB_CUDA_TRY("sum_partials launch", cudaGetLastError());
        const dkb_host_copy back[] = {{h_sum, d_sum, sizeof(__int128) * K}, {&h_bad, d_bad, sizeof(int)}};
        DKB_CUDA_TRY("copy back", dkb_copy_back(back, DKB_COUNT(back), stream));
        DKB_FAIL_IF(h_bad, DKB_CAND_EINTERNAL, "q01.full.cu: a flag/status code outside its dictionary\n");
    }
    if (env->nranks > 1) { /* across ranks: the groups' exact sums, one all-reduce (an empty share adds zeros) */
        DKB_TRY(dkb_ranks_sum_i128(env, h_sum, K));
        if (!dkb_ranks_writes(env, res)) goto done; /* rank 0 writes the rows */
    }

    /* one row per group present, in code order (= string order) */
    c_flag->str_off[0] = c_status->str_off[0] = 0;
    for (int g = 0; g < ngroups; g++) {
        const __int128 *a = h_sum + g * NFIELD;
        const int64_t count = (int64_t)a[F_COUNT];
        if (!count) continue;
        DKB_FAIL_IF(r >= res->cap || dkb_put_dict(c_flag, r, flag->dict, g / ns) != DKB_CAND_OK ||
                        dkb_put_dict(c_status, r, status->dict, g % ns) != DKB_CAND_OK,
                    DKB_CAND_ECAP, "q01.full.cu: result row %lld does not fit\n", (long long)r);
        dkb_put_dec(c_sum_qty, r, a[F_QTY], 2);
        dkb_put_dec(c_sum_price, r, a[F_PRICE], 2);
        dkb_put_dec(c_sum_disc_price, r, a[F_DISC_PRICE], 4);
        dkb_put_dec(c_sum_charge, r, a[F_CHARGE], 6);
        c_avg_qty->f64[r] = (double)(int64_t)a[F_QTY] / 100.0 / (double)count;
        c_avg_price->f64[r] = (double)(int64_t)a[F_PRICE] / 100.0 / (double)count;
        c_avg_disc->f64[r] = (double)(int64_t)a[F_DISC] / 100.0 / (double)count;
        c_count->i64[r] = count;
        c_avg_qty->is_null[r] = c_avg_price->is_null[r] = c_avg_disc->is_null[r] = 0;
        c_count->is_null[r] = 0;
        r++;
    }
    res->nrows = r;
done:
    dkb_stream_end(&st); /* a load still held after a failure inside the walk (none otherwise) */
    dkb_dev_release(d_block, stream);
    return rc;
}
