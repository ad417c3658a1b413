/* cpu_join.c: CPU hash joins on integer keys.
 *
 * Build: a direct-address table (head[key - min]) when the key range is at
 * most 4 build rows per slot, else open addressing with linear probing on
 * 64-bit keys (slots {key, first row}, at most half full). Large builds
 * are radix-partitioned first (stable scatter of row numbers by the top
 * bits of the slot index), then every partition, a contiguous cache-sized
 * range of slots, is built by one thread in descending row order, so each
 * key's chain of build rows (next[]) ascends and the table never depends on
 * the thread count.
 * Probe: parallel over fixed chunks with prefetching; a first pass records
 * each probe row's chain head and counts pairs per chunk, a prefix sum
 * places the chunks, a second pass writes the pairs: grouped by probe row in
 * probe order, build rows ascending. LEFT joins on unique build keys take a
 * single pass. Semi-joins probe the same table without chains. */
#include <omp.h>
#include <string.h>

#include "tensor/cpu.h"

typedef struct slot {
    int64_t key;
    int64_t head;  /* first build row with this key; -1: empty */
} slot;

typedef struct table {
    bool direct;
    int64_t min;       /* direct: head[key - min] for key - min < range */
    uint64_t range;
    int64_t *head;
    slot *slots;       /* hash: 2^bits slots in 2^pbits partitions */
    int bits, pbits;
    uint64_t pmask;    /* slots per partition - 1 */
    int64_t *next;     /* next build row with the same key, -1 at the end (NULL: no chains) */
    bool unique;       /* no key occurs twice */
} table;

#define PREFETCH 16

static inline uint64_t hash64(int64_t k) { return (uint64_t)k * 0x9E3779B97F4A7C15ull; }
static inline uint64_t slot_of(const table *t, int64_t k) { return hash64(k) >> (64 - t->bits); }
static inline uint64_t slot_next(const table *t, uint64_t s) { return (s & ~t->pmask) | ((s + 1) & t->pmask); }

/* First build row with key k, or -1. */
static inline int64_t lookup(const table *t, int64_t k) {
    if (t->direct) {
        uint64_t d = (uint64_t)k - (uint64_t)t->min;
        return d < t->range ? t->head[d] : -1;
    }
    for (uint64_t s = slot_of(t, k);; s = slot_next(t, s)) {
        const slot *p = &t->slots[s];
        if (p->head < 0 || p->key == k) return p->head;
    }
}

/* Start loading the table entry of key k. Always inlined: GCC otherwise
 * finds the out-of-line function free of side effects and drops its calls. */
static inline __attribute__((always_inline)) void prefetch_key(const table *t, int64_t k) {
    const void *p;
    if (t->direct) {
        uint64_t d = (uint64_t)k - (uint64_t)t->min;
        p = d < t->range ? &t->head[d] : t->head;
    } else {
        p = &t->slots[slot_of(t, k)];
    }
    __builtin_prefetch(p);
}

/* Insert build row i (rows of one partition arrive in descending order);
 * returns false when the row's key was there already. */
static inline bool insert(table *t, const int64_t *bk, int64_t i) {
    int64_t k = bk[i], *h;
    if (t->direct) {
        h = &t->head[(uint64_t)k - (uint64_t)t->min];
    } else {
        uint64_t s = slot_of(t, k);
        while (t->slots[s].head >= 0 && t->slots[s].key != k) s = slot_next(t, s);
        t->slots[s].key = k;
        h = &t->slots[s].head;
    }
    bool fresh = *h < 0;
    if (t->next) t->next[i] = *h;
    *h = i;
    return fresh;
}

/* Partition of key k (top pbits of its slot). */
static inline uint64_t part_of(const table *t, int64_t k) {
    if (t->direct) return ((uint64_t)k - (uint64_t)t->min) >> (t->bits - t->pbits);
    return hash64(k) >> (64 - t->pbits);
}

/* Build the table over bk[0..nb) (scratch memory); false on failure. */
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
    size_t entry;
    if (nb == 0 || (range != 0 && range <= (uint64_t)nb * 4 + 4096)) {
        t->direct = true;
        t->min = mn;
        t->range = range;
        t->bits = 0;
        while (((uint64_t)1 << t->bits) < range) t->bits++;
        entry = sizeof *t->head;
    } else {
        t->bits = 4;
        while (((uint64_t)1 << t->bits) < (uint64_t)nb * 2) t->bits++;
        entry = sizeof *t->slots;
    }
    /* partitions of about 2^14 slots, when there are enough rows to share */
    t->pbits = nb < tp->par_min || nb < 4096 ? 0 : t->bits > 14 ? t->bits - 14 : 0;
    if (t->pbits > 10) t->pbits = 10;
    t->pmask = ((uint64_t)1 << (t->bits - t->pbits)) - 1;
    size_t nslots = t->direct ? (size_t)range + 1 : (size_t)1 << t->bits;
    void *mem = dkb__tp_scratch(tp, op, entry * nslots);
    if (!mem) return false;
    if (t->direct) t->head = mem;
    else t->slots = mem;
    int nt2 = dkb__nthreads(tp, (int64_t)nslots);
#pragma omp parallel for schedule(static) num_threads(nt2)
    for (int64_t c = 0; c < (int64_t)((entry * nslots + 65535) / 65536); c++) {
        size_t lo = (size_t)c * 65536, hi = lo + 65536 < entry * nslots ? lo + 65536 : entry * nslots;
        memset((char *)mem + lo, 0xff, hi - lo);
    }
    int P = 1 << t->pbits;
    if (P == 1) {
        bool uniq = true;
        for (int64_t i = nb - 1; i >= 0; i--) uniq &= insert(t, bk, i);
        t->unique = uniq;
        return true;
    }
    /* stable scatter of row numbers by partition */
    int T = tp->threads;
    int64_t *rows = dkb__tp_scratch(tp, op, sizeof *rows * (size_t)nb);
    int64_t *hist = dkb__tp_scratch(tp, op, sizeof *hist * (size_t)(P * T + P + 1));
    if (!rows || !hist) return false;
    int64_t *pstart = hist + (int64_t)P * T;
#pragma omp parallel num_threads(T)
    {
        int th = omp_get_thread_num(), nth = omp_get_num_threads();
        int64_t lo = nb * th / nth, hi = nb * (th + 1) / nth;
        int64_t *h = hist + (int64_t)th * P;
        memset(h, 0, sizeof *h * (size_t)P);
        for (int64_t i = lo; i < hi; i++) h[part_of(t, bk[i])]++;
#pragma omp barrier
#pragma omp single
        {
            int64_t s = 0;
            for (int q = 0; q < P; q++) {
                pstart[q] = s;
                for (int u = 0; u < nth; u++) {
                    int64_t c = hist[(int64_t)u * P + q];
                    hist[(int64_t)u * P + q] = s;
                    s += c;
                }
            }
            pstart[P] = s;
        }
        for (int64_t i = lo; i < hi; i++) rows[h[part_of(t, bk[i])]++] = i;
    }
    /* a hash partition holding more rows than 3/4 of its slots (many
     * distinct keys in one partition; on average it holds at most 1/2) is
     * too full: build the whole table sequentially instead */
    bool skewed = false;
    for (int q = 0; !t->direct && q < P; q++) skewed |= (uint64_t)(pstart[q + 1] - pstart[q]) * 4 > (t->pmask + 1) * 3;
    if (skewed) {
        t->pbits = 0;
        t->pmask = ((uint64_t)1 << t->bits) - 1;
        bool uniq = true;
        for (int64_t i = nb - 1; i >= 0; i--) uniq &= insert(t, bk, i);
        t->unique = uniq;
        return true;
    }
    bool uniq = true;
#pragma omp parallel for schedule(dynamic, 1) num_threads(T) reduction(&& : uniq)
    for (int q = 0; q < P; q++)
        for (int64_t j = pstart[q + 1] - 1; j >= pstart[q]; j--) uniq = insert(t, bk, rows[j]) && uniq;
    t->unique = uniq;
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

/* hd[i] = first build row of probe row i (or -1), for rows [lo, hi) of
 * probe keys p (read in blocks, any integer dtype). */
static void probe_heads(const table *t, const dkb_tensor *p, int64_t lo, int64_t hi, int64_t *hd) {
    int64_t kb[DKB__BLK];
    for (int64_t off = lo; off < hi; off += DKB__BLK) {
        int64_t m = hi - off < DKB__BLK ? hi - off : DKB__BLK;
        dkb__ld_i64(p, off, m, kb);
        for (int64_t j = 0; j < m; j++) {
            if (j + PREFETCH < m) prefetch_key(t, kb[j + PREFETCH]);
            hd[off + j] = lookup(t, kb[j]);
        }
    }
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
    if (left && t.unique) { /* one output row per probe row */
        res.probe_idx = dkb__cpu_arange(tp, np);
        res.build_idx = dkb__tp_new(tp, "join", DKB_TP_I64, np);
        if (!res.probe_idx || !res.build_idx) {
            res.probe_idx = res.build_idx = NULL;
            goto out;
        }
        int64_t *bo = res.build_idx->data;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
        for (int64_t c = 0; c < nc; c++) {
            int64_t lo = c * DKB__CHUNK, hi = lo + DKB__CHUNK < np ? lo + DKB__CHUNK : np;
            probe_heads(&t, probe_keys, lo, hi, bo);
        }
        goto out;
    }
    int64_t *hd = dkb__tp_scratch(tp, "join", sizeof *hd * (size_t)(np + 1));
    int64_t *cnt = dkb__tp_scratch(tp, "join", sizeof *cnt * (size_t)(nc + 1));
    if (!hd || !cnt) goto out;
    const int64_t *next = t.next;
    bool unique = t.unique;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (int64_t c = 0; c < nc; c++) {
        int64_t lo = c * DKB__CHUNK, hi = lo + DKB__CHUNK < np ? lo + DKB__CHUNK : np, s = 0;
        probe_heads(&t, probe_keys, lo, hi, hd);
        if (unique) {
            for (int64_t i = lo; i < hi; i++) s += hd[i] >= 0;
        } else {
            for (int64_t i = lo; i < hi; i++) {
                int64_t h = hd[i];
                if (h < 0) s += left;
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
        if (unique) {
            for (int64_t i = lo; i < hi; i++)
                if (hd[i] >= 0) po[k] = i, bo[k++] = hd[i];
            continue;
        }
        for (int64_t i = lo; i < hi; i++) {
            int64_t h = hd[i];
            if (h < 0) {
                if (left) po[k] = i, bo[k++] = -1;
            }
            for (; h >= 0; h = next[h]) po[k] = i, bo[k++] = h;
        }
    }
out:
    SCRATCH_END(tp);
    return res;
}

dkb_tensor *dkb__cpu_semi_join(dkb_tp *tp, const dkb_tensor *build_keys, const dkb_tensor *probe_keys) {
    int64_t np = probe_keys->n, nc = dkb__nchunks(np);
    int nt = dkb__nthreads(tp, np);
    dkb_tensor *r = dkb__tp_new(tp, "semi_join", DKB_TP_BOOL, np);
    if (!r) return NULL;
    SCRATCH_BEGIN(tp);
    table t;
    const int64_t *bk = keys_i64(tp, "semi_join", build_keys);
    if (!bk || !build(tp, "semi_join", bk, build_keys->n, false, &t)) {
        r = NULL;
    } else {
        uint8_t *o = r->data;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
        for (int64_t c = 0; c < nc; c++) {
            int64_t lo = c * DKB__CHUNK, hi = lo + DKB__CHUNK < np ? lo + DKB__CHUNK : np, kb[DKB__BLK];
            for (int64_t off = lo; off < hi; off += DKB__BLK) {
                int64_t m = hi - off < DKB__BLK ? hi - off : DKB__BLK;
                dkb__ld_i64(probe_keys, off, m, kb);
                for (int64_t j = 0; j < m; j++) {
                    if (j + PREFETCH < m) prefetch_key(&t, kb[j + PREFETCH]);
                    o[off + j] = lookup(&t, kb[j]) >= 0;
                }
            }
        }
    }
    SCRATCH_END(tp);
    return r;
}
