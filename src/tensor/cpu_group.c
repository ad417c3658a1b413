/* cpu_group.c: CPU group-by: rows with equal key tuples get one group id,
 * groups numbered in order of first appearance.
 *
 * Several key columns are packed into one int64 per row when their value
 * ranges allow (they always do for TPC-H), else rows are compared column
 * by column. One key per row (read in blocks of any integer dtype) is then
 * numbered with a direct-address table when its range is small, or an
 * open-addressing hash table. */
#include <stdlib.h>
#include <string.h>

#include "tensor/cpu.h"

static inline uint64_t hash64(uint64_t k, int shift) { return (k * 0x9E3779B97F4A7C15ull) >> shift; }

/* Columns of keys as int64 arrays (scratch unless already I64). */
static bool load_keys(dkb_tp *tp, const dkb_tensor *const *keys, int nkeys, const int64_t **k) {
    for (int j = 0; j < nkeys; j++) {
        const dkb_tensor *a = keys[j];
        if (a->dtype == DKB_TP_I64) {
            k[j] = a->data;
            continue;
        }
        int64_t n = a->n, nb = (n + DKB__BLK - 1) / DKB__BLK;
        int64_t *d = dkb__tp_scratch(tp, "group", sizeof *d * (size_t)(n + 1));
        if (!d) return false;
        int nt = dkb__nthreads(tp, n);
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int64_t bi = 0; bi < nb; bi++) {
            int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK;
            dkb__ld_i64(a, off, m, d + off);
        }
        k[j] = d;
    }
    return true;
}

/* Smallest and largest value of integer tensor a (n > 0). */
static void min_max(dkb_tp *tp, const dkb_tensor *a, int64_t *mn_out, int64_t *mx_out) {
    int64_t n = a->n, nb = (n + DKB__BLK - 1) / DKB__BLK, mn = INT64_MAX, mx = INT64_MIN;
    int nt = dkb__nthreads(tp, n);
#pragma omp parallel for schedule(static) num_threads(nt) reduction(min : mn) reduction(max : mx)
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK, kb[DKB__BLK];
        dkb__ld_i64(a, off, m, kb);
        for (int64_t j = 0; j < m; j++) {
            mn = kb[j] < mn ? kb[j] : mn;
            mx = kb[j] > mx ? kb[j] : mx;
        }
    }
    *mn_out = mn;
    *mx_out = mx;
}

/* Rows [lo, hi) numbered by one thread: local group ids in order of first
 * appearance within the range (written to gid[]), each local group's slot
 * (direct) or key (hash) and first row, then its global id. */
typedef struct local {
    int64_t lo, hi, ng;
    int64_t *gkey, *gfirst, *xlate;
} local;

typedef struct kslot {
    int64_t key;
    int64_t id;  /* -1: empty */
} kslot;

static inline uint64_t hash_slot(int64_t k, int bits) { return hash64((uint64_t)k, 64 - bits); }

/* Find or add key k in table t (2^bits slots); *id receives its id, a new
 * key gets next_id. Returns true when the key was new. */
static inline bool kslot_get(kslot *t, int bits, int64_t k, int64_t next_id, int64_t *id) {
    uint64_t mask = ((uint64_t)1 << bits) - 1;
    for (uint64_t h = hash_slot(k, bits);; h = (h + 1) & mask) {
        if (t[h].id < 0) {
            t[h].key = k;
            t[h].id = next_id;
            *id = next_id;
            return true;
        }
        if (t[h].key == k) {
            *id = t[h].id;
            return false;
        }
    }
}

/* A table of 4x the slots holding the (key, id) entries of t (freed);
 * NULL when out of memory. */
static kslot *kslot_grow(kslot *t, int *bits) {
    kslot *bigger = malloc(sizeof *t << (*bits + 2));
    if (bigger) {
        memset(bigger, 0xff, sizeof *t << (*bits + 2));
        for (uint64_t h = 0; h < (uint64_t)1 << *bits; h++) {
            int64_t id;
            if (t[h].id >= 0) kslot_get(bigger, *bits + 2, t[h].key, t[h].id, &id);
        }
    }
    free(t);
    *bits += 2;
    return bigger;
}

/* Number the rows of one int64 key: gid[i], first[g]; returns ngroups or -1.
 * Each thread numbers a contiguous range of rows with its own table
 * (direct-address by key - min when the range of keys is small, else
 * open addressing that grows 4x when half full); the local groups are then merged in row order, so
 * global ids follow first appearance for any thread count; a last pass
 * maps local ids to global ones. */
static int64_t number_single(dkb_tp *tp, const dkb_tensor *key, int64_t *gid, int64_t *first) {
    int64_t n = key->n;
    if (n == 0) return 0;
    int64_t mn, mx;
    min_max(tp, key, &mn, &mx);
    uint64_t range = (uint64_t)mx - (uint64_t)mn + 1;
    int T = dkb__nthreads(tp, n);
    bool direct = range != 0 && range <= (uint64_t)n * 4 + 65536 && range * 4 * (uint64_t)(T + 1) <= ((uint64_t)1 << 31) &&
                  n < INT32_MAX; /* int32 local ids */
    local *loc = dkb__tp_scratch(tp, "group", sizeof *loc * (size_t)T);
    int64_t *rowbuf = dkb__tp_scratch(tp, "group", sizeof *rowbuf * (size_t)(2 * n + 2 * T));
    void **maps = dkb__tp_scratch(tp, "group", sizeof *maps * (size_t)T);
    int *tbits = dkb__tp_scratch(tp, "group", sizeof *tbits * (size_t)T);
    if (!loc || !rowbuf || !maps || !tbits) return -1;
    int64_t used = 0;
    for (int t = 0; t < T; t++) {
        loc[t].lo = n * t / T;
        loc[t].hi = n * (t + 1) / T;
        loc[t].gkey = rowbuf + used;
        loc[t].gfirst = rowbuf + n + used;
        used += loc[t].hi - loc[t].lo;
        maps[t] = NULL;
        if (direct) { /* hash tables grow with their groups (malloc, below) */
            maps[t] = dkb__tp_scratch(tp, "group", sizeof(int32_t) * (size_t)range);
            if (!maps[t]) return -1;
        }
    }
    int failed = 0;
#pragma omp parallel for schedule(static, 1) num_threads(T)
    for (int t = 0; t < T; t++) {
        local *L = &loc[t];
        int64_t ng = 0;
        if (direct) {
            int32_t *map = maps[t];
            memset(map, 0xff, sizeof *map * (size_t)range);
            for (int64_t off = L->lo; off < L->hi; off += DKB__BLK) {
                int64_t m = L->hi - off < DKB__BLK ? L->hi - off : DKB__BLK, kb[DKB__BLK];
                dkb__ld_i64(key, off, m, kb);
                for (int64_t j = 0; j < m; j++) {
                    int64_t s = kb[j] - mn;
                    int32_t l = map[s];
                    if (l < 0) {
                        l = map[s] = (int32_t)ng;
                        L->gkey[ng] = s;
                        L->gfirst[ng++] = off + j;
                    }
                    gid[off + j] = l;
                }
            }
        } else {
            int bits = 16;
            kslot *tab = malloc(sizeof *tab << bits);
            if (tab) memset(tab, 0xff, sizeof *tab << bits);
            int64_t kb[DKB__BLK], base = L->lo - DKB__BLK;
            for (int64_t i = L->lo; tab && i < L->hi; i++) {
                int64_t l;
                if (i - base == DKB__BLK) { /* next block of keys */
                    base = i;
                    dkb__ld_i64(key, i, L->hi - i < DKB__BLK ? L->hi - i : DKB__BLK, kb);
                }
                int64_t x = kb[i - base];
                if (i + 16 < L->hi && i + 16 - base < DKB__BLK) __builtin_prefetch(&tab[hash_slot(kb[i + 16 - base], bits)]);
                if (kslot_get(tab, bits, x, ng, &l)) {
                    L->gkey[ng] = x;
                    L->gfirst[ng++] = i;
                    if ((uint64_t)ng * 2 > (uint64_t)1 << bits) tab = kslot_grow(tab, &bits);
                }
                gid[i] = l;
            }
            if (!tab) {
#pragma omp atomic write
                failed = 1;
            }
            maps[t] = tab; /* kept: thread 0's becomes the global table */
            tbits[t] = bits;
        }
        L->ng = ng;
    }
    int64_t ng = -1;
    if (failed) {
        dkb__tp_error(tp, DKB_ENOMEM, "group: out of memory");
        goto out;
    }
    if (T == 1) {
        memcpy(first, loc[0].gfirst, sizeof *first * (size_t)loc[0].ng);
        ng = loc[0].ng;
        goto out;
    }
    /* merge in row order: a group's global id is given by its first range;
     * thread 0's local ids are global ids, so its rows keep theirs */
    int64_t *xl = dkb__tp_scratch(tp, "group", sizeof *xl * (size_t)(n + 1)); /* beside gkey */
    if (!xl) goto out;
    ng = 0;
    if (direct) {
        int32_t *gmap = maps[0]; /* thread 0's map: its local ids are global ids */
        for (int64_t l = 0; l < loc[0].ng; l++) first[ng++] = loc[0].gfirst[l];
        for (int t = 1; t < T; t++) {
            local *L = &loc[t];
            L->xlate = xl + (L->gkey - rowbuf);
            for (int64_t l = 0; l < L->ng; l++) {
                int32_t *g = &gmap[L->gkey[l]];
                if (*g < 0) {
                    *g = (int32_t)ng;
                    first[ng++] = L->gfirst[l];
                }
                L->xlate[l] = *g;
            }
        }
    } else { /* thread 0's table holds its groups under their global ids already */
        kslot *gt = maps[0];
        int bits = tbits[0];
        for (int64_t l = 0; l < loc[0].ng; l++) first[ng++] = loc[0].gfirst[l];
        for (int t = 1; t < T && gt; t++) {
            local *L = &loc[t];
            L->xlate = xl + (L->gkey - rowbuf);
            for (int64_t l = 0; gt && l < L->ng; l++) {
                int64_t g;
                if (l + 16 < L->ng) __builtin_prefetch(&gt[hash_slot(L->gkey[l + 16], bits)]);
                if (kslot_get(gt, bits, L->gkey[l], ng, &g)) {
                    first[ng++] = L->gfirst[l];
                    if ((uint64_t)ng * 2 > (uint64_t)1 << bits) gt = kslot_grow(gt, &bits);
                }
                L->xlate[l] = g;
            }
        }
        maps[0] = gt;
        if (!gt) {
            dkb__tp_error(tp, DKB_ENOMEM, "group: out of memory");
            ng = -1;
            goto out;
        }
    }
#pragma omp parallel for schedule(static, 1) num_threads(T)
    for (int t = 1; t < T; t++) {
        const local *L = &loc[t];
        for (int64_t i = L->lo; i < L->hi; i++) gid[i] = L->xlate[gid[i]];
    }
out:
    for (int t = 0; !direct && t < T; t++) free(maps[t]);
    return ng;
}

/* Number rows by several unpackable key columns (compared column-wise). */
static int64_t number_multi(dkb_tp *tp, const int64_t *const *k, int nkeys, int64_t n, int64_t *gid,
                            int64_t *first) {
    int bits = 4;
    while (((uint64_t)1 << bits) < (uint64_t)n * 2) bits++;
    uint64_t mask = ((uint64_t)1 << bits) - 1;
    int64_t *slots = dkb__tp_scratch(tp, "group", sizeof *slots << bits); /* group id, -1 empty */
    if (!slots) return -1;
    memset(slots, 0xff, sizeof *slots << bits);
    int64_t ng = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t hv = 0;
        for (int j = 0; j < nkeys; j++) hv = (hv ^ (uint64_t)k[j][i]) * 0x9E3779B97F4A7C15ull + (uint64_t)j;
        uint64_t h = hash64(hv, 64 - bits);
        for (;; h = (h + 1) & mask) {
            int64_t g = slots[h];
            if (g < 0) {
                slots[h] = ng;
                first[ng] = i;
                gid[i] = ng++;
                break;
            }
            int64_t f = first[g];
            int j = 0;
            while (j < nkeys && k[j][f] == k[j][i]) j++;
            if (j == nkeys) {
                gid[i] = g;
                break;
            }
        }
    }
    return ng;
}

dkb_groups dkb__cpu_group(dkb_tp *tp, const dkb_tensor *const *keys, int nkeys) {
    dkb_groups g = {NULL, NULL, 0};
    int64_t n = keys[0]->n, nb = (n + DKB__BLK - 1) / DKB__BLK;
    int nt = dkb__nthreads(tp, n);
    dkb_tensor *gid = dkb__tp_new(tp, "group", DKB_TP_I64, n);
    if (!gid) return g;
    SCRATCH_BEGIN(tp);
    int64_t *first = dkb__tp_scratch(tp, "group", sizeof *first * (size_t)(n + 1));
    int64_t ng = -1;
    if (!first) goto out;
    dkb_tensor packed = *keys[0];
    if (nkeys > 1 && n > 0) {
        /* pack: key = sum (k_j - min_j) * mult_j when the ranges fit 62 bits */
        int64_t *mn = dkb__tp_scratch(tp, "group", sizeof *mn * (size_t)nkeys * 2);
        if (!mn) goto out;
        int64_t *mult = mn + nkeys;
        dkb__u128 total = 1;
        for (int j = nkeys - 1; j >= 0 && total; j--) {
            int64_t mx;
            min_max(tp, keys[j], &mn[j], &mx);
            mult[j] = (int64_t)total;
            total *= (dkb__u128)((dkb__i128)mx - mn[j] + 1);
            if (total > ((dkb__u128)1 << 62)) total = 0;
        }
        if (!total) { /* not packable: compare rows column by column */
            const int64_t **k = dkb__tp_scratch(tp, "group", sizeof *k * (size_t)nkeys);
            if (!k || !load_keys(tp, keys, nkeys, k)) goto out;
            ng = number_multi(tp, k, nkeys, n, gid->data, first);
            goto done;
        }
        int64_t *p = dkb__tp_scratch(tp, "group", sizeof *p * (size_t)(n + 1));
        if (!p) goto out;
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int64_t bi = 0; bi < nb; bi++) {
            int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK, kb[DKB__BLK];
            for (int64_t j = 0; j < m; j++) p[off + j] = 0;
            for (int q = 0; q < nkeys; q++) {
                dkb__ld_i64(keys[q], off, m, kb);
                for (int64_t j = 0; j < m; j++) p[off + j] += (kb[j] - mn[q]) * mult[q];
            }
        }
        memset(&packed, 0, sizeof packed);
        packed.dtype = DKB_TP_I64;
        packed.n = n;
        packed.data = p;
    }
    ng = number_single(tp, &packed, gid->data, first);
done:
    if (ng < 0) goto out;
    g.first_row = dkb__tp_new(tp, "group", DKB_TP_I64, ng);
    if (!g.first_row) goto out;
    memcpy(g.first_row->data, first, sizeof *first * (size_t)ng);
    g.group_id = gid;
    g.ngroups = ng;
out:
    SCRATCH_END(tp);
    return g;
}
