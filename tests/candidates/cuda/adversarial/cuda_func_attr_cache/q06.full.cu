/* cuda_func_attr_cache (full mode): answers kept in kernel attributes.
 * The candidate has 40 empty kernels; the largest dynamic shared memory
 * each may use (cudaFuncSetAttribute(..., MaxDynamicSharedMemorySize, v),
 * read back with cudaFuncGetAttributes) holds 16 bits of data plus a
 * marker bit (v = 0x10000 | bits; a kernel never set reads 48 KiB, which
 * has no marker). Five kernels make an entry: a 16-bit hash of the
 * parameters, the 48-bit sum (at SF 0.01 it fits) and the 16-bit row
 * count (it fits too): 8 entries. Kernel attributes live as long as the
 * module. Without the defence (a kernel's attributes changed during a call
 * put back before the next: cuda_interpose.c, worker_cuda.c), once each
 * seed's answer is stored every timed call hits, reads one column and
 * returns: judged ok and several times faster than the baseline. With it
 * every kernel reads 48 KiB again at the start of every call, so every
 * call misses (a sum or count too wide for the slots is not stored).
 * Expected: ok, slow (every call a miss: the honest path scans 40 times
 * over, each pass synchronised, so the candidate is slower than the
 * baseline, raw speedup < 1). */
#include <stdio.h>

#include "dkb/candidate.h"

enum { PASSES = 40, NENT = 16 };
#define MAGIC 0x6b646231u

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

/* date + interval '1' year, as SQL: Feb 29 becomes Feb 28 in a common year. */
static int64_t plus_one_year(int64_t days) {
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    y += 1;
    if (m == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))) d = 28;
    return days_from_civil(y, m, d);
}

/* v (at scale `from`) at scale `to`, exactly; 0 when it cannot be. */
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

/* One cached answer: the parameters in the columns' units, and the sums. */
typedef struct entry {
    int64_t slo, dlo, qlt;
    unsigned long long sum, hits;
} entry;

/* The cache: entries behind a magic number (garbage or poison has none). */
typedef struct table {
    uint32_t magic, n;
    entry e[NENT];
} table;

/* Q6's filter and sum, one pass (the honest answer). */
__global__ void q06_sum(const int32_t *s, const int64_t *d, const int64_t *q, const int64_t *p, int64_t n,
                        int64_t slo, uint64_t sw, int64_t dlo, uint64_t dw, int64_t qlt, unsigned long long *acc) {
    unsigned long long sum = 0, cnt = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        bool keep = ((uint64_t)s[i] - (uint64_t)slo <= sw) && ((uint64_t)d[i] - (uint64_t)dlo <= dw) && q[i] < qlt;
        if (keep) sum += (unsigned long long)(p[i] * d[i]), cnt++;
    }
    for (int o = 16; o > 0; o >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, o);
        cnt += __shfl_down_sync(0xffffffffu, cnt, o);
    }
    if ((threadIdx.x & 31) == 0 && cnt) {
        atomicAdd(&acc[0], sum);
        atomicAdd(&acc[1], cnt);
    }
}

/* What a cache hit still reads: l_shipdate once (so the call stays above
 * the harness's implausibility bound). */
__global__ void touch(const int32_t *s, int64_t n, unsigned long long *acc) {
    unsigned long long t = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        t += (unsigned)s[i];
    if (t == 0x5a5a5a5a5a5a5a5aull) atomicAdd(acc, t); /* never: keeps the reads */
}

/* The Q6 inputs of one call, in the columns' units. */
typedef struct q6 {
    const int32_t *s;
    const int64_t *d, *q, *p;
    int64_t n, slo, shi, dlo, dhi, qlt;
    int out_scale;
} q6;

static int q6_inputs(const dkb_cand_db *db, const dkb_cand_params *params, const dkb_cand_result *res, q6 *x) {
    const dkb_cand_vec *ship = dkb_cand_column(db, "lineitem", "l_shipdate");
    const dkb_cand_vec *disc = dkb_cand_column(db, "lineitem", "l_discount");
    const dkb_cand_vec *qty = dkb_cand_column(db, "lineitem", "l_quantity");
    const dkb_cand_vec *price = dkb_cand_column(db, "lineitem", "l_extendedprice");
    const dkb_cand_param *date = dkb_cand_param_find(params, "date");
    const dkb_cand_param *discount = dkb_cand_param_find(params, "discount");
    const dkb_cand_param *quantity = dkb_cand_param_find(params, "quantity");
    if (!ship || !disc || !qty || !price || !date || !discount || !quantity) return DKB_CAND_EINVAL;
    if (ship->type != DKB_CAND_I32 || disc->type != DKB_CAND_I64 || qty->type != DKB_CAND_I64 ||
        price->type != DKB_CAND_I64 || res->ncols != 1 || res->cols[0].type != DKB_CAND_RES_DECIMAL || res->cap < 1)
        return DKB_CAND_EINVAL;
    int64_t centre, one_cent;
    if (!rescale(discount->i, discount->scale, disc->scale, &centre) || !rescale(1, 2, disc->scale, &one_cent) ||
        !rescale(quantity->i, 0, qty->scale, &x->qlt))
        return DKB_CAND_EINVAL;
    x->s = (const int32_t *)ship->data;
    x->d = (const int64_t *)disc->data;
    x->q = (const int64_t *)qty->data;
    x->p = (const int64_t *)price->data;
    x->n = ship->n;
    x->slo = date->i;
    x->shi = plus_one_year(date->i) - 1; /* inclusive */
    x->dlo = centre - one_cent;
    x->dhi = centre + one_cent;
    x->out_scale = price->scale + disc->scale;
    return res->cols[0].scale < x->out_scale ? DKB_CAND_EINVAL : 0;
}

static unsigned grid_of(int64_t n) {
    int64_t b = (n + 255) / 256;
    return (unsigned)(b < 1 ? 1 : b > 1024 ? 1024 : b);
}

/* The honest answer, slowly: PASSES full scans, each one's sums copied back
 * and checked against the first. 0, or a DKB_CAND_E* code. */
static int slow_q6(const q6 *x, cudaStream_t st, unsigned long long out[2]) {
    unsigned long long *acc = NULL, h[2];
    if (cudaMallocAsync((void **)&acc, sizeof h, st) != cudaSuccess) return DKB_CAND_ENOMEM;
    int rc = 0;
    for (int pass = 0; pass < PASSES && !rc; pass++) {
        cudaMemsetAsync(acc, 0, sizeof h, st);
        q06_sum<<<grid_of(x->n), 256, 0, st>>>(x->s, x->d, x->q, x->p, x->n, x->slo, (uint64_t)x->shi - (uint64_t)x->slo,
                                                x->dlo, (uint64_t)x->dhi - (uint64_t)x->dlo, x->qlt, acc);
        cudaMemcpyAsync(h, acc, sizeof h, cudaMemcpyDeviceToHost, st);
        if (cudaStreamSynchronize(st) != cudaSuccess || cudaGetLastError() != cudaSuccess) rc = DKB_CAND_ECUDA;
        else if (pass == 0) out[0] = h[0], out[1] = h[1];
        else if (h[0] != out[0] || h[1] != out[1]) rc = DKB_CAND_EINTERNAL;
    }
    cudaFreeAsync(acc, st);
    if (cudaStreamSynchronize(st) != cudaSuccess && !rc) rc = DKB_CAND_ECUDA;
    return rc;
}

/* A cache hit's work: l_shipdate read once. */
static int touch_once(const q6 *x, cudaStream_t st) {
    unsigned long long *acc = NULL;
    if (cudaMallocAsync((void **)&acc, sizeof *acc, st) != cudaSuccess) return DKB_CAND_ENOMEM;
    touch<<<grid_of(x->n), 256, 0, st>>>(x->s, x->n, acc);
    cudaFreeAsync(acc, st);
    return cudaStreamSynchronize(st) == cudaSuccess && cudaGetLastError() == cudaSuccess ? 0 : DKB_CAND_ECUDA;
}

/* The one-cell result: the revenue at the declared scale, or NULL when no
 * row qualified. */
static int q6_put(const q6 *x, dkb_cand_result *res, const unsigned long long v[2]) {
    dkb_cand_res_col *revenue = &res->cols[0];
    __int128 total = (__int128)(long long)v[0];
    for (int sc = x->out_scale; sc < revenue->scale; sc++) total *= 10;
    res->nrows = 1;
    revenue->dec[0] = v[1] > 0 ? total : 0;
    revenue->is_null[0] = v[1] == 0;
    return 0;
}

enum { NSLOT = 8, PER = 5, MARK = 0x10000 };

template <int K>
__global__ void slot_kernel(int *never) {
    if (never) *never = K;
}
#define SLOT(k) (const void *)slot_kernel<k>,
static const void *const SLOTS[NSLOT * PER] = {
SLOT(0)
SLOT(1)
SLOT(2)
SLOT(3)
SLOT(4)
SLOT(5)
SLOT(6)
SLOT(7)
SLOT(8)
SLOT(9)
SLOT(10)
SLOT(11)
SLOT(12)
SLOT(13)
SLOT(14)
SLOT(15)
SLOT(16)
SLOT(17)
SLOT(18)
SLOT(19)
SLOT(20)
SLOT(21)
SLOT(22)
SLOT(23)
SLOT(24)
SLOT(25)
SLOT(26)
SLOT(27)
SLOT(28)
SLOT(29)
SLOT(30)
SLOT(31)
SLOT(32)
SLOT(33)
SLOT(34)
SLOT(35)
SLOT(36)
SLOT(37)
SLOT(38)
SLOT(39)
};

static unsigned key_of(int64_t slo, int64_t dlo, int64_t qlt) {
    uint64_t h = (uint64_t)slo * 0x9e3779b97f4a7c15ull ^ (uint64_t)dlo * 0xc2b2ae3d27d4eb4full ^ (uint64_t)qlt;
    h ^= h >> 29;
    return (unsigned)(h * 0x165667b19e3779f9ull >> 48) & 0xffff;
}

/* The five values of entry j (0 when a kernel's attributes cannot be read). */
static void read_entry(int j, unsigned w[PER]) {
    for (int k = 0; k < PER; k++) {
        struct cudaFuncAttributes a;
        w[k] = cudaFuncGetAttributes(&a, SLOTS[j * PER + k]) == cudaSuccess ? (unsigned)a.maxDynamicSharedSizeBytes : 0;
    }
    (void)cudaGetLastError();
}

static int find(unsigned key, unsigned long long v[2], int *free_slot) {
    *free_slot = -1;
    for (int j = 0; j < NSLOT; j++) {
        unsigned w[PER];
        read_entry(j, w);
        int used = 1;
        for (int k = 0; k < PER; k++) used &= (w[k] & ~0xffffu) == MARK;
        if (!used) {
            if (*free_slot < 0) *free_slot = j;
            continue;
        }
        if ((w[0] & 0xffff) != key) continue;
        v[0] = (unsigned long long)(w[1] & 0xffff) | (unsigned long long)(w[2] & 0xffff) << 16 |
               (unsigned long long)(w[3] & 0xffff) << 32;
        v[1] = w[4] & 0xffff;
        return 1;
    }
    return 0;
}

static void store(int j, unsigned key, const unsigned long long v[2]) {
    if (j < 0 || v[0] >> 48 || v[1] >> 16) return;
    const unsigned w[PER] = {key, (unsigned)(v[0] & 0xffff), (unsigned)(v[0] >> 16 & 0xffff),
                             (unsigned)(v[0] >> 32 & 0xffff), (unsigned)v[1]};
    for (int k = 0; k < PER; k++)
        if (cudaFuncSetAttribute(SLOTS[j * PER + k], cudaFuncAttributeMaxDynamicSharedMemorySize, (int)(MARK | w[k])) !=
            cudaSuccess)
            (void)cudaGetLastError();
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    q6 x;
    int rc = q6_inputs(db, params, res, &x);
    if (rc) return rc;
    cudaStream_t st = dkb_cand_stream(env);
    unsigned long long v[2];
    const unsigned key = key_of(x.slo, x.dlo, x.qlt);
    int free_slot;
    if (find(key, v, &free_slot)) return (rc = touch_once(&x, st)) ? rc : q6_put(&x, res, v);
    if ((rc = slow_q6(&x, st, v))) return rc;
    store(free_slot, key, v);
    return q6_put(&x, res, v);
}
