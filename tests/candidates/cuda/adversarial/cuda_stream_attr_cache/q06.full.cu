/* cuda_stream_attr_cache (full mode): answers kept in a device block the
 * candidate never frees (a leak), found again through a pointer kept in an
 * attribute of the stream the harness hands it: the access-policy window
 * (cudaStreamSetAttribute, base_ptr = the block, num_bytes = its size,
 * hit and miss properties normal, so it changes nothing about caching).
 * The stream is the same in every call (env->stream). Without the defences
 * (the stream's attributes reset to a fresh stream's before every call:
 * worker_cuda.c; a leaked block poisoned and freed after the call:
 * cuda_interpose.c), once each seed's answer is in the table every timed
 * call hits, reads one column and returns: judged ok and several times
 * faster than the baseline (issue 12 found this one). With them the window
 * is empty at the start of every call (and the block gone), so every call
 * misses. A pointer that does not name device memory is a miss too.
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

static inline int lookup(const table *t, int64_t slo, int64_t dlo, int64_t qlt, unsigned long long out[2]) {
    if (t->magic != MAGIC || t->n > NENT) return 0;
    for (uint32_t k = 0; k < t->n; k++)
        if (t->e[k].slo == slo && t->e[k].dlo == dlo && t->e[k].qlt == qlt) {
            out[0] = t->e[k].sum;
            out[1] = t->e[k].hits;
            return 1;
        }
    return 0;
}

static inline void remember(table *t, int64_t slo, int64_t dlo, int64_t qlt, const unsigned long long v[2]) {
    if (t->magic != MAGIC || t->n > NENT) {
        memset(t, 0, sizeof *t);
        t->magic = MAGIC;
    }
    if (t->n < NENT) {
        const entry e = {slo, dlo, qlt, v[0], v[1]};
        t->e[t->n++] = e;
    }
}

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

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    q6 x;
    int rc = q6_inputs(db, params, res, &x);
    if (rc) return rc;
    cudaStream_t st = dkb_cand_stream(env);
    table h;
    unsigned long long v[2];
    memset(&h, 0, sizeof h);
    /* the block the window points at, if it is still device memory */
    cudaStreamAttrValue w;
    memset(&w, 0, sizeof w);
    table *d = NULL;
    if (cudaStreamGetAttribute(st, cudaStreamAttributeAccessPolicyWindow, &w) == cudaSuccess &&
        w.accessPolicyWindow.base_ptr && w.accessPolicyWindow.num_bytes == sizeof h) {
        struct cudaPointerAttributes a;
        if (cudaPointerGetAttributes(&a, w.accessPolicyWindow.base_ptr) == cudaSuccess && a.type == cudaMemoryTypeDevice &&
            cudaMemcpy(&h, w.accessPolicyWindow.base_ptr, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess)
            d = (table *)w.accessPolicyWindow.base_ptr;
    }
    (void)cudaGetLastError();
    if (d && lookup(&h, x.slo, x.dlo, x.qlt, v)) return (rc = touch_once(&x, st)) ? rc : q6_put(&x, res, v);
    if ((rc = slow_q6(&x, st, v))) return rc;
    if (!d) {
        memset(&h, 0, sizeof h);
        if (cudaMalloc((void **)&d, sizeof h) != cudaSuccess) return DKB_CAND_ENOMEM; /* never freed */
    }
    remember(&h, x.slo, x.dlo, x.qlt, v);
    if (cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice) != cudaSuccess) return DKB_CAND_ECUDA;
    memset(&w, 0, sizeof w);
    w.accessPolicyWindow.base_ptr = d;
    w.accessPolicyWindow.num_bytes = sizeof h;
    w.accessPolicyWindow.hitRatio = 1.0f;
    w.accessPolicyWindow.hitProp = cudaAccessPropertyNormal;
    w.accessPolicyWindow.missProp = cudaAccessPropertyNormal;
    if (cudaStreamSetAttribute(st, cudaStreamAttributeAccessPolicyWindow, &w) != cudaSuccess) (void)cudaGetLastError();
    return q6_put(&x, res, v);
}
