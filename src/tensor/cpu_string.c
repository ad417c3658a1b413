/* cpu_string.c: CPU string operations on STR tensors: LIKE (a pattern
 * compiled once into literal segments, like.h), substr, and parsing
 * integers (str_to_i64).
 *
 * LIKE on patterns that start with % and hold a literal segment of two or
 * more bytes (the TPC-H '%green%', '%special%requests%') scans the whole
 * byte buffer of a chunk of rows for that segment, with memchr on its
 * rarest byte (byte counts sampled from the data), and runs the full
 * matcher only on rows where it occurs; other patterns match row by row. */
#include <string.h>

#include "tensor/cpu.h"
#include "tensor/like.h"

/* A literal to search for: the needle and its rarest byte at position d. */
typedef struct scan {
    const char *s;
    int64_t len, d;
} scan;

/* First occurrence of sc in [p, end), or NULL. */
static const char *scan_find(const scan *sc, const char *p, const char *end) {
    char rare = sc->s[sc->d];
    while (end - p >= sc->len) {
        const char *q = memchr(p + sc->d, rare, (size_t)(end - p - sc->len + 1));
        if (!q) return NULL;
        const char *cand = q - sc->d;
        if (memcmp(cand, sc->s, (size_t)sc->len) == 0) return cand;
        p = cand + 1;
    }
    return NULL;
}

/* Choose the segment to scan for (NULL: match row by row). */
static bool choose_scan(const dkb__like *lk, const dkb_tensor *str, scan *sc) {
    if (!lk->has_pct || lk->seg[0].len != 0) return false;
    const dkb__like_seg *best = NULL;
    for (int i = 1; i < lk->nseg; i++)
        if (!lk->seg[i].wild && lk->seg[i].len >= 2 && (!best || lk->seg[i].len > best->len)) best = &lk->seg[i];
    if (!best) return false;
    /* byte counts of a sample of the text pick the rarest needle byte */
    const int64_t *off = str->data;
    int64_t nb = off[str->n] - off[0], take = nb < 262144 ? nb : 262144;
    uint32_t cnt[256] = {0};
    const unsigned char *b = (const unsigned char *)str->bytes + off[0];
    for (int64_t i = 0; i < take; i++) cnt[b[i]]++;
    sc->s = best->s;
    sc->len = best->len;
    sc->d = 0;
    for (int64_t i = 1; i < best->len; i++)
        if (cnt[(unsigned char)best->s[i]] < cnt[(unsigned char)best->s[sc->d]]) sc->d = i;
    return true;
}

dkb_tensor *dkb__cpu_like(dkb_tp *tp, const dkb_tensor *str, const char *pattern) {
    dkb_tensor *r = dkb__tp_new(tp, "like", DKB_TP_BOOL, str->n);
    if (!r) return NULL;
    SCRATCH_BEGIN(tp);
    dkb__like *lk = dkb__like_compile(&tp->scratch, pattern);
    if (!lk) {
        SCRATCH_END(tp);
        return dkb__tp_error(tp, DKB_ENOMEM, "like: out of memory");
    }
    const int64_t *off = str->data;
    const char *bytes = str->bytes;
    uint8_t *out = r->data;
    int64_t n = str->n, nc = (n + 4095) / 4096;
    int nt = dkb__nthreads(tp, n * 8); /* about 8 elementwise steps per row */
    scan sc;
    bool scanning = n > 0 && choose_scan(lk, str, &sc);
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (int64_t c = 0; c < nc; c++) {
        int64_t lo = c * 4096, hi = lo + 4096 < n ? lo + 4096 : n;
        if (!scanning) {
            for (int64_t i = lo; i < hi; i++) out[i] = dkb__like_match(lk, bytes + off[i], off[i + 1] - off[i]);
            continue;
        }
        memset(out + lo, 0, (size_t)(hi - lo));
        const char *end = bytes + off[hi];
        int64_t i = lo;
        for (const char *hit = scan_find(&sc, bytes + off[lo], end); hit; ) {
            int64_t at = hit - bytes;
            while (off[i + 1] <= at) i++;  /* the row holding the hit */
            out[i] = dkb__like_match(lk, bytes + off[i], off[i + 1] - off[i]);
            if (++i == hi) break;
            hit = scan_find(&sc, bytes + off[i], end);
        }
    }
    SCRATCH_END(tp);
    return r;
}

dkb_tensor *dkb__cpu_substr(dkb_tp *tp, const dkb_tensor *str, int start, int len) {
    int64_t n = str->n;
    int nt = dkb__nthreads(tp, n);
    const int64_t *ao = str->data;
    int64_t b0 = start, e0 = (int64_t)start + (len > 0 ? len : 0);
    if (b0 < 0) b0 = 0;
    dkb_tensor *r = dkb__tp_new_str(tp, "substr", n, 0);
    if (!r) return NULL;
    int64_t *ro = r->data;
    /* lengths first (into offsets 1..n), then a prefix sum, then bytes */
    ro[0] = 0;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t i = 0; i < n; i++) {
        int64_t sl = ao[i + 1] - ao[i], e = e0 < sl ? e0 : sl;
        ro[i + 1] = e > b0 ? e - b0 : 0;
    }
    int64_t total = dkb__scan_i64(tp, ro + 1, n);
    r->bytes = tp->be->alloc(tp, (size_t)total);
    if (!r->bytes) return dkb__tp_error(tp, DKB_ENOMEM, "substr: out of memory");
    r->nbytes = total;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t i = 0; i < n; i++)
        if (ro[i + 1] > ro[i]) memcpy(r->bytes + ro[i], str->bytes + ao[i] + b0, (size_t)(ro[i + 1] - ro[i]));
    return r;
}

dkb_tensor *dkb__cpu_str_pack(dkb_tp *tp, const dkb_tensor *str, int64_t *longest) {
    int64_t n = str->n;
    int nt = dkb__nthreads(tp, n);
    const int64_t *ao = str->data;
    int64_t lmax = 0;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(max : lmax)
    for (int64_t i = 0; i < n; i++)
        if (ao[i + 1] - ao[i] > lmax) lmax = ao[i + 1] - ao[i];
    *longest = lmax;
    if (lmax > DKB_TP_STR_PACK_MAX) return NULL;
    dkb_tensor *r = dkb__tp_new(tp, "str_pack", DKB_TP_I64, n);
    if (!r) return NULL;
    int64_t *o = r->data;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *s = (const unsigned char *)str->bytes + ao[i];
        int64_t len = ao[i + 1] - ao[i];
        uint64_t k = 0;
        for (int64_t j = 0; j < len; j++) k |= (uint64_t)s[j] << (56 - 8 * j);
        o[i] = (int64_t)((k | (uint64_t)len) ^ (1ull << 63));   /* signed order = byte order */
    }
    return r;
}

dkb_tensor *dkb__cpu_str_to_i64(dkb_tp *tp, const dkb_tensor *str) {
    int64_t n = str->n;
    int nt = dkb__nthreads(tp, n);
    dkb_tensor *r = dkb__tp_new(tp, "str_to_i64", DKB_TP_I64, n);
    if (!r) return NULL;
    const int64_t *ao = str->data;
    int64_t *o = r->data;
    int bad = 0;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(| : bad)
    for (int64_t i = 0; i < n; i++) {
        const char *s = str->bytes + ao[i], *e = str->bytes + ao[i + 1];
        while (s < e && (*s == ' ' || *s == '\t')) s++;
        bool neg = false;
        if (s < e && (*s == '-' || *s == '+')) neg = *s++ == '-';
        int64_t v = 0;
        for (; s < e && *s >= '0' && *s <= '9'; s++) {
            bad |= __builtin_mul_overflow(v, 10, &v);
            bad |= __builtin_sub_overflow(v, *s - '0', &v);
        }
        if (!neg) bad |= __builtin_mul_overflow(v, -1, &v);
        o[i] = v;
    }
    if (bad) return dkb__tp_error(tp, DKB_ERANGE, "str_to_i64: a number does not fit in int64");
    return r;
}
