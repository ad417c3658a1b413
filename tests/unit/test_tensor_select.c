/* test_tensor_select.c: TensorPlan selection against reference loops over
 * awkward sizes, mask densities (none, 1% (the sparse path), 3%, half,
 * dense, all) and thread counts: compress of every element width and of
 * STR, nonzero, count,
 * gather with I64 and I32 indices and -1 fill (numeric and STR), and the
 * out-of-range index error. */
#include "test_tensor_util.h"

static uint8_t *make_mask(int64_t n, int density) { /* density in percent */
    uint8_t *m = malloc((size_t)n + 1);
    for (int64_t i = 0; i < n; i++) m[i] = (int64_t)(rnd() % 100) < density;
    return m;
}

static void test_compress(int threads, int64_t n, int density) {
    dkb_tp *tp = new_tp(threads);
    uint8_t *m = make_mask(n, density), *u = malloc((size_t)n + 1);
    int16_t *h = malloc(sizeof *h * (size_t)(n + 1));
    int32_t *w = malloc(sizeof *w * (size_t)(n + 1));
    int64_t *a = xmalloc_i64(n), *off = xmalloc_i64(n);
    __int128 *q = malloc(sizeof *q * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) {
        a[i] = (int64_t)rnd();
        u[i] = (uint8_t)a[i], h[i] = (int16_t)a[i], w[i] = (int32_t)a[i];
        q[i] = (__int128)a[i] * 1000003;
    }
    char *bytes = rand_strings(n, off);
    dkb_tensor *tm = host_u8(tp, m, n, DKB_TP_BOOL);
    dkb_tensor *ta = host_i64(tp, a, n, 2), *tu = host_u8(tp, u, n, DKB_TP_U8);
    dkb_tensor *th = dkb_tp_from_host(tp, DKB_TP_I16, n, h), *tw = host_i32(tp, w, n);
    dkb_tensor *tq = dkb_tp_from_host(tp, DKB_TP_I128, n, q);
    dkb_tensor *ts = dkb_tp_from_host_str(tp, n, off, bytes);
    dkb_tensor *ca = dkb_tp_compress(tp, ta, tm), *cu = dkb_tp_compress(tp, tu, tm);
    dkb_tensor *ch = dkb_tp_compress(tp, th, tm), *cw = dkb_tp_compress(tp, tw, tm);
    dkb_tensor *cq = dkb_tp_compress(tp, tq, tm), *cs = dkb_tp_compress(tp, ts, tm);
    dkb_tensor *nz = dkb_tp_nonzero(tp, tm);
    int64_t cnt = dkb_tp_count(tp, tm);
    expect_ok(tp, "compress");
    if (!ca || !cu || !ch || !cw || !cq || !cs || !nz) goto out;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) k += m[i];
    CHECK(cnt == k, "count %lld want %lld", (long long)cnt, (long long)k);
    CHECK(ca->n == k && cu->n == k && ch->n == k && cw->n == k && cq->n == k && cs->n == k && nz->n == k,
          "compress lengths (n %lld density %d)", (long long)n, density);
    CHECK(ca->scale == 2, "compress keeps scale");
    if (ca->n != k || cs->n != k || nz->n != k) goto out;
    const int64_t *so = DATA(int64_t, cs);
    CHECK(so[0] == 0, "STR offsets start at 0");
    k = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!m[i]) continue;
        CHECK(DATA(int64_t, ca)[k] == a[i] && DATA(uint8_t, cu)[k] == u[i] && DATA(int16_t, ch)[k] == h[i] &&
                  DATA(int32_t, cw)[k] == w[i] && DATA(__int128, cq)[k] == q[i] && DATA(int64_t, nz)[k] == i,
              "compress row %lld -> %lld", (long long)i, (long long)k);
        int64_t len = off[i + 1] - off[i];
        CHECK(so[k + 1] - so[k] == len && memcmp(cs->bytes + so[k], bytes + off[i], (size_t)len) == 0,
              "compress STR row %lld", (long long)i);
        k++;
    }
out:
    dkb_tp_destroy(tp);
    free(m), free(u), free(h), free(w), free(a), free(q), free(off), free(bytes);
}

static void test_gather(int threads, int64_t n) {
    dkb_tp *tp = new_tp(threads);
    int64_t na = n / 3 + 1;
    int64_t *a = xmalloc_i64(na), *aoff = xmalloc_i64(na), *idx = xmalloc_i64(n);
    int32_t *idx32 = malloc(sizeof *idx32 * (size_t)(n + 1));
    double *f = malloc(sizeof *f * (size_t)(na + 1));
    for (int64_t i = 0; i < na; i++) a[i] = rnd_in(-2000000000, 2000000000), f[i] = (double)a[i] / 7.0;
    for (int64_t i = 0; i < n; i++) idx[i] = rnd_in(0, 4) == 0 ? -1 : rnd_in(0, na - 1), idx32[i] = (int32_t)idx[i];
    char *bytes = rand_strings(na, aoff);
    dkb_tensor *ta = host_i64(tp, a, na, 3), *tf = dkb_tp_from_host(tp, DKB_TP_F64, na, f);
    dkb_tensor *ts = dkb_tp_from_host_str(tp, na, aoff, bytes);
    dkb_tensor *ti = host_i64(tp, idx, n, 0), *ti32 = host_i32(tp, idx32, n);
    dkb_tensor *ga = dkb_tp_gather(tp, ta, ti, -99), *gf = dkb_tp_gather(tp, tf, ti32, 5);
    dkb_tensor *gs = dkb_tp_gather(tp, ts, ti, 0), *g32 = dkb_tp_gather(tp, dkb_tp_cast(tp, ta, DKB_TP_I32), ti, 7);
    expect_ok(tp, "gather");
    if (!ga || !gf || !gs || !g32) goto out;
    CHECK(ga->n == n && gs->n == n && ga->scale == 3, "gather shape");
    const int64_t *so = DATA(int64_t, gs);
    for (int64_t i = 0; i < n; i++) {
        int64_t k = idx[i];
        CHECK(DATA(int64_t, ga)[i] == (k < 0 ? -99 : a[k]) && DATA(double, gf)[i] == (k < 0 ? 5.0 : f[k]) &&
                  DATA(int32_t, g32)[i] == (k < 0 ? 7 : (int32_t)a[k]),
              "gather row %lld", (long long)i);
        int64_t len = k < 0 ? 0 : aoff[k + 1] - aoff[k];
        CHECK(so[i + 1] - so[i] == len && (len == 0 || memcmp(gs->bytes + so[i], bytes + aoff[k], (size_t)len) == 0),
              "gather STR row %lld", (long long)i);
    }
    /* indices outside [-1, n) are an error */
    if (n > 0) {
        int64_t badi[2] = {0, na};
        dkb_error err;
        CHECK(dkb_tp_gather(tp, ta, host_i64(tp, badi, 2, 0), 0) == NULL &&
                  dkb_tp_status(tp, &err) == DKB_ERANGE && strstr(err.msg, "gather"),
              "gather out of range");
        dkb_tp_reset(tp);
        badi[1] = -2;
        CHECK(dkb_tp_gather(tp, ts, host_i64(tp, badi, 2, 0), 0) == NULL, "gather STR -2");
        dkb_tp_reset(tp);
    }
out:
    dkb_tp_destroy(tp);
    free(a), free(aoff), free(idx), free(idx32), free(f), free(bytes);
}

int main(void) {
    static const int dens[] = {0, 1, 3, 50, 90, 100};
    for (int t = 0; t < NTHREADS; t++)
        for (int s = 0; s < NSIZES; s++) {
            for (int d = 0; d < 6; d++) test_compress(THREADS[t], SIZES[s], dens[d]);
            test_gather(THREADS[t], SIZES[s]);
        }
    /* large enough for many chunks, dense and sparse runs mixed */
    test_compress(2, 1000003, 50);
    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("test_tensor_select: ok\n");
    return failures ? 1 : 0;
}
