/* like.c: SQL LIKE compiled to literal segments, matched with memmem (see like.h). */
#include "tensor/like.h"

#include <string.h>

dkb__like *dkb__like_compile(dkb__arena *arena, const char *pattern) {
    int64_t plen = (int64_t)strlen(pattern);
    int nseg = 1;
    for (int64_t i = 0; i < plen; i++) nseg += pattern[i] == '%';
    dkb__like *lk = dkb__arena_alloc(arena, sizeof *lk);
    dkb__like_seg *seg = dkb__arena_alloc(arena, sizeof *seg * (size_t)nseg);
    if (!lk || !seg) return NULL;
    lk->has_pct = nseg > 1;
    lk->nseg = nseg;
    lk->seg = seg;
    lk->min_len = 0;
    int k = 0;
    int64_t start = 0;
    for (int64_t i = 0; i <= plen; i++) {
        if (i < plen && pattern[i] != '%') continue;
        seg[k].s = pattern + start;
        seg[k].len = i - start;
        seg[k].wild = memchr(seg[k].s, '_', (size_t)seg[k].len) != NULL;
        lk->min_len += seg[k].len;
        k++;
        start = i + 1;
    }
    return lk;
}

/* s[0, len) against segment g of the same length. */
static bool seg_eq(const dkb__like_seg *g, const char *s) {
    if (g->len == 0) return true;
    if (!g->wild) return memcmp(g->s, s, (size_t)g->len) == 0;
    for (int64_t i = 0; i < g->len; i++)
        if (g->s[i] != '_' && g->s[i] != s[i]) return false;
    return true;
}

/* Leftmost occurrence of g in s[0, n), or NULL. */
static const char *seg_find(const dkb__like_seg *g, const char *s, int64_t n) {
    if (g->len > n) return NULL;
    if (!g->wild) return memmem(s, (size_t)n, g->s, (size_t)g->len);
    for (int64_t i = 0; i + g->len <= n; i++)
        if (seg_eq(g, s + i)) return s + i;
    return NULL;
}

bool dkb__like_match(const dkb__like *lk, const char *s, int64_t n) {
    const dkb__like_seg *first = &lk->seg[0];
    if (!lk->has_pct) return n == first->len && seg_eq(first, s);
    const dkb__like_seg *last = &lk->seg[lk->nseg - 1];
    if (n < lk->min_len) return false;
    if (first->len && !seg_eq(first, s)) return false;
    if (last->len && !seg_eq(last, s + n - last->len)) return false;
    const char *p = s + first->len, *end = s + n - last->len;
    for (int i = 1; i < lk->nseg - 1; i++) {
        const dkb__like_seg *g = &lk->seg[i];
        if (!g->len) continue;
        const char *hit = seg_find(g, p, end - p);
        if (!hit) return false;
        p = hit + g->len;
    }
    return true;
}
