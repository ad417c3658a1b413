/* test_tensor_sort.c: TensorPlan sort and top-k against a comparison sort
 * that breaks ties by row (the stable order): one to three keys of every
 * kind (I32 with many ties, I64 and I128 ascending or descending, I128 with
 * a range over 2^64, F64 with negatives, U8, STR byte-wise either way),
 * composites wider than 64 bits, and top-k for k = 0, 1, 5, n/10, n, n+5;
 * several sizes and thread counts. */
#include "test_tensor_util.h"

#define NKINDS 8
typedef struct col {
    int kind; /* 0 I32 ties, 1 I64, 2 I128 wide, 3 F64, 4 U8, 5 STR, 6 I64 full range, 7 I128 narrow */
    bool desc;
    int32_t *i32;
    int64_t *i64;
    __int128 *i128;
    double *f;
    uint8_t *u;
    int64_t *off;
    char *bytes;
} col;

static col *g_cols;
static int g_nk;

static int cmp_one(const col *c, int64_t a, int64_t b) {
    int r;
    switch (c->kind) {
    case 0: r = (c->i32[a] > c->i32[b]) - (c->i32[a] < c->i32[b]); break;
    case 1: case 6: r = (c->i64[a] > c->i64[b]) - (c->i64[a] < c->i64[b]); break;
    case 2: case 7: r = (c->i128[a] > c->i128[b]) - (c->i128[a] < c->i128[b]); break;
    case 3: r = (c->f[a] > c->f[b]) - (c->f[a] < c->f[b]); break;
    case 4: r = (c->u[a] > c->u[b]) - (c->u[a] < c->u[b]); break;
    default: {
        int64_t la = c->off[a + 1] - c->off[a], lb = c->off[b + 1] - c->off[b];
        r = memcmp(c->bytes + c->off[a], c->bytes + c->off[b], (size_t)(la < lb ? la : lb));
        r = r ? (r > 0) - (r < 0) : (la > lb) - (la < lb);
    }
    }
    return c->desc ? -r : r;
}
static int ref_cmp(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    for (int j = 0; j < g_nk; j++) {
        int r = cmp_one(&g_cols[j], a, b);
        if (r) return r;
    }
    return (a > b) - (a < b);
}

static void make_col(dkb_tp *tp, col *c, int kind, bool desc, int64_t n, dkb_sort_key *key) {
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->desc = desc;
    dkb_tensor *t = NULL;
    switch (kind) {
    case 0:
        c->i32 = malloc(sizeof *c->i32 * (size_t)(n + 1));
        for (int64_t i = 0; i < n; i++) c->i32[i] = (int32_t)rnd_in(-3, 3);
        t = host_i32(tp, c->i32, n);
        break;
    case 1: case 6:
        c->i64 = xmalloc_i64(n);
        for (int64_t i = 0; i < n; i++) c->i64[i] = kind == 1 ? rnd_in(-1000000, 1000000) : (int64_t)rnd();
        t = host_i64(tp, c->i64, n, 2);
        break;
    case 2: case 7:
        c->i128 = malloc(sizeof *c->i128 * (size_t)(n + 1));
        for (int64_t i = 0; i < n; i++)
            c->i128[i] = kind == 2 ? (__int128)(int64_t)rnd() * (__int128)(int64_t)(rnd() % 1000) + (int64_t)rnd()
                                   : (__int128)rnd_in(-50, 50) * 1000000007;
        t = dkb_tp_from_host(tp, DKB_TP_I128, n, c->i128);
        break;
    case 3:
        c->f = malloc(sizeof *c->f * (size_t)(n + 1));
        for (int64_t i = 0; i < n; i++) c->f[i] = (double)rnd_in(-100, 100) / 8.0 + (rnd() % 7 == 0 ? 1e300 : 0);
        t = dkb_tp_from_host(tp, DKB_TP_F64, n, c->f);
        break;
    case 4:
        c->u = malloc((size_t)n + 1);
        for (int64_t i = 0; i < n; i++) c->u[i] = (uint8_t)rnd_in(0, 5);
        t = host_u8(tp, c->u, n, DKB_TP_U8);
        break;
    default:
        c->off = xmalloc_i64(n);
        c->bytes = rand_strings(n, c->off);
        t = dkb_tp_from_host_str(tp, n, c->off, c->bytes);
        break;
    }
    key->key = t;
    key->desc = desc;
}

static void free_col(col *c) { free(c->i32), free(c->i64), free(c->i128), free(c->f), free(c->u), free(c->off), free(c->bytes); }

static void test_sort(int threads, int64_t n, int nk, const int *kinds, const bool *desc) {
    dkb_tp *tp = new_tp(threads);
    col cols[3];
    dkb_sort_key keys[3];
    for (int j = 0; j < nk; j++) make_col(tp, &cols[j], kinds[j], desc[j], n, &keys[j]);
    int64_t *ref = xmalloc_i64(n);
    for (int64_t i = 0; i < n; i++) ref[i] = i;
    g_cols = cols, g_nk = nk;
    qsort(ref, (size_t)n, sizeof *ref, ref_cmp);
    dkb_tensor *p = dkb_tp_sort(tp, keys, nk);
    expect_ok(tp, "sort");
    CHECK(p && p->n == n, "sort length");
    if (p && p->n == n)
        for (int64_t i = 0; i < n; i++)
            if (DATA(int64_t, p)[i] != ref[i]) {
                CHECK(0, "sort kinds %d/%d/%d n %lld threads %d: position %lld has row %lld, want %lld", kinds[0],
                      nk > 1 ? kinds[1] : -1, nk > 2 ? kinds[2] : -1, (long long)n, threads, (long long)i,
                      (long long)DATA(int64_t, p)[i], (long long)ref[i]);
                break;
            }
    int64_t ks[6] = {0, 1, 5, n / 10, n, n + 5};
    for (int q = 0; q < 6; q++) {
        dkb_tensor *t = dkb_tp_topk(tp, keys, nk, ks[q]);
        int64_t want = ks[q] < n ? ks[q] : n;
        CHECK(t && t->n == want, "topk length");
        if (t && t->n == want)
            CHECK(memcmp(t->data, ref, sizeof *ref * (size_t)want) == 0, "topk k=%lld kinds %d/%d n %lld",
                  (long long)ks[q], kinds[0], nk > 1 ? kinds[1] : -1, (long long)n);
    }
    expect_ok(tp, "topk");
    dkb_tp_destroy(tp);
    for (int j = 0; j < nk; j++) free_col(&cols[j]);
    free(ref);
}

int main(void) {
    static const int combos[][3] = {{0, -1, -1}, {1, -1, -1}, {2, -1, -1}, {3, -1, -1}, {4, -1, -1}, {5, -1, -1},
                                    {6, -1, -1}, {7, -1, -1}, {0, 1, -1}, {4, 0, 3}, {0, 6, -1}, {6, 6, -1},
                                    {4, 5, 0}, {5, 0, -1}, {0, 2, 4}, {7, 0, 4}};
    int nc = (int)(sizeof combos / sizeof combos[0]);
    for (int t = 0; t < NTHREADS; t++)
        for (int s = 0; s < NSIZES; s++)
            for (int c = 0; c < nc; c++) {
                int nk = combos[c][1] < 0 ? 1 : combos[c][2] < 0 ? 2 : 3;
                bool desc[3] = {(c & 1) != 0, (c & 2) != 0, (c & 4) == 0};
                test_sort(THREADS[t], SIZES[s], nk, combos[c], desc);
                desc[0] = !desc[0];
                if (SIZES[s] < 100000) test_sort(THREADS[t], SIZES[s], nk, combos[c], desc);
            }
    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("test_tensor_sort: ok\n");
    return failures ? 1 : 0;
}
