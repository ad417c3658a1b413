/* test_tensor_basic.c: the TensorPlan context: create/destroy/reset,
 * sticky errors (first message kept, NULL in gives NULL out, dkb_tp_fail,
 * argument checks), from_host / to_host / str_to_host / host_copy / get_*
 * round trips, dtype sizes, one plan run 20 times with a reset between
 * runs (blocks reused; leaks show under the sanitizer build), and
 * dkb_tp_mark_get / dkb_tp_release (a chunk loop's memory reused, what was
 * made before the mark kept, nested marks). */
#include "test_tensor_util.h"

static void test_context(void) {
    dkb_tp *tp = NULL;
    dkb_error err;
    /* CUDA: EINVAL in a build without it, ENOENT without a GPU, else a context */
    int rc = dkb_tp_create(DKB_TP_CUDA, 0, &tp, &err);
#ifdef DKB_HAVE_CUDA
    if (dkb_tp_cuda_available()) {
        CHECK(rc == 0 && tp && dkb_tp_backend_of(tp) == DKB_TP_CUDA, "CUDA context on a GPU");
        dkb_tp_destroy(tp);
        tp = NULL;
    } else {
        CHECK(rc == DKB_ENOENT && tp == NULL && strstr(err.msg, "no GPU"), "no GPU here: %s", err.msg);
    }
#else
    CHECK(rc == DKB_EINVAL && tp == NULL && strstr(err.msg, "without CUDA"), "no CUDA backend here: %s", err.msg);
#endif
    CHECK(dkb_tp_create(DKB_TP_CPU, -1, &tp, &err) == DKB_EINVAL, "negative threads");
    CHECK(dkb_tp_create(DKB_TP_CPU, 0, NULL, &err) == DKB_EINVAL, "NULL out");
    CHECK(dkb_tp_create(DKB_TP_CPU, 0, &tp, &err) == 0 && tp, "create with all cores");
    CHECK(dkb_tp_backend_of(tp) == DKB_TP_CPU, "backend_of");
    CHECK(dkb_tp_status(tp, &err) == 0, "fresh status");
    dkb_tp_destroy(tp);
    dkb_tp_destroy(NULL);
    CHECK(dkb_tp_dtype_size(DKB_TP_I128) == 16 && dkb_tp_dtype_size(DKB_TP_STR) == 8 &&
              dkb_tp_dtype_size(DKB_TP_BOOL) == 1 && dkb_tp_dtype_size(DKB_TP_I16) == 2,
          "dtype sizes");
}

static void test_errors(void) {
    dkb_tp *tp = new_tp(2);
    dkb_error err;
    int64_t v[3] = {1, 2, 3};
    dkb_tensor *a = host_i64(tp, v, 3, 0);
    /* NULL in: NULL out, and an error is recorded even if none was before */
    CHECK(dkb_tp_not(tp, NULL) == NULL && dkb_tp_status(tp, &err) == DKB_EINVAL && strstr(err.msg, "not"),
          "NULL argument recorded: %s", err.msg);
    dkb_tp_reset(tp);
    /* first error wins */
    a = host_i64(tp, v, 3, 0);
    dkb_tensor *b = dkb_tp_arange(tp, 4);
    CHECK(dkb_tp_arith(tp, a, DKB_OP_ADD, b) == NULL, "length mismatch");
    CHECK(dkb_tp_status(tp, &err) == DKB_EINVAL && strstr(err.msg, "lengths differ"), "length message: %s", err.msg);
    CHECK(dkb_tp_fail(tp, DKB_ERANGE, "later %d", 1) == NULL, "fail returns NULL");
    CHECK(dkb_tp_status(tp, &err) == DKB_EINVAL && strstr(err.msg, "arith"), "first error kept");
    dkb_tp_reset(tp);
    CHECK(dkb_tp_fail(tp, DKB_ERANGE, "param %s matches nothing", "X") == NULL &&
              dkb_tp_status(tp, &err) == DKB_ERANGE && strcmp(err.msg, "param X matches nothing") == 0,
          "dkb_tp_fail message");
    dkb_tp_reset(tp);
    /* wrong dtypes */
    a = host_i64(tp, v, 3, 0);
    CHECK(dkb_tp_compress(tp, a, a) == NULL && dkb_tp_status(tp, NULL) == DKB_EINVAL, "I64 is not a mask");
    dkb_tp_reset(tp);
    a = host_i64(tp, v, 3, 0);
    CHECK(dkb_tp_like(tp, a, "%") == NULL, "like on I64");
    dkb_tp_reset(tp);
    a = host_i64(tp, v, 3, 0);
    CHECK(dkb_tp_get_i64(tp, a, 3) == 0 && dkb_tp_status(tp, NULL) == DKB_ERANGE, "get out of range");
    dkb_tp_reset(tp);
    /* every op family given NULL */
    dkb_sort_key sk = {NULL, false};
    const dkb_tensor *nk[1] = {NULL};
    dkb_groups g = dkb_tp_group(tp, nk, 1);
    CHECK(!g.group_id && !g.first_row, "group NULL");
    CHECK(!dkb_tp_sort(tp, &sk, 1) && !dkb_tp_topk(tp, &sk, 1, 3) && !dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, NULL),
          "sort/topk/aggregate NULL");
    CHECK(!dkb_tp_reduce(tp, DKB_AGG_SUM, NULL) && !dkb_tp_gather(tp, NULL, NULL, 0) &&
              !dkb_tp_semi_join(tp, NULL, NULL) && !dkb_tp_cast(tp, NULL, DKB_TP_I64) && dkb_tp_count(tp, NULL) == 0,
          "more NULL");
    CHECK(dkb_tp_status(tp, NULL) != 0, "still failed");
    CHECK(dkb_tp_arange(NULL, 5) == NULL, "NULL context");
    dkb_tp_destroy(tp);
}

static void test_host(void) {
    dkb_tp *tp = new_tp(2);
    int64_t n = 1000;
    int32_t *v = malloc(sizeof *v * (size_t)n);
    for (int64_t i = 0; i < n; i++) v[i] = (int32_t)rnd_in(-1000, 1000);
    dkb_tensor *a = dkb_tp_from_host(tp, DKB_TP_I32, n, v);
    int32_t *back = malloc(sizeof *back * (size_t)n);
    CHECK(dkb_tp_to_host(tp, a, back) == 0 && memcmp(back, v, sizeof *v * (size_t)n) == 0, "to_host round trip");
    int32_t *copy = dkb_tp_host_copy(tp, a);
    CHECK(copy && memcmp(copy, v, sizeof *v * (size_t)n) == 0, "host_copy");
    a->scale = 2;
    CHECK(dkb_tp_get_i64(tp, a, 5) == v[5] && dkb_tp_get_i128(tp, a, 6) == v[6], "get_i64/i128");
    CHECK(dkb_tp_get_f64(tp, a, 7) == (double)v[7] / 100.0, "get_f64 applies the scale");
    /* STR */
    int64_t off[4] = {10, 13, 13, 18};
    const char *bytes = "0123456789abcdefghij";
    dkb_tensor *s = dkb_tp_from_host_str(tp, 3, off, bytes);
    int64_t so[4];
    char sb[16] = {0};
    CHECK(s && dkb_tp_to_host(tp, s, so) == 0 && so[0] == 0 && so[1] == 3 && so[3] == 8, "STR offsets rebased");
    CHECK(dkb_tp_str_to_host(tp, s, sb) == 0 && memcmp(sb, "abcdefgh", 8) == 0, "str_to_host");
    char *hc = dkb_tp_host_copy(tp, s);
    CHECK(hc && ((int64_t *)hc)[3] == 8 && memcmp(hc + 32, "abcdefgh", 8) == 0 && hc[40] == '\0', "STR host_copy");
    dkb_tensor *s2 = dkb_tp_from_host(tp, DKB_TP_STR, 3, hc);
    CHECK(s2 && s2->n == 3 && memcmp(s2->bytes, "abcdefgh", 8) == 0, "from_host STR layout");
    dkb_tensor *e = dkb_tp_from_host(tp, DKB_TP_STR, 0, NULL);
    CHECK(e && e->n == 0, "empty STR");
    int64_t bad[3] = {0, 5, 2};
    CHECK(dkb_tp_from_host_str(tp, 2, bad, bytes) == NULL, "decreasing offsets rejected");
    dkb_tp_reset(tp);
    dkb_tp_destroy(tp);
    free(v), free(back);
}

/* The same run repeated: memory is reused, not accumulated. */
static void test_reuse(void) {
    dkb_tp *tp = new_tp(2);
    int64_t n = 3000000;
    for (int run = 0; run < 20; run++) {
        dkb_tensor *a = dkb_tp_arange(tp, n);
        dkb_tensor *m = dkb_tp_cmp_i64(tp, a, DKB_CMP_LT, n / 2);
        dkb_tensor *c = dkb_tp_compress(tp, a, m);
        const dkb_tensor *k[1] = {dkb_tp_arith_i64(tp, a, DKB_OP_MIN, 100, 0)};
        dkb_groups g = dkb_tp_group(tp, k, 1);
        dkb_tensor *s = dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, a);
        CHECK(c && c->n == n / 2 && s && g.ngroups == 101, "run %d", run);
        expect_ok(tp, "reuse");
        dkb_tp_reset(tp);
    }
    dkb_tp_destroy(tp);
}

/* Chunks released back to a mark: the next chunk reuses their memory
 * (small tensors in a shared block and large ones in blocks of their own),
 * tensors made before the mark keep their values, and releasing to an
 * outer mark releases an inner one's tensors too. */
static void test_release(void) {
    dkb_tp *tp = new_tp(2);
    int64_t v[4] = {7, -3, 11, 5}, back[4];
    dkb_tensor *kept = host_i64(tp, v, 4, 0);
    dkb_tp_mark m = dkb_tp_mark_get(tp);
    void *first_small = NULL, *first_large = NULL;
    for (int chunk = 0; chunk < 30; chunk++) {
        dkb_tensor *small = dkb_tp_arange(tp, 1000);
        dkb_tensor *large = dkb_tp_arange(tp, 4000000); /* 32 MB: a block of its own */
        dkb_tensor *sum = dkb_tp_reduce(tp, DKB_AGG_SUM, large);
        CHECK(small && large && sum && dkb_tp_get_i64(tp, sum, 0) == 4000000LL * 3999999 / 2, "chunk %d", chunk);
        if (chunk == 0) first_small = small->data, first_large = large->data;
        else CHECK(small->data == first_small && large->data == first_large, "chunk %d reuses the memory", chunk);
        dkb_tp_release(tp, m);
    }
    CHECK(dkb_tp_to_host(tp, kept, back) == 0 && memcmp(back, v, sizeof v) == 0, "a tensor made before the mark kept");
    dkb_tensor *a = dkb_tp_arange(tp, 10);
    dkb_tp_mark inner = dkb_tp_mark_get(tp);
    (void)dkb_tp_arange(tp, 5000000);
    dkb_tp_release(tp, m); /* the outer mark: a and the inner chunk both go */
    dkb_tensor *again = dkb_tp_arange(tp, 10);
    CHECK(again && again->data == a->data, "an outer release frees the inner mark's tensors too");
    (void)inner;
    expect_ok(tp, "release");
    dkb_tp_reset(tp);
    dkb_tp_destroy(tp);
}

int main(void) {
    test_context();
    test_release();
    test_errors();
    test_host();
    test_reuse();
    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("test_tensor_basic: ok\n");
    return failures ? 1 : 0;
}
