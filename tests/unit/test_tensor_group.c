/* test_tensor_group.c: TensorPlan group-by and aggregation against
 * reference loops: group ids in first-appearance order for one key (dense,
 * sparse, negative, one group, all distinct) and several keys (packable and
 * not), SUM as exact int128 of values near 2^62, COUNT, MIN, MAX, AVG,
 * COUNT_DISTINCT, float sums identical for every thread count, and reduce
 * (including empty inputs). */
#include <math.h>

#include "test_tensor_util.h"

typedef struct tup {
    int64_t k[3];
    int64_t row;
} tup;
static int nk_cmp;
static int tup_cmp(const void *x, const void *y) {
    const tup *a = x, *b = y;
    for (int j = 0; j < nk_cmp; j++)
        if (a->k[j] != b->k[j]) return a->k[j] < b->k[j] ? -1 : 1;
    return (a->row > b->row) - (a->row < b->row);
}
static int i64_cmp(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* Reference group ids (first-appearance order) of rows with keys k[j][i]. */
static int64_t ref_group(int64_t n, int nk, int64_t *const *k, int64_t *gid) {
    tup *t = malloc(sizeof *t * (size_t)(n + 1));
    int64_t *first = xmalloc_i64(n), *rank = xmalloc_i64(n);
    for (int64_t i = 0; i < n; i++) {
        for (int j = 0; j < 3; j++) t[i].k[j] = j < nk ? k[j][i] : 0;
        t[i].row = i;
    }
    nk_cmp = nk;
    qsort(t, (size_t)n, sizeof *t, tup_cmp);
    int64_t ng = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || memcmp(t[i].k, t[i - 1].k, sizeof t[i].k) != 0)
            first[ng++] = t[i].row;
        gid[t[i].row] = first[ng - 1]; /* first row for now */
    }
    qsort(first, (size_t)ng, sizeof *first, i64_cmp);
    for (int64_t g = 0; g < ng; g++) rank[first[g]] = g;
    for (int64_t i = 0; i < n; i++) gid[i] = rank[gid[i]];
    free(t), free(first), free(rank);
    return ng;
}

/* kmode: 0 dense, 1 one group, 2 sparse 64-bit, 3 negative, 4 all distinct */
static int64_t gen(int kmode, int64_t n, int64_t i) {
    switch (kmode) {
    case 0: return rnd_in(0, n / 3 + 1);
    case 1: return 42;
    case 2: return (int64_t)(rnd() % (uint64_t)(n / 2 + 2)) * 0x7FFFFFFF3LL;
    case 3: return -rnd_in(0, 50);
    default: return n - i;
    }
}

static void test_group(int threads, int64_t n, int kmode, int nk) {
    dkb_tp *tp = new_tp(threads);
    int64_t *k[3], *gid = xmalloc_i64(n), *v = xmalloc_i64(n);
    int32_t *v32 = malloc(sizeof *v32 * (size_t)(n + 1));
    double *f = malloc(sizeof *f * (size_t)(n + 1));
    for (int j = 0; j < 3; j++) k[j] = xmalloc_i64(n);
    for (int64_t i = 0; i < n; i++) {
        k[0][i] = gen(kmode, n, i);
        k[1][i] = nk == 3 ? (int64_t)(rnd() % 3) * (INT64_MAX / 3) : rnd_in(0, 2); /* 3 keys: unpackable */
        k[2][i] = rnd_in(-1, 1);
        v[i] = (int64_t)(rnd() >> 2) - (INT64_MAX >> 2); /* near +-2^62: sums need int128 */
        v32[i] = (int32_t)rnd_in(-1000000, 1000000);
        f[i] = (double)rnd_in(-1000000, 1000000) / 1000.0;
    }
    int64_t ng = ref_group(n, nk, k, gid);
    const dkb_tensor *keys[3];
    keys[0] = host_i64(tp, k[0], n, 0);
    /* second key as U8 when small, to mix widths */
    if (nk == 3) keys[1] = host_i64(tp, k[1], n, 0);
    else {
        uint8_t *u = malloc((size_t)n + 1);
        for (int64_t i = 0; i < n; i++) u[i] = (uint8_t)k[1][i];
        keys[1] = host_u8(tp, u, n, DKB_TP_U8);
        free(u);
    }
    keys[2] = host_i64(tp, k[2], n, 0);
    dkb_groups g = dkb_tp_group(tp, keys, nk);
    expect_ok(tp, "group");
    if (!g.group_id) goto out;
    CHECK(g.ngroups == ng, "ngroups %lld want %lld (kmode %d nk %d n %lld)", (long long)g.ngroups, (long long)ng,
          kmode, nk, (long long)n);
    if (g.ngroups != ng) goto out;
    for (int64_t i = 0; i < n; i++) {
        if (DATA(int64_t, g.group_id)[i] != gid[i]) {
            CHECK(0, "group id row %lld: %lld want %lld", (long long)i, (long long)DATA(int64_t, g.group_id)[i],
                  (long long)gid[i]);
            break;
        }
    }
    int64_t *fr = xmalloc_i64(ng);
    for (int64_t i = n - 1; i >= 0; i--) fr[gid[i]] = i;
    for (int64_t q = 0; q < ng; q++) CHECK(DATA(int64_t, g.first_row)[q] == fr[q], "first_row %lld", (long long)q);
    free(fr);

    /* aggregates */
    dkb_tensor *tv = host_i64(tp, v, n, 2), *tv32 = host_i32(tp, v32, n), *tf = dkb_tp_from_host(tp, DKB_TP_F64, n, f);
    dkb_tensor *sum = dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, tv), *cnt = dkb_tp_aggregate(tp, &g, DKB_AGG_COUNT, NULL);
    dkb_tensor *mn = dkb_tp_aggregate(tp, &g, DKB_AGG_MIN, tv32), *mx = dkb_tp_aggregate(tp, &g, DKB_AGG_MAX, tf);
    dkb_tensor *avg = dkb_tp_aggregate(tp, &g, DKB_AGG_AVG, tv32), *fs = dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, tf);
    dkb_tensor *mod = dkb_tp_arith_i64(tp, tv32, DKB_OP_MIN, 5, 0);   /* few distinct values */
    dkb_tensor *cd = dkb_tp_aggregate(tp, &g, DKB_AGG_COUNT_DISTINCT, mod);
    expect_ok(tp, "aggregate");
    if (!sum || !cnt || !mn || !mx || !avg || !fs || !cd) goto out;
    CHECK(sum->dtype == DKB_TP_I128 && sum->scale == 2 && cnt->dtype == DKB_TP_I64 && mn->dtype == DKB_TP_I32 &&
              mx->dtype == DKB_TP_F64 && avg->dtype == DKB_TP_F64,
          "aggregate dtypes");
    __int128 *es = calloc((size_t)ng + 1, sizeof *es);
    int64_t *ec = calloc((size_t)ng + 1, sizeof *ec), *emn = xmalloc_i64(ng);
    double *emx = malloc(sizeof *emx * (size_t)(ng + 1));
    for (int64_t i = 0; i < n; i++) {
        int64_t q = gid[i];
        if (ec[q] == 0 || v32[i] < emn[q]) emn[q] = v32[i];
        if (ec[q] == 0 || f[i] > emx[q]) emx[q] = f[i];
        es[q] += v[i];
        ec[q]++;
    }
    /* distinct: sort (group, value) pairs */
    tup *pairs = malloc(sizeof *pairs * (size_t)(n + 1));
    int64_t *ed = calloc((size_t)ng + 1, sizeof *ed);
    for (int64_t i = 0; i < n; i++) pairs[i].k[0] = gid[i], pairs[i].k[1] = v32[i] < 5 ? v32[i] : 5, pairs[i].row = 0;
    nk_cmp = 2;
    qsort(pairs, (size_t)n, sizeof *pairs, tup_cmp);
    for (int64_t i = 0; i < n; i++)
        if (i == 0 || pairs[i].k[0] != pairs[i - 1].k[0] || pairs[i].k[1] != pairs[i - 1].k[1]) ed[pairs[i].k[0]]++;
    for (int64_t q = 0; q < ng; q++) {
        CHECK(DATA(__int128, sum)[q] == es[q], "sum group %lld", (long long)q);
        CHECK(DATA(int64_t, cnt)[q] == ec[q], "count group %lld", (long long)q);
        CHECK(DATA(int32_t, mn)[q] == emn[q] && DATA(double, mx)[q] == emx[q], "min/max group %lld", (long long)q);
        CHECK(DATA(int64_t, cd)[q] == ed[q], "count distinct group %lld: %lld want %lld", (long long)q,
              (long long)DATA(int64_t, cd)[q], (long long)ed[q]);
    }
    /* avg = exact sum / count */
    int64_t *s32 = calloc((size_t)ng + 1, sizeof *s32);
    for (int64_t i = 0; i < n; i++) s32[gid[i]] += v32[i];
    for (int64_t q = 0; q < ng; q++)
        CHECK(fabs(DATA(double, avg)[q] - (double)s32[q] / (double)ec[q]) <= 1e-9 * (1 + fabs((double)s32[q])),
              "avg group %lld", (long long)q);
    free(es), free(ec), free(emn), free(emx), free(pairs), free(ed), free(s32);
out:
    dkb_tp_destroy(tp);
    for (int j = 0; j < 3; j++) free(k[j]);
    free(gid), free(v), free(v32), free(f);
}

/* Float sums and averages do not depend on the thread count. */
static void test_f64_determinism(int64_t n) {
    double *f = malloc(sizeof *f * (size_t)(n + 1));
    int64_t *k = xmalloc_i64(n);
    for (int64_t i = 0; i < n; i++) f[i] = (double)(rnd() >> 11) * 1e-7 * (rnd() & 1 ? 1 : -1), k[i] = rnd_in(0, 3);
    double ref_sum[4] = {0}, ref_red = 0, ref_avg = 0;
    for (int t = 0; t < NTHREADS + 1; t++) {
        dkb_tp *tp = new_tp(t < NTHREADS ? THREADS[t] : 0);
        dkb_tensor *tf = dkb_tp_from_host(tp, DKB_TP_F64, n, f);
        const dkb_tensor *keys[1] = {host_i64(tp, k, n, 0)};
        dkb_groups g = dkb_tp_group(tp, keys, 1);
        dkb_tensor *s = dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, tf);
        dkb_tensor *r = dkb_tp_reduce(tp, DKB_AGG_SUM, tf), *a = dkb_tp_reduce(tp, DKB_AGG_AVG, tf);
        expect_ok(tp, "f64 determinism");
        if (s && r && a) {
            if (t == 0) {
                memcpy(ref_sum, s->data, sizeof(double) * (size_t)s->n);
                ref_red = DATA(double, r)[0];
                ref_avg = DATA(double, a)[0];
            } else {
                CHECK(memcmp(ref_sum, s->data, sizeof(double) * (size_t)s->n) == 0, "group f64 sums differ");
                CHECK(DATA(double, r)[0] == ref_red && DATA(double, a)[0] == ref_avg, "reduce f64 differs");
            }
        }
        dkb_tp_destroy(tp);
    }
    free(f), free(k);
}

static void test_reduce(int threads, int64_t n) {
    dkb_tp *tp = new_tp(threads);
    int64_t *v = xmalloc_i64(n);
    int32_t *w = malloc(sizeof *w * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) v[i] = (int64_t)(rnd() >> 1) * (rnd() & 1 ? 1 : -1), w[i] = (int32_t)rnd_in(-5, 500);
    dkb_tensor *tv = host_i64(tp, v, n, 2), *tw = host_i32(tp, w, n);
    dkb_tensor *s = dkb_tp_reduce(tp, DKB_AGG_SUM, tv), *c = dkb_tp_reduce(tp, DKB_AGG_COUNT, tv);
    dkb_tensor *mn = dkb_tp_reduce(tp, DKB_AGG_MIN, tw), *mx = dkb_tp_reduce(tp, DKB_AGG_MAX, tv);
    dkb_tensor *av = dkb_tp_reduce(tp, DKB_AGG_AVG, tw), *cd = dkb_tp_reduce(tp, DKB_AGG_COUNT_DISTINCT, tw);
    dkb_tensor *s128 = dkb_tp_reduce(tp, DKB_AGG_SUM, dkb_tp_cast(tp, tv, DKB_TP_I128));
    expect_ok(tp, "reduce");
    if (!s || !c || !mn || !mx || !av || !cd || !s128) goto out;
    __int128 es = 0;
    int64_t emx = INT64_MIN, sw = 0;
    int32_t emn = INT32_MAX;
    uint8_t seen[506] = {0};
    int64_t nd = 0;
    for (int64_t i = 0; i < n; i++) {
        es += v[i], sw += w[i];
        emx = v[i] > emx ? v[i] : emx;
        emn = w[i] < emn ? w[i] : emn;
        if (!seen[w[i] + 5]++) nd++;
    }
    CHECK(s->n == 1 && s->dtype == DKB_TP_I128 && s->scale == 2 && DATA(__int128, s)[0] == es, "reduce sum");
    CHECK(s128->n == 1 && DATA(__int128, s128)[0] == es, "reduce sum of I128");
    CHECK(DATA(int64_t, c)[0] == n && DATA(int64_t, cd)[0] == nd, "reduce count / distinct");
    if (n == 0) {
        CHECK(mn->n == 0 && mx->n == 0 && av->n == 0, "min/max/avg of empty have no element");
    } else {
        CHECK(mn->n == 1 && DATA(int32_t, mn)[0] == emn && DATA(int64_t, mx)[0] == emx, "reduce min/max");
        CHECK(fabs(DATA(double, av)[0] - (double)sw / (double)n) < 1e-9 * (1 + fabs((double)sw)), "reduce avg");
        CHECK(dkb_tp_get_i128(tp, s, 0) == es && dkb_tp_get_f64(tp, mn, 0) == emn, "get_* of results");
    }
out:
    expect_ok(tp, "reduce end");
    dkb_tp_destroy(tp);
    free(v), free(w);
}

int main(void) {
    for (int t = 0; t < NTHREADS; t++)
        for (int s = 0; s < NSIZES; s++) {
            for (int kmode = 0; kmode < 5; kmode++)
                for (int nk = 1; nk <= 3; nk++) test_group(THREADS[t], SIZES[s], kmode, nk);
            test_reduce(THREADS[t], SIZES[s]);
        }
    test_group(2, 1500000, 0, 1); /* many groups, several chunks per thread */
    test_group(2, 1500000, 1, 2); /* one group */
    test_f64_determinism(1000);
    test_f64_determinism(1000003);
    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("test_tensor_group: ok\n");
    return failures ? 1 : 0;
}
