/* test_tensor_elementwise.c: TensorPlan comparisons, masks and arithmetic
 * against reference loops, over awkward sizes and several thread counts:
 * cmp across dtypes and decimal scales (exact), cmp_i64 / cmp_f64 /
 * between / in_i64 / lookup_mask, and/or/not, arith with scale alignment
 * and int64 overflow detection, I128 arithmetic, scalar forms (rsub), cast,
 * where, year, pack2, full and arange. */
#include "test_tensor_util.h"

static int ref_cmp(dkb_cmp op, __int128 x, __int128 y) {
    switch (op) {
    case DKB_CMP_EQ: return x == y;
    case DKB_CMP_NE: return x != y;
    case DKB_CMP_LT: return x < y;
    case DKB_CMP_LE: return x <= y;
    case DKB_CMP_GT: return x > y;
    default: return x >= y;
    }
}
static int ref_cmpf(dkb_cmp op, double x, double y) {
    switch (op) {
    case DKB_CMP_EQ: return x == y;
    case DKB_CMP_NE: return x != y;
    case DKB_CMP_LT: return x < y;
    case DKB_CMP_LE: return x <= y;
    case DKB_CMP_GT: return x > y;
    default: return x >= y;
    }
}

static void test_cmp(int threads, int64_t n) {
    dkb_tp *tp = new_tp(threads);
    int64_t *a = xmalloc_i64(n), *b = xmalloc_i64(n);
    int32_t *c = malloc(sizeof *c * (size_t)(n + 1));
    uint8_t *u = malloc((size_t)n + 1);
    double *f = malloc(sizeof *f * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) {
        a[i] = rnd_in(-500, 500);   /* scale 2: -5.00 .. 5.00 */
        b[i] = rnd_in(-50, 50);     /* scale 1 */
        c[i] = (int32_t)rnd_in(-5, 5);
        u[i] = (uint8_t)rnd_in(0, 255);
        f[i] = (double)rnd_in(-500, 500) / 100.0;
    }
    dkb_tensor *ta = host_i64(tp, a, n, 2), *tb = host_i64(tp, b, n, 1), *tc = host_i32(tp, c, n);
    dkb_tensor *tu = host_u8(tp, u, n, DKB_TP_U8), *tf = dkb_tp_from_host(tp, DKB_TP_F64, n, f);
    for (int op = DKB_CMP_EQ; op <= DKB_CMP_GE; op++) {
        /* different scales compare exactly: a/100 vs b/10 -> a vs 10 b */
        dkb_tensor *m = dkb_tp_cmp(tp, ta, op, tb);
        dkb_tensor *m2 = dkb_tp_cmp(tp, tc, op, ta); /* c (scale 0) vs a: 100 c vs a */
        dkb_tensor *m3 = dkb_tp_cmp(tp, tf, op, ta);
        dkb_tensor *k1 = dkb_tp_cmp_i64(tp, ta, op, 123);
        dkb_tensor *k2 = dkb_tp_cmp_i64(tp, tc, op, -2);
        dkb_tensor *k3 = dkb_tp_cmp_i64(tp, tu, op, 200);
        dkb_tensor *k4 = dkb_tp_cmp_i64(tp, tc, op, (int64_t)1 << 40); /* beyond int32 */
        dkb_tensor *k5 = dkb_tp_cmp_f64(tp, ta, op, 0.07);
        dkb_tensor *k6 = dkb_tp_cmp_f64(tp, tf, op, 1.5);
        expect_ok(tp, "cmp");
        if (!m || !m2 || !m3 || !k1 || !k2 || !k3 || !k4 || !k5 || !k6) break;
        CHECK(m->dtype == DKB_TP_BOOL && m->n == n, "cmp shape");
        int bad = 0;
        for (int64_t i = 0; i < n && bad < 3; i++) {
            int e[9] = {ref_cmp(op, a[i], 10 * (__int128)b[i]), ref_cmp(op, 100 * (__int128)c[i], a[i]),
                        ref_cmpf(op, f[i], (double)a[i] / 100.0), ref_cmp(op, a[i], 123), ref_cmp(op, c[i], -2),
                        ref_cmp(op, u[i], 200), ref_cmp(op, c[i], (int64_t)1 << 40),
                        ref_cmpf(op, (double)a[i] / 100.0, 0.07), ref_cmpf(op, f[i], 1.5)};
            const dkb_tensor *g[9] = {m, m2, m3, k1, k2, k3, k4, k5, k6};
            for (int q = 0; q < 9; q++)
                if (DATA(uint8_t, g[q])[i] != e[q]) {
                    CHECK(0, "cmp variant %d op %d n %lld row %lld: got %d want %d", q, op, (long long)n,
                          (long long)i, DATA(uint8_t, g[q])[i], e[q]);
                    bad++;
                }
        }
    }
    /* cmp_f64 on a decimal is exact at the literal: 7 hundredths == 0.07 */
    int64_t seven = 7;
    dkb_tensor *d7 = host_i64(tp, &seven, 1, 2);
    dkb_tensor *eq = dkb_tp_cmp_f64(tp, d7, DKB_CMP_EQ, 0.07);
    CHECK(eq && DATA(uint8_t, eq)[0] == 1, "0.07 == 0.07");

    dkb_tensor *bt = dkb_tp_between(tp, ta, -100, 250), *bc = dkb_tp_between(tp, tc, -1, 3);
    int64_t vals[12] = {-3, 0, 5, 7, 100, -100, 250, 499, 1, 2, 3, 4};
    dkb_tensor *in1 = dkb_tp_in_i64(tp, ta, vals, 12), *in2 = dkb_tp_in_i64(tp, tc, vals, 3);
    dkb_tensor *in3 = dkb_tp_in_i64(tp, tu, vals, 12), *in0 = dkb_tp_in_i64(tp, ta, vals, 0);
    expect_ok(tp, "between/in");
    for (int64_t i = 0; i < n && bt && bc && in1 && in2 && in3 && in0; i++) {
        int e1 = 0, e2 = 0, e3 = 0;
        for (int k = 0; k < 12; k++) e1 |= vals[k] == a[i], e3 |= vals[k] == u[i];
        for (int k = 0; k < 3; k++) e2 |= vals[k] == c[i];
        CHECK(DATA(uint8_t, bt)[i] == (a[i] >= -100 && a[i] <= 250), "between i64 row %lld", (long long)i);
        CHECK(DATA(uint8_t, bc)[i] == (c[i] >= -1 && c[i] <= 3), "between i32 row %lld", (long long)i);
        CHECK(DATA(uint8_t, in1)[i] == e1 && DATA(uint8_t, in2)[i] == e2 && DATA(uint8_t, in3)[i] == e3 &&
                  DATA(uint8_t, in0)[i] == 0,
              "in_i64 row %lld", (long long)i);
    }

    /* masks */
    dkb_tensor *p = dkb_tp_cmp_i64(tp, ta, DKB_CMP_GT, 0), *q = dkb_tp_cmp_i64(tp, tc, DKB_CMP_LT, 2);
    dkb_tensor *pa = dkb_tp_and(tp, p, q), *po = dkb_tp_or(tp, p, q), *pn = dkb_tp_not(tp, p);
    expect_ok(tp, "logic");
    for (int64_t i = 0; i < n && pa && po && pn; i++) {
        int x = a[i] > 0, y = c[i] < 2;
        CHECK(DATA(uint8_t, pa)[i] == (x && y) && DATA(uint8_t, po)[i] == (x || y) && DATA(uint8_t, pn)[i] == !x,
              "logic row %lld", (long long)i);
    }
    dkb_tp_destroy(tp);
    free(a), free(b), free(c), free(u), free(f);
}

static void test_lookup(int threads, int64_t n) {
    dkb_tp *tp = new_tp(threads);
    static const char *const s[] = {"AIR", "FOB", "MAIL", "RAIL", "SHIP"};
    static const size_t l[] = {3, 3, 4, 4, 4};
    dkb_tp_dict dict = {5, s, l};
    uint8_t *u = malloc((size_t)n + 1);
    for (int64_t i = 0; i < n; i++) u[i] = (uint8_t)rnd_in(0, 4);
    dkb_tensor *t = host_u8(tp, u, n, DKB_TP_U8);
    t->dict = &dict;
    bool lut[5] = {true, false, true, false, false};
    dkb_tensor *m = dkb_tp_lookup_mask(tp, t, lut);
    expect_ok(tp, "lookup_mask");
    for (int64_t i = 0; i < n && m; i++) CHECK(DATA(uint8_t, m)[i] == lut[u[i]], "lookup row %lld", (long long)i);
    /* gather keeps the dictionary, so the mask still works on gathered codes */
    dkb_tensor *idx = dkb_tp_arange(tp, n);
    dkb_tensor *g = dkb_tp_gather(tp, t, idx, 0);
    CHECK(g && g->dict == &dict, "gather keeps dict");
    dkb_tp_destroy(tp);
    free(u);
}

static void test_arith(int threads, int64_t n) {
    dkb_tp *tp = new_tp(threads);
    int64_t *a = xmalloc_i64(n), *b = xmalloc_i64(n);
    int32_t *c = malloc(sizeof *c * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) {
        a[i] = rnd_in(-10000000, 10000000);  /* price, scale 2 */
        b[i] = rnd_in(0, 10);                /* discount, scale 2 */
        c[i] = (int32_t)rnd_in(-1000, 1000);
    }
    dkb_tensor *ta = host_i64(tp, a, n, 2), *tb = host_i64(tp, b, n, 2), *tc = host_i32(tp, c, n);
    /* price * (1 - disc) * (1 + c/10^1) : scales 2 + 2 + 1 */
    dkb_tensor *one_minus = dkb_tp_rsub_i64(tp, 100, 2, tb);
    dkb_tensor *disc = dkb_tp_arith(tp, ta, DKB_OP_MUL, one_minus);
    dkb_tensor *tc1 = dkb_tp_cast(tp, tc, DKB_TP_I64);
    if (tc1) tc1->scale = 1;
    dkb_tensor *one_plus = dkb_tp_arith_i64(tp, tc1, DKB_OP_ADD, 1, 0);  /* 1 + c/10 at scale 1 */
    dkb_tensor *charge = dkb_tp_arith(tp, disc, DKB_OP_MUL, one_plus);
    dkb_tensor *sum = dkb_tp_arith(tp, ta, DKB_OP_ADD, tc);   /* scale 2 + scale 0 -> 2 */
    dkb_tensor *dif = dkb_tp_arith(tp, tc, DKB_OP_SUB, ta);
    dkb_tensor *mn = dkb_tp_arith(tp, ta, DKB_OP_MIN, tc), *mx = dkb_tp_arith(tp, tc, DKB_OP_MAX, ta);
    dkb_tensor *dv = dkb_tp_arith(tp, ta, DKB_OP_DIV, tb);
    dkb_tensor *w = dkb_tp_cast(tp, ta, DKB_TP_I128);
    dkb_tensor *w2 = dkb_tp_arith(tp, w, DKB_OP_MUL, ta);   /* I128 x I64 */
    dkb_tensor *w3 = dkb_tp_arith(tp, w2, DKB_OP_SUB, tc);  /* scale 4 - scale 0 */
    dkb_tensor *fl = dkb_tp_cast(tp, ta, DKB_TP_F64);
    dkb_tensor *fs = dkb_tp_arith(tp, fl, DKB_OP_ADD, tb);  /* F64 + decimal */
    dkb_tensor *sc = dkb_tp_arith_i64(tp, ta, DKB_OP_MUL, 3, 1);
    expect_ok(tp, "arith");
    if (!charge || !sum || !dif || !mn || !mx || !dv || !w3 || !fs || !sc) goto out;
    CHECK(one_minus->scale == 2 && disc->scale == 4 && charge->scale == 5, "scales %d %d %d", one_minus->scale,
          disc->scale, charge->scale);
    CHECK(disc->dtype == DKB_TP_I64 && w2->dtype == DKB_TP_I128 && w3->scale == 4 && dv->dtype == DKB_TP_F64,
          "dtypes");
    CHECK(sum->scale == 2 && dif->scale == 2 && mn->scale == 2 && sc->scale == 3, "scales 2");
    for (int64_t i = 0; i < n; i++) {
        __int128 e = (__int128)a[i] * (100 - b[i]) * (10 + c[i]);
        CHECK(DATA(int64_t, charge)[i] == (int64_t)e, "charge row %lld", (long long)i);
        CHECK(DATA(int64_t, sum)[i] == a[i] + 100LL * c[i], "add row %lld", (long long)i);
        CHECK(DATA(int64_t, dif)[i] == 100LL * c[i] - a[i], "sub row %lld", (long long)i);
        int64_t x = a[i], y = 100LL * c[i];
        CHECK(DATA(int64_t, mn)[i] == (x < y ? x : y) && DATA(int64_t, mx)[i] == (x > y ? x : y), "min/max");
        double ed = ((double)a[i] / 100.0) / ((double)b[i] / 100.0);
        double gd = DATA(double, dv)[i];
        CHECK(gd == ed || (gd != gd && ed != ed), "div row %lld: %g vs %g", (long long)i, gd, ed);
        CHECK(DATA(__int128, w3)[i] == (__int128)a[i] * a[i] - (__int128)c[i] * 10000, "i128 row %lld", (long long)i);
        CHECK(DATA(double, fs)[i] == (double)a[i] / 100.0 + (double)b[i] / 100.0, "f64 add row %lld", (long long)i);
        CHECK(DATA(int64_t, sc)[i] == a[i] * 3, "scalar mul row %lld", (long long)i);
    }
    /* int64 overflow is an error, not a wrap */
    if (n > 0) {
        int64_t big = INT64_MAX / 2 + 1;
        dkb_tensor *tbig = dkb_tp_full_i64(tp, DKB_TP_I64, n, big);
        dkb_tensor *o = dkb_tp_arith(tp, tbig, DKB_OP_ADD, tbig);
        dkb_error err;
        CHECK(o == NULL && dkb_tp_status(tp, &err) == DKB_ERANGE && strstr(err.msg, "arith"),
              "overflow detected (n %lld)", (long long)n);
        /* sticky: later ops on NULL give NULL, the first message stays */
        CHECK(dkb_tp_cmp_i64(tp, o, DKB_CMP_EQ, 1) == NULL, "NULL in, NULL out");
        dkb_tp_status(tp, &err);
        CHECK(strstr(err.msg, "overflow") != NULL, "first error kept: %s", err.msg);
        dkb_tp_reset(tp);
        CHECK(dkb_tp_status(tp, NULL) == 0, "reset clears the error");
        tbig = dkb_tp_full_i64(tp, DKB_TP_I128, n, big);
        o = dkb_tp_arith(tp, tbig, DKB_OP_ADD, tbig);
        CHECK(o && DATA(__int128, o)[n - 1] == (__int128)big * 2, "I128 does not overflow");
        /* scale alignment that overflows int64 is an error too */
        int64_t huge = INT64_MAX / 10;
        dkb_tensor *h0 = host_i64(tp, &huge, 1, 0), *h4 = host_i64(tp, &huge, 1, 4);
        CHECK(dkb_tp_arith(tp, h0, DKB_OP_ADD, h4) == NULL, "scale alignment overflow");
        dkb_tp_reset(tp);
        /* but compares across scales stay exact (int128 inside) */
        h0 = host_i64(tp, &huge, 1, 0), h4 = host_i64(tp, &huge, 1, 4);
        dkb_tensor *gt = dkb_tp_cmp(tp, h0, DKB_CMP_GT, h4);
        CHECK(gt && DATA(uint8_t, gt)[0] == 1, "cmp across scales");
    }
out:
    expect_ok(tp, "arith end");
    dkb_tp_destroy(tp);
    free(a), free(b), free(c);
}

static void test_cast_where(int threads, int64_t n) {
    dkb_tp *tp = new_tp(threads);
    int64_t *a = xmalloc_i64(n), *b = xmalloc_i64(n);
    uint8_t *m = malloc((size_t)n + 1);
    int32_t *d = malloc(sizeof *d * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) {
        a[i] = rnd_in(-30000, 30000);
        b[i] = rnd_in(-9, 9);
        m[i] = (uint8_t)rnd_in(0, 1);
        d[i] = (int32_t)rnd_in(-800000, 2900000); /* days: 0-ish years to ~9900 */
    }
    dkb_tensor *ta = host_i64(tp, a, n, 2), *tb = host_i64(tp, b, n, 1);
    dkb_tensor *tm = host_u8(tp, m, n, DKB_TP_BOOL), *td = host_i32(tp, d, n);
    dkb_tensor *c16 = dkb_tp_cast(tp, ta, DKB_TP_I16), *cf = dkb_tp_cast(tp, ta, DKB_TP_F64);
    dkb_tensor *cb = dkb_tp_cast(tp, tm, DKB_TP_I64), *c128 = dkb_tp_cast(tp, td, DKB_TP_I128);
    dkb_tensor *ci = dkb_tp_cast(tp, cf, DKB_TP_I32);
    dkb_tensor *wh = dkb_tp_where(tp, tm, ta, tb);  /* scales 2 and 1 -> 2 */
    dkb_tensor *ws = dkb_tp_where(tp, tm, ta, ta);
    dkb_tensor *yr = dkb_tp_year(tp, td);
    dkb_tensor *pk = dkb_tp_pack2(tp, td, tm, 1);
    expect_ok(tp, "cast/where");
    if (!c16 || !cf || !cb || !c128 || !ci || !wh || !ws || !yr || !pk) goto out;
    CHECK(c16->scale == 2 && cf->scale == 0 && cb->dtype == DKB_TP_I64 && wh->scale == 2, "cast scales");
    for (int64_t i = 0; i < n; i++) {
        CHECK(DATA(int16_t, c16)[i] == a[i] && DATA(double, cf)[i] == (double)a[i] / 100.0, "cast row %lld",
              (long long)i);
        CHECK(DATA(int64_t, cb)[i] == m[i] && DATA(__int128, c128)[i] == d[i], "cast2 row %lld", (long long)i);
        CHECK(DATA(int32_t, ci)[i] == (int32_t)((double)a[i] / 100.0), "f64->i32 row %lld", (long long)i);
        CHECK(DATA(int64_t, wh)[i] == (m[i] ? a[i] : 10 * b[i]), "where row %lld", (long long)i);
        CHECK(DATA(int64_t, ws)[i] == a[i], "where same row %lld", (long long)i);
        /* reference year by counting days from 1970 */
        int64_t z = d[i] + 719468, era = (z >= 0 ? z : z - 146096) / 146097, doe = z - era * 146097;
        int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        int64_t mp = (5 * doy + 2) / 153, y = yoe + era * 400 + (mp >= 10);
        CHECK(DATA(int32_t, yr)[i] == y, "year row %lld", (long long)i);
        CHECK(DATA(int64_t, pk)[i] == (int64_t)d[i] * 2 + m[i], "pack2 row %lld", (long long)i);
    }
    /* a few known dates */
    int32_t days[6] = {0, -1, 365, 10956, 10957, 11016}; /* 1970-01-01, 1969-12-31, 1971-01-01, 1999-12-31, 2000-01-01, 2000-02-29 */
    int32_t want[6] = {1970, 1969, 1971, 1999, 2000, 2000};
    dkb_tensor *ky = dkb_tp_year(tp, host_i32(tp, days, 6));
    for (int i = 0; ky && i < 6; i++) CHECK(DATA(int32_t, ky)[i] == want[i], "year of %d", days[i]);
    /* narrowing that does not fit is an error */
    if (n > 0) {
        dkb_tensor *big = dkb_tp_full_i64(tp, DKB_TP_I64, n, 1000);
        CHECK(dkb_tp_cast(tp, big, DKB_TP_I8) == NULL && dkb_tp_status(tp, NULL) == DKB_ERANGE, "narrowing");
        dkb_tp_reset(tp);
        dkb_tensor *neg = dkb_tp_full_i64(tp, DKB_TP_I64, n, 5);
        CHECK(dkb_tp_pack2(tp, neg, neg, 3) == NULL && dkb_tp_status(tp, NULL) == DKB_ERANGE, "pack2 b > b_max");
        dkb_tp_reset(tp);
    }
out:
    expect_ok(tp, "cast end");
    dkb_tp_destroy(tp);
    free(a), free(b), free(m), free(d);
}

static void test_constants(int threads, int64_t n) {
    dkb_tp *tp = new_tp(threads);
    dkb_tensor *f = dkb_tp_full_i64(tp, DKB_TP_I32, n, -7), *r = dkb_tp_arange(tp, n);
    dkb_tensor *fb = dkb_tp_full_i64(tp, DKB_TP_BOOL, n, 5), *ff = dkb_tp_full_i64(tp, DKB_TP_F64, n, 3);
    expect_ok(tp, "constants");
    for (int64_t i = 0; i < n && f && r && fb && ff; i++)
        CHECK(DATA(int32_t, f)[i] == -7 && DATA(int64_t, r)[i] == i && DATA(uint8_t, fb)[i] == 1 &&
                  DATA(double, ff)[i] == 3.0,
              "constants row %lld", (long long)i);
    dkb_tp_destroy(tp);
}

int main(void) {
    for (int t = 0; t < NTHREADS; t++)
        for (int s = 0; s < NSIZES; s++) {
            test_cmp(THREADS[t], SIZES[s]);
            test_lookup(THREADS[t], SIZES[s]);
            test_arith(THREADS[t], SIZES[s]);
            test_cast_where(THREADS[t], SIZES[s]);
            test_constants(THREADS[t], SIZES[s]);
        }
    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("test_tensor_elementwise: ok\n");
    return failures ? 1 : 0;
}
