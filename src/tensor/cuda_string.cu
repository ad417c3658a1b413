/* cuda_string.cu: CUDA string operations on STR tensors, the device mirror
 * of cpu_string.c: LIKE on free text (the pattern compiled on the host by
 * like.c into literal segments, matched on the device by the same rules as
 * dkb__like_match, one thread per row), substr (lengths, an in-place CUB
 * prefix sum into the output offsets, one read of the total, then bytes),
 * and str_to_i64 (one thread per row, overflow through the range flag). */
#include <cub/cub.cuh>
#include <string.h>

#include "tensor/cuda_elementwise.cuh"
extern "C" {
#include "tensor/like.h"  /* C declarations without C++ guards */
}

/* ---- like ---- */

/* A compiled pattern on the device: segment k is pat[seg[2k], seg[2k] +
 * seg[2k + 1]); '_' in a segment matches any byte. */
typedef struct like_dev {
    const int64_t *seg;
    const char *pat;
    int nseg;
    bool has_pct;
    int64_t min_len;
} like_dev;

/* s[0, len) against pattern bytes p[0, len) ('_' any byte): like.c's
 * seg_eq (a segment without '_' compares like memcmp). */
__device__ __forceinline__ bool seg_eq(const char *p, int64_t len, const char *s) {
    for (int64_t k = 0; k < len; k++)
        if (p[k] != '_' && p[k] != s[k]) return false;
    return true;
}

/* dkb__like_match on the device. */
__device__ bool like_match(const like_dev &lk, const char *s, int64_t n) {
    const char *first = lk.pat + lk.seg[0];
    int64_t first_len = lk.seg[1];
    if (!lk.has_pct) return n == first_len && seg_eq(first, first_len, s);
    const char *last = lk.pat + lk.seg[2 * (lk.nseg - 1)];
    int64_t last_len = lk.seg[2 * (lk.nseg - 1) + 1];
    if (n < lk.min_len) return false;
    if (first_len && !seg_eq(first, first_len, s)) return false;
    if (last_len && !seg_eq(last, last_len, s + n - last_len)) return false;
    const char *p = s + first_len, *end = s + n - last_len;
    for (int k = 1; k < lk.nseg - 1; k++) {
        const char *g = lk.pat + lk.seg[2 * k];
        int64_t glen = lk.seg[2 * k + 1];
        if (!glen) continue;
        const char *hit = NULL; /* leftmost occurrence in [p, end) */
        for (const char *q = p; end - q >= glen; q++)
            if (seg_eq(g, glen, q)) {
                hit = q;
                break;
            }
        if (!hit) return false;
        p = hit + glen;
    }
    return true;
}

__global__ void like_kernel(like_dev lk, const int64_t *off, const char *bytes, uint8_t *out, int64_t n) {
    CU_FOR(i, n) {
        int64_t b = off[i];
        out[i] = like_match(lk, bytes + b, off[i + 1] - b);
    }
}

extern "C" dkb_tensor *dkb__cuda_like(dkb_tp *tp, const dkb_tensor *str, const char *pattern) {
    const char *op = "like";
    dkb_tensor *r = dkb__tp_new(tp, op, DKB_TP_BOOL, str->n);
    if (!r) return NULL;
    int64_t n = str->n;
    if (!n) return r;
    bool ok = false;
    SCRATCH_BEGIN(tp);
    CU_SCRATCH_BEGIN(tp);
    dkb__like *lk = dkb__like_compile(&tp->scratch, pattern);
    if (!lk) {
        dkb__tp_error(tp, DKB_ENOMEM, "like: out of memory");
    } else {
        /* one host buffer, one copy: 2 int64 per segment, then the pattern */
        size_t plen = strlen(pattern), segb = sizeof(int64_t) * 2 * (size_t)lk->nseg;
        int64_t *host = (int64_t *)dkb__tp_scratch(tp, op, segb + plen + 1);
        char *dev = (char *)dkb__cu_scratch(tp, op, segb + plen + 1);
        if (host && dev) {
            for (int k = 0; k < lk->nseg; k++) {
                host[2 * k] = lk->seg[k].s - pattern;
                host[2 * k + 1] = lk->seg[k].len;
            }
            memcpy((char *)host + segb, pattern, plen + 1);
            if (dkb__cu_put(tp, op, dev, host, segb + plen + 1)) {
                like_dev d;
                d.seg = (const int64_t *)dev;
                d.pat = dev + segb;
                d.nseg = lk->nseg;
                d.has_pct = lk->has_pct;
                d.min_len = lk->min_len;
                like_kernel<<<CU_GRID(tp, n)>>>(d, (const int64_t *)str->data, str->bytes, (uint8_t *)r->data, n);
                ok = CU_LAUNCHED(tp, op);
            }
        }
    }
    CU_SCRATCH_END(tp);
    SCRATCH_END(tp);
    return ok ? r : NULL;
}

/* ---- substr ---- */

/* lens[i] = bytes of row i's substring [b0, e0) clipped to the row. */
__global__ void substr_len_kernel(const int64_t *off, int64_t b0, int64_t e0, int64_t *lens, int64_t n) {
    CU_FOR(i, n) {
        int64_t sl = off[i + 1] - off[i], e = e0 < sl ? e0 : sl;
        lens[i] = e > b0 ? e - b0 : 0;
    }
}

__global__ void substr_copy_kernel(const int64_t *off, const char *bytes, int64_t b0, const int64_t *ro, char *out,
                                   int64_t n) {
    CU_FOR(i, n) {
        const char *src = bytes + off[i] + b0;
        char *dst = out + ro[i];
        for (int64_t k = 0, len = ro[i + 1] - ro[i]; k < len; k++) dst[k] = src[k];
    }
}

extern "C" dkb_tensor *dkb__cuda_substr(dkb_tp *tp, const dkb_tensor *str, int start, int len) {
    const char *op = "substr";
    int64_t n = str->n;
    const int64_t *ao = (const int64_t *)str->data;
    int64_t b0 = start, e0 = (int64_t)start + (len > 0 ? len : 0);
    if (b0 < 0) b0 = 0;
    dkb_tensor *r = dkb__tp_new_str(tp, op, n, 0);
    if (!r) return NULL;
    int64_t *ro = (int64_t *)r->data;
    cudaStream_t st = dkb__cu_stream(tp);
    /* offsets: 0, then the lengths summed in place */
    if (!CU_OK(tp, op, cudaMemsetAsync(ro, 0, sizeof *ro, st))) return NULL;
    if (!n) return r;
    substr_len_kernel<<<CU_GRID(tp, n)>>>(ao, b0, e0, ro + 1, n);
    if (!CU_LAUNCHED(tp, op)) return NULL;
    bool ok = false;
    CU_SCRATCH_BEGIN(tp);
    size_t temp_bytes = 0;
    if (CU_OK(tp, op, cub::DeviceScan::InclusiveSum(NULL, temp_bytes, ro + 1, ro + 1, n, st))) {
        void *temp = dkb__cu_scratch(tp, op, temp_bytes);
        ok = temp && CU_OK(tp, op, cub::DeviceScan::InclusiveSum(temp, temp_bytes, ro + 1, ro + 1, n, st));
    }
    CU_SCRATCH_END(tp);
    int64_t total = 0;
    if (!ok || !dkb__cu_get(tp, op, &total, ro + n, sizeof total)) return NULL;
    r->bytes = (char *)tp->be->alloc(tp, (size_t)total);
    if (!r->bytes) return (dkb_tensor *)dkb__tp_error(tp, DKB_ENOMEM, "substr: out of memory");
    r->nbytes = total;
    if (!total) return r;
    substr_copy_kernel<<<CU_GRID(tp, n)>>>(ao, str->bytes, b0, ro, r->bytes, n);
    return CU_LAUNCHED(tp, op) ? r : NULL;
}

/* ---- str_to_i64 ---- */

/* cpu_string.c's parse: blanks, a sign, digits accumulated negatively
 * (so INT64_MIN parses), negated unless the sign was '-'. */
__global__ void str_to_i64_kernel(const int64_t *off, const char *bytes, int64_t *out, int64_t n,
                                  unsigned long long *flag) {
    bool bad = false;
    CU_FOR(i, n) {
        const char *s = bytes + off[i], *e = bytes + off[i + 1];
        while (s < e && (*s == ' ' || *s == '\t')) s++;
        bool neg = false;
        if (s < e && (*s == '-' || *s == '+')) neg = *s++ == '-';
        int64_t v = 0;
        for (; s < e && *s >= '0' && *s <= '9'; s++) {
            bad |= dkb__d_mul_ovf64(v, 10, &v);
            bad |= dkb__d_sub_ovf64(v, *s - '0', &v);
        }
        if (!neg) bad |= dkb__d_mul_ovf64(v, -1, &v);
        out[i] = v;
    }
    dkb__d_raise_range(flag, bad);
}

/* ---- str_pack ---- */

/* cpu_string.c's packing; a string over DKB_TP_STR_PACK_MAX bytes raises
 * the range flag (its key is not written). */
__global__ void str_pack_kernel(const int64_t *off, const unsigned char *bytes, int64_t *out, int64_t n,
                                unsigned long long *flag) {
    bool bad = false;
    CU_FOR(i, n) {
        int64_t len = off[i + 1] - off[i];
        if (len > DKB_TP_STR_PACK_MAX) {
            bad = true;
            continue;
        }
        const unsigned char *s = bytes + off[i];
        unsigned long long k = 0;
        for (int64_t j = 0; j < len; j++) k |= (unsigned long long)s[j] << (56 - 8 * j);
        out[i] = (int64_t)((k | (unsigned long long)len) ^ (1ull << 63));   /* signed order = byte order */
    }
    dkb__d_raise_range(flag, bad);
}

extern "C" dkb_tensor *dkb__cuda_str_pack(dkb_tp *tp, const dkb_tensor *str, int64_t *longest) {
    const char *op = "str_pack";
    int64_t n = str->n;
    *longest = 0;
    dkb_tensor *r = dkb__tp_new(tp, op, DKB_TP_I64, n);
    if (!r) return NULL;
    if (!n) return r;
    if (!dkb__cu_flag_clear(tp, op)) return NULL;
    str_pack_kernel<<<CU_GRID(tp, n)>>>((const int64_t *)str->data, (const unsigned char *)str->bytes,
                                        (int64_t *)r->data, n, tp->cuda->flag);
    if (!CU_LAUNCHED(tp, op)) return NULL;
    int raised = dkb__cu_range_raised(tp, op);
    if (raised < 0) return NULL;
    if (raised) {
        *longest = DKB_TP_STR_PACK_MAX + 1;   /* at least */
        return NULL;
    }
    return r;
}

extern "C" dkb_tensor *dkb__cuda_str_to_i64(dkb_tp *tp, const dkb_tensor *str) {
    const char *op = "str_to_i64";
    int64_t n = str->n;
    dkb_tensor *r = dkb__tp_new(tp, op, DKB_TP_I64, n);
    if (!r) return NULL;
    if (!n) return r;
    if (!dkb__cu_flag_clear(tp, op)) return NULL;
    str_to_i64_kernel<<<CU_GRID(tp, n)>>>((const int64_t *)str->data, str->bytes, (int64_t *)r->data, n,
                                          tp->cuda->flag);
    if (!CU_LAUNCHED(tp, op)) return NULL;
    int raised = dkb__cu_range_raised(tp, op);
    if (raised < 0) return NULL;
    if (raised) return (dkb_tensor *)dkb__tp_error(tp, DKB_ERANGE, "str_to_i64: a number does not fit in int64");
    return r;
}
