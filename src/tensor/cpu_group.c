/* cpu_group.c: CPU group-by: rows with equal key tuples get one group id,
 * groups numbered in order of first appearance.
 *
 * Several key columns are packed into one int64 per row when their value
 * ranges allow (they always do for TPC-H), else rows are compared column
 * by column. One int64 key per row is then numbered with a direct-address
 * table when its range is small, or an open-addressing hash table. */
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

static void min_max(dkb_tp *tp, const int64_t *k, int64_t n, int64_t *mn_out, int64_t *mx_out) {
    int64_t mn = INT64_MAX, mx = INT64_MIN;
    int nt = dkb__nthreads(tp, n);
#pragma omp parallel for schedule(static) num_threads(nt) reduction(min : mn) reduction(max : mx)
    for (int64_t i = 0; i < n; i++) {
        mn = k[i] < mn ? k[i] : mn;
        mx = k[i] > mx ? k[i] : mx;
    }
    *mn_out = mn;
    *mx_out = mx;
}

/* Number the rows of one int64 key: gid[i], first[g]; returns ngroups or -1. */
static int64_t number_single(dkb_tp *tp, const int64_t *k, int64_t n, int64_t *gid, int64_t *first) {
    if (n == 0) return 0;
    int64_t mn, mx, ng = 0;
    min_max(tp, k, n, &mn, &mx);
    uint64_t range = (uint64_t)mx - (uint64_t)mn + 1;
    if (range != 0 && range <= (uint64_t)n + 65536) {
        int64_t *map = dkb__tp_scratch(tp, "group", sizeof *map * (size_t)range);
        if (!map) return -1;
        memset(map, 0xff, sizeof *map * (size_t)range);
        for (int64_t i = 0; i < n; i++) {
            int64_t *m = &map[k[i] - mn];
            if (*m < 0) {
                first[ng] = i;
                *m = ng++;
            }
            gid[i] = *m;
        }
        return ng;
    }
    int bits = 4;
    while (((uint64_t)1 << bits) < (uint64_t)n * 2) bits++;
    uint64_t mask = ((uint64_t)1 << bits) - 1;
    int64_t(*slots)[2] = dkb__tp_scratch(tp, "group", sizeof *slots << bits);
    if (!slots) return -1;
    memset(slots, 0xff, sizeof *slots << bits);
    for (int64_t i = 0; i < n; i++) {
        uint64_t h = hash64((uint64_t)k[i], 64 - bits);
        while (slots[h][1] >= 0 && slots[h][0] != k[i]) h = (h + 1) & mask;
        if (slots[h][1] < 0) {
            slots[h][0] = k[i];
            slots[h][1] = ng;
            first[ng++] = i;
        }
        gid[i] = slots[h][1];
    }
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
    int64_t n = keys[0]->n;
    int nt = dkb__nthreads(tp, n);
    dkb_tensor *gid = dkb__tp_new(tp, "group", DKB_TP_I64, n);
    if (!gid) return g;
    SCRATCH_BEGIN(tp);
    const int64_t **k = dkb__tp_scratch(tp, "group", sizeof *k * (size_t)nkeys);
    int64_t *first = dkb__tp_scratch(tp, "group", sizeof *first * (size_t)(n + 1));
    int64_t ng = -1;
    if (!k || !first || !load_keys(tp, keys, nkeys, k)) goto out;
    const int64_t *single = k[0];
    if (nkeys > 1) {
        /* pack: key = sum (k_j - min_j) * mult_j when the ranges fit 62 bits */
        int64_t mult[64];
        int64_t *mn = dkb__tp_scratch(tp, "group", sizeof *mn * (size_t)nkeys * 2);
        if (!mn) goto out;
        dkb__u128 total = 1;
        for (int j = nkeys - 1; j >= 0; j--) {
            int64_t mx;
            min_max(tp, k[j], n, &mn[j], &mx);
            dkb__u128 range = n ? (dkb__u128)((dkb__i128)mx - mn[j] + 1) : 1;
            if (j < 64) mult[j] = (int64_t)total;
            total *= range;
            if (total > ((dkb__u128)1 << 62) || nkeys > 64) {
                total = 0;
                break;
            }
        }
        if (total) {
            int64_t *p = dkb__tp_scratch(tp, "group", sizeof *p * (size_t)(n + 1));
            if (!p) goto out;
#pragma omp parallel for schedule(static) num_threads(nt)
            for (int64_t i = 0; i < n; i++) {
                int64_t v = 0;
                for (int j = 0; j < nkeys; j++) v += (k[j][i] - mn[j]) * mult[j];
                p[i] = v;
            }
            single = p;
        } else {
            ng = number_multi(tp, k, nkeys, n, gid->data, first);
            goto done;
        }
    }
    ng = number_single(tp, single, n, gid->data, first);
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
