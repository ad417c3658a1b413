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
 * (date + 1 year with Feb 29 -> Feb 28, discount rescaled exactly). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit

enum { TPB = 256, MAX_ROWS_PER_BLOCK = 1 << 20 };

/* v (at scale from) at scale to, exactly; 0 when digits would be lost or
 * it would overflow. */
static int rescale(int64_t v, int from, int to, int64_t *out) {
    for (; from < to; from++) {
        if (v > INT64_MAX / 10 || v < INT64_MIN / 10) return 0;
        v *= 10;
    }
    for (; from > to; from--) {
        if (v % 10) return 0;
        v /= 10;
    }
    *out = v;
    return 1;
}

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
 * qualifying rows, partial[2 * block + 1] = their count. The first 4 * n4
 * dates are read four at a time (16-byte loads; the host passes n4 = 0 when
 * ship is not 16-byte aligned), the rest one by one. */
__global__ void __launch_bounds__(TPB) q06_scan(const int32_t *__restrict__ ship, const int64_t *__restrict__ disc,
                                                const int64_t *__restrict__ qty, const int64_t *__restrict__ price,
                                                int64_t n, int64_t n4, int32_t slo, uint32_t sw, int64_t dlo,
                                                uint64_t dw, int64_t qlt, int64_t *__restrict__ partial) {
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
    /* warp then block reduction */
    for (int off = 16; off > 0; off >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, off);
        cnt += __shfl_down_sync(0xffffffffu, cnt, off);
    }
    __shared__ int64_t wsum[TPB / 32], wcnt[TPB / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) wsum[warp] = sum, wcnt[warp] = cnt;
    __syncthreads();
    if (threadIdx.x == 0) {
        int64_t bs = 0, bc = 0;
        for (int w = 0; w < TPB / 32; w++) bs += wsum[w], bc += wcnt[w];
        partial[2 * blockIdx.x] = bs;
        partial[2 * blockIdx.x + 1] = bc;
    }
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *ship = dkb_cand_column(db, "lineitem", "l_shipdate");
    const dkb_cand_vec *disc = dkb_cand_column(db, "lineitem", "l_discount");
    const dkb_cand_vec *qty = dkb_cand_column(db, "lineitem", "l_quantity");
    const dkb_cand_vec *price = dkb_cand_column(db, "lineitem", "l_extendedprice");
    const dkb_cand_param *date = dkb_cand_param_find(params, "date");
    const dkb_cand_param *discount = dkb_cand_param_find(params, "discount");
    const dkb_cand_param *quantity = dkb_cand_param_find(params, "quantity");
    if (!ship || !disc || !qty || !price || !date || !discount || !quantity) return DKB_CAND_EINVAL;
    if (ship->type != DKB_CAND_I32 || disc->type != DKB_CAND_I64 || qty->type != DKB_CAND_I64 ||
        price->type != DKB_CAND_I64 || res->ncols != 1 || res->cols[0].type != DKB_CAND_RES_DECIMAL ||
        res->cap < 1)
        return DKB_CAND_EINVAL;
    dkb_cand_res_col *revenue = &res->cols[0];

    /* parameters in the columns' units; the date range inclusive */
    const int64_t slo = date->i, shi = dkb_add_years(date->i, 1) - 1;
    int64_t centre, one_cent, qlt;
    if (!rescale(discount->i, discount->scale, disc->scale, &centre) || !rescale(1, 2, disc->scale, &one_cent) ||
        !rescale(quantity->i, 0, qty->scale, &qlt))
        return DKB_CAND_EINVAL;
    const int64_t dlo = centre - one_cent, dhi = centre + one_cent;
    const int out_scale = price->scale + disc->scale;
    if (revenue->scale < out_scale) return DKB_CAND_EINVAL;
    if (slo < INT32_MIN || shi > INT32_MAX || shi < slo) return DKB_CAND_EINVAL;

    cudaStream_t stream = dkb_cand_stream(env);
    const int64_t n = ship->n;
    int rc = 0, sms = 0;
    int64_t *d_part = NULL, *h_part = NULL;
    __int128 total = 0;
    int64_t hits = 0;
    if (n > 0) {
        DKB_CUDA_TRY("SM count", dkb_sm_count(&sms));
        int64_t grid = (int64_t)sms * 8;
        const int64_t need = (n + MAX_ROWS_PER_BLOCK - 1) / MAX_ROWS_PER_BLOCK;
        if (grid < need) grid = need;
        const int64_t useful = (n + TPB - 1) / TPB;
        if (grid > useful) grid = useful;
        h_part = (int64_t *)malloc(sizeof(int64_t) * 2 * (size_t)grid);
        if (!h_part) {
            fprintf(stderr, "q06.full.cu: out of host memory for %lld partial sums\n", (long long)grid);
            rc = DKB_CAND_ENOMEM;
            goto done;
        }
        DKB_CUDA_TRY("cudaMallocAsync partials", cudaMallocAsync((void **)&d_part, sizeof(int64_t) * 2 * grid, stream));
        q06_scan<<<(unsigned)grid, TPB, 0, stream>>>(
            (const int32_t *)ship->data, (const int64_t *)disc->data, (const int64_t *)qty->data,
            (const int64_t *)price->data, n, (uintptr_t)ship->data % 16 == 0 ? n / 4 : 0, (int32_t)slo,
            (uint32_t)(shi - slo), dlo, (uint64_t)(dhi - dlo), qlt, d_part);
        DKB_CUDA_TRY("q06_scan launch", cudaGetLastError());
        DKB_CUDA_TRY("cudaMemcpyAsync partials", cudaMemcpyAsync(h_part, d_part, sizeof(int64_t) * 2 * grid,
                                                             cudaMemcpyDeviceToHost, stream));
        DKB_CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream));
        for (int64_t b = 0; b < grid; b++) total += h_part[2 * b], hits += h_part[2 * b + 1];
    }
    for (int sc = out_scale; sc < revenue->scale; sc++) total *= 10;
    res->nrows = 1;
    revenue->dec[0] = hits > 0 ? total : 0;
    revenue->is_null[0] = hits == 0;
done:
    if (d_part) {
        cudaFreeAsync(d_part, stream);
        cudaStreamSynchronize(stream);
    }
    free(h_part);
    return rc;
}
