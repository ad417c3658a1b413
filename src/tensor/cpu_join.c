/* cpu_join.c: CPU hash joins on integer keys: a table over the build keys
 * (direct-address when the key range is small, else open addressing with
 * linear probing on 64-bit keys), chains of build rows per key in ascending
 * row order, a parallel probe that records each probe row's chain, then
 * count-then-fill output so pairs come grouped by probe row in probe order
 * and, within a probe row, in build order. Also the semi-join mask. */
#include <string.h>

#include "tensor/cpu.h"

typedef struct slot {
    int64_t key;
    int64_t head;  /* first build row with this key; -1: empty slot */
} slot;

typedef struct table {
    bool direct;
    int64_t min, range;  /* direct: head[key - min] */
    int64_t *head;
    slot *slots;         /* hash: cap slots */
    uint64_t mask;
    int shift;
    int64_t *next;       /* next build row with the same key, -1 at the end */
    bool unique;         /* no key occurs twice */
} table;

static inline uint64_t hash64(int64_t k, int shift) {
    return ((uint64_t)k * 0x9E3779B97F4A7C15ull) >> shift;
}

/* First build row with key k, or -1. */
static inline int64_t lookup(const table *t, int64_t k) {
    if (t->direct) {
        uint64_t d = (uint64_t)k - (uint64_t)t->min;
        return d < (uint64_t)t->range ? t->head[d] : -1;
    }
    for (uint64_t h = hash64(k, t->shift);; h = (h + 1) & t->mask) {
        const slot *s = &t->slots[h];
        if (s->head < 0) return -1;
        if (s->key == k) return s->head;
    }
}

/* Build keys (already int64 in bk[0..nb)) into t, using scratch memory. */
static bool build(dkb_tp *tp, const char *op, const int64_t *bk, int64_t nb, bool chains, table *t) {
    memset(t, 0, sizeof *t);
    t->unique = true;
    int nt = dkb__nthreads(tp, nb);
    int64_t mn = INT64_MAX, mx = INT64_MIN;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(min : mn) reduction(max : mx)
    for (int64_t i = 0; i < nb; i++) {
        mn = bk[i] < mn ? bk[i] : mn;
        mx = bk[i] > mx ? bk[i] : mx;
    }
    if (chains) {
        t->next = dkb__tp_scratch(tp, op, sizeof *t->next * (size_t)(nb + 1));
        if (!t->next) return false;
    }
    uint64_t range = nb ? (uint64_t)mx - (uint64_t)mn + 1 : 0;
    if (nb == 0 || (range != 0 && range <= (uint64_t)nb * 4 + 4096)) {
        t->direct = true;
        t->min = mn;
        t->range = (int64_t)range;
        t->head = dkb__tp_scratch(tp, op, sizeof *t->head * (size_t)(range + 1));
        if (!t->head) return false;
        memset(t->head, 0xff, sizeof *t->head * (size_t)(range + 1));
        for (int64_t i = nb - 1; i >= 0; i--) { /* backwards: chains ascend */
            int64_t *h = &t->head[bk[i] - mn];
            if (*h >= 0) t->unique = false;
            if (chains) t->next[i] = *h;
            *h = i;
        }
        return true;
    }
    int bits = 4;
    while (((uint64_t)1 << bits) < (uint64_t)nb * 2) bits++;
    t->mask = ((uint64_t)1 << bits) - 1;
    t->shift = 64 - bits;
    t->slots = dkb__tp_scratch(tp, op, sizeof *t->slots << bits);
    if (!t->slots) return false;
    memset(t->slots, 0xff, sizeof *t->slots << bits);
    for (int64_t i = nb - 1; i >= 0; i--) {
        int64_t k = bk[i];
        uint64_t h = hash64(k, t->shift);
        while (t->slots[h].head >= 0 && t->slots[h].key != k) h = (h + 1) & t->mask;
        slot *s = &t->slots[h];
        if (s->head >= 0) t->unique = false;
        if (chains) t->next[i] = s->head;
        s->key = k;
        s->head = i;
    }
    return true;
}

/* Keys of a as int64 (scratch; a's own data when it is I64). */
static const int64_t *keys_i64(dkb_tp *tp, const char *op, const dkb_tensor *a) {
    if (a->dtype == DKB_TP_I64) return a->data;
    int64_t n = a->n, nb = (n + DKB__BLK - 1) / DKB__BLK;
    int64_t *k = dkb__tp_scratch(tp, op, sizeof *k * (size_t)(n + 1));
    if (!k) return NULL;
    int nt = dkb__nthreads(tp, n);
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK;
        dkb__ld_i64(a, off, m, k + off);
    }
    return k;
}

dkb_join_result dkb__cpu_join(dkb_tp *tp, const dkb_tensor *build_keys, const dkb_tensor *probe_keys,
                              dkb_join_kind kind) {
    dkb_join_result res = {NULL, NULL};
    int64_t np = probe_keys->n, nc = dkb__nchunks(np);
    int nt = dkb__nthreads(tp, np);
    bool left = kind == DKB_JOIN_LEFT;
    SCRATCH_BEGIN(tp);
    table t;
    const int64_t *bk = keys_i64(tp, "join", build_keys);
    if (!bk || !build(tp, "join", bk, build_keys->n, true, &t)) goto out;
    const int64_t *pk = keys_i64(tp, "join", probe_keys);
    int64_t *hd = dkb__tp_scratch(tp, "join", sizeof *hd * (size_t)(np + 1));
    int64_t *cnt = dkb__tp_scratch(tp, "join", sizeof *cnt * (size_t)(nc + 1));
    if (!pk || !hd || !cnt) goto out;
    const int64_t *next = t.next;
    bool unique = t.unique;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (int64_t c = 0; c < nc; c++) {
        int64_t lo = c * DKB__CHUNK, hi = lo + DKB__CHUNK < np ? lo + DKB__CHUNK : np, s = 0;
        for (int64_t i = lo; i < hi; i++) {
            int64_t h = lookup(&t, pk[i]);
            hd[i] = h;
            if (unique || h < 0) {
                s += h >= 0 || left;
            } else {
                for (; h >= 0; h = next[h]) s++;
            }
        }
        cnt[c] = s;
    }
    int64_t total = 0;
    for (int64_t c = 0; c < nc; c++) {
        int64_t v = cnt[c];
        cnt[c] = total;
        total += v;
    }
    res.probe_idx = dkb__tp_new(tp, "join", DKB_TP_I64, total);
    res.build_idx = dkb__tp_new(tp, "join", DKB_TP_I64, total);
    if (!res.probe_idx || !res.build_idx) {
        res.probe_idx = res.build_idx = NULL;
        goto out;
    }
    int64_t *po = res.probe_idx->data, *bo = res.build_idx->data;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (int64_t c = 0; c < nc; c++) {
        int64_t lo = c * DKB__CHUNK, hi = lo + DKB__CHUNK < np ? lo + DKB__CHUNK : np, k = cnt[c];
        for (int64_t i = lo; i < hi; i++) {
            int64_t h = hd[i];
            if (h < 0) {
                if (left) po[k] = i, bo[k++] = -1;
            } else if (unique) {
                po[k] = i, bo[k++] = h;
            } else {
                for (; h >= 0; h = next[h]) po[k] = i, bo[k++] = h;
            }
        }
    }
out:
    SCRATCH_END(tp);
    return res;
}

dkb_tensor *dkb__cpu_semi_join(dkb_tp *tp, const dkb_tensor *build_keys, const dkb_tensor *probe_keys) {
    int64_t np = probe_keys->n;
    int nt = dkb__nthreads(tp, np);
    dkb_tensor *r = dkb__tp_new(tp, "semi_join", DKB_TP_BOOL, np);
    if (!r) return NULL;
    SCRATCH_BEGIN(tp);
    table t;
    const int64_t *bk = keys_i64(tp, "semi_join", build_keys);
    const int64_t *pk = bk ? keys_i64(tp, "semi_join", probe_keys) : NULL;
    if (!pk || !build(tp, "semi_join", bk, build_keys->n, false, &t)) {
        r = NULL;
    } else {
        uint8_t *o = r->data;
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int64_t i = 0; i < np; i++) o[i] = lookup(&t, pk[i]) >= 0;
    }
    SCRATCH_END(tp);
    return r;
}
