/* cpu_arith.c: CPU arithmetic: arith (tensor OP tensor) and arith_scalar
 * (tensor OP constant, either order) with exact int64 / int128 results and
 * decimal scale alignment, float paths, cast between dtypes, and where.
 * Integer results are checked for overflow: an int64 overflow fails the
 * operation with DKB_ERANGE rather than wrapping. */
#include <math.h>
#include <string.h>

#include "tensor/cpu.h"

/* An operand: a tensor, or a constant c at scale `scale`. */
typedef struct opnd {
    const dkb_tensor *t;
    int64_t c;
    int scale;
    bool f64, i128;
} opnd;

static opnd of_tensor(const dkb_tensor *t) {
    opnd o = {t, 0, t->scale, t->dtype == DKB_TP_F64, t->dtype == DKB_TP_I128};
    return o;
}

static void ld64(const opnd *o, int64_t off, int64_t m, int64_t *dst) {
    if (o->t) dkb__ld_i64(o->t, off, m, dst);
    else
        for (int64_t j = 0; j < m; j++) dst[j] = o->c;
}
static void ld128(const opnd *o, int64_t off, int64_t m, dkb__i128 *dst) {
    if (o->t) dkb__ld_i128(o->t, off, m, dst);
    else
        for (int64_t j = 0; j < m; j++) dst[j] = o->c;
}
static void ldf(const opnd *o, int64_t off, int64_t m, double *dst) {
    if (o->t) {
        dkb__ld_f64(o->t, off, m, dst);
        return;
    }
    double v = o->scale ? (double)o->c / (double)dkb__pow10_i64[o->scale] : (double)o->c;
    for (int64_t j = 0; j < m; j++) dst[j] = v;
}

static const char *op_name(dkb_arith op) {
    static const char *const names[] = {"add", "sub", "mul", "div", "min", "max"};
    return names[op];
}

/* The core of arith and arith_scalar: x OP y over n elements. */
static dkb_tensor *arith_run(dkb_tp *tp, const char *what, opnd x, dkb_arith op, opnd y, int64_t n) {
    int nt = dkb__nthreads(tp, n);
    int64_t nb = (n + DKB__BLK - 1) / DKB__BLK;
    if (x.f64 || y.f64 || op == DKB_OP_DIV) {
        dkb_tensor *r = dkb__tp_new(tp, what, DKB_TP_F64, n);
        if (!r) return NULL;
        double *out = r->data;
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int64_t bi = 0; bi < nb; bi++) {
            int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK;
            double xb[DKB__BLK], yb[DKB__BLK], *o = out + off;
            ldf(&x, off, m, xb);
            ldf(&y, off, m, yb);
            switch (op) {
            case DKB_OP_ADD: for (int64_t j = 0; j < m; j++) o[j] = xb[j] + yb[j]; break;
            case DKB_OP_SUB: for (int64_t j = 0; j < m; j++) o[j] = xb[j] - yb[j]; break;
            case DKB_OP_MUL: for (int64_t j = 0; j < m; j++) o[j] = xb[j] * yb[j]; break;
            case DKB_OP_DIV: for (int64_t j = 0; j < m; j++) o[j] = xb[j] / yb[j]; break;
            case DKB_OP_MIN: for (int64_t j = 0; j < m; j++) o[j] = yb[j] < xb[j] ? yb[j] : xb[j]; break;
            default: for (int64_t j = 0; j < m; j++) o[j] = yb[j] > xb[j] ? yb[j] : xb[j]; break;
            }
        }
        return r;
    }
    int s = op == DKB_OP_MUL ? x.scale + y.scale : (x.scale > y.scale ? x.scale : y.scale);
    int dx = op == DKB_OP_MUL ? 0 : s - x.scale, dy = op == DKB_OP_MUL ? 0 : s - y.scale;
    bool wide = x.i128 || y.i128 || dx > 18 || dy > 18;
    dkb_tensor *r = dkb__tp_new(tp, what, wide ? DKB_TP_I128 : DKB_TP_I64, n);
    if (!r) return NULL;
    r->scale = s;
    int bad = 0;
    if (!wide) {
        int64_t px = dkb__pow10_i64[dx], py = dkb__pow10_i64[dy];
        int64_t *out = r->data;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(| : bad)
        for (int64_t bi = 0; bi < nb; bi++) {
            int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK;
            int64_t xb[DKB__BLK], yb[DKB__BLK], *o = out + off;
            ld64(&x, off, m, xb);
            ld64(&y, off, m, yb);
            if (px != 1)
                for (int64_t j = 0; j < m; j++) bad |= __builtin_mul_overflow(xb[j], px, &xb[j]);
            if (py != 1)
                for (int64_t j = 0; j < m; j++) bad |= __builtin_mul_overflow(yb[j], py, &yb[j]);
            switch (op) {
            case DKB_OP_ADD: for (int64_t j = 0; j < m; j++) bad |= __builtin_add_overflow(xb[j], yb[j], &o[j]); break;
            case DKB_OP_SUB: for (int64_t j = 0; j < m; j++) bad |= __builtin_sub_overflow(xb[j], yb[j], &o[j]); break;
            case DKB_OP_MUL: for (int64_t j = 0; j < m; j++) bad |= __builtin_mul_overflow(xb[j], yb[j], &o[j]); break;
            case DKB_OP_MIN: for (int64_t j = 0; j < m; j++) o[j] = yb[j] < xb[j] ? yb[j] : xb[j]; break;
            default: for (int64_t j = 0; j < m; j++) o[j] = yb[j] > xb[j] ? yb[j] : xb[j]; break;
            }
        }
    } else {
        dkb__i128 px = dkb__pow10_i128(dx), py = dkb__pow10_i128(dy);
        dkb__i128 *out = r->data;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(| : bad)
        for (int64_t bi = 0; bi < nb; bi++) {
            int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK;
            dkb__i128 xb[DKB__BLK], yb[DKB__BLK], *o = out + off;
            ld128(&x, off, m, xb);
            ld128(&y, off, m, yb);
            if (px != 1)
                for (int64_t j = 0; j < m; j++) bad |= __builtin_mul_overflow(xb[j], px, &xb[j]);
            if (py != 1)
                for (int64_t j = 0; j < m; j++) bad |= __builtin_mul_overflow(yb[j], py, &yb[j]);
            switch (op) {
            case DKB_OP_ADD: for (int64_t j = 0; j < m; j++) bad |= __builtin_add_overflow(xb[j], yb[j], &o[j]); break;
            case DKB_OP_SUB: for (int64_t j = 0; j < m; j++) bad |= __builtin_sub_overflow(xb[j], yb[j], &o[j]); break;
            case DKB_OP_MUL: for (int64_t j = 0; j < m; j++) bad |= __builtin_mul_overflow(xb[j], yb[j], &o[j]); break;
            case DKB_OP_MIN: for (int64_t j = 0; j < m; j++) o[j] = yb[j] < xb[j] ? yb[j] : xb[j]; break;
            default: for (int64_t j = 0; j < m; j++) o[j] = yb[j] > xb[j] ? yb[j] : xb[j]; break;
            }
        }
    }
    if (bad)
        return dkb__tp_error(tp, DKB_ERANGE, "%s (%s): %s overflow (cast an operand to I128 first)", what,
                             op_name(op), wide ? "int128" : "int64");
    return r;
}

dkb_tensor *dkb__cpu_arith(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, const dkb_tensor *b) {
    return arith_run(tp, "arith", of_tensor(a), op, of_tensor(b), a->n);
}

dkb_tensor *dkb__cpu_arith_scalar(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, int64_t value, int scale,
                                  bool reverse) {
    opnd c = {NULL, value, scale, false, false};
    return reverse ? arith_run(tp, "rsub_i64", c, op, of_tensor(a), a->n)
                   : arith_run(tp, "arith_i64", of_tensor(a), op, c, a->n);
}

/* Range of each integer dtype. */
static void int_range(dkb_tp_dtype t, dkb__i128 *lo, dkb__i128 *hi) {
    switch (t) {
    case DKB_TP_BOOL: *lo = 0, *hi = 1; break;
    case DKB_TP_U8: *lo = 0, *hi = UINT8_MAX; break;
    case DKB_TP_I8: *lo = INT8_MIN, *hi = INT8_MAX; break;
    case DKB_TP_I16: *lo = INT16_MIN, *hi = INT16_MAX; break;
    case DKB_TP_I32: *lo = INT32_MIN, *hi = INT32_MAX; break;
    case DKB_TP_I64: *lo = INT64_MIN, *hi = INT64_MAX; break;
    default: *lo = -((dkb__i128)((dkb__u128)1 << 126)) * 2, *hi = (dkb__i128)(((dkb__u128)1 << 127) - 1); break;
    }
}

static void store_int(dkb_tp_dtype t, void *data, int64_t off, int64_t m, const dkb__i128 *v) {
    switch (t) {
    case DKB_TP_BOOL: case DKB_TP_U8: for (int64_t j = 0; j < m; j++) ((uint8_t *)data)[off + j] = (uint8_t)v[j]; break;
    case DKB_TP_I8: for (int64_t j = 0; j < m; j++) ((int8_t *)data)[off + j] = (int8_t)v[j]; break;
    case DKB_TP_I16: for (int64_t j = 0; j < m; j++) ((int16_t *)data)[off + j] = (int16_t)v[j]; break;
    case DKB_TP_I32: for (int64_t j = 0; j < m; j++) ((int32_t *)data)[off + j] = (int32_t)v[j]; break;
    case DKB_TP_I64: for (int64_t j = 0; j < m; j++) ((int64_t *)data)[off + j] = (int64_t)v[j]; break;
    default: for (int64_t j = 0; j < m; j++) ((dkb__i128 *)data)[off + j] = v[j]; break;
    }
}

dkb_tensor *dkb__cpu_cast(dkb_tp *tp, const dkb_tensor *a, dkb_tp_dtype to) {
    if (to == a->dtype) return dkb__tp_view(tp, "cast", a);
    dkb_tensor *r = dkb__tp_new(tp, "cast", to, a->n);
    if (!r) return NULL;
    int64_t n = a->n, nb = (n + DKB__BLK - 1) / DKB__BLK;
    int nt = dkb__nthreads(tp, n);
    if (to == DKB_TP_F64) {
        double *out = r->data;
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int64_t bi = 0; bi < nb; bi++) {
            int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK;
            dkb__ld_f64(a, off, m, out + off);
        }
        return r;
    }
    if (to == DKB_TP_BOOL) {
        uint8_t *out = r->data;
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int64_t bi = 0; bi < nb; bi++) {
            int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK;
            dkb__i128 xb[DKB__BLK];
            if (a->dtype == DKB_TP_F64) {
                const double *x = (const double *)a->data + off;
                for (int64_t j = 0; j < m; j++) out[off + j] = x[j] != 0;
            } else {
                dkb__ld_i128(a, off, m, xb);
                for (int64_t j = 0; j < m; j++) out[off + j] = xb[j] != 0;
            }
        }
        return r;
    }
    r->scale = a->dtype == DKB_TP_F64 || a->dtype == DKB_TP_BOOL ? 0 : a->scale;
    if (to == DKB_TP_I64 && a->dtype < DKB_TP_I64) {
        int64_t *out = r->data;
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int64_t bi = 0; bi < nb; bi++) {
            int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK;
            dkb__ld_i64(a, off, m, out + off);
        }
        return r;
    }
    dkb__i128 lo, hi;
    int_range(to, &lo, &hi);
    int bad = 0;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(| : bad)
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK;
        dkb__i128 xb[DKB__BLK];
        if (a->dtype == DKB_TP_F64) { /* truncate toward zero, like C */
            const double *x = (const double *)a->data + off;
            for (int64_t j = 0; j < m; j++) {
                double d = trunc(x[j]);
                bool ok = d >= -1.7e38 && d <= 1.7e38; /* also false for NaN */
                xb[j] = ok ? (dkb__i128)d : 0;
                bad |= !ok;
            }
        } else {
            dkb__ld_i128(a, off, m, xb);
        }
        for (int64_t j = 0; j < m; j++) bad |= (xb[j] < lo) | (xb[j] > hi);
        store_int(to, r->data, off, m, xb);
    }
    if (bad) return dkb__tp_error(tp, DKB_ERANGE, "cast: a value does not fit the target dtype");
    if (to == DKB_TP_U8 && a->dtype == DKB_TP_U8) r->dict = a->dict;
    return r;
}

#define SELECT(T)                                                                     \
    do {                                                                              \
        const T *x = (const T *)a->data, *y = (const T *)b->data;                     \
        T *o = (T *)r->data;                                                          \
        _Pragma("omp parallel for schedule(static) num_threads(nt)") for (int64_t i = 0; i < n; i++) \
            o[i] = c[i] ? x[i] : y[i];                                                \
    } while (0)

dkb_tensor *dkb__cpu_where(dkb_tp *tp, const dkb_tensor *cond, const dkb_tensor *a, const dkb_tensor *b) {
    int64_t n = cond->n;
    int nt = dkb__nthreads(tp, n);
    const uint8_t *c = cond->data;
    if (a->dtype == b->dtype && (a->scale == b->scale || a->dtype == DKB_TP_F64)) {
        dkb_tensor *r = dkb__tp_new(tp, "where", a->dtype, n);
        if (!r) return NULL;
        r->scale = a->scale;
        r->dict = a->dict == b->dict ? a->dict : NULL;
        switch (dkb_tp_dtype_size(a->dtype)) {
        case 1: SELECT(uint8_t); break;
        case 2: SELECT(uint16_t); break;
        case 4: SELECT(uint32_t); break;
        case 8: SELECT(uint64_t); break;
        default: SELECT(dkb__i128); break;
        }
        return r;
    }
    /* mixed dtypes or scales: as values, like arith MAX does */
    opnd x = of_tensor(a), y = of_tensor(b);
    bool f = x.f64 || y.f64;
    int s = f ? 0 : a->scale > b->scale ? a->scale : b->scale;
    int dx = s - a->scale, dy = s - b->scale;
    bool wide = !f && (x.i128 || y.i128 || dx > 18 || dy > 18);
    dkb_tensor *r = dkb__tp_new(tp, "where", f ? DKB_TP_F64 : wide ? DKB_TP_I128 : DKB_TP_I64, n);
    if (!r) return NULL;
    r->scale = s;
    int64_t nb = (n + DKB__BLK - 1) / DKB__BLK;
    int bad = 0;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(| : bad)
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK;
        if (f) {
            double xb[DKB__BLK], yb[DKB__BLK], *o = (double *)r->data + off;
            ldf(&x, off, m, xb);
            ldf(&y, off, m, yb);
            for (int64_t j = 0; j < m; j++) o[j] = c[off + j] ? xb[j] : yb[j];
        } else if (!wide) {
            int64_t xb[DKB__BLK], yb[DKB__BLK], *o = (int64_t *)r->data + off;
            ld64(&x, off, m, xb);
            ld64(&y, off, m, yb);
            for (int64_t j = 0; j < m; j++) bad |= __builtin_mul_overflow(xb[j], dkb__pow10_i64[dx], &xb[j]);
            for (int64_t j = 0; j < m; j++) bad |= __builtin_mul_overflow(yb[j], dkb__pow10_i64[dy], &yb[j]);
            for (int64_t j = 0; j < m; j++) o[j] = c[off + j] ? xb[j] : yb[j];
        } else {
            dkb__i128 xb[DKB__BLK], yb[DKB__BLK], *o = (dkb__i128 *)r->data + off;
            dkb__i128 px = dkb__pow10_i128(dx), py = dkb__pow10_i128(dy);
            ld128(&x, off, m, xb);
            ld128(&y, off, m, yb);
            for (int64_t j = 0; j < m; j++) o[j] = c[off + j] ? xb[j] * px : yb[j] * py;
        }
    }
    if (bad) return dkb__tp_error(tp, DKB_ERANGE, "where: int64 overflow aligning scales");
    return r;
}
