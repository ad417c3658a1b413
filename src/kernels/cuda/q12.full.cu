/* q12.full.cu: expert CUDA full-mode candidate for TPC-H Q12 (Shipping Modes
 * and Order Priority).
 *
 *   select l_shipmode, sum(case when o_orderpriority in ('1-URGENT', '2-HIGH') then 1 else 0 end),
 *          sum(case when o_orderpriority not in ('1-URGENT', '2-HIGH') then 1 else 0 end)
 *   from orders, lineitem
 *   where o_orderkey = l_orderkey and l_shipmode in (':shipmode1', ':shipmode2')
 *     and l_commitdate < l_receiptdate and l_shipdate < l_commitdate
 *     and l_receiptdate >= date ':date' and l_receiptdate < date ':date' + interval '1' year
 *   group by l_shipmode order by l_shipmode;
 *
 * Plan (all on env->stream): one fused pass over lineitem (grid-stride,
 * 4 rows in flight per thread). The ship mode code is compared with the two
 * parameters' codes first; only rows of the two modes (2 in 7) read the
 * three dates (the receipt window is one unsigned compare). A passing line
 * (about 1 in 200) finds its order by a binary search on o_orderkey (sorted
 * ascending; the upper levels stay in L2) and reads the priority code,
 * classified by a 256-entry "high" mask in shared memory. Each thread
 * counts (mode 1 | mode 2) x (high | low); warp shuffles and shared memory
 * reduce them per block, and one atomicAdd per block and counter adds them
 * to 4 global counters (integers: exact and deterministic). Groups come out
 * in code order, which is string order; a mode without lines is left out.
 * A line whose order is missing is reported as an error.
 *
 * Bytes read (floor, SF10): l_shipmode 1 B, l_shipdate, l_commitdate,
 * l_receiptdate, l_orderkey 16 B per item (60M: 1.02 GB; the dates and key
 * only in the sectors of the two modes' rows, most of them), o_orderkey and
 * o_orderpriority only for the ~300K passing lines. ~0.25 ms. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"

enum { TPB = 256, NWARP = TPB / 32, UNROLL = 4, NCOUNT = 4 };
#define FULL_MASK 0xffffffffu

#define CUDA_TRY(what, call)                                                                    \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "q12.full.cu:%d: %s: %s\n", __LINE__, (what), cudaGetErrorString(e_)); \
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
    uint8_t high[256]; /* by o_orderpriority code */
} prio_mask;

static dkb_cand_res_col *res_col(dkb_cand_result *res, const char *name, dkb_cand_res_type type) {
    for (int c = 0; c < res->ncols; c++)
        if (strcmp(res->cols[c].name, name) == 0) return res->cols[c].type == type ? &res->cols[c] : NULL;
    return NULL;
}

/* counts[{0,1,2,3}] += lines of (mode1 high, mode1 low, mode2 high, mode2 low).
 * mode1/mode2 are codes or 256 (no code); mode2 == mode1 counts as mode 1. */
__global__ void __launch_bounds__(TPB) q12_scan(const uint8_t *__restrict__ lmode, const int32_t *__restrict__ lship,
                                                const int32_t *__restrict__ lcommit,
                                                const int32_t *__restrict__ lreceipt,
                                                const int32_t *__restrict__ lkey, int64_t n,
                                                const int32_t *__restrict__ okey, const uint8_t *__restrict__ oprio,
                                                int64_t no, int mode1, int mode2, int32_t lo, uint32_t span,
                                                prio_mask mask, unsigned long long *__restrict__ counts,
                                                int *__restrict__ bad) {
    __shared__ uint8_t high_s[256];
    __shared__ unsigned long long part_s[NWARP][NCOUNT];
    for (int i = threadIdx.x; i < 256; i += TPB) high_s[i] = mask.high[i];
    __syncthreads();
    const int64_t stride = (int64_t)gridDim.x * TPB;
    unsigned long long cnt[NCOUNT] = {0, 0, 0, 0};
    int oops = 0;
    for (int64_t base = (int64_t)blockIdx.x * TPB + threadIdx.x; base < n; base += stride * UNROLL) {
        int which[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int64_t i = base + u * stride;
            const int m = i < n ? (int)__ldg(lmode + i) : -1;
            which[u] = m == mode1 ? 0 : m == mode2 ? 2 : -1;
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            if (which[u] < 0) continue;
            const int64_t i = base + u * stride;
            const int32_t r = __ldg(lreceipt + i), c = __ldg(lcommit + i);
            if (!(c < r && __ldg(lship + i) < c && (uint32_t)r - (uint32_t)lo <= span)) continue;
            const int32_t key = __ldg(lkey + i);
            int64_t a = 0, b = no;
            while (a < b) {
                const int64_t mid = a + (b - a) / 2;
                if (__ldg(okey + mid) < key) a = mid + 1;
                else b = mid;
            }
            if (a >= no || __ldg(okey + a) != key) {
                oops = 1;
                continue;
            }
            cnt[which[u] + (high_s[__ldg(oprio + a)] ? 0 : 1)]++;
        }
    }
    if (oops) *bad = 1;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int k = 0; k < NCOUNT; k++) {
        for (int off = 16; off > 0; off >>= 1) cnt[k] += __shfl_down_sync(FULL_MASK, cnt[k], off);
        if (lane == 0) part_s[warp][k] = cnt[k];
    }
    __syncthreads();
    if (threadIdx.x < NCOUNT) {
        unsigned long long s = 0;
        for (int w = 0; w < NWARP; w++) s += part_s[w][threadIdx.x];
        if (s) atomicAdd(&counts[threadIdx.x], s);
    }
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *lkey = dkb_cand_column(db, "lineitem", "l_orderkey");
    const dkb_cand_vec *lmode = dkb_cand_column(db, "lineitem", "l_shipmode");
    const dkb_cand_vec *lship = dkb_cand_column(db, "lineitem", "l_shipdate");
    const dkb_cand_vec *lcommit = dkb_cand_column(db, "lineitem", "l_commitdate");
    const dkb_cand_vec *lreceipt = dkb_cand_column(db, "lineitem", "l_receiptdate");
    const dkb_cand_vec *okey = dkb_cand_column(db, "orders", "o_orderkey");
    const dkb_cand_vec *oprio = dkb_cand_column(db, "orders", "o_orderpriority");
    const dkb_cand_param *pm1 = dkb_cand_param_find(params, "shipmode1");
    const dkb_cand_param *pm2 = dkb_cand_param_find(params, "shipmode2");
    const dkb_cand_param *pdate = dkb_cand_param_find(params, "date");
    if (!lkey || !lmode || !lship || !lcommit || !lreceipt || !okey || !oprio || !pm1 || !pm2 || !pdate ||
        !pm1->s || !pm2->s)
        return 1;
    if (lkey->type != DKB_CAND_I32 || okey->type != DKB_CAND_I32 || lship->type != DKB_CAND_I32 ||
        lcommit->type != DKB_CAND_I32 || lreceipt->type != DKB_CAND_I32 || lmode->type != DKB_CAND_U8 ||
        oprio->type != DKB_CAND_U8 || !lmode->dict || !oprio->dict)
        return 2;
    dkb_cand_res_col *c_mode = res_col(res, "l_shipmode", DKB_CAND_RES_STRING);
    dkb_cand_res_col *c_high = res_col(res, "high_line_count", DKB_CAND_RES_INT);
    dkb_cand_res_col *c_low = res_col(res, "low_line_count", DKB_CAND_RES_INT);
    if (!c_mode || !c_high || !c_low) return 3;
    const int64_t hi_day = add_months(pdate->i, 12);
    if (pdate->i < INT32_MIN || hi_day > INT32_MAX || hi_day <= pdate->i) return 3;

    prio_mask mask;
    memset(&mask, 0, sizeof mask);
    const int urgent = dkb_cand_dict_code(oprio->dict, "1-URGENT"), high2 = dkb_cand_dict_code(oprio->dict, "2-HIGH");
    if (urgent >= 0) mask.high[urgent] = 1;
    if (high2 >= 0) mask.high[high2] = 1;
    const int m1 = dkb_cand_dict_code(lmode->dict, pm1->s), m2 = dkb_cand_dict_code(lmode->dict, pm2->s);
    const int mode1 = m1 >= 0 ? m1 : 256, mode2 = m2 >= 0 && m2 != m1 ? m2 : 256; /* 256: matches no code */

    cudaStream_t stream = dkb_cand_stream(env);
    const int64_t n = lkey->n, no = okey->n;
    int rc = 0, dev = 0, sms = 0, h_bad = 0;
    int64_t grid = 0, row = 0;
    unsigned long long *d_counts = NULL, h_counts[NCOUNT] = {0, 0, 0, 0};
    int *d_bad = NULL;
    if (n > 0 && (mode1 < 256 || mode2 < 256)) {
        CUDA_TRY("cudaGetDevice", cudaGetDevice(&dev));
        CUDA_TRY("cudaDeviceGetAttribute", cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        grid = (int64_t)sms * 8;
        const int64_t useful = (n + TPB - 1) / TPB;
        if (grid > useful) grid = useful;
        CUDA_TRY("cudaMallocAsync counts", cudaMallocAsync((void **)&d_counts, sizeof h_counts, stream));
        CUDA_TRY("cudaMallocAsync flag", cudaMallocAsync((void **)&d_bad, sizeof(int), stream));
        CUDA_TRY("cudaMemsetAsync counts", cudaMemsetAsync(d_counts, 0, sizeof h_counts, stream));
        CUDA_TRY("cudaMemsetAsync flag", cudaMemsetAsync(d_bad, 0, sizeof(int), stream));
        q12_scan<<<(unsigned)grid, TPB, 0, stream>>>(
            (const uint8_t *)lmode->data, (const int32_t *)lship->data, (const int32_t *)lcommit->data,
            (const int32_t *)lreceipt->data, (const int32_t *)lkey->data, n, (const int32_t *)okey->data,
            (const uint8_t *)oprio->data, no, mode1, mode2, (int32_t)pdate->i,
            (uint32_t)(hi_day - 1 - pdate->i), mask, d_counts, d_bad);
        CUDA_TRY("q12_scan launch", cudaGetLastError());
        CUDA_TRY("cudaMemcpyAsync counts",
                 cudaMemcpyAsync(h_counts, d_counts, sizeof h_counts, cudaMemcpyDeviceToHost, stream));
        CUDA_TRY("cudaMemcpyAsync flag", cudaMemcpyAsync(&h_bad, d_bad, sizeof(int), cudaMemcpyDeviceToHost, stream));
        CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream));
        if (h_bad) {
            fprintf(stderr, "q12.full.cu: a line item whose l_orderkey is not in orders\n");
            rc = 5;
            goto done;
        }
    }
    /* groups in code order (string order) */
    c_mode->str_off[0] = 0;
    for (int code = 0; code < lmode->dict->size && code < 256; code++) {
        const int k = code == mode1 ? 0 : code == mode2 ? 2 : -1;
        if (k < 0 || h_counts[k] + h_counts[k + 1] == 0) continue;
        const int64_t at = c_mode->str_off[row], len = (int64_t)lmode->dict->len[code];
        if (row >= res->cap || at + len > c_mode->bytes_cap) {
            fprintf(stderr, "q12.full.cu: result larger than its capacity\n");
            rc = 4;
            goto done;
        }
        memcpy(c_mode->str_bytes + at, lmode->dict->str[code], (size_t)len);
        c_mode->str_off[row + 1] = at + len;
        c_high->i64[row] = (int64_t)h_counts[k];
        c_low->i64[row] = (int64_t)h_counts[k + 1];
        c_mode->is_null[row] = c_high->is_null[row] = c_low->is_null[row] = 0;
        row++;
    }
    res->nrows = row;
done:
    if (d_counts) cudaFreeAsync(d_counts, stream);
    if (d_bad) cudaFreeAsync(d_bad, stream);
    cudaStreamSynchronize(stream);
    return rc;
}
