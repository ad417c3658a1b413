/* cuda_sort_keys.cuh: sort keys of the CUDA sort and top-k (cuda_sort.cu)
 * as "subkeys": order-preserving unsigned integers of a known bit width.
 *
 * Every key is read as raw values, unsigned 128-bit integers whose order
 * is the key's ascending order:
 *   - BOOL, U8: the byte; I8..I64: the value sign-flipped as 64 bits;
 *     I128: sign-flipped as 128 bits; F64: the CPU's IEEE transform
 *     (negative: all bits inverted; else the sign bit set), so -0.0 sorts
 *     before +0.0 and NaNs by their bits, exactly as cpu_sort.c;
 *   - STR: several subkeys, compared in sequence: the bytes in chunks of
 *     up to 8 (big-endian, zero-padded past the string's end), then the
 *     length. This equals memcmp order with a prefix first: strings that
 *     differ inside the shorter one differ at the same padded byte; when
 *     one is a prefix of the other, the longer one's padded bytes are >=
 *     the zeros of the shorter one, and if they are all zero bytes the
 *     length puts the shorter one first.
 * A subkey's value is raw - min (ascending) or max - raw (descending), of
 * `bits` bits (0: constant, skipped); an I128 range wider than 64 bits is
 * two subkeys, its high and its low 64 bits. Values of several subkeys are
 * packed into one 64-bit composite (most significant first). */
#ifndef DKB_TENSOR_CUDA_SORT_KEYS_CUH
#define DKB_TENSOR_CUDA_SORT_KEYS_CUH

#include "tensor/cuda_internal.cuh"

typedef unsigned __int128 sk_u128;

enum { SK_NUM = 0, SK_STR_LEN, SK_STR_CHUNK };

/* Where raw values come from. */
typedef struct sk_source {
    int kind;              /* SK_NUM, SK_STR_LEN, SK_STR_CHUNK */
    dkb_tp_dtype dtype;    /* SK_NUM: the key's dtype */
    const void *data;      /* values, or STR offsets (n + 1) */
    const char *bytes;     /* STR characters */
    int pos, width;        /* SK_STR_CHUNK: first byte position, bytes (1..8) */
} sk_source;

/* One subkey, as kernels read it (device memory). */
typedef struct sk_subkey {
    sk_source src;
    int desc;
    int high;              /* 1: the high 64 bits of the offset from base */
    int bits;              /* width of the value; 0: constant */
    uint64_t base_lo, base_hi; /* min (ascending) or max (descending) raw value */
} sk_subkey;

__device__ __forceinline__ uint64_t sk_f64_bits(double d) {
    uint64_t u = (uint64_t)__double_as_longlong(d);
    return (u >> 63) ? ~u : u | ((uint64_t)1 << 63);
}

#define SK_SIGN64 ((uint64_t)1 << 63)

/* Raw value of row r. */
__device__ __forceinline__ sk_u128 sk_raw(const sk_source &s, int64_t r) {
    switch (s.kind) {
    case SK_STR_LEN: {
        const int64_t *off = (const int64_t *)s.data;
        return (sk_u128)(uint64_t)(off[r + 1] - off[r]);
    }
    case SK_STR_CHUNK: {
        const int64_t *off = (const int64_t *)s.data;
        int64_t start = off[r], len = off[r + 1] - start;
        const unsigned char *b = (const unsigned char *)s.bytes + start;
        uint64_t u = 0;
        for (int j = 0; j < s.width; j++) {
            int64_t p = s.pos + j;
            u = (u << 8) | (p < len ? b[p] : 0u);
        }
        return u;
    }
    default: break;
    }
    switch (s.dtype) {
    case DKB_TP_BOOL: case DKB_TP_U8: return ((const uint8_t *)s.data)[r];
    case DKB_TP_I8: return (uint64_t)(int64_t)((const int8_t *)s.data)[r] ^ SK_SIGN64;
    case DKB_TP_I16: return (uint64_t)(int64_t)((const int16_t *)s.data)[r] ^ SK_SIGN64;
    case DKB_TP_I32: return (uint64_t)(int64_t)((const int32_t *)s.data)[r] ^ SK_SIGN64;
    case DKB_TP_I128: return (sk_u128)((const dkb__i128 *)s.data)[r] ^ ((sk_u128)1 << 127);
    case DKB_TP_F64: return sk_f64_bits(((const double *)s.data)[r]);
    default: return (uint64_t)((const int64_t *)s.data)[r] ^ SK_SIGN64;
    }
}

/* Value of subkey k at row r: < 2^k.bits. */
__device__ __forceinline__ uint64_t sk_value(const sk_subkey &k, int64_t r) {
    sk_u128 u = sk_raw(k.src, r), base = ((sk_u128)k.base_hi << 64) | k.base_lo;
    sk_u128 d = k.desc ? base - u : u - base;
    return k.high ? (uint64_t)(d >> 64) : (uint64_t)d;
}

/* Composite of subkeys sk[lo..hi] (at most 64 bits in all) at row r. */
__device__ __forceinline__ uint64_t sk_composite(const sk_subkey *sk, int lo, int hi, int64_t r) {
    uint64_t c = 0;
    for (int q = lo; q <= hi; q++) {
        int b = sk[q].bits;
        if (b == 0) continue;
        uint64_t v = sk_value(sk[q], r);
        c = b >= 64 ? v : (c << b) | v;
    }
    return c;
}

#endif
