/* cuda_avg.h: the CPU's exact average (cpu_agg.c exact_avg: an int128 sum
 * over count * 10^scale in x86 80-bit long double, rounded once more to a
 * double) reproduced bit for bit without long double, for the GPU (CUDA
 * has no 80-bit type). Each long double step is emulated on a 64-bit
 * mantissa with round-to-nearest-even: int128 -> extended, extended
 * product, extended quotient, extended -> double.
 *
 * Plain C as well as CUDA (functions are __host__ __device__ under nvcc),
 * so tests/unit/test_cuda_group.c checks it against long double on the
 * host, where there is no GPU. */
#ifndef DKB_TENSOR_CUDA_AVG_H
#define DKB_TENSOR_CUDA_AVG_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define DKB_HD __host__ __device__
#else
#define DKB_HD
#endif

/* (-1)^neg * m * 2^e; m has its top bit set, or is 0 (the value zero). */
typedef struct dkb__x80 {
    uint64_t m;
    int e;
    int neg;
} dkb__x80;

static inline DKB_HD int dkb__x80_clz64(uint64_t x) {
#ifdef __CUDA_ARCH__
    return __clzll((long long)x);
#else
    return __builtin_clzll(x);
#endif
}

/* x * 2^e rounded to a 64-bit mantissa (nearest, ties to even). */
static inline DKB_HD dkb__x80 dkb__x80_from_u128(unsigned __int128 x, int e, int neg) {
    dkb__x80 r = {0, 0, neg};
    if (!x) return r;
    uint64_t hi = (uint64_t)(x >> 64);
    int lz = hi ? dkb__x80_clz64(hi) : 64 + dkb__x80_clz64((uint64_t)x);
    x <<= lz;
    uint64_t m = (uint64_t)(x >> 64), rest = (uint64_t)x;
    e = e - lz + 64;
    if (rest > 0x8000000000000000ull || (rest == 0x8000000000000000ull && (m & 1))) {
        m++;
        if (!m) m = 0x8000000000000000ull, e++;
    }
    r.m = m;
    r.e = e;
    return r;
}

static inline DKB_HD dkb__x80 dkb__x80_from_i128(__int128 s) {
    int neg = s < 0;
    unsigned __int128 mag = neg ? (unsigned __int128)0 - (unsigned __int128)s : (unsigned __int128)s;
    return dkb__x80_from_u128(mag, 0, neg);
}

/* A finite double (exactly). */
static inline DKB_HD dkb__x80 dkb__x80_from_f64(double d) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    int neg = (int)(b >> 63), ex = (int)((b >> 52) & 0x7ff);
    uint64_t frac = b & 0xfffffffffffffull;
    if (ex == 0) return dkb__x80_from_u128(frac, -1074, neg);
    return dkb__x80_from_u128(frac | 0x10000000000000ull, ex - 1075, neg);
}

static inline DKB_HD dkb__x80 dkb__x80_mul(dkb__x80 a, dkb__x80 b) {
    dkb__x80 z = {0, 0, a.neg ^ b.neg};
    if (!a.m || !b.m) return z;
    return dkb__x80_from_u128((unsigned __int128)a.m * b.m, a.e + b.e, a.neg ^ b.neg);
}

/* a / b, b nonzero. */
static inline DKB_HD dkb__x80 dkb__x80_div(dkb__x80 a, dkb__x80 b) {
    dkb__x80 r = {0, 0, a.neg ^ b.neg};
    if (!a.m) return r;
    int shift = a.m >= b.m ? 63 : 64; /* quotient in [2^63, 2^64) */
    unsigned __int128 num = (unsigned __int128)a.m << shift;
    uint64_t q = (uint64_t)(num / b.m), rem = (uint64_t)(num % b.m);
    int e = a.e - b.e - shift;
    unsigned __int128 twice = (unsigned __int128)rem * 2;
    if (twice > b.m || (twice == b.m && (q & 1))) {
        q++;
        if (!q) q = 0x8000000000000000ull, e++;
    }
    r.m = q;
    r.e = e;
    return r;
}

/* To the nearest double (ties to even; normal results). */
static inline DKB_HD double dkb__x80_to_f64(dkb__x80 a) {
    if (!a.m) return a.neg ? -0.0 : 0.0;
    uint64_t m = a.m >> 11, rest = a.m & 0x7ff;
    int e = a.e + 11;
    if (rest > 0x400 || (rest == 0x400 && (m & 1))) {
        m++;
        if (m == (1ull << 53)) m >>= 1, e++;
    }
    double d = ldexp((double)m, e);
    return a.neg ? -d : d;
}

/* (double)((long double)sum / ((long double)count * (long double)p10)) as
 * x86-64 computes it (p10: 10^scale as a double). count 0 gives what the
 * x87 gives: +-inf, or its default NaN for 0 / 0. */
static inline DKB_HD double dkb__exact_avg(__int128 sum, int64_t count, double p10) {
    if (count == 0) {
        if (sum == 0) {
            uint64_t nan_bits = 0xfff8000000000000ull;
            double d;
            memcpy(&d, &nan_bits, sizeof d);
            return d;
        }
        return sum > 0 ? INFINITY : -INFINITY;
    }
    dkb__x80 den = dkb__x80_mul(dkb__x80_from_i128(count), dkb__x80_from_f64(p10));
    return dkb__x80_to_f64(dkb__x80_div(dkb__x80_from_i128(sum), den));
}

#endif
