/* test_tensor_join.c: TensorPlan hash joins against a sort-based reference:
 * INNER and LEFT joins with duplicate keys on both sides, probe rows with
 * no match, empty sides, dense keys (direct-address table) and sparse or
 * negative keys (hash table), mixed key widths, keys crowding one hash
 * partition; pair order (by probe row, then build row); semi-join masks;
 * several sizes and thread counts. */
#include "test_tensor_util.h"

typedef struct kr {
    int64_t key, row;
} kr;

static int kr_cmp(const void *x, const void *y) {
    const kr *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return (a->row > b->row) - (a->row < b->row);
}

/* First index in sorted s[0..n) with key >= k. */
static int64_t lower(const kr *s, int64_t n, int64_t k) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (s[mid].key < k) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* keys: mode 0 dense small range (many duplicates), 1 sparse 64-bit, 2
 * dense but negative, 3 unique build keys. */
static int64_t gen_key(int mode, int64_t range, int64_t i) {
    switch (mode) {
    case 0: return rnd_in(0, range);
    case 1: return (int64_t)(rnd() % (uint64_t)(range + 1)) * 0x10000000F1LL - (1LL << 60);
    case 2: return rnd_in(-range, -range / 2);
    default: return i * 3;
    }
}

static void test_join(int threads, int64_t nb, int64_t np, int mode) {
    dkb_tp *tp = new_tp(threads);
    int64_t range = nb / 2 + 3;
    int64_t *bk = xmalloc_i64(nb), *pk = xmalloc_i64(np);
    for (int64_t i = 0; i < nb; i++) bk[i] = gen_key(mode, range, i);
    for (int64_t i = 0; i < np; i++) pk[i] = mode == 3 ? rnd_in(0, 3 * nb + 3) : gen_key(mode, range + 2, i);
    kr *s = malloc(sizeof *s * (size_t)(nb + 1));
    for (int64_t i = 0; i < nb; i++) s[i].key = bk[i], s[i].row = i;
    qsort(s, (size_t)nb, sizeof *s, kr_cmp);
    dkb_tensor *tb = host_i64(tp, bk, nb, 0), *tpk = host_i64(tp, pk, np, 0);
    for (int kind = DKB_JOIN_INNER; kind <= DKB_JOIN_LEFT; kind++) {
        dkb_join_result j = dkb_tp_join(tp, tb, tpk, kind);
        expect_ok(tp, "join");
        if (!j.probe_idx || !j.build_idx) break;
        const int64_t *po = DATA(int64_t, j.probe_idx), *bo = DATA(int64_t, j.build_idx);
        int64_t k = 0, total = j.probe_idx->n;
        CHECK(j.build_idx->n == total, "join result lengths");
        int bad = 0;
        for (int64_t i = 0; i < np && bad < 3; i++) {
            int64_t p = lower(s, nb, pk[i]);
            if (p == nb || s[p].key != pk[i]) {
                if (kind == DKB_JOIN_LEFT) {
                    if (k >= total || po[k] != i || bo[k] != -1) {
                        CHECK(0, "left no-match probe %lld (mode %d)", (long long)i, mode);
                        bad++;
                    }
                    k++;
                }
                continue;
            }
            for (; p < nb && s[p].key == pk[i]; p++, k++)
                if (k >= total || po[k] != i || bo[k] != s[p].row) {
                    CHECK(0, "join pair %lld: probe %lld build %lld (mode %d kind %d n %lld/%lld)", (long long)k,
                          (long long)i, (long long)s[p].row, mode, kind, (long long)nb, (long long)np);
                    bad++;
                    break;
                }
        }
        CHECK(bad || k == total, "join produced %lld pairs, want %lld", (long long)total, (long long)k);
    }
    /* mixed widths: I32 build against I64 probe */
    if (mode != 1) {
        int32_t *b32 = malloc(sizeof *b32 * (size_t)(nb + 1));
        for (int64_t i = 0; i < nb; i++) b32[i] = (int32_t)bk[i];
        dkb_join_result j = dkb_tp_join(tp, host_i32(tp, b32, nb), tpk, DKB_JOIN_INNER);
        dkb_join_result j64 = dkb_tp_join(tp, tb, tpk, DKB_JOIN_INNER);
        CHECK(j.probe_idx && j64.probe_idx && j.probe_idx->n == j64.probe_idx->n &&
                  memcmp(j.build_idx->data, j64.build_idx->data, sizeof(int64_t) * (size_t)j.probe_idx->n) == 0,
              "I32 and I64 builds agree");
        free(b32);
    }
    dkb_tensor *semi = dkb_tp_semi_join(tp, tb, tpk);
    expect_ok(tp, "semi_join");
    for (int64_t i = 0; semi && i < np; i++) {
        int64_t p = lower(s, nb, pk[i]);
        CHECK(DATA(uint8_t, semi)[i] == (p < nb && s[p].key == pk[i]), "semi row %lld", (long long)i);
    }
    dkb_tp_destroy(tp);
    free(bk), free(pk), free(s);
}

static void test_empty(int threads) {
    dkb_tp *tp = new_tp(threads);
    int64_t keys[5] = {3, 1, 3, 9, 0};
    dkb_tensor *none = dkb_tp_from_host(tp, DKB_TP_I64, 0, NULL), *some = host_i64(tp, keys, 5, 0);
    dkb_join_result j = dkb_tp_join(tp, none, some, DKB_JOIN_LEFT);
    CHECK(j.probe_idx && j.probe_idx->n == 5, "left join with empty build keeps every probe row");
    for (int i = 0; j.probe_idx && i < 5; i++)
        CHECK(DATA(int64_t, j.probe_idx)[i] == i && DATA(int64_t, j.build_idx)[i] == -1, "left empty row %d", i);
    j = dkb_tp_join(tp, none, some, DKB_JOIN_INNER);
    CHECK(j.probe_idx && j.probe_idx->n == 0, "inner join with empty build");
    j = dkb_tp_join(tp, some, none, DKB_JOIN_LEFT);
    CHECK(j.probe_idx && j.probe_idx->n == 0, "join with empty probe");
    /* a small worked example: duplicates on both sides */
    int64_t b[4] = {3, 7, 3, 5}, p[4] = {3, 4, 5, 3};
    j = dkb_tp_join(tp, host_i64(tp, b, 4, 0), host_i64(tp, p, 4, 0), DKB_JOIN_LEFT);
    int64_t wp[6] = {0, 0, 1, 2, 3, 3}, wb[6] = {0, 2, -1, 3, 0, 2};
    CHECK(j.probe_idx && j.probe_idx->n == 6, "worked example length");
    for (int i = 0; j.probe_idx && i < 6 && j.probe_idx->n == 6; i++)
        CHECK(DATA(int64_t, j.probe_idx)[i] == wp[i] && DATA(int64_t, j.build_idx)[i] == wb[i], "worked pair %d", i);
    expect_ok(tp, "join empty");
    /* NULL inputs: both NULL, error recorded */
    j = dkb_tp_join(tp, NULL, some, DKB_JOIN_INNER);
    CHECK(!j.probe_idx && !j.build_idx && dkb_tp_status(tp, NULL) == DKB_EINVAL, "join NULL");
    dkb_tp_destroy(tp);
}

/* Keys whose hashes (key * golden ratio) all fall into the first hash
 * partitions: the partitioned build must notice and build sequentially. */
static void test_skew(int threads) {
    dkb_tp *tp = new_tp(threads);
    uint64_t phi = 0x9E3779B97F4A7C15ull, inv = phi;
    for (int i = 0; i < 6; i++) inv *= 2 - phi * inv; /* inverse of phi mod 2^64 */
    int64_t nb = 20000, np = 30000;
    int64_t *bk = xmalloc_i64(nb), *pk = xmalloc_i64(np);
    for (int64_t j = 0; j < nb; j++) bk[j] = (int64_t)(((uint64_t)j << 48) * inv);
    for (int64_t i = 0; i < np; i++) pk[i] = (int64_t)(((uint64_t)(i % 2 ? i / 2 : nb + i) << 48) * inv);
    dkb_tensor *tb = host_i64(tp, bk, nb, 0), *tq = host_i64(tp, pk, np, 0);
    dkb_tensor *semi = dkb_tp_semi_join(tp, tb, tq);
    dkb_join_result j = dkb_tp_join(tp, tb, tq, DKB_JOIN_INNER);
    expect_ok(tp, "skewed join");
    for (int64_t i = 0; semi && i < np; i++) CHECK(DATA(uint8_t, semi)[i] == (i % 2 == 1), "skew semi row %lld", (long long)i);
    CHECK(j.probe_idx && j.probe_idx->n == np / 2, "skew join pairs");
    for (int64_t q = 0; j.probe_idx && q < j.probe_idx->n; q++)
        CHECK(DATA(int64_t, j.probe_idx)[q] == 2 * q + 1 && DATA(int64_t, j.build_idx)[q] == q, "skew pair %lld", (long long)q);
    dkb_tp_destroy(tp);
    free(bk), free(pk);
}

int main(void) {
    for (int t = 0; t < NTHREADS; t++) {
        test_empty(THREADS[t]);
        test_skew(THREADS[t]);
        for (int s = 0; s < NSIZES; s++)
            for (int mode = 0; mode < 4; mode++) {
                test_join(THREADS[t], SIZES[s], SIZES[s], mode);
                test_join(THREADS[t], SIZES[s] / 7 + 1, SIZES[s], mode);
                test_join(THREADS[t], SIZES[s], SIZES[s] / 5, mode);
            }
    }
    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("test_tensor_join: ok\n");
    return failures ? 1 : 0;
}
