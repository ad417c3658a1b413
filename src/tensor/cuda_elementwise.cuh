/* cuda_elementwise.cuh: device helpers shared by the CUDA elementwise,
 * arithmetic and string operations (cuda_elementwise.cu, cuda_arith.cu,
 * cuda_string.cu), so that they compute exactly what the CPU backend does:
 *   - checked int64 / int128 arithmetic (the host's __builtin_*_overflow,
 *     written out for the device): true on overflow, the wrapped result
 *     stored either way;
 *   - int128 <-> double conversions matching the host compiler's (rounded
 *     to nearest even / truncated exactly), without relying on the device
 *     compiler's __int128 conversions;
 *   - operands (a tensor, or a constant) read as int64, int128 or double
 *     the way cpu_convert.c and cpu_arith.c read them;
 *   - comparison operators, the dtype switch of typed kernels, launch
 *     shape, and the range flag. */
#ifndef DKB_TENSOR_CUDA_ELEMENTWISE_CUH
#define DKB_TENSOR_CUDA_ELEMENTWISE_CUH

#include "tensor/cuda_internal.cuh"

/* <<<grid, block, shared, stream>>> of a grid-stride loop over n elements. */
#define CU_GRID(tp, n) dkb__cu_grid((tp), (n)), DKB_CU_BLOCK, 0, dkb__cu_stream(tp)

/* Run the statement list with T the C type of dtype (BOOL and U8: uint8_t;
 * I128: dkb__i128; F64 and anything else: double). */
#define DKB_CU_SWITCH_NUM(dtype, T, ...)                           \
    switch (dtype) {                                               \
    case DKB_TP_BOOL: case DKB_TP_U8: { typedef uint8_t T; __VA_ARGS__; } break; \
    case DKB_TP_I8: { typedef int8_t T; __VA_ARGS__; } break;      \
    case DKB_TP_I16: { typedef int16_t T; __VA_ARGS__; } break;    \
    case DKB_TP_I32: { typedef int32_t T; __VA_ARGS__; } break;    \
    case DKB_TP_I64: { typedef int64_t T; __VA_ARGS__; } break;    \
    case DKB_TP_I128: { typedef dkb__i128 T; __VA_ARGS__; } break; \
    default: { typedef double T; __VA_ARGS__; } break;             \
    }

/* ---- checked arithmetic ---- */

__device__ __forceinline__ bool dkb__d_add_ovf64(int64_t x, int64_t y, int64_t *r) {
    int64_t v = (int64_t)((uint64_t)x + (uint64_t)y);
    *r = v;
    return ((x ^ v) & (y ^ v)) < 0;
}
__device__ __forceinline__ bool dkb__d_sub_ovf64(int64_t x, int64_t y, int64_t *r) {
    int64_t v = (int64_t)((uint64_t)x - (uint64_t)y);
    *r = v;
    return ((x ^ y) & (x ^ v)) < 0;
}
__device__ __forceinline__ bool dkb__d_mul_ovf64(int64_t x, int64_t y, int64_t *r) {
    int64_t hi = __mul64hi(x, y), lo = (int64_t)((uint64_t)x * (uint64_t)y);
    *r = lo;
    return hi != (lo >> 63); /* the 128-bit product is not the sign extension of lo */
}

__device__ __forceinline__ bool dkb__d_add_ovf128(dkb__i128 x, dkb__i128 y, dkb__i128 *r) {
    dkb__i128 v = (dkb__i128)((dkb__u128)x + (dkb__u128)y);
    *r = v;
    return ((x ^ v) & (y ^ v)) < 0;
}
__device__ __forceinline__ bool dkb__d_sub_ovf128(dkb__i128 x, dkb__i128 y, dkb__i128 *r) {
    dkb__i128 v = (dkb__i128)((dkb__u128)x - (dkb__u128)y);
    *r = v;
    return ((x ^ y) & (x ^ v)) < 0;
}
/* x * y of magnitudes: true when the product needs more than 128 bits. */
__device__ __forceinline__ bool dkb__d_umul_ovf128(dkb__u128 x, dkb__u128 y, dkb__u128 *r) {
    uint64_t xh = (uint64_t)(x >> 64), xl = (uint64_t)x, yh = (uint64_t)(y >> 64), yl = (uint64_t)y;
    *r = x * y;
    if (xh && yh) return true;
    dkb__u128 low = (dkb__u128)xl * yl;
    dkb__u128 cross = (dkb__u128)xh * yl + (dkb__u128)xl * yh; /* one term is 0 */
    if (cross >> 64) return true;
    dkb__u128 sum = low + (cross << 64);
    return sum < low;
}
__device__ __forceinline__ bool dkb__d_mul_ovf128(dkb__i128 x, dkb__i128 y, dkb__i128 *r) {
    bool neg = (x < 0) != (y < 0);
    dkb__u128 ax = x < 0 ? (dkb__u128)0 - (dkb__u128)x : (dkb__u128)x;
    dkb__u128 ay = y < 0 ? (dkb__u128)0 - (dkb__u128)y : (dkb__u128)y;
    dkb__u128 mag;
    bool big = dkb__d_umul_ovf128(ax, ay, &mag);
    *r = (dkb__i128)((dkb__u128)x * (dkb__u128)y); /* the wrapped product */
    dkb__u128 limit = ((dkb__u128)1 << 127) - (neg ? 0 : 1);
    return big || mag > limit;
}
/* x * y wrapping modulo 2^128, as the host's plain int128 multiply. */
__device__ __forceinline__ dkb__i128 dkb__d_mul_wrap128(dkb__i128 x, dkb__i128 y) {
    return (dkb__i128)((dkb__u128)x * (dkb__u128)y);
}

/* ---- conversions ---- */

/* (double)v, rounded to nearest even like the host's __floattidf. */
__device__ __forceinline__ double dkb__d_i128_to_f64(dkb__i128 v) {
    bool neg = v < 0;
    dkb__u128 m = neg ? (dkb__u128)0 - (dkb__u128)v : (dkb__u128)v;
    uint64_t hi = (uint64_t)(m >> 64);
    double d;
    if (!hi) {
        d = __ull2double_rn((uint64_t)m);
    } else {
        /* keep the top 64 bits with a sticky bit for the dropped ones: one
         * rounding of that word to 53 bits is the correct rounding of m */
        int drop = 64 - __clzll((long long)hi);
        uint64_t w = (uint64_t)(m >> drop) | (uint64_t)((m & (((dkb__u128)1 << drop) - 1)) != 0);
        d = ldexp(__ull2double_rn(w), drop);
    }
    return neg ? -d : d;
}

/* (dkb__i128)d for an integral d with |d| < 2^127 (exact). */
__device__ __forceinline__ dkb__i128 dkb__d_f64_to_i128(double d) {
    double a = fabs(d);
    if (a < 9.0e18) return (dkb__i128)(int64_t)d;
    int e;
    double f = frexp(a, &e); /* a = f * 2^e, f in [0.5, 1), e >= 63 */
    uint64_t m = (uint64_t)ldexp(f, 53);
    dkb__u128 r = (dkb__u128)m << (e - 53);
    return d < 0 ? (dkb__i128)((dkb__u128)0 - r) : (dkb__i128)r;
}

/* A typed element as a double (int128 correctly rounded). */
template <typename T>
__device__ __forceinline__ double dkb__d_f64_of(T x) { return (double)x; }
template <>
__device__ __forceinline__ double dkb__d_f64_of<dkb__i128>(dkb__i128 x) { return dkb__d_i128_to_f64(x); }

/* ---- operands ---- */

/* An operand of an elementwise kernel: a tensor's device elements, or a
 * constant (data NULL). */
typedef struct dkb__cu_val {
    const void *data;   /* device elements, or NULL: the constant c */
    dkb_tp_dtype dtype;
    int64_t c;          /* the constant (raw, at its scale) */
    double cf;          /* the constant as the CPU's float path reads it */
    double div;         /* read as double: divide by this; 0: no division */
} dkb__cu_val;

/* The operand of a tensor (host). */
static inline dkb__cu_val dkb__cu_val_of(const dkb_tensor *t) {
    dkb__cu_val v;
    v.data = t->data;
    v.dtype = t->dtype;
    v.c = 0;
    v.cf = 0;
    /* as dkb__ld_f64: no division for F64 or scale 0 */
    v.div = t->dtype == DKB_TP_F64 || t->scale == 0 ? 0.0 : (double)dkb__pow10_i128(t->scale);
    return v;
}

__device__ __forceinline__ int64_t dkb__d_val_i64(const dkb__cu_val &v, int64_t i) {
    return v.data ? dkb__d_ld_i64(v.data, v.dtype, i) : v.c;
}
__device__ __forceinline__ dkb__i128 dkb__d_val_i128(const dkb__cu_val &v, int64_t i) {
    if (!v.data) return v.c;
    return v.dtype == DKB_TP_I128 ? ((const dkb__i128 *)v.data)[i] : (dkb__i128)dkb__d_ld_i64(v.data, v.dtype, i);
}
__device__ __forceinline__ double dkb__d_val_f64(const dkb__cu_val &v, int64_t i) {
    if (!v.data) return v.cf;
    if (v.dtype == DKB_TP_F64) return ((const double *)v.data)[i];
    double x = v.dtype == DKB_TP_I128 ? dkb__d_i128_to_f64(((const dkb__i128 *)v.data)[i])
                                      : (double)dkb__d_ld_i64(v.data, v.dtype, i);
    return v.div != 0.0 ? __ddiv_rn(x, v.div) : x;
}

/* ---- comparisons ---- */

template <typename T>
__device__ __forceinline__ uint8_t dkb__d_cmp(dkb_cmp op, T x, T y) {
    switch (op) {
    case DKB_CMP_EQ: return x == y;
    case DKB_CMP_NE: return x != y;
    case DKB_CMP_LT: return x < y;
    case DKB_CMP_LE: return x <= y;
    case DKB_CMP_GT: return x > y;
    default: return x >= y;
    }
}

/* ---- the range flag ---- */

/* Raise DKB_CU_FLAG_RANGE when bad (once per thread, at its end). */
__device__ __forceinline__ void dkb__d_raise_range(unsigned long long *flag, bool bad) {
    if (bad) atomicOr(flag, DKB_CU_FLAG_RANGE);
}

/* After kernels that may raise DKB_CU_FLAG_RANGE (waits for the stream):
 * 1 raised, 0 not, -1 a CUDA error (recorded). */
static inline int dkb__cu_range_raised(dkb_tp *tp, const char *op) {
    unsigned long long f = dkb__cu_flag_get(tp, op);
    if (f == ~0ull) return -1;
    return (f & DKB_CU_FLAG_RANGE) != 0;
}

#endif
