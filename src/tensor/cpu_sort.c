/* cpu_sort.c: CPU ordering: stable multi-key sort and top-k.
 *
 * Keys become "subkeys": order-preserving unsigned integers of a known bit
 * width (integers minus their minimum, descending ones mirrored; floats by
 * their sign-flipped bits; int128 split into high and low halves when its
 * range needs more than 64 bits). Subkeys are packed from the right into
 * 64-bit composites and the composites sorted least significant first with
 * a stable parallel LSD radix sort (11-bit digits, constant digits
 * skipped), carrying row numbers. STR keys are sorted byte-wise with a
 * stable merge sort at their place in that sequence. Top-k keeps a bounded
 * heap per thread when all keys fit one composite, else sorts. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/cpu.h"

typedef struct subkey {
    const dkb_tensor *t;
    bool desc;
    int part;       /* 0 whole value, 1 high 64 bits of I128, 2 low 64 bits */
    uint64_t min;   /* of the transformed value */
    int bits;       /* width after subtracting min; 0: constant */
} subkey;

static inline uint64_t f64_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    return (u >> 63) ? ~u : u | ((uint64_t)1 << 63);
}

/* Transformed (order-preserving, unsigned) value of row r of subkey s,
 * before subtracting min. */
static inline uint64_t raw_value(const subkey *s, int64_t r) {
    const dkb_tensor *t = s->t;
    uint64_t u;
    switch (t->dtype) {
    case DKB_TP_BOOL: case DKB_TP_U8: u = ((const uint8_t *)t->data)[r]; break;
    case DKB_TP_I8: u = (uint64_t)(int64_t)((const int8_t *)t->data)[r] ^ ((uint64_t)1 << 63); break;
    case DKB_TP_I16: u = (uint64_t)(int64_t)((const int16_t *)t->data)[r] ^ ((uint64_t)1 << 63); break;
    case DKB_TP_I32: u = (uint64_t)(int64_t)((const int32_t *)t->data)[r] ^ ((uint64_t)1 << 63); break;
    case DKB_TP_I64: u = (uint64_t)((const int64_t *)t->data)[r] ^ ((uint64_t)1 << 63); break;
    case DKB_TP_F64: u = f64_bits(((const double *)t->data)[r]); break;
    case DKB_TP_I128: {
        dkb__u128 v = (dkb__u128)((const dkb__i128 *)t->data)[r] ^ ((dkb__u128)1 << 127);
        if (s->desc) v = ~v;
        return s->part == 1 ? (uint64_t)(v >> 64) : (uint64_t)v;
    }
    default: u = 0; break;
    }
    return s->desc ? ~u : u;
}

/* min and bit width of a subkey over all rows. */
static void subkey_range(dkb_tp *tp, subkey *s, int64_t n) {
    uint64_t mn = UINT64_MAX, mx = 0;
    int nt = dkb__nthreads(tp, n);
#pragma omp parallel for schedule(static) num_threads(nt) reduction(min : mn) reduction(max : mx)
    for (int64_t i = 0; i < n; i++) {
        uint64_t u = raw_value(s, i);
        mn = u < mn ? u : mn;
        mx = u > mx ? u : mx;
    }
    if (n == 0) mn = mx = 0;
    s->min = mn;
    uint64_t range = mx - mn;
    s->bits = range ? 64 - __builtin_clzll(range) : 0;
}

/* comp[i] = (first ? 0 : comp[i] << bits) | value of row perm[i]. */
static void subkey_fill(dkb_tp *tp, const subkey *s, const int64_t *perm, int64_t n, uint64_t *comp, bool first) {
    int nt = dkb__nthreads(tp, n);
    int bits = s->bits;
    uint64_t mn = s->min;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t i = 0; i < n; i++) {
        uint64_t u = raw_value(s, perm ? perm[i] : i) - mn;
        comp[i] = first ? u : (comp[i] << bits) | u;
    }
}

/* Stable LSD radix sort of (k, v) pairs by the low `bits` bits of k. The
 * result is in k/v or k2/v2: returns the row array holding it. */
#define RBITS 11
#define RBUCKETS (1 << RBITS)
static int64_t *radix_sort(dkb_tp *tp, uint64_t *k, int64_t *v, uint64_t *k2, int64_t *v2, int64_t n, int bits,
                           int64_t *hist) {
    int T = dkb__nthreads(tp, n);
    for (int shift = 0; shift < bits; shift += RBITS) {
        bool skip = false;
#pragma omp parallel num_threads(T)
        {
            int t = omp_get_thread_num(), nth = omp_get_num_threads();
            int64_t lo = n * t / nth, hi = n * (t + 1) / nth;
            int64_t *h = hist + (int64_t)t * RBUCKETS;
            memset(h, 0, sizeof *h * RBUCKETS);
            for (int64_t i = lo; i < hi; i++) h[(k[i] >> shift) & (RBUCKETS - 1)]++;
#pragma omp barrier
#pragma omp single
            {
                int64_t s = 0;
                for (int d = 0; d < RBUCKETS; d++) {
                    int64_t tot = 0;
                    for (int u = 0; u < nth; u++) {
                        int64_t c = hist[(int64_t)u * RBUCKETS + d];
                        hist[(int64_t)u * RBUCKETS + d] = s;
                        s += c;
                        tot += c;
                    }
                    if (tot == n) skip = true; /* one digit value: nothing moves */
                }
            }
            if (!skip) {
                for (int64_t i = lo; i < hi; i++) {
                    int64_t p = h[(k[i] >> shift) & (RBUCKETS - 1)]++;
                    k2[p] = k[i];
                    v2[p] = v[i];
                }
            }
        }
        if (!skip) {
            uint64_t *tk = k;
            int64_t *tv = v;
            k = k2, v = v2, k2 = tk, v2 = tv;
        }
    }
    return v;
}

/* STR comparison of rows a and b of t (byte-wise, shorter prefix first). */
static inline int str_cmp(const dkb_tensor *t, int64_t a, int64_t b) {
    int64_t la, lb;
    const char *sa = dkb__str(t, a, &la), *sb = dkb__str(t, b, &lb);
    int c = memcmp(sa, sb, (size_t)(la < lb ? la : lb));
    if (c == 0) c = (la > lb) - (la < lb);
    return c;
}

/* Stable merge sort of perm[0..n) by STR key t. */
static void str_sort(const dkb_tensor *t, bool desc, int64_t *perm, int64_t *tmp, int64_t n) {
    for (int64_t lo = 0; lo < n; lo += 16) { /* insertion sort of runs of 16 */
        int64_t hi = lo + 16 < n ? lo + 16 : n;
        for (int64_t i = lo + 1; i < hi; i++) {
            int64_t x = perm[i], j = i;
            while (j > lo && (desc ? -1 : 1) * str_cmp(t, perm[j - 1], x) > 0) perm[j] = perm[j - 1], j--;
            perm[j] = x;
        }
    }
    int64_t *src = perm, *dst = tmp;
    for (int64_t w = 16; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) dst[o++] = (desc ? -1 : 1) * str_cmp(t, src[j], src[i]) < 0 ? src[j++] : src[i++];
            while (i < mid) dst[o++] = src[i++];
            while (j < hi) dst[o++] = src[j++];
        }
        int64_t *x = src;
        src = dst, dst = x;
    }
    if (src != perm) memcpy(perm, src, sizeof *perm * (size_t)n);
}

/* Expand keys into subkeys with their ranges; returns their count or -1. */
static int make_subkeys(dkb_tp *tp, const dkb_sort_key *keys, int nkeys, int64_t n, subkey *sk) {
    int ns = 0;
    for (int j = 0; j < nkeys; j++) {
        const dkb_tensor *t = keys[j].key;
        subkey s = {t, keys[j].desc, 0, 0, 0};
        if (t->dtype == DKB_TP_STR) {
            sk[ns++] = s;
            continue;
        }
        if (t->dtype == DKB_TP_I128) {
            s.part = 1;
            subkey_range(tp, &s, n);
            subkey lo = {t, keys[j].desc, 2, 0, 0};
            subkey_range(tp, &lo, n);
            if (s.bits == 0) {
                sk[ns++] = lo; /* high halves all equal: the low half decides */
            } else {
                sk[ns++] = s;
                sk[ns++] = lo;
            }
            continue;
        }
        subkey_range(tp, &s, n);
        sk[ns++] = s;
    }
    return ns;
}

/* Sort into perm (n rows); scratch from tp. false on failure. */
static bool sort_rows(dkb_tp *tp, const dkb_sort_key *keys, int nkeys, int64_t n, int64_t *perm) {
    subkey *sk = dkb__tp_scratch(tp, "sort", sizeof *sk * (size_t)(2 * nkeys));
    uint64_t *k = dkb__tp_scratch(tp, "sort", sizeof *k * (size_t)(n + 1));
    uint64_t *k2 = dkb__tp_scratch(tp, "sort", sizeof *k2 * (size_t)(n + 1));
    int64_t *v2 = dkb__tp_scratch(tp, "sort", sizeof *v2 * (size_t)(n + 1));
    int64_t *hist = dkb__tp_scratch(tp, "sort", sizeof *hist * RBUCKETS * (size_t)tp->threads);
    if (!sk || !k || !k2 || !v2 || !hist) return false;
    int ns = make_subkeys(tp, keys, nkeys, n, sk);
    bool identity = true;
    int nt = dkb__nthreads(tp, n);
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    /* from the least significant subkey: composites of at most 64 bits */
    int j = ns - 1;
    while (j >= 0) {
        if (sk[j].t->dtype == DKB_TP_STR) {
            str_sort(sk[j].t, sk[j].desc, perm, v2, n);
            identity = false;
            j--;
            continue;
        }
        int lo = j, total = 0;
        while (lo >= 0 && sk[lo].t->dtype != DKB_TP_STR && total + sk[lo].bits <= 64) total += sk[lo--].bits;
        lo++;
        if (total > 0) {
            bool first = true;
            for (int q = lo; q <= j; q++) {
                if (sk[q].bits == 0) continue;
                subkey_fill(tp, &sk[q], identity ? NULL : perm, n, k, first);
                first = false;
            }
            int64_t *res = radix_sort(tp, k, perm, k2, v2, n, total, hist);
            if (res != perm) memcpy(perm, res, sizeof *perm * (size_t)n);
            identity = false;
        }
        j = lo - 1;
    }
    return true;
}

dkb_tensor *dkb__cpu_sort(dkb_tp *tp, const dkb_sort_key *keys, int nkeys) {
    int64_t n = keys[0].key->n;
    dkb_tensor *r = dkb__tp_new(tp, "sort", DKB_TP_I64, n);
    if (!r) return NULL;
    SCRATCH_BEGIN(tp);
    if (!sort_rows(tp, keys, nkeys, n, r->data)) r = NULL;
    SCRATCH_END(tp);
    return r;
}

/* ---- top-k ---- */

typedef struct kv {
    uint64_t k;
    int64_t row;
} kv;

static inline bool kv_less(kv a, kv b) { return a.k < b.k || (a.k == b.k && a.row < b.row); }

static int kv_cmp(const void *x, const void *y) {
    kv a = *(const kv *)x, b = *(const kv *)y;
    return kv_less(a, b) ? -1 : kv_less(b, a) ? 1 : 0;
}

/* Max-heap sift-down of h[0..m). */
static void heap_down(kv *h, int64_t m, int64_t i) {
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, big = i;
        if (l < m && kv_less(h[big], h[l])) big = l;
        if (r < m && kv_less(h[big], h[r])) big = r;
        if (big == i) return;
        kv t = h[i];
        h[i] = h[big];
        h[big] = t;
        i = big;
    }
}

static void heap_up(kv *h, int64_t i) {
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (!kv_less(h[p], h[i])) return;
        kv t = h[i];
        h[i] = h[p];
        h[p] = t;
        i = p;
    }
}

dkb_tensor *dkb__cpu_topk(dkb_tp *tp, const dkb_sort_key *keys, int nkeys, int64_t k) {
    int64_t n = keys[0].key->n, m = k < n ? k : n;
    dkb_tensor *r = dkb__tp_new(tp, "topk", DKB_TP_I64, m);
    if (!r) return NULL;
    SCRATCH_BEGIN(tp);
    int64_t *out = r->data;
    subkey *sk = dkb__tp_scratch(tp, "topk", sizeof *sk * (size_t)(2 * nkeys));
    if (!sk) goto fail;
    bool one = m * 8 < n;
    int ns = 0, total = 0;
    for (int j = 0; one && j < nkeys; j++) one = keys[j].key->dtype != DKB_TP_STR;
    if (one) {
        ns = make_subkeys(tp, keys, nkeys, n, sk);
        for (int j = 0; j < ns; j++) total += sk[j].bits;
        one = total <= 64;
    }
    if (!one) { /* full sort, keep the first m */
        int64_t *perm = dkb__tp_scratch(tp, "topk", sizeof *perm * (size_t)(n + 1));
        if (!perm || !sort_rows(tp, keys, nkeys, n, perm)) goto fail;
        memcpy(out, perm, sizeof *out * (size_t)m);
        goto done;
    }
    uint64_t *comp = dkb__tp_scratch(tp, "topk", sizeof *comp * (size_t)(n + 1));
    int T = dkb__nthreads(tp, n);
    kv *heaps = dkb__tp_scratch(tp, "topk", sizeof *heaps * (size_t)(m * T + 1));
    int64_t *fill = dkb__tp_scratch(tp, "topk", sizeof *fill * (size_t)T);
    if (!comp || !heaps || !fill) goto fail;
    bool first = true;
    memset(comp, 0, sizeof *comp * (size_t)(n + 1));
    for (int q = 0; q < ns; q++) {
        if (sk[q].bits == 0) continue;
        subkey_fill(tp, &sk[q], NULL, n, comp, first);
        first = false;
    }
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num(), nth = omp_get_num_threads();
        kv *h = heaps + (int64_t)t * m;
        int64_t hn = 0;
        for (int64_t i = n * t / nth; i < n * (t + 1) / nth; i++) {
            kv x = {comp[i], i};
            if (hn < m) {
                h[hn] = x;
                heap_up(h, hn++);
            } else if (m > 0 && kv_less(x, h[0])) {
                h[0] = x;
                heap_down(h, m, 0);
            }
        }
        fill[t] = hn;
    }
    int64_t nc = 0;
    for (int t = 0; t < T; t++) {
        memmove(heaps + nc, heaps + (int64_t)t * m, sizeof *heaps * (size_t)fill[t]);
        nc += fill[t];
    }
    qsort(heaps, (size_t)nc, sizeof *heaps, kv_cmp);
    for (int64_t i = 0; i < m; i++) out[i] = heaps[i].row;
done:
    SCRATCH_END(tp);
    return r;
fail:
    SCRATCH_END(tp);
    return NULL;
}
