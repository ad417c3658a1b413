/* cuda_elementwise.cu: CUDA comparisons and masks, the device mirror of
 * cpu_elementwise.c: cmp (tensor vs tensor, exact across scales), cmp_i64 /
 * cmp_f64 / between against constants, in_i64, lookup_mask, and/or/not,
 * year of a date, pack2 key packing. Grid-stride kernels, one per call;
 * small host tables (LUTs, value lists) are copied to device scratch. */
#include <stdlib.h>
#include <string.h>

#include "tensor/cuda_elementwise.cuh"

/* ---- cmp: tensor against tensor ---- */

/* MODE 0: as int64; 1: as int128, each side times 10^(s - its scale)
 * (wrapping, as the CPU); 2: as doubles. */
template <int MODE>
__global__ void cmp_kernel(dkb__cu_val x, dkb__cu_val y, dkb__i128 px, dkb__i128 py, dkb_cmp op, uint8_t *out,
                           int64_t n) {
    CU_FOR(i, n) {
        if constexpr (MODE == 0) {
            out[i] = dkb__d_cmp(op, dkb__d_val_i64(x, i), dkb__d_val_i64(y, i));
        } else if constexpr (MODE == 1) {
            out[i] = dkb__d_cmp(op, dkb__d_mul_wrap128(dkb__d_val_i128(x, i), px),
                                dkb__d_mul_wrap128(dkb__d_val_i128(y, i), py));
        } else {
            out[i] = dkb__d_cmp(op, dkb__d_val_f64(x, i), dkb__d_val_f64(y, i));
        }
    }
}

extern "C" dkb_tensor *dkb__cuda_cmp(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, const dkb_tensor *b) {
    dkb_tensor *r = dkb__tp_new(tp, "cmp", DKB_TP_BOOL, a->n);
    if (!r) return NULL;
    int64_t n = a->n;
    if (!n) return r;
    int mode;
    if (a->dtype == DKB_TP_F64 || b->dtype == DKB_TP_F64) mode = 2;
    else if (a->dtype == DKB_TP_I128 || b->dtype == DKB_TP_I128 || a->scale != b->scale) mode = 1;
    else mode = 0;
    int s = a->scale > b->scale ? a->scale : b->scale;
    dkb__i128 pa = dkb__pow10_i128(s - a->scale), pb = dkb__pow10_i128(s - b->scale);
    dkb__cu_val x = dkb__cu_val_of(a), y = dkb__cu_val_of(b);
    uint8_t *out = (uint8_t *)r->data;
    if (mode == 0) cmp_kernel<0><<<CU_GRID(tp, n)>>>(x, y, pa, pb, op, out, n);
    else if (mode == 1) cmp_kernel<1><<<CU_GRID(tp, n)>>>(x, y, pa, pb, op, out, n);
    else cmp_kernel<2><<<CU_GRID(tp, n)>>>(x, y, pa, pb, op, out, n);
    return CU_LAUNCHED(tp, "cmp") ? r : NULL;
}

/* ---- against constants ---- */

/* out = (V)x OP v */
template <typename T, typename V>
__global__ void cmp_const_kernel(const T *x, V v, dkb_cmp op, uint8_t *out, int64_t n) {
    CU_FOR(i, n) out[i] = dkb__d_cmp<V>(op, (V)x[i], v);
}

/* The comparison type of cmp_i64 / between for elements of type T: int64
 * for integer keys (exactly the CPU's typed comparisons, its int32 forms
 * included), int128 for I128, double for F64. */
template <typename T> struct const_type { typedef int64_t type; };
template <> struct const_type<dkb__i128> { typedef dkb__i128 type; };
template <> struct const_type<double> { typedef double type; };

extern "C" dkb_tensor *dkb__cuda_cmp_i64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, int64_t value) {
    dkb_tensor *r = dkb__tp_new(tp, "cmp_i64", DKB_TP_BOOL, a->n);
    if (!r) return NULL;
    int64_t n = a->n;
    if (!n) return r;
    uint8_t *out = (uint8_t *)r->data;
    DKB_CU_SWITCH_NUM(a->dtype, T, {
        typedef typename const_type<T>::type V;
        cmp_const_kernel<T, V><<<CU_GRID(tp, n)>>>((const T *)a->data, (V)value, op, out, n);
    })
    return CU_LAUNCHED(tp, "cmp_i64") ? r : NULL;
}

/* out = x / div OP v in doubles (div 0: no division) */
template <typename T>
__global__ void cmp_f64_kernel(const T *x, double div, double v, dkb_cmp op, uint8_t *out, int64_t n) {
    CU_FOR(i, n) {
        double d = dkb__d_f64_of<T>(x[i]);
        if (div != 0.0) d = __ddiv_rn(d, div);
        out[i] = dkb__d_cmp(op, d, v);
    }
}

extern "C" dkb_tensor *dkb__cuda_cmp_f64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, double value) {
    dkb_tensor *r = dkb__tp_new(tp, "cmp_f64", DKB_TP_BOOL, a->n);
    if (!r) return NULL;
    int64_t n = a->n;
    if (!n) return r;
    uint8_t *out = (uint8_t *)r->data;
    double div = dkb__cu_val_of(a).div;
    DKB_CU_SWITCH_NUM(a->dtype, T,
                      cmp_f64_kernel<T><<<CU_GRID(tp, n)>>>((const T *)a->data, div, value, op, out, n))
    return CU_LAUNCHED(tp, "cmp_f64") ? r : NULL;
}

template <typename T, typename V>
__global__ void between_kernel(const T *x, V lo, V hi, uint8_t *out, int64_t n) {
    CU_FOR(i, n) {
        V v = (V)x[i];
        out[i] = (uint8_t)((v >= lo) & (v <= hi));
    }
}

extern "C" dkb_tensor *dkb__cuda_between(dkb_tp *tp, const dkb_tensor *a, int64_t lo, int64_t hi) {
    dkb_tensor *r = dkb__tp_new(tp, "between", DKB_TP_BOOL, a->n);
    if (!r) return NULL;
    int64_t n = a->n;
    if (!n) return r;
    uint8_t *out = (uint8_t *)r->data;
    DKB_CU_SWITCH_NUM(a->dtype, T, {
        typedef typename const_type<T>::type V;
        between_kernel<T, V><<<CU_GRID(tp, n)>>>((const T *)a->data, (V)lo, (V)hi, out, n);
    })
    return CU_LAUNCHED(tp, "between") ? r : NULL;
}

/* ---- in_i64, lookup_mask: tables ---- */

/* out = lut[(uint8_t)(x + bias)], the 256-byte table staged in shared memory. */
__global__ void lut_kernel(const uint8_t *x, int bias, const uint8_t *lut, uint8_t *out, int64_t n) {
    __shared__ uint8_t t[256];
    for (int k = threadIdx.x; k < 256; k += blockDim.x) t[k] = lut[k];
    __syncthreads();
    CU_FOR(i, n) out[i] = t[(uint8_t)(x[i] + bias)];
}

/* Put a 256-byte host table into device scratch and run lut_kernel. */
static bool run_lut(dkb_tp *tp, const char *op, const uint8_t *x, int bias, const uint8_t *host_lut, uint8_t *out,
                    int64_t n) {
    uint8_t *lut = (uint8_t *)dkb__cu_scratch(tp, op, 256);
    if (!lut || !dkb__cu_put(tp, op, lut, host_lut, 256)) return false;
    lut_kernel<<<CU_GRID(tp, n)>>>(x, bias, lut, out, n);
    return CU_LAUNCHED(tp, op);
}

/* out = x is one of the sorted v[0..nv) (an I128 beyond int64 is none). */
template <typename T>
__global__ void in_kernel(const T *x, const int64_t *v, int nv, uint8_t *out, int64_t n) {
    CU_FOR(i, n) {
        T raw = x[i];
        int64_t key = (int64_t)raw;
        uint8_t hit = 0;
        if ((T)key == raw) {
            int lo = 0, hi = nv - 1;
            while (lo <= hi) {
                int mid = lo + (hi - lo) / 2;
                int64_t m = v[mid];
                if (m == key) {
                    hit = 1;
                    break;
                }
                if (m < key) lo = mid + 1;
                else hi = mid - 1;
            }
        }
        out[i] = hit;
    }
}

static int cmp_i64p(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

extern "C" dkb_tensor *dkb__cuda_in_i64(dkb_tp *tp, const dkb_tensor *a, const int64_t *values, int nv) {
    const char *op = "in_i64";
    dkb_tensor *r = dkb__tp_new(tp, op, DKB_TP_BOOL, a->n);
    if (!r) return NULL;
    int64_t n = a->n;
    if (!n) return r;
    uint8_t *out = (uint8_t *)r->data;
    bool ok = false;
    CU_SCRATCH_BEGIN(tp);
    if (a->dtype <= DKB_TP_I8) { /* byte values: a 256-entry table, as the CPU */
        uint8_t lut[256] = {0};
        int bias = a->dtype == DKB_TP_I8 ? 128 : 0;
        for (int k = 0; k < nv; k++)
            if (values[k] >= -bias && values[k] < 256 - bias) lut[values[k] + bias] = 1;
        ok = run_lut(tp, op, (const uint8_t *)a->data, bias, lut, out, n);
    } else {
        SCRATCH_BEGIN(tp);
        int64_t *sorted = (int64_t *)dkb__tp_scratch(tp, op, sizeof *sorted * (size_t)(nv + 1));
        int64_t *dv = (int64_t *)dkb__cu_scratch(tp, op, sizeof *dv * (size_t)(nv + 1));
        if (sorted && dv) {
            if (nv) memcpy(sorted, values, sizeof *sorted * (size_t)nv);
            qsort(sorted, (size_t)nv, sizeof *sorted, cmp_i64p);
            ok = dkb__cu_put(tp, op, dv, sorted, sizeof *dv * (size_t)nv);
        }
        SCRATCH_END(tp);
        if (ok) {
            switch (a->dtype) {
            case DKB_TP_I16: in_kernel<int16_t><<<CU_GRID(tp, n)>>>((const int16_t *)a->data, dv, nv, out, n); break;
            case DKB_TP_I32: in_kernel<int32_t><<<CU_GRID(tp, n)>>>((const int32_t *)a->data, dv, nv, out, n); break;
            case DKB_TP_I64: in_kernel<int64_t><<<CU_GRID(tp, n)>>>((const int64_t *)a->data, dv, nv, out, n); break;
            default: in_kernel<dkb__i128><<<CU_GRID(tp, n)>>>((const dkb__i128 *)a->data, dv, nv, out, n); break;
            }
            ok = CU_LAUNCHED(tp, op);
        }
    }
    CU_SCRATCH_END(tp);
    return ok ? r : NULL;
}

extern "C" dkb_tensor *dkb__cuda_lookup_mask(dkb_tp *tp, const dkb_tensor *codes, const bool *lut, int lut_size) {
    const char *op = "lookup_mask";
    dkb_tensor *r = dkb__tp_new(tp, op, DKB_TP_BOOL, codes->n);
    if (!r) return NULL;
    int64_t n = codes->n;
    if (!n) return r;
    uint8_t t[256] = {0}; /* codes beyond the dictionary: false */
    for (int c = 0; c < lut_size && c < 256; c++) t[c] = lut[c] ? 1 : 0;
    CU_SCRATCH_BEGIN(tp);
    bool ok = run_lut(tp, op, (const uint8_t *)codes->data, 0, t, (uint8_t *)r->data, n);
    CU_SCRATCH_END(tp);
    return ok ? r : NULL;
}

/* ---- and / or / not ---- */

/* x op y (DKB__LOGIC_NOT: !x) as 0/1 bytes. */
__global__ void logic_kernel(const uint8_t *x, const uint8_t *y, dkb__logic_op op, uint8_t *out, int64_t n) {
    CU_FOR(i, n) {
        uint8_t v;
        if (op == DKB__LOGIC_AND) v = (x[i] != 0) & (y[i] != 0);
        else if (op == DKB__LOGIC_OR) v = (x[i] != 0) | (y[i] != 0);
        else v = x[i] == 0;
        out[i] = v;
    }
}

extern "C" dkb_tensor *dkb__cuda_logic(dkb_tp *tp, const dkb_tensor *a, dkb__logic_op op, const dkb_tensor *b) {
    const char *name = op == DKB__LOGIC_AND ? "and" : op == DKB__LOGIC_OR ? "or" : "not";
    dkb_tensor *r = dkb__tp_new(tp, name, DKB_TP_BOOL, a->n);
    if (!r) return NULL;
    int64_t n = a->n;
    if (!n) return r;
    logic_kernel<<<CU_GRID(tp, n)>>>((const uint8_t *)a->data, b ? (const uint8_t *)b->data : NULL, op,
                                     (uint8_t *)r->data, n);
    return CU_LAUNCHED(tp, name) ? r : NULL;
}

/* ---- year ---- */

/* Year of days since 1970-01-01 (proleptic Gregorian, H. Hinnant's
 * algorithm): the CPU's year_of, operation for operation. */
__device__ __forceinline__ int32_t year_of(int64_t d) {
    int64_t z = d + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    return (int32_t)(yoe + era * 400 + (mp >= 10));
}

template <typename T>
__global__ void year_kernel(const T *x, int32_t *out, int64_t n) {
    CU_FOR(i, n) out[i] = year_of((int64_t)x[i]);
}

extern "C" dkb_tensor *dkb__cuda_year(dkb_tp *tp, const dkb_tensor *days) {
    dkb_tensor *r = dkb__tp_new(tp, "year", DKB_TP_I32, days->n);
    if (!r) return NULL;
    int64_t n = days->n;
    if (!n) return r;
    int32_t *out = (int32_t *)r->data;
    switch (days->dtype) { /* integer keys (BOOL..I64), checked by tp_api.c */
    case DKB_TP_BOOL: case DKB_TP_U8: year_kernel<uint8_t><<<CU_GRID(tp, n)>>>((const uint8_t *)days->data, out, n); break;
    case DKB_TP_I8: year_kernel<int8_t><<<CU_GRID(tp, n)>>>((const int8_t *)days->data, out, n); break;
    case DKB_TP_I16: year_kernel<int16_t><<<CU_GRID(tp, n)>>>((const int16_t *)days->data, out, n); break;
    case DKB_TP_I32: year_kernel<int32_t><<<CU_GRID(tp, n)>>>((const int32_t *)days->data, out, n); break;
    default: year_kernel<int64_t><<<CU_GRID(tp, n)>>>((const int64_t *)days->data, out, n); break;
    }
    return CU_LAUNCHED(tp, "year") ? r : NULL;
}

/* ---- pack2 ---- */

__global__ void pack2_kernel(dkb__cu_val x, dkb__cu_val y, int64_t b_max, int64_t *out, int64_t n,
                             unsigned long long *flag) {
    bool bad = false;
    int64_t mul = b_max + 1;
    CU_FOR(i, n) {
        int64_t a = dkb__d_val_i64(x, i), b = dkb__d_val_i64(y, i), p, o;
        bad |= dkb__d_mul_ovf64(a, mul, &p);
        bad |= dkb__d_add_ovf64(p, b, &o);
        bad |= (b < 0) | (b > b_max);
        out[i] = o;
    }
    dkb__d_raise_range(flag, bad);
}

extern "C" dkb_tensor *dkb__cuda_pack2(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b, int64_t b_max) {
    const char *op = "pack2";
    dkb_tensor *r = dkb__tp_new(tp, op, DKB_TP_I64, a->n);
    if (!r) return NULL;
    int64_t n = a->n;
    if (!n) return r;
    if (!dkb__cu_flag_clear(tp, op)) return NULL;
    pack2_kernel<<<CU_GRID(tp, n)>>>(dkb__cu_val_of(a), dkb__cu_val_of(b), b_max, (int64_t *)r->data, n,
                                     tp->cuda->flag);
    if (!CU_LAUNCHED(tp, op)) return NULL;
    int raised = dkb__cu_range_raised(tp, op);
    if (raised < 0) return NULL;
    if (raised)
        return (dkb_tensor *)dkb__tp_error(tp, DKB_ERANGE,
                                           "pack2: a value of b outside [0, %lld] or an int64 overflow",
                                           (long long)b_max);
    return r;
}
