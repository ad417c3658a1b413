/* cpu_agg.c: CPU aggregation per group (aggregate) and over all rows
 * (reduce): SUM (exact int128 for integers), COUNT, MIN, MAX, AVG and
 * COUNT_DISTINCT.
 *
 * Per-group aggregates accumulate into P partial arrays over P contiguous
 * row ranges in parallel (with few groups, 4 interleaved copies per
 * partial to break dependency chains), then merge the partials per group in
 * parallel.
 * Integer results are exact, so P = the thread count; float sums use a
 * fixed P so that their rounding never depends on the thread count.
 * Reductions sum fixed DKB__CHUNK chunks and combine them in order. */
#include <math.h>
#include <string.h>

#include "tensor/cpu.h"

#define F64_PARTS 8

typedef union acc {
    dkb__i128 i;
    double f;
} acc;

/* Partial count P for ngroups groups of `width` bytes each. */
static int parts_for(dkb_tp *tp, int64_t n, int64_t ngroups, bool fixed) {
    int p = fixed ? F64_PARTS : dkb__nthreads(tp, n);
    while (p > 1 && (ngroups * 16 * p > ((int64_t)1 << 30) || n / p < 4096)) p /= 2;
    return p < 1 ? 1 : p;
}

/* Fold x (seen: xs) into r (seen: *rs) for aggregate agg. */
static inline void combine(acc *r, uint8_t *rs, acc x, uint8_t xs, dkb_agg agg, bool f) {
    if (agg == DKB_AGG_MIN || agg == DKB_AGG_MAX) {
        if (!xs) return;
        bool take = !*rs;
        if (!take) {
            if (f) take = agg == DKB_AGG_MIN ? x.f < r->f : x.f > r->f;
            else take = agg == DKB_AGG_MIN ? x.i < r->i : x.i > r->i;
        }
        if (take) *r = x, *rs = 1;
    } else if (f) {
        r->f += x.f;
    } else {
        r->i += x.i;
    }
}

/* Lanes per partial: with few groups, consecutive rows hit the same
 * accumulator, so rows go round-robin to 4 copies (independent chains). */
#define LANES 4
static int lanes_for(int64_t ngroups) { return ngroups <= 1024 ? LANES : 1; }

#define ACC_LOOP(COND_UPDATE, SUM_UPDATE)                                      \
    do {                                                                       \
        if (agg == DKB_AGG_MIN) {                                              \
            for (int64_t j = 0; j < m; j++) {                                  \
                int64_t q = lane[j & (LANES - 1)] + g[j];                      \
                COND_UPDATE(<);                                                \
            }                                                                  \
        } else if (agg == DKB_AGG_MAX) {                                       \
            for (int64_t j = 0; j < m; j++) {                                  \
                int64_t q = lane[j & (LANES - 1)] + g[j];                      \
                COND_UPDATE(>);                                                \
            }                                                                  \
        } else {                                                               \
            for (int64_t j = 0; j < m; j++) {                                  \
                int64_t q = lane[j & (LANES - 1)] + g[j];                      \
                SUM_UPDATE;                                                    \
            }                                                                  \
        }                                                                      \
    } while (0)
#define UPD_F(OP) if (!s[q] || b[j] OP a[q].f) a[q].f = b[j], s[q] = 1
#define UPD_I(OP) if (!s[q] || b[j] OP a[q].i) a[q].i = b[j], s[q] = 1
#define SUM_F a[q].f += b[j]
#define SUM_I a[q].i += b[j]

/* Sum / min / max of integer or float values per group: out[g] (acc). */
static acc *group_acc(dkb_tp *tp, const int64_t *gid, const dkb_tensor *v, int64_t ng, dkb_agg agg) {
    int64_t n = v->n;
    bool f = v->dtype == DKB_TP_F64;
    int P = parts_for(tp, n, ng, f && agg != DKB_AGG_MIN && agg != DKB_AGG_MAX);
    int L = lanes_for(ng);
    int64_t stride = ng * L; /* one partial */
    acc *part = dkb__tp_scratch(tp, "aggregate", sizeof *part * (size_t)(stride * P + 1));
    uint8_t *seen = dkb__tp_scratch(tp, "aggregate", (size_t)(stride * P + 1));
    if (!part || !seen) return NULL;
    int nt = P < tp->threads ? P : tp->threads;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int p = 0; p < P; p++) {
        acc *a = part + (int64_t)p * stride;
        uint8_t *s = seen + (int64_t)p * stride;
        memset(a, 0, sizeof *a * (size_t)stride);
        memset(s, 0, (size_t)stride);
        int64_t lane[LANES];
        for (int l = 0; l < LANES; l++) lane[l] = L == LANES ? l * ng : 0;
        int64_t lo = n * p / P, hi = n * (p + 1) / P;
        for (int64_t off = lo; off < hi; off += DKB__BLK) {
            int64_t m = hi - off < DKB__BLK ? hi - off : DKB__BLK;
            const int64_t *g = gid + off;
            if (f) {
                const double *b = (const double *)v->data + off;
                ACC_LOOP(UPD_F, SUM_F);
            } else if (v->dtype != DKB_TP_I128) {
                int64_t buf[DKB__BLK];
                const int64_t *b = (const int64_t *)v->data + off;
                if (v->dtype != DKB_TP_I64) {
                    dkb__ld_i64(v, off, m, buf);
                    b = buf;
                }
                ACC_LOOP(UPD_I, SUM_I);
            } else {
                const dkb__i128 *b = (const dkb__i128 *)v->data + off;
                ACC_LOOP(UPD_I, SUM_I);
            }
        }
        for (int l = 1; l < L; l++) /* fold the lanes into lane 0 */
            for (int64_t gi = 0; gi < ng; gi++) combine(&a[gi], &s[gi], a[l * ng + gi], s[l * ng + gi], agg, f);
    }
    if (P > 1) {
        int nt2 = dkb__nthreads(tp, ng);
#pragma omp parallel for schedule(static) num_threads(nt2)
        for (int64_t gi = 0; gi < ng; gi++) {
            acc r = part[gi];
            uint8_t rs = seen[gi];
            for (int p = 1; p < P; p++) combine(&r, &rs, part[(int64_t)p * stride + gi], seen[(int64_t)p * stride + gi], agg, f);
            part[gi] = r;
        }
    }
    return part;
}

/* Rows per group. */
static int64_t *group_count(dkb_tp *tp, const int64_t *gid, int64_t n, int64_t ng, int64_t *out) {
    int P = parts_for(tp, n, ng, false);
    int L = lanes_for(ng);
    int64_t stride = ng * L;
    int64_t *part = dkb__tp_scratch(tp, "aggregate", sizeof *part * (size_t)(stride * P + 1));
    if (!part) return NULL;
    int nt = P < tp->threads ? P : tp->threads;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int p = 0; p < P; p++) {
        int64_t *c = part + (int64_t)p * stride, lane[LANES];
        for (int l = 0; l < LANES; l++) lane[l] = L == LANES ? l * ng : 0;
        memset(c, 0, sizeof *c * (size_t)stride);
        int64_t lo = n * p / P, hi = n * (p + 1) / P;
        for (int64_t i = lo; i < hi; i++) c[lane[i & (LANES - 1)] + gid[i]]++;
        for (int l = 1; l < L; l++)
            for (int64_t gi = 0; gi < ng; gi++) c[gi] += c[l * ng + gi];
    }
    int nt2 = dkb__nthreads(tp, ng);
#pragma omp parallel for schedule(static) num_threads(nt2)
    for (int64_t gi = 0; gi < ng; gi++) {
        int64_t sum = 0;
        for (int p = 0; p < P; p++) sum += part[(int64_t)p * stride + gi];
        out[gi] = sum;
    }
    return out;
}

static double pow10d(int s) { return (double)dkb__pow10_i128(s); }

/* acc -> output element of dtype t. */
static void store_acc(dkb_tensor *r, int64_t i, acc a) {
    switch (r->dtype) {
    case DKB_TP_BOOL: case DKB_TP_U8: ((uint8_t *)r->data)[i] = (uint8_t)a.i; break;
    case DKB_TP_I8: ((int8_t *)r->data)[i] = (int8_t)a.i; break;
    case DKB_TP_I16: ((int16_t *)r->data)[i] = (int16_t)a.i; break;
    case DKB_TP_I32: ((int32_t *)r->data)[i] = (int32_t)a.i; break;
    case DKB_TP_I64: ((int64_t *)r->data)[i] = (int64_t)a.i; break;
    case DKB_TP_I128: ((dkb__i128 *)r->data)[i] = a.i; break;
    default: ((double *)r->data)[i] = a.f; break;
    }
}

static dkb_tensor *count_distinct(dkb_tp *tp, const dkb_groups *g, const dkb_tensor *values) {
    int64_t ng = g->ngroups;
    const dkb_tensor *keys[2] = {g->group_id, values};
    dkb_groups pairs = dkb__cpu_group(tp, keys, 2);
    if (!pairs.group_id) return NULL;
    dkb_tensor *r = dkb__tp_new(tp, "aggregate", DKB_TP_I64, ng);
    if (!r) return NULL;
    int64_t *o = r->data;
    const int64_t *gid = g->group_id->data, *fr = pairs.first_row->data;
    memset(o, 0, sizeof *o * (size_t)ng);
    for (int64_t p = 0; p < pairs.ngroups; p++) o[gid[fr[p]]]++;
    return r;
}

/* The average of integers or decimals from their exact sum, as DuckDB's avg
 * computes it: the sum over count * 10^scale in long double, rounded once
 * to a double (the plain double quotient can be 1 ulp off). */
static double exact_avg(dkb__i128 sum, int64_t count, double pow10_scale) {
    return (double)((long double)sum / ((long double)count * (long double)pow10_scale));
}

dkb_tensor *dkb__cpu_aggregate(dkb_tp *tp, const dkb_groups *g, dkb_agg agg, const dkb_tensor *values) {
    int64_t ng = g->ngroups, n = g->group_id->n;
    const int64_t *gid = g->group_id->data;
    if (agg == DKB_AGG_COUNT_DISTINCT) return count_distinct(tp, g, values);
    dkb_tensor *r = NULL;
    SCRATCH_BEGIN(tp);
    if (agg == DKB_AGG_COUNT) {
        r = dkb__tp_new(tp, "aggregate", DKB_TP_I64, ng);
        if (r && !group_count(tp, gid, n, ng, r->data)) r = NULL;
        goto out;
    }
    bool f = values->dtype == DKB_TP_F64;
    acc *a = group_acc(tp, gid, values, ng, agg == DKB_AGG_AVG ? DKB_AGG_SUM : agg);
    if (!a) goto out;
    if (agg == DKB_AGG_AVG) {
        int64_t *cnt = dkb__tp_scratch(tp, "aggregate", sizeof *cnt * (size_t)(ng + 1));
        if (!cnt || !group_count(tp, gid, n, ng, cnt)) goto out;
        r = dkb__tp_new(tp, "aggregate", DKB_TP_F64, ng);
        if (!r) goto out;
        double *o = r->data, p = f ? 1.0 : pow10d(values->scale);
        for (int64_t i = 0; i < ng; i++) o[i] = f ? a[i].f / (double)cnt[i] : exact_avg(a[i].i, cnt[i], p);
        goto out;
    }
    dkb_tp_dtype t = agg == DKB_AGG_SUM ? (f ? DKB_TP_F64 : DKB_TP_I128) : values->dtype;
    r = dkb__tp_new(tp, "aggregate", t, ng);
    if (!r) goto out;
    r->scale = f ? 0 : values->scale;
    if (agg != DKB_AGG_SUM) r->dict = values->dict;
    for (int64_t i = 0; i < ng; i++) store_acc(r, i, a[i]);
out:
    SCRATCH_END(tp);
    return r;
}

/* ---- reductions over all rows ---- */

dkb_tensor *dkb__cpu_reduce(dkb_tp *tp, dkb_agg agg, const dkb_tensor *values) {
    int64_t n = values->n, nc = dkb__nchunks(n);
    bool f = values->dtype == DKB_TP_F64;
    if (agg == DKB_AGG_COUNT) return dkb__cpu_full_i64(tp, DKB_TP_I64, 1, n);
    if (agg == DKB_AGG_COUNT_DISTINCT) {
        const dkb_tensor *keys[1] = {values};
        dkb_groups g = dkb__cpu_group(tp, keys, 1);
        return g.group_id ? dkb__cpu_full_i64(tp, DKB_TP_I64, 1, g.ngroups) : NULL;
    }
    if (n == 0 && agg != DKB_AGG_SUM) {
        dkb_tensor *r = dkb__tp_new(tp, "reduce", agg == DKB_AGG_AVG ? DKB_TP_F64 : values->dtype, 0);
        if (r && agg != DKB_AGG_AVG) r->scale = values->scale, r->dict = values->dict;
        return r;
    }
    dkb_tensor *r = NULL;
    SCRATCH_BEGIN(tp);
    acc *part = dkb__tp_scratch(tp, "reduce", sizeof *part * (size_t)(nc + 1));
    if (!part) goto out;
    dkb_agg op = agg == DKB_AGG_AVG ? DKB_AGG_SUM : agg;
    int nt = dkb__nthreads(tp, n);
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t c = 0; c < nc; c++) {
        int64_t lo = c * DKB__CHUNK, hi = lo + DKB__CHUNK < n ? lo + DKB__CHUNK : n;
        acc a;
        bool first = true;
        a.i = 0;
        for (int64_t off = lo; off < hi; off += DKB__BLK) {
            int64_t m = hi - off < DKB__BLK ? hi - off : DKB__BLK;
            if (f) {
                const double *b = (const double *)values->data + off;
                for (int64_t j = 0; j < m; j++) {
                    if (op == DKB_AGG_SUM) a.f += b[j];
                    else if (first || (op == DKB_AGG_MIN ? b[j] < a.f : b[j] > a.f)) a.f = b[j];
                    first = false;
                }
            } else if (values->dtype != DKB_TP_I128) {
                int64_t b[DKB__BLK];
                dkb__ld_i64(values, off, m, b);
                if (op == DKB_AGG_SUM) {
                    dkb__i128 t = 0;
                    for (int64_t j = 0; j < m; j++) t += b[j];
                    a.i += t;
                } else {
                    for (int64_t j = 0; j < m; j++) {
                        if (first || (op == DKB_AGG_MIN ? b[j] < a.i : b[j] > a.i)) a.i = b[j];
                        first = false;
                    }
                }
            } else {
                const dkb__i128 *b = (const dkb__i128 *)values->data + off;
                for (int64_t j = 0; j < m; j++) {
                    if (op == DKB_AGG_SUM) a.i += b[j];
                    else if (first || (op == DKB_AGG_MIN ? b[j] < a.i : b[j] > a.i)) a.i = b[j];
                    first = false;
                }
            }
        }
        part[c] = a;
    }
    acc t;
    t.i = 0;
    if (n > 0) t = part[0];
    for (int64_t c = 1; c < nc; c++) {
        acc x = part[c];
        if (op == DKB_AGG_SUM) {
            if (f) t.f += x.f;
            else t.i += x.i;
        } else if (f ? (op == DKB_AGG_MIN ? x.f < t.f : x.f > t.f) : (op == DKB_AGG_MIN ? x.i < t.i : x.i > t.i)) {
            t = x;
        }
    }
    if (agg == DKB_AGG_AVG) {
        r = dkb__tp_new(tp, "reduce", DKB_TP_F64, 1);
        if (r) ((double *)r->data)[0] = f ? t.f / (double)n : exact_avg(t.i, n, pow10d(values->scale));
        goto out;
    }
    r = dkb__tp_new(tp, "reduce", op == DKB_AGG_SUM ? (f ? DKB_TP_F64 : DKB_TP_I128) : values->dtype, 1);
    if (!r) goto out;
    r->scale = f ? 0 : values->scale;
    if (op != DKB_AGG_SUM) r->dict = values->dict;
    if (n == 0) {
        if (f) ((double *)r->data)[0] = 0;
        else ((dkb__i128 *)r->data)[0] = 0;
    } else {
        store_acc(r, 0, t);
    }
out:
    SCRATCH_END(tp);
    return r;
}
