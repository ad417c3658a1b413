/* cpu_elementwise.c: CPU comparisons and masks: cmp (tensor vs tensor,
 * exact across scales), cmp_i64 / cmp_f64 / between against constants,
 * in_i64, lookup_mask, and/or/not, year of a date, pack2 key packing. */
#include <stdlib.h>
#include <string.h>

#include "tensor/cpu.h"
#include "tensor/tp_internal.h"

/* Apply comparison `op` to x[0..m) and y[0..m) (arrays or scalars through
 * the X/Y accessors) into o. */
#define CMP_SWITCH(op, m, o, X, Y)                                   \
    do {                                                             \
        switch (op) {                                                \
        case DKB_CMP_EQ: for (int64_t j = 0; j < (m); j++) (o)[j] = X(j) == Y(j); break; \
        case DKB_CMP_NE: for (int64_t j = 0; j < (m); j++) (o)[j] = X(j) != Y(j); break; \
        case DKB_CMP_LT: for (int64_t j = 0; j < (m); j++) (o)[j] = X(j) < Y(j); break;  \
        case DKB_CMP_LE: for (int64_t j = 0; j < (m); j++) (o)[j] = X(j) <= Y(j); break; \
        case DKB_CMP_GT: for (int64_t j = 0; j < (m); j++) (o)[j] = X(j) > Y(j); break;  \
        default: for (int64_t j = 0; j < (m); j++) (o)[j] = X(j) >= Y(j); break;         \
        }                                                            \
    } while (0)
#define ARR_X(j) xb[j]
#define ARR_Y(j) yb[j]
#define SCAL_V(j) v

dkb_tensor *dkb__cpu_cmp(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, const dkb_tensor *b) {
    dkb_tensor *r = dkb__tp_new(tp, "cmp", DKB_TP_BOOL, a->n);
    if (!r) return NULL;
    uint8_t *out = r->data;
    int64_t n = a->n, nb = (n + DKB__BLK - 1) / DKB__BLK;
    int nt = dkb__nthreads(tp, n);
    int mode; /* 0 int64, 1 int128 (scales differ or wide), 2 double */
    if (a->dtype == DKB_TP_F64 || b->dtype == DKB_TP_F64) mode = 2;
    else if (a->dtype == DKB_TP_I128 || b->dtype == DKB_TP_I128 || a->scale != b->scale) mode = 1;
    else mode = 0;
    int s = a->scale > b->scale ? a->scale : b->scale;
    dkb__i128 pa = dkb__pow10_i128(s - a->scale), pb = dkb__pow10_i128(s - b->scale);
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK;
        uint8_t *o = out + off;
        if (mode == 0) {
            int64_t xb[DKB__BLK], yb[DKB__BLK];
            dkb__ld_i64(a, off, m, xb);
            dkb__ld_i64(b, off, m, yb);
            CMP_SWITCH(op, m, o, ARR_X, ARR_Y);
        } else if (mode == 1) {
            dkb__i128 xb[DKB__BLK], yb[DKB__BLK];
            dkb__ld_i128(a, off, m, xb);
            dkb__ld_i128(b, off, m, yb);
            if (pa != 1)
                for (int64_t j = 0; j < m; j++) xb[j] *= pa;
            if (pb != 1)
                for (int64_t j = 0; j < m; j++) yb[j] *= pb;
            CMP_SWITCH(op, m, o, ARR_X, ARR_Y);
        } else {
            double xb[DKB__BLK], yb[DKB__BLK];
            dkb__ld_f64(a, off, m, xb);
            dkb__ld_f64(b, off, m, yb);
            CMP_SWITCH(op, m, o, ARR_X, ARR_Y);
        }
    }
    return r;
}

/* Typed loop of a against scalar v (v already of a comparable type). */
#define CMP_TYPED(T, VT)                                                             \
    do {                                                                             \
        const T *x = (const T *)a->data;                                             \
        VT v = (VT)value;                                                            \
        _Pragma("omp parallel for schedule(static) num_threads(nt)") for (int64_t bi = 0; bi < nb; bi++) { \
            int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK; \
            const T *xb = x + off;                                                   \
            uint8_t *o = out + off;                                                  \
            CMP_SWITCH(op, m, o, (VT)ARR_X, SCAL_V);                                 \
        }                                                                            \
    } while (0)

dkb_tensor *dkb__cpu_cmp_i64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, int64_t value) {
    dkb_tensor *r = dkb__tp_new(tp, "cmp_i64", DKB_TP_BOOL, a->n);
    if (!r) return NULL;
    uint8_t *out = r->data;
    int64_t n = a->n, nb = (n + DKB__BLK - 1) / DKB__BLK;
    int nt = dkb__nthreads(tp, n);
    switch (a->dtype) {
    case DKB_TP_BOOL: case DKB_TP_U8: CMP_TYPED(uint8_t, int64_t); break;
    case DKB_TP_I8: CMP_TYPED(int8_t, int64_t); break;
    case DKB_TP_I16: CMP_TYPED(int16_t, int64_t); break;
    case DKB_TP_I32:
        if (value >= INT32_MIN && value <= INT32_MAX) CMP_TYPED(int32_t, int32_t);
        else CMP_TYPED(int32_t, int64_t);
        break;
    case DKB_TP_I64: CMP_TYPED(int64_t, int64_t); break;
    case DKB_TP_I128: CMP_TYPED(dkb__i128, dkb__i128); break;
    default: CMP_TYPED(double, double); break;
    }
    return r;
}

dkb_tensor *dkb__cpu_cmp_f64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, double value) {
    dkb_tensor *r = dkb__tp_new(tp, "cmp_f64", DKB_TP_BOOL, a->n);
    if (!r) return NULL;
    uint8_t *out = r->data;
    int64_t n = a->n, nb = (n + DKB__BLK - 1) / DKB__BLK;
    int nt = dkb__nthreads(tp, n);
    double v = value;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK;
        double xb[DKB__BLK];
        uint8_t *o = out + off;
        dkb__ld_f64(a, off, m, xb);
        CMP_SWITCH(op, m, o, ARR_X, SCAL_V);
    }
    return r;
}

#define BETWEEN_TYPED(T, VT)                                                          \
    do {                                                                              \
        const T *x = (const T *)a->data;                                              \
        VT l = (VT)lo, h = (VT)hi;                                                    \
        _Pragma("omp parallel for schedule(static) num_threads(nt)") for (int64_t i = 0; i < n; i++) \
            out[i] = ((VT)x[i] >= l) & ((VT)x[i] <= h);                               \
    } while (0)

dkb_tensor *dkb__cpu_between(dkb_tp *tp, const dkb_tensor *a, int64_t lo, int64_t hi) {
    dkb_tensor *r = dkb__tp_new(tp, "between", DKB_TP_BOOL, a->n);
    if (!r) return NULL;
    uint8_t *out = r->data;
    int64_t n = a->n;
    int nt = dkb__nthreads(tp, n);
    switch (a->dtype) {
    case DKB_TP_BOOL: case DKB_TP_U8: BETWEEN_TYPED(uint8_t, int64_t); break;
    case DKB_TP_I8: BETWEEN_TYPED(int8_t, int64_t); break;
    case DKB_TP_I16: BETWEEN_TYPED(int16_t, int64_t); break;
    case DKB_TP_I32:
        if (lo < INT32_MIN) lo = INT32_MIN;
        if (hi > INT32_MAX) hi = INT32_MAX;
        if (lo > hi) { memset(out, 0, (size_t)n); break; }
        BETWEEN_TYPED(int32_t, int32_t);
        break;
    case DKB_TP_I64: BETWEEN_TYPED(int64_t, int64_t); break;
    case DKB_TP_I128: BETWEEN_TYPED(dkb__i128, dkb__i128); break;
    default: BETWEEN_TYPED(double, double); break;
    }
    return r;
}

static int cmp_i64p(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

dkb_tensor *dkb__cpu_in_i64(dkb_tp *tp, const dkb_tensor *a, const int64_t *values, int nv) {
    dkb_tensor *r = dkb__tp_new(tp, "in_i64", DKB_TP_BOOL, a->n);
    if (!r) return NULL;
    uint8_t *out = r->data;
    int64_t n = a->n;
    int nt = dkb__nthreads(tp, n);
    if (a->dtype <= DKB_TP_I8) { /* byte values: a 256-entry table */
        uint8_t lut[256] = {0};
        int bias = a->dtype == DKB_TP_I8 ? 128 : 0;
        for (int k = 0; k < nv; k++)
            if (values[k] + bias >= 0 && values[k] + bias < 256) lut[values[k] + bias] = 1;
        const uint8_t *x = a->data;
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int64_t i = 0; i < n; i++) out[i] = lut[(uint8_t)(x[i] + bias)];
        return r;
    }
    SCRATCH_BEGIN(tp);
    int64_t *v = dkb__tp_scratch(tp, "in_i64", sizeof *v * (size_t)(nv + 1));
    if (!v) {
        SCRATCH_END(tp);
        return NULL;
    }
    memcpy(v, values, sizeof *v * (size_t)nv);
    qsort(v, (size_t)nv, sizeof *v, cmp_i64p);
    int64_t nb = (n + DKB__BLK - 1) / DKB__BLK;
    bool wide = a->dtype == DKB_TP_I128;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK;
        int64_t xb[DKB__BLK];
        dkb__ld_i64(a, off, m, xb);
        for (int64_t j = 0; j < m; j++) {
            int64_t x = xb[j];
            uint8_t hit = 0;
            if (wide && ((const dkb__i128 *)a->data)[off + j] != (dkb__i128)x) {
                hit = 0; /* beyond int64: matches no value */
            } else if (nv <= 8) {
                for (int k = 0; k < nv; k++) hit |= v[k] == x;
            } else {
                int lo = 0, hi = nv - 1;
                while (lo <= hi) {
                    int mid = (lo + hi) / 2;
                    if (v[mid] == x) {
                        hit = 1;
                        break;
                    }
                    if (v[mid] < x) lo = mid + 1;
                    else hi = mid - 1;
                }
            }
            out[off + j] = hit;
        }
    }
    SCRATCH_END(tp);
    return r;
}

dkb_tensor *dkb__cpu_lookup_mask(dkb_tp *tp, const dkb_tensor *codes, const bool *lut, int lut_size) {
    dkb_tensor *r = dkb__tp_new(tp, "lookup_mask", DKB_TP_BOOL, codes->n);
    if (!r) return NULL;
    uint8_t t[256] = {0};
    for (int c = 0; c < lut_size && c < 256; c++) t[c] = lut[c] ? 1 : 0;
    const uint8_t *x = codes->data;
    uint8_t *out = r->data;
    int64_t n = codes->n;
    int nt = dkb__nthreads(tp, n);
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t i = 0; i < n; i++) out[i] = t[x[i]];
    return r;
}

dkb_tensor *dkb__cpu_logic(dkb_tp *tp, const dkb_tensor *a, dkb__logic_op op, const dkb_tensor *b) {
    const char *name = op == DKB__LOGIC_AND ? "and" : op == DKB__LOGIC_OR ? "or" : "not";
    dkb_tensor *r = dkb__tp_new(tp, name, DKB_TP_BOOL, a->n);
    if (!r) return NULL;
    const uint8_t *x = a->data, *y = b ? b->data : NULL;
    uint8_t *out = r->data;
    int64_t n = a->n;
    int nt = dkb__nthreads(tp, n);
    if (op == DKB__LOGIC_AND) {
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int64_t i = 0; i < n; i++) out[i] = (x[i] != 0) & (y[i] != 0);
    } else if (op == DKB__LOGIC_OR) {
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int64_t i = 0; i < n; i++) out[i] = (x[i] != 0) | (y[i] != 0);
    } else {
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int64_t i = 0; i < n; i++) out[i] = x[i] == 0;
    }
    return r;
}

/* Year of days since 1970-01-01 (proleptic Gregorian, H. Hinnant's algorithm). */
static inline int32_t year_of(int64_t d) {
    int64_t z = d + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    return (int32_t)(yoe + era * 400 + (mp >= 10));
}

dkb_tensor *dkb__cpu_year(dkb_tp *tp, const dkb_tensor *days) {
    dkb_tensor *r = dkb__tp_new(tp, "year", DKB_TP_I32, days->n);
    if (!r) return NULL;
    int32_t *out = r->data;
    int64_t n = days->n, nb = (n + DKB__BLK - 1) / DKB__BLK;
    int nt = dkb__nthreads(tp, n);
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK;
        int64_t xb[DKB__BLK];
        dkb__ld_i64(days, off, m, xb);
        for (int64_t j = 0; j < m; j++) out[off + j] = year_of(xb[j]);
    }
    return r;
}

dkb_tensor *dkb__cpu_pack2(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b, int64_t b_max) {
    dkb_tensor *r = dkb__tp_new(tp, "pack2", DKB_TP_I64, a->n);
    if (!r) return NULL;
    int64_t *out = r->data;
    int64_t n = a->n, nb = (n + DKB__BLK - 1) / DKB__BLK, mul = b_max + 1;
    int nt = dkb__nthreads(tp, n);
    int bad = 0;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(| : bad)
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK;
        int64_t xb[DKB__BLK], yb[DKB__BLK];
        dkb__ld_i64(a, off, m, xb);
        dkb__ld_i64(b, off, m, yb);
        for (int64_t j = 0; j < m; j++) {
            int64_t p;
            bad |= __builtin_mul_overflow(xb[j], mul, &p);
            bad |= __builtin_add_overflow(p, yb[j], &out[off + j]);
            bad |= (yb[j] < 0) | (yb[j] > b_max);
        }
    }
    if (bad)
        return dkb__tp_error(tp, DKB_ERANGE, "pack2: a value of b outside [0, %lld] or an int64 overflow",
                             (long long)b_max);
    return r;
}
