/* q14.full.cu: expert CUDA full-mode candidate for TPC-H Q14 (Promotion
 * Effect).
 *
 *   select 100.00 * sum(case when p_type like 'PROMO%' then l_extendedprice * (1 - l_discount) else 0 end)
 *          / sum(l_extendedprice * (1 - l_discount)) as promo_revenue
 *   from lineitem, part
 *   where l_partkey = p_partkey
 *     and l_shipdate >= date ':date' and l_shipdate < date ':date' + interval '1' month;
 *
 * Plan: the LIKE is evaluated once per dictionary entry on the host (a
 * 256-entry promo mask, kept in shared memory by each block). part_codes
 * turns part into a byte array over the dense part keys 1..N (the type code,
 * 255 for "no part"), 1 byte per part. Then one fused pass over lineitem:
 * the month is one unsigned compare on l_shipdate; only rows in the month
 * (~1.2%) read l_partkey, price and discount (late materialization; DRAM
 * traffic is per 32-byte sector, so this saves part of the 8-byte columns)
 * and the part's type code (a gather from the 2 MB array, L2-resident).
 * Revenue is exact int64 at scale 4; thread and block sums stay int64 (a
 * block reads at most 2^20 rows), the per-block (promo, total, count) go
 * to the host and are added in __int128; the ratio is formed as in the
 * baseline (one division of doubles). No line: NULL.
 *
 * Bytes read (floor, SF10): l_shipdate, l_partkey 4 + 4, price, discount
 * 8 + 8 per item (60M: 1.44 GB), p_partkey + p_type 5 B x 2M (10 MB). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"

enum { TPB = 256, UNROLL = 4, MAX_ROWS_PER_BLOCK = 1 << 20, NO_PART = 255 };

#define CUDA_TRY(what, call)                                                                    \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "q14.full.cu:%d: %s: %s\n", __LINE__, (what), cudaGetErrorString(e_)); \
            rc = 10;                                                                            \
            goto done;                                                                          \
        }                                                                                       \
    } while (0)

static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const int64_t doe = z - era * 146097;
    const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* date + interval 'k' month, as SQL: the day is clamped to the month's end. */
static int64_t add_months(int64_t days, int k) {
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    int64_t months = y * 12 + (m - 1) + k;
    y = months / 12 - (months % 12 < 0);
    m = (int)(months - y * 12 + 1);
    const int last = mdays[m - 1] + (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0));
    return days_from_civil(y, m, d < last ? d : last);
}

typedef struct {
    uint8_t is_promo[256]; /* by p_type code */
} promo_mask;

/* code[key] = p_type of the part with that key (code preset to NO_PART);
 * a key outside 0..maxkey or a code equal to NO_PART sets *bad. */
__global__ void part_codes(const int32_t *__restrict__ pkey, const uint8_t *__restrict__ ptype, int64_t np,
                           int64_t maxkey, uint8_t *__restrict__ code, int *__restrict__ bad) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < np; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = pkey[i];
        const uint8_t t = ptype[i];
        if (k < 0 || k > maxkey || t == NO_PART) {
            *bad = 1;
            continue;
        }
        code[k] = t;
    }
}

/* partial[3 * block + {0, 1, 2}] = promo revenue, total revenue (scale 4)
 * and count of the block's rows in the month. */
__global__ void __launch_bounds__(TPB) q14_scan(const int32_t *__restrict__ ship, const int32_t *__restrict__ lpart,
                                                const int64_t *__restrict__ price, const int64_t *__restrict__ disc,
                                                int64_t n, int32_t lo, uint32_t span,
                                                const uint8_t *__restrict__ code, int64_t maxkey, promo_mask mask,
                                                int64_t *__restrict__ partial, int *__restrict__ bad) {
    __shared__ uint8_t promo_s[256];
    for (int i = threadIdx.x; i < 256; i += TPB) promo_s[i] = mask.is_promo[i];
    __syncthreads();
    const int64_t stride = (int64_t)gridDim.x * TPB;
    int64_t sp = 0, st = 0, cnt = 0;
    int oops = 0;
    for (int64_t base = (int64_t)blockIdx.x * TPB + threadIdx.x; base < n; base += stride * UNROLL) {
        bool in_month[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int64_t i = base + u * stride;
            in_month[u] = i < n && (uint32_t)(__ldg(ship + i) - lo) <= span;
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            if (!in_month[u]) continue;
            const int64_t i = base + u * stride;
            const int64_t pk = __ldg(lpart + i);
            const uint8_t t = pk >= 0 && pk <= maxkey ? __ldg(code + pk) : (uint8_t)NO_PART;
            if (t == NO_PART) {
                oops = 1;
                continue;
            }
            const int64_t rev = __ldg(price + i) * (100 - __ldg(disc + i));
            st += rev;
            sp += promo_s[t] ? rev : 0;
            cnt++;
        }
    }
    if (oops) *bad = 1;
    for (int off = 16; off > 0; off >>= 1) {
        sp += __shfl_down_sync(0xffffffffu, sp, off);
        st += __shfl_down_sync(0xffffffffu, st, off);
        cnt += __shfl_down_sync(0xffffffffu, cnt, off);
    }
    __shared__ int64_t w[3][TPB / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) w[0][warp] = sp, w[1][warp] = st, w[2][warp] = cnt;
    __syncthreads();
    if (threadIdx.x < 3) {
        int64_t s = 0;
        for (int k = 0; k < TPB / 32; k++) s += w[threadIdx.x][k];
        partial[3 * blockIdx.x + threadIdx.x] = s;
    }
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *ship = dkb_cand_column(db, "lineitem", "l_shipdate");
    const dkb_cand_vec *lpart = dkb_cand_column(db, "lineitem", "l_partkey");
    const dkb_cand_vec *price = dkb_cand_column(db, "lineitem", "l_extendedprice");
    const dkb_cand_vec *disc = dkb_cand_column(db, "lineitem", "l_discount");
    const dkb_cand_vec *pkey = dkb_cand_column(db, "part", "p_partkey");
    const dkb_cand_vec *ptype = dkb_cand_column(db, "part", "p_type");
    const dkb_cand_param *pdate = dkb_cand_param_find(params, "date");
    if (!ship || !lpart || !price || !disc || !pkey || !ptype || !pdate) return 1;
    if (ship->type != DKB_CAND_I32 || lpart->type != DKB_CAND_I32 || price->type != DKB_CAND_I64 ||
        disc->type != DKB_CAND_I64 || price->scale != 2 || disc->scale != 2 || pkey->type != DKB_CAND_I32 ||
        ptype->type != DKB_CAND_U8 || !ptype->dict || ptype->dict->size > NO_PART)
        return 2;
    if (res->ncols != 1 || res->cols[0].type != DKB_CAND_RES_FLOAT || res->cap < 1) return 3;
    const int64_t hi = add_months(pdate->i, 1) - 1;
    if (pdate->i < INT32_MIN || hi > INT32_MAX) return 3;
    dkb_cand_res_col *out = &res->cols[0];
    promo_mask mask;
    memset(&mask, 0, sizeof mask);
    for (int c = 0; c < ptype->dict->size; c++)
        mask.is_promo[c] = ptype->dict->len[c] >= 5 && memcmp(ptype->dict->str[c], "PROMO", 5) == 0;

    cudaStream_t stream = dkb_cand_stream(env);
    const int64_t n = ship->n, np = pkey->n, maxkey = np; /* dense part keys 1..N */
    int rc = 0, dev = 0, sms = 0, h_bad = 0;
    int64_t grid = 0, *d_part = NULL, *h_part = NULL;
    uint8_t *d_code = NULL;
    int *d_bad = NULL;
    __int128 promo_sum = 0, total = 0;
    int64_t hits = 0;
    if (n > 0) {
        CUDA_TRY("cudaGetDevice", cudaGetDevice(&dev));
        CUDA_TRY("cudaDeviceGetAttribute", cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        grid = (int64_t)sms * 8;
        const int64_t need = (n + MAX_ROWS_PER_BLOCK - 1) / MAX_ROWS_PER_BLOCK;
        if (grid < need) grid = need;
        const int64_t useful = (n + TPB - 1) / TPB;
        if (grid > useful) grid = useful;
        h_part = (int64_t *)malloc(sizeof(int64_t) * 3 * (size_t)grid);
        if (!h_part) {
            fprintf(stderr, "q14.full.cu: out of host memory for %lld partial sums\n", (long long)grid);
            rc = 5;
            goto done;
        }
        CUDA_TRY("cudaMallocAsync codes", cudaMallocAsync((void **)&d_code, (size_t)maxkey + 1, stream));
        CUDA_TRY("cudaMallocAsync partials", cudaMallocAsync((void **)&d_part, sizeof(int64_t) * 3 * grid, stream));
        CUDA_TRY("cudaMallocAsync flag", cudaMallocAsync((void **)&d_bad, sizeof(int), stream));
        CUDA_TRY("cudaMemsetAsync codes", cudaMemsetAsync(d_code, NO_PART, (size_t)maxkey + 1, stream));
        CUDA_TRY("cudaMemsetAsync flag", cudaMemsetAsync(d_bad, 0, sizeof(int), stream));
        if (np > 0)
            part_codes<<<(unsigned)(sms * 4), 256, 0, stream>>>((const int32_t *)pkey->data,
                                                                (const uint8_t *)ptype->data, np, maxkey, d_code,
                                                                d_bad);
        CUDA_TRY("part_codes launch", cudaGetLastError());
        q14_scan<<<(unsigned)grid, TPB, 0, stream>>>((const int32_t *)ship->data, (const int32_t *)lpart->data,
                                                     (const int64_t *)price->data, (const int64_t *)disc->data, n,
                                                     (int32_t)pdate->i, (uint32_t)(hi - pdate->i), d_code, maxkey,
                                                     mask, d_part, d_bad);
        CUDA_TRY("q14_scan launch", cudaGetLastError());
        CUDA_TRY("cudaMemcpyAsync partials", cudaMemcpyAsync(h_part, d_part, sizeof(int64_t) * 3 * grid,
                                                             cudaMemcpyDeviceToHost, stream));
        CUDA_TRY("cudaMemcpyAsync flag", cudaMemcpyAsync(&h_bad, d_bad, sizeof(int), cudaMemcpyDeviceToHost, stream));
        CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream));
        if (h_bad) {
            fprintf(stderr, "q14.full.cu: a part key outside 1..N (or without a part)\n");
            rc = 4;
            goto done;
        }
        for (int64_t b = 0; b < grid; b++)
            promo_sum += h_part[3 * b], total += h_part[3 * b + 1], hits += h_part[3 * b + 2];
    }
    res->nrows = 1;
    if (hits == 0) {
        out->f64[0] = 0;
        out->is_null[0] = 1;
    } else {
        /* as the baseline: (promo * 100.00 at scale 6) / (total at scale 4), in doubles */
        const double x = (double)(promo_sum * 10000) / 1e6, y = (double)total / 1e4;
        out->f64[0] = x / y;
        out->is_null[0] = 0;
    }
done:
    if (d_code) cudaFreeAsync(d_code, stream);
    if (d_part) cudaFreeAsync(d_part, stream);
    if (d_bad) cudaFreeAsync(d_bad, stream);
    cudaStreamSynchronize(stream);
    free(h_part);
    return rc;
}
