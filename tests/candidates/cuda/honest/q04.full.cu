/* q04.full.cu: an honest full-mode CUDA candidate for TPC-H Q4 (Order
 * Priority Checking) built from CUB, to show that CUB candidates evaluate:
 * device-wide select, radix sort and unique, and a block-wide reduction.
 *
 *   select o_orderpriority, count(*) as order_count from orders
 *   where o_orderdate >= date ':date' and o_orderdate < date ':date' + interval '3' month
 *     and exists (select * from lineitem
 *                 where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)
 *   group by o_orderpriority order by o_orderpriority;
 *
 * Plan (env->stream):
 *  1. late_flags: a byte per line item, l_commitdate < l_receiptdate;
 *  2. cub::DeviceSelect::Flagged: the l_orderkey of the late line items
 *     (their count comes back: the sort needs it on the host);
 *  3. cub::DeviceRadixSort::SortKeys, then cub::DeviceSelect::Unique: the
 *     sorted set of orders with a late line (no assumption on the tables'
 *     order);
 *  4. count_orders: each order of the window is looked up in that set
 *     (binary search); per thread a count per priority code, summed per
 *     block with cub::BlockReduce and added to 8 global counters;
 *  5. the counters come back; groups in code order (= string order).
 * Temporary storage: CUB's size query, then cudaMallocAsync/cudaFreeAsync
 * on the stream. Not tuned: correct, and a CUB user's first version.
 *
 * Evaluate: build/dkb eval tests/candidates/cuda/honest --data data/sf1 --backend cuda --mode full */
#include <limits.h>
#include <stdio.h>

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include "dkb/candidate.h"

enum { TPB = 256, NPRIO = 8, MAX_GRID = 4096 };

#define CUDA_TRY(what, call)                                                                       \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "q04.full.cu:%d: %s: %s\n", __LINE__, (what), cudaGetErrorString(e_)); \
            rc = DKB_CAND_ECUDA;                                                                   \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* Days since 1970-01-01 of a proleptic Gregorian date, and back (H.
 * Hinnant's algorithms). */
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

/* late[i] = line item i was received after its commit date. */
__global__ void late_flags(const int32_t *__restrict__ commit, const int32_t *__restrict__ receipt, int64_t n,
                           uint8_t *__restrict__ late) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        late[i] = commit[i] < receipt[i];
}

/* Orders counted per priority code: what one thread, then one block, holds. */
struct counts {
    unsigned long long c[NPRIO];
};

struct add_counts {
    __device__ counts operator()(const counts &a, const counts &b) const {
        counts r;
#pragma unroll
        for (int k = 0; k < NPRIO; k++) r.c[k] = a.c[k] + b.c[k];
        return r;
    }
};

/* Is key in keys[0, n) (ascending)? */
__device__ bool contains(const int32_t *__restrict__ keys, int64_t n, int32_t key) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && keys[lo] == key;
}

/* out[code] += the orders of priority code in [lo, lo + width) days with a
 * late line item (their keys: late_keys[0, *nlate), ascending, distinct);
 * *bad = 1 when a code is NPRIO or more. */
__global__ void __launch_bounds__(TPB)
    count_orders(const int32_t *__restrict__ okey, const int32_t *__restrict__ odate, const uint8_t *__restrict__ oprio,
                 int64_t no, const int32_t *__restrict__ late_keys, const int64_t *__restrict__ nlate, int32_t lo,
                 uint32_t width, unsigned long long *__restrict__ out, int *__restrict__ bad) {
    typedef cub::BlockReduce<counts, TPB> reduce_t;
    __shared__ typename reduce_t::TempStorage tmp;
    counts mine;
#pragma unroll
    for (int k = 0; k < NPRIO; k++) mine.c[k] = 0;
    const int64_t nl = *nlate;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < no; i += (int64_t)gridDim.x * blockDim.x) {
        if ((uint32_t)(odate[i] - lo) >= width || !contains(late_keys, nl, okey[i])) continue;
        const unsigned code = oprio[i];
        if (code >= NPRIO) {
            *bad = 1;
            continue;
        }
#pragma unroll
        for (int k = 0; k < NPRIO; k++) mine.c[k] += code == (unsigned)k;
    }
    const counts total = reduce_t(tmp).Reduce(mine, add_counts());
    if (threadIdx.x == 0)
        for (int k = 0; k < NPRIO; k++)
            if (total.c[k]) atomicAdd(&out[k], total.c[k]);
}

static unsigned grid_for(int64_t n) {
    const int64_t g = (n + TPB - 1) / TPB;
    return (unsigned)(g < 1 ? 1 : g > MAX_GRID ? MAX_GRID : g);
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *okey = dkb_cand_column(db, "orders", "o_orderkey");
    const dkb_cand_vec *odate = dkb_cand_column(db, "orders", "o_orderdate");
    const dkb_cand_vec *oprio = dkb_cand_column(db, "orders", "o_orderpriority");
    const dkb_cand_vec *lkey = dkb_cand_column(db, "lineitem", "l_orderkey");
    const dkb_cand_vec *lcommit = dkb_cand_column(db, "lineitem", "l_commitdate");
    const dkb_cand_vec *lreceipt = dkb_cand_column(db, "lineitem", "l_receiptdate");
    const dkb_cand_param *date = dkb_cand_param_find(params, "date");
    if (!okey || !odate || !oprio || !lkey || !lcommit || !lreceipt || !date) return DKB_CAND_EINVAL;
    if (okey->type != DKB_CAND_I32 || lkey->type != DKB_CAND_I32 || odate->type != DKB_CAND_I32 ||
        lcommit->type != DKB_CAND_I32 || lreceipt->type != DKB_CAND_I32 || oprio->type != DKB_CAND_U8 ||
        !oprio->dict || oprio->dict->size > NPRIO || res->ncols != 2 || res->cols[0].type != DKB_CAND_RES_STRING ||
        res->cols[1].type != DKB_CAND_RES_INT)
        return DKB_CAND_EINVAL;
    const int64_t hi_day = add_months(date->i, 3); /* [date, hi_day) */
    if (date->i < INT32_MIN || hi_day > INT32_MAX || hi_day < date->i || lkey->n > INT_MAX)
        return DKB_CAND_EINVAL;

    cudaStream_t s = dkb_cand_stream(env);
    const int64_t no = okey->n, nl = lkey->n;
    int rc = 0, h_bad = 0;
    int64_t r = 0, h_nsel = 0;
    size_t tb = 0, tb2 = 0;
    void *d_tmp = NULL;
    uint8_t *d_late = NULL;
    int32_t *d_sel = NULL, *d_sorted = NULL, *d_uniq = NULL;
    int64_t *d_nsel = NULL, *d_nuniq = NULL;
    unsigned long long *d_counts = NULL, h_counts[NPRIO];
    int *d_bad = NULL;
    dkb_cand_res_col *c_prio = &res->cols[0], *c_count = &res->cols[1];
    memset(h_counts, 0, sizeof h_counts);
    if (no > 0 && nl > 0) {
        const int n = (int)nl;
        CUDA_TRY("cudaMallocAsync late", cudaMallocAsync((void **)&d_late, (size_t)nl, s));
        CUDA_TRY("cudaMallocAsync selected", cudaMallocAsync((void **)&d_sel, sizeof(int32_t) * (size_t)nl, s));
        CUDA_TRY("cudaMallocAsync counts", cudaMallocAsync((void **)&d_nsel, 2 * sizeof(int64_t), s));
        d_nuniq = d_nsel + 1;
        late_flags<<<grid_for(nl), TPB, 0, s>>>((const int32_t *)lcommit->data, (const int32_t *)lreceipt->data, nl,
                                                 d_late);
        CUDA_TRY("late_flags", cudaGetLastError());
        /* 2. the keys of the late line items */
        CUDA_TRY("DeviceSelect::Flagged (size)",
                 cub::DeviceSelect::Flagged(NULL, tb, (const int32_t *)lkey->data, d_late, d_sel, d_nsel, n, s));
        CUDA_TRY("cudaMallocAsync temp", cudaMallocAsync(&d_tmp, tb ? tb : 1, s));
        CUDA_TRY("DeviceSelect::Flagged",
                 cub::DeviceSelect::Flagged(d_tmp, tb, (const int32_t *)lkey->data, d_late, d_sel, d_nsel, n, s));
        CUDA_TRY("cudaMemcpyAsync count", cudaMemcpyAsync(&h_nsel, d_nsel, sizeof h_nsel, cudaMemcpyDeviceToHost, s));
        CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(s));
        CUDA_TRY("cudaFreeAsync temp", cudaFreeAsync(d_tmp, s));
        d_tmp = NULL;
        if (h_nsel < 0 || h_nsel > nl) {
            rc = DKB_CAND_EINTERNAL;
            goto done;
        }
        if (h_nsel == 0) goto fetched;
        /* 3. sorted, each order once */
        {
            const int m = (int)h_nsel;
            CUDA_TRY("cudaMallocAsync sorted", cudaMallocAsync((void **)&d_sorted, sizeof(int32_t) * (size_t)m, s));
            CUDA_TRY("cudaMallocAsync unique", cudaMallocAsync((void **)&d_uniq, sizeof(int32_t) * (size_t)m, s));
            tb = tb2 = 0;
            CUDA_TRY("DeviceRadixSort::SortKeys (size)",
                     cub::DeviceRadixSort::SortKeys(NULL, tb, (const int32_t *)d_sel, d_sorted, m, 0, 32, s));
            CUDA_TRY("DeviceSelect::Unique (size)", cub::DeviceSelect::Unique(NULL, tb2, d_sorted, d_uniq, d_nuniq, m, s));
            if (tb2 > tb) tb = tb2;
            CUDA_TRY("cudaMallocAsync temp", cudaMallocAsync(&d_tmp, tb ? tb : 1, s));
            CUDA_TRY("DeviceRadixSort::SortKeys",
                     cub::DeviceRadixSort::SortKeys(d_tmp, tb, (const int32_t *)d_sel, d_sorted, m, 0, 32, s));
            CUDA_TRY("DeviceSelect::Unique", cub::DeviceSelect::Unique(d_tmp, tb, d_sorted, d_uniq, d_nuniq, m, s));
        }
        /* 4. the window's orders with a late line, per priority */
        CUDA_TRY("cudaMallocAsync counters", cudaMallocAsync((void **)&d_counts, sizeof h_counts, s));
        CUDA_TRY("cudaMallocAsync flag", cudaMallocAsync((void **)&d_bad, sizeof(int), s));
        CUDA_TRY("cudaMemsetAsync counters", cudaMemsetAsync(d_counts, 0, sizeof h_counts, s));
        CUDA_TRY("cudaMemsetAsync flag", cudaMemsetAsync(d_bad, 0, sizeof(int), s));
        count_orders<<<grid_for(no), TPB, 0, s>>>((const int32_t *)okey->data, (const int32_t *)odate->data,
                                                   (const uint8_t *)oprio->data, no, d_uniq, d_nuniq,
                                                   (int32_t)date->i, (uint32_t)(hi_day - date->i), d_counts, d_bad);
        CUDA_TRY("count_orders", cudaGetLastError());
        CUDA_TRY("cudaMemcpyAsync counters",
                 cudaMemcpyAsync(h_counts, d_counts, sizeof h_counts, cudaMemcpyDeviceToHost, s));
        CUDA_TRY("cudaMemcpyAsync flag", cudaMemcpyAsync(&h_bad, d_bad, sizeof(int), cudaMemcpyDeviceToHost, s));
        CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(s));
        if (h_bad) {
            rc = DKB_CAND_EINVAL;
            goto done;
        }
    }
fetched:
    /* 5. the groups with a count, in code order */
    c_prio->str_off[0] = 0;
    for (int code = 0; code < oprio->dict->size; code++) {
        if (!h_counts[code]) continue;
        const int64_t at = c_prio->str_off[r], len = (int64_t)oprio->dict->len[code];
        if (r >= res->cap || at + len > c_prio->bytes_cap) {
            rc = DKB_CAND_ECAP;
            goto done;
        }
        memcpy(c_prio->str_bytes + at, oprio->dict->str[code], (size_t)len);
        c_prio->str_off[r + 1] = at + len;
        c_count->i64[r] = (int64_t)h_counts[code];
        c_prio->is_null[r] = c_count->is_null[r] = 0;
        r++;
    }
    res->nrows = r;
done:
    if (d_tmp) cudaFreeAsync(d_tmp, s);
    if (d_late) cudaFreeAsync(d_late, s);
    if (d_sel) cudaFreeAsync(d_sel, s);
    if (d_sorted) cudaFreeAsync(d_sorted, s);
    if (d_uniq) cudaFreeAsync(d_uniq, s);
    if (d_nsel) cudaFreeAsync(d_nsel, s);
    if (d_counts) cudaFreeAsync(d_counts, s);
    if (d_bad) cudaFreeAsync(d_bad, s);
    if (cudaStreamSynchronize(s) != cudaSuccess && rc == 0) rc = DKB_CAND_ECUDA;
    return rc;
}
