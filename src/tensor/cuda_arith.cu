/* cuda_arith.cu: CUDA arithmetic, the device mirror of cpu_arith.c: arith
 * (tensor OP tensor) and arith_scalar (tensor OP constant, either order)
 * with exact int64 / int128 results and decimal scale alignment, the F64
 * path (any F64 operand, and DIV), cast between dtypes, and where.
 * Integer overflow (checked exactly where the CPU checks it) raises the
 * device range flag and fails the operation with DKB_ERANGE and the CPU's
 * message. */
#include <math.h>
#include <string.h>

#include "tensor/cuda_elementwise.cuh"

/* An operand with the facts arith_run needs (cpu_arith.c's opnd). */
typedef struct opnd {
    dkb__cu_val v;
    int scale;
    bool f64, i128;
} opnd;

static opnd of_tensor(const dkb_tensor *t) {
    opnd o;
    o.v = dkb__cu_val_of(t);
    o.scale = t->scale;
    o.f64 = t->dtype == DKB_TP_F64;
    o.i128 = t->dtype == DKB_TP_I128;
    return o;
}

static opnd of_const(int64_t c, int scale) {
    opnd o;
    memset(&o, 0, sizeof o);
    o.v.data = NULL;
    o.v.dtype = DKB_TP_I64;
    o.v.c = c;
    /* exactly the CPU's ldf of a constant */
    o.v.cf = scale ? (double)c / (double)dkb__pow10_i64[scale] : (double)c;
    o.scale = scale;
    return o;
}

static const char *op_name(dkb_arith op) {
    static const char *const names[] = {"add", "sub", "mul", "div", "min", "max"};
    return names[op];
}

/* ---- arith ---- */

__global__ void arith_f64_kernel(dkb__cu_val x, dkb__cu_val y, dkb_arith op, double *out, int64_t n) {
    CU_FOR(i, n) {
        double a = dkb__d_val_f64(x, i), b = dkb__d_val_f64(y, i), o;
        switch (op) { /* the _rn forms: never contracted into an FMA */
        case DKB_OP_ADD: o = __dadd_rn(a, b); break;
        case DKB_OP_SUB: o = __dsub_rn(a, b); break;
        case DKB_OP_MUL: o = __dmul_rn(a, b); break;
        case DKB_OP_DIV: o = __ddiv_rn(a, b); break;
        case DKB_OP_MIN: o = b < a ? b : a; break;
        default: o = b > a ? b : a; break;
        }
        out[i] = o;
    }
}

__global__ void arith_i64_kernel(dkb__cu_val x, dkb__cu_val y, int64_t px, int64_t py, dkb_arith op, int64_t *out,
                                 int64_t n, unsigned long long *flag) {
    bool bad = false;
    CU_FOR(i, n) {
        int64_t a = dkb__d_val_i64(x, i), b = dkb__d_val_i64(y, i), o;
        if (px != 1) bad |= dkb__d_mul_ovf64(a, px, &a);
        if (py != 1) bad |= dkb__d_mul_ovf64(b, py, &b);
        switch (op) {
        case DKB_OP_ADD: bad |= dkb__d_add_ovf64(a, b, &o); break;
        case DKB_OP_SUB: bad |= dkb__d_sub_ovf64(a, b, &o); break;
        case DKB_OP_MUL: bad |= dkb__d_mul_ovf64(a, b, &o); break;
        case DKB_OP_MIN: o = b < a ? b : a; break;
        default: o = b > a ? b : a; break;
        }
        out[i] = o;
    }
    dkb__d_raise_range(flag, bad);
}

__global__ void arith_i128_kernel(dkb__cu_val x, dkb__cu_val y, dkb__i128 px, dkb__i128 py, dkb_arith op,
                                  dkb__i128 *out, int64_t n, unsigned long long *flag) {
    bool bad = false;
    CU_FOR(i, n) {
        dkb__i128 a = dkb__d_val_i128(x, i), b = dkb__d_val_i128(y, i), o;
        if (px != 1) bad |= dkb__d_mul_ovf128(a, px, &a);
        if (py != 1) bad |= dkb__d_mul_ovf128(b, py, &b);
        switch (op) {
        case DKB_OP_ADD: bad |= dkb__d_add_ovf128(a, b, &o); break;
        case DKB_OP_SUB: bad |= dkb__d_sub_ovf128(a, b, &o); break;
        case DKB_OP_MUL: bad |= dkb__d_mul_ovf128(a, b, &o); break;
        case DKB_OP_MIN: o = b < a ? b : a; break;
        default: o = b > a ? b : a; break;
        }
        out[i] = o;
    }
    dkb__d_raise_range(flag, bad);
}

/* The core of arith and arith_scalar: x OP y over n elements (cpu_arith.c's
 * arith_run: the same result dtype, scale and overflow rules). */
static dkb_tensor *arith_run(dkb_tp *tp, const char *what, opnd x, dkb_arith op, opnd y, int64_t n) {
    if (x.f64 || y.f64 || op == DKB_OP_DIV) {
        dkb_tensor *r = dkb__tp_new(tp, what, DKB_TP_F64, n);
        if (!r) return NULL;
        if (!n) return r;
        arith_f64_kernel<<<CU_GRID(tp, n)>>>(x.v, y.v, op, (double *)r->data, n);
        return CU_LAUNCHED(tp, what) ? r : NULL;
    }
    int s = op == DKB_OP_MUL ? x.scale + y.scale : (x.scale > y.scale ? x.scale : y.scale);
    int dx = op == DKB_OP_MUL ? 0 : s - x.scale, dy = op == DKB_OP_MUL ? 0 : s - y.scale;
    bool wide = x.i128 || y.i128 || dx > 18 || dy > 18;
    dkb_tensor *r = dkb__tp_new(tp, what, wide ? DKB_TP_I128 : DKB_TP_I64, n);
    if (!r) return NULL;
    r->scale = s;
    if (!n) return r;
    if (!dkb__cu_flag_clear(tp, what)) return NULL;
    if (!wide)
        arith_i64_kernel<<<CU_GRID(tp, n)>>>(x.v, y.v, dkb__pow10_i64[dx], dkb__pow10_i64[dy], op,
                                             (int64_t *)r->data, n, tp->cuda->flag);
    else
        arith_i128_kernel<<<CU_GRID(tp, n)>>>(x.v, y.v, dkb__pow10_i128(dx), dkb__pow10_i128(dy), op,
                                              (dkb__i128 *)r->data, n, tp->cuda->flag);
    if (!CU_LAUNCHED(tp, what)) return NULL;
    int raised = dkb__cu_range_raised(tp, what);
    if (raised < 0) return NULL;
    if (raised)
        return (dkb_tensor *)dkb__tp_error(tp, DKB_ERANGE, "%s (%s): %s overflow (cast an operand to I128 first)",
                                           what, op_name(op), wide ? "int128" : "int64");
    return r;
}

extern "C" dkb_tensor *dkb__cuda_arith(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, const dkb_tensor *b) {
    return arith_run(tp, "arith", of_tensor(a), op, of_tensor(b), a->n);
}

extern "C" dkb_tensor *dkb__cuda_arith_scalar(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, int64_t value, int scale,
                                             bool reverse) {
    opnd c = of_const(value, scale);
    return reverse ? arith_run(tp, "rsub_i64", c, op, of_tensor(a), a->n)
                   : arith_run(tp, "arith_i64", of_tensor(a), op, c, a->n);
}

/* ---- cast ---- */

template <typename T>
__global__ void to_f64_kernel(dkb__cu_val x, double *out, int64_t n) {
    CU_FOR(i, n) {
        double d = dkb__d_f64_of<T>(((const T *)x.data)[i]);
        out[i] = x.div != 0.0 ? __ddiv_rn(d, x.div) : d;
    }
}

template <typename T>
__global__ void to_bool_kernel(const T *x, uint8_t *out, int64_t n) {
    CU_FOR(i, n) out[i] = x[i] != 0;
}

template <typename T>
__global__ void widen_i64_kernel(const T *x, int64_t *out, int64_t n) {
    CU_FOR(i, n) out[i] = (int64_t)x[i];
}

/* Element i of x as int128; F64 truncated toward zero, and out of range
 * (or NaN) reported in *bad and read as 0, as the CPU. */
template <typename T>
__device__ __forceinline__ dkb__i128 int_of(const T *x, int64_t i, bool *bad) {
    (void)bad;
    return (dkb__i128)x[i];
}
template <>
__device__ __forceinline__ dkb__i128 int_of<double>(const double *x, int64_t i, bool *bad) {
    double d = trunc(x[i]);
    bool ok = d >= -1.7e38 && d <= 1.7e38; /* also false for NaN */
    *bad |= !ok;
    return ok ? dkb__d_f64_to_i128(d) : 0;
}

template <typename T>
__global__ void to_int_kernel(const T *x, dkb_tp_dtype to, dkb__i128 lo, dkb__i128 hi, void *out, int64_t n,
                              unsigned long long *flag) {
    bool bad = false;
    CU_FOR(i, n) {
        dkb__i128 v = int_of<T>(x, i, &bad);
        bad |= (v < lo) | (v > hi);
        switch (to) {
        case DKB_TP_BOOL: case DKB_TP_U8: ((uint8_t *)out)[i] = (uint8_t)v; break;
        case DKB_TP_I8: ((int8_t *)out)[i] = (int8_t)v; break;
        case DKB_TP_I16: ((int16_t *)out)[i] = (int16_t)v; break;
        case DKB_TP_I32: ((int32_t *)out)[i] = (int32_t)v; break;
        case DKB_TP_I64: ((int64_t *)out)[i] = (int64_t)v; break;
        default: ((dkb__i128 *)out)[i] = v; break;
        }
    }
    dkb__d_raise_range(flag, bad);
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
    default:
        *lo = (dkb__i128)((dkb__u128)1 << 127);
        *hi = (dkb__i128)(((dkb__u128)1 << 127) - 1);
        break;
    }
}

extern "C" dkb_tensor *dkb__cuda_cast(dkb_tp *tp, const dkb_tensor *a, dkb_tp_dtype to) {
    const char *op = "cast";
    if (to == a->dtype) return dkb__tp_view(tp, op, a);
    dkb_tensor *r = dkb__tp_new(tp, op, to, a->n);
    if (!r) return NULL;
    int64_t n = a->n;
    if (to == DKB_TP_F64) {
        if (n) {
            dkb__cu_val x = dkb__cu_val_of(a);
            DKB_CU_SWITCH_NUM(a->dtype, T, to_f64_kernel<T><<<CU_GRID(tp, n)>>>(x, (double *)r->data, n))
        }
        return !n || CU_LAUNCHED(tp, op) ? r : NULL;
    }
    if (to == DKB_TP_BOOL) {
        if (n) DKB_CU_SWITCH_NUM(a->dtype, T,
                                 to_bool_kernel<T><<<CU_GRID(tp, n)>>>((const T *)a->data, (uint8_t *)r->data, n))
        return !n || CU_LAUNCHED(tp, op) ? r : NULL;
    }
    r->scale = a->dtype == DKB_TP_F64 || a->dtype == DKB_TP_BOOL ? 0 : a->scale;
    if (to == DKB_TP_I64 && a->dtype < DKB_TP_I64) {
        if (!n) return r;
        switch (a->dtype) {
        case DKB_TP_BOOL: case DKB_TP_U8:
            widen_i64_kernel<uint8_t><<<CU_GRID(tp, n)>>>((const uint8_t *)a->data, (int64_t *)r->data, n); break;
        case DKB_TP_I8:
            widen_i64_kernel<int8_t><<<CU_GRID(tp, n)>>>((const int8_t *)a->data, (int64_t *)r->data, n); break;
        case DKB_TP_I16:
            widen_i64_kernel<int16_t><<<CU_GRID(tp, n)>>>((const int16_t *)a->data, (int64_t *)r->data, n); break;
        default:
            widen_i64_kernel<int32_t><<<CU_GRID(tp, n)>>>((const int32_t *)a->data, (int64_t *)r->data, n); break;
        }
        return CU_LAUNCHED(tp, op) ? r : NULL;
    }
    if (n) {
        dkb__i128 lo, hi;
        int_range(to, &lo, &hi);
        if (!dkb__cu_flag_clear(tp, op)) return NULL;
        DKB_CU_SWITCH_NUM(a->dtype, T,
                          to_int_kernel<T><<<CU_GRID(tp, n)>>>((const T *)a->data, to, lo, hi, r->data, n,
                                                               tp->cuda->flag))
        if (!CU_LAUNCHED(tp, op)) return NULL;
        int raised = dkb__cu_range_raised(tp, op);
        if (raised < 0) return NULL;
        if (raised) return (dkb_tensor *)dkb__tp_error(tp, DKB_ERANGE, "cast: a value does not fit the target dtype");
    }
    if (to == DKB_TP_U8 && a->dtype == DKB_TP_U8) r->dict = a->dict;
    return r;
}

/* ---- where ---- */

template <typename T>
__global__ void select_kernel(const uint8_t *c, const T *x, const T *y, T *out, int64_t n) {
    CU_FOR(i, n) out[i] = c[i] ? x[i] : y[i];
}

/* Mixed dtypes or scales: MODE 0 doubles, 1 int64 (each side times
 * 10^(s - its scale), checked on both sides), 2 int128 (wrapping). */
template <int MODE>
__global__ void where_mixed_kernel(const uint8_t *c, dkb__cu_val x, dkb__cu_val y, dkb__i128 px, dkb__i128 py,
                                   void *out, int64_t n, unsigned long long *flag) {
    bool bad = false;
    CU_FOR(i, n) {
        if constexpr (MODE == 0) {
            double a = dkb__d_val_f64(x, i), b = dkb__d_val_f64(y, i);
            ((double *)out)[i] = c[i] ? a : b;
        } else if constexpr (MODE == 1) {
            int64_t a, b;
            bad |= dkb__d_mul_ovf64(dkb__d_val_i64(x, i), (int64_t)px, &a);
            bad |= dkb__d_mul_ovf64(dkb__d_val_i64(y, i), (int64_t)py, &b);
            ((int64_t *)out)[i] = c[i] ? a : b;
        } else {
            ((dkb__i128 *)out)[i] = c[i] ? dkb__d_mul_wrap128(dkb__d_val_i128(x, i), px)
                                         : dkb__d_mul_wrap128(dkb__d_val_i128(y, i), py);
        }
    }
    if constexpr (MODE == 1) dkb__d_raise_range(flag, bad);
    else (void)flag;
}

extern "C" dkb_tensor *dkb__cuda_where(dkb_tp *tp, const dkb_tensor *cond, const dkb_tensor *a, const dkb_tensor *b) {
    const char *op = "where";
    int64_t n = cond->n;
    const uint8_t *c = (const uint8_t *)cond->data;
    if (a->dtype == b->dtype && (a->scale == b->scale || a->dtype == DKB_TP_F64)) {
        dkb_tensor *r = dkb__tp_new(tp, op, a->dtype, n);
        if (!r) return NULL;
        r->scale = a->scale;
        r->dict = a->dict == b->dict ? a->dict : NULL;
        if (!n) return r;
        switch (dkb_tp_dtype_size(a->dtype)) {
        case 1: select_kernel<uint8_t><<<CU_GRID(tp, n)>>>(c, (const uint8_t *)a->data, (const uint8_t *)b->data,
                                                            (uint8_t *)r->data, n); break;
        case 2: select_kernel<uint16_t><<<CU_GRID(tp, n)>>>(c, (const uint16_t *)a->data, (const uint16_t *)b->data,
                                                             (uint16_t *)r->data, n); break;
        case 4: select_kernel<uint32_t><<<CU_GRID(tp, n)>>>(c, (const uint32_t *)a->data, (const uint32_t *)b->data,
                                                             (uint32_t *)r->data, n); break;
        case 8: select_kernel<uint64_t><<<CU_GRID(tp, n)>>>(c, (const uint64_t *)a->data, (const uint64_t *)b->data,
                                                             (uint64_t *)r->data, n); break;
        default: select_kernel<dkb__i128><<<CU_GRID(tp, n)>>>(c, (const dkb__i128 *)a->data,
                                                               (const dkb__i128 *)b->data, (dkb__i128 *)r->data, n);
            break;
        }
        return CU_LAUNCHED(tp, op) ? r : NULL;
    }
    /* mixed dtypes or scales: as values, like arith MAX does */
    opnd x = of_tensor(a), y = of_tensor(b);
    bool f = x.f64 || y.f64;
    int s = f ? 0 : a->scale > b->scale ? a->scale : b->scale;
    int dx = s - a->scale, dy = s - b->scale;
    bool wide = !f && (x.i128 || y.i128 || dx > 18 || dy > 18);
    dkb_tensor *r = dkb__tp_new(tp, op, f ? DKB_TP_F64 : wide ? DKB_TP_I128 : DKB_TP_I64, n);
    if (!r) return NULL;
    r->scale = s;
    if (!n) return r;
    unsigned long long *flag = tp->cuda->flag;
    if (f) {
        where_mixed_kernel<0><<<CU_GRID(tp, n)>>>(c, x.v, y.v, 0, 0, r->data, n, flag);
        return CU_LAUNCHED(tp, op) ? r : NULL;
    }
    if (wide) {
        where_mixed_kernel<2><<<CU_GRID(tp, n)>>>(c, x.v, y.v, dkb__pow10_i128(dx), dkb__pow10_i128(dy), r->data, n,
                                                  flag);
        return CU_LAUNCHED(tp, op) ? r : NULL;
    }
    if (!dkb__cu_flag_clear(tp, op)) return NULL;
    where_mixed_kernel<1><<<CU_GRID(tp, n)>>>(c, x.v, y.v, dkb__pow10_i64[dx], dkb__pow10_i64[dy], r->data, n, flag);
    if (!CU_LAUNCHED(tp, op)) return NULL;
    int raised = dkb__cu_range_raised(tp, op);
    if (raised < 0) return NULL;
    if (raised) return (dkb_tensor *)dkb__tp_error(tp, DKB_ERANGE, "where: int64 overflow aligning scales");
    return r;
}
