/* cpu_convert.c: typed element access for the CPU backend: block loads of
 * any numeric dtype into int64 / int128 / double buffers, a single-element
 * read, and a parallel prefix sum. */
#include <omp.h>

#include "tensor/tp_internal.h"

#define LD_LOOP(T, CONV)                                      \
    do {                                                      \
        const T *src_ = (const T *)a->data + off;             \
        for (int64_t i_ = 0; i_ < n; i_++) dst[i_] = CONV(src_[i_]); \
    } while (0)
#define ID(x) (x)

void dkb__ld_i64(const dkb_tensor *a, int64_t off, int64_t n, int64_t *dst) {
    switch (a->dtype) {
    case DKB_TP_BOOL: case DKB_TP_U8: LD_LOOP(uint8_t, ID); break;
    case DKB_TP_I8: LD_LOOP(int8_t, ID); break;
    case DKB_TP_I16: LD_LOOP(int16_t, ID); break;
    case DKB_TP_I32: LD_LOOP(int32_t, ID); break;
    case DKB_TP_I64: LD_LOOP(int64_t, ID); break;
    case DKB_TP_I128: LD_LOOP(dkb__i128, (int64_t)); break;
    case DKB_TP_F64: LD_LOOP(double, (int64_t)); break;
    default: for (int64_t i = 0; i < n; i++) dst[i] = 0; break;
    }
}

void dkb__ld_i128(const dkb_tensor *a, int64_t off, int64_t n, dkb__i128 *dst) {
    switch (a->dtype) {
    case DKB_TP_BOOL: case DKB_TP_U8: LD_LOOP(uint8_t, ID); break;
    case DKB_TP_I8: LD_LOOP(int8_t, ID); break;
    case DKB_TP_I16: LD_LOOP(int16_t, ID); break;
    case DKB_TP_I32: LD_LOOP(int32_t, ID); break;
    case DKB_TP_I64: LD_LOOP(int64_t, ID); break;
    case DKB_TP_I128: LD_LOOP(dkb__i128, ID); break;
    case DKB_TP_F64: LD_LOOP(double, (dkb__i128)); break;
    default: for (int64_t i = 0; i < n; i++) dst[i] = 0; break;
    }
}

void dkb__ld_f64(const dkb_tensor *a, int64_t off, int64_t n, double *dst) {
    if (a->dtype == DKB_TP_F64 || a->scale == 0) {
        switch (a->dtype) {
        case DKB_TP_BOOL: case DKB_TP_U8: LD_LOOP(uint8_t, (double)); break;
        case DKB_TP_I8: LD_LOOP(int8_t, (double)); break;
        case DKB_TP_I16: LD_LOOP(int16_t, (double)); break;
        case DKB_TP_I32: LD_LOOP(int32_t, (double)); break;
        case DKB_TP_I64: LD_LOOP(int64_t, (double)); break;
        case DKB_TP_I128: LD_LOOP(dkb__i128, (double)); break;
        case DKB_TP_F64: LD_LOOP(double, ID); break;
        default: for (int64_t i = 0; i < n; i++) dst[i] = 0; break;
        }
        return;
    }
    /* divide (not multiply by 10^-s): correctly rounded, like a literal */
    double p = (double)dkb__pow10_i128(a->scale);
#define DIVP(x) ((double)(x) / p)
    switch (a->dtype) {
    case DKB_TP_BOOL: case DKB_TP_U8: LD_LOOP(uint8_t, DIVP); break;
    case DKB_TP_I8: LD_LOOP(int8_t, DIVP); break;
    case DKB_TP_I16: LD_LOOP(int16_t, DIVP); break;
    case DKB_TP_I32: LD_LOOP(int32_t, DIVP); break;
    case DKB_TP_I64: LD_LOOP(int64_t, DIVP); break;
    case DKB_TP_I128: LD_LOOP(dkb__i128, DIVP); break;
    default: for (int64_t i = 0; i < n; i++) dst[i] = 0; break;
    }
#undef DIVP
}

dkb__i128 dkb__get_i128(const dkb_tensor *a, int64_t i) {
    dkb__i128 v;
    dkb__ld_i128(a, i, 1, &v);
    return v;
}

int64_t dkb__scan_i64(dkb_tp *tp, int64_t *v, int64_t n) {
    if (n <= 0) return 0;
    int64_t nc = dkb__nchunks(n);
    if (nc == 1 || dkb__nthreads(tp, n) == 1) {
        int64_t s = 0;
        for (int64_t i = 0; i < n; i++) v[i] = s += v[i];
        return s;
    }
    int64_t carry_local[256], *carry = carry_local;
    SCRATCH_BEGIN(tp);
    if (nc > 256) carry = dkb__tp_scratch(tp, "scan", (size_t)nc * 8);
    if (!carry) { /* fall back to the sequential scan */
        int64_t s = 0;
        for (int64_t i = 0; i < n; i++) v[i] = s += v[i];
        SCRATCH_END(tp);
        return s;
    }
#pragma omp parallel for schedule(static) num_threads(tp->threads)
    for (int64_t c = 0; c < nc; c++) {
        int64_t lo = c * DKB__CHUNK, hi = lo + DKB__CHUNK < n ? lo + DKB__CHUNK : n, s = 0;
        for (int64_t i = lo; i < hi; i++) v[i] = s += v[i];
        carry[c] = s;
    }
    int64_t s = 0;
    for (int64_t c = 0; c < nc; c++) {
        int64_t t = carry[c];
        carry[c] = s;
        s += t;
    }
#pragma omp parallel for schedule(static) num_threads(tp->threads)
    for (int64_t c = 1; c < nc; c++) {
        int64_t lo = c * DKB__CHUNK, hi = lo + DKB__CHUNK < n ? lo + DKB__CHUNK : n, add = carry[c];
        for (int64_t i = lo; i < hi; i++) v[i] += add;
    }
    SCRATCH_END(tp);
    return s;
}
