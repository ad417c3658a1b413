/* test_cuda_group.c: the CUDA backend's group-by, aggregate and reduce
 * against the CPU backend, exactly (dtype, n, scale, dict and every byte,
 * F64 sums and averages included: the CUDA code reproduces the CPU's
 * summation order and its long double average).
 *
 * Keys: every integer dtype alone (small domains: the direct table; wide
 * and extreme values: the hash table), pairs (direct and hashed) and five
 * keys (the device key array). Values: every numeric dtype, scales 0/2/4,
 * group counts of 1..3, ~1500 (no CPU lanes, one shared copy), ~5000
 * (global accumulators) and ~n, sizes 0, 1, 7, 1000, 65537 and ~3 million.
 * Also failing inputs (error codes must match) and, before any GPU work,
 * the long double emulation of cuda_avg.h against the host's long double.
 * Exit 77 without a GPU (after the host check); DKB_TEST_CUDA_GROUP_SELF=1
 * runs the comparisons CPU against CPU, to check the test itself. */
#include <math.h>

#include "tensor/cuda_avg.h"
#include "test_cuda_util.h"
#include "test_tensor_util.h"

static dkb_tp *cpu, *gpu;
static const int64_t CU_SIZES[] = {0, 1, 7, 1000, 65537, 3000017};
#define NCU_SIZES ((int)(sizeof CU_SIZES / sizeof CU_SIZES[0]))

/* ---- host check of the long double emulation ---- */

static void check_exact_avg(void) {
    int bad = 0;
    for (int it = 0; it < 2000000; it++) {
        __int128 sum;
        switch (rnd() % 4) {
        case 0: sum = (__int128)(int64_t)rnd(); break;
        case 1: sum = (__int128)(((unsigned __int128)rnd() << 64) | rnd()); break;
        case 2: sum = rnd_in(-50000, 50000); break;
        default: sum = (__int128)((unsigned __int128)(__int128)(int64_t)rnd() << (rnd() % 60)); break;
        }
        int64_t c = rnd() % 3 == 0 ? (int64_t)(rnd() >> 1) : rnd_in(1, 1000000);
        if (rnd() % 64 == 0) c = 0;
        int scale = (int)(rnd() % 39);
        double p10 = (double)dkb__pow10_i128(scale);
        double want = (double)((long double)sum / ((long double)c * (long double)p10));
        double got = dkb__exact_avg(sum, c, p10);
        if (memcmp(&want, &got, sizeof want) && bad++ < 10)
            CHECK(0, "exact_avg: sum %.17g count %lld scale %d: long double %a, emulated %a", (double)sum, (long long)c,
                  scale, want, got);
    }
}

/* ---- comparison ---- */

/* Results of one operation on both backends: equal in every respect. */
static void compare(const char *what, int64_t n, const dkb_tensor *a, const dkb_tensor *b) {
    dkb_error ec, eg;
    int rc = dkb_tp_status(cpu, &ec), rg = dkb_tp_status(gpu, &eg);
    if (rc || rg || !a || !b) {
        CHECK(0, "%s n %lld: cpu %s (%s), cuda %s (%s)", what, (long long)n, a ? "ok" : "NULL", rc ? ec.msg : "",
              b ? "ok" : "NULL", rg ? eg.msg : "");
        return;
    }
    if (a->dtype != b->dtype || a->n != b->n || a->scale != b->scale || a->dict != b->dict) {
        CHECK(0, "%s n %lld: cpu dtype %s n %lld scale %d dict %p, cuda dtype %s n %lld scale %d dict %p", what,
              (long long)n, DT[a->dtype], (long long)a->n, a->scale, (const void *)a->dict, DT[b->dtype],
              (long long)b->n, b->scale, (const void *)b->dict);
        return;
    }
    size_t es = dkb_tp_dtype_size(a->dtype);
    const uint8_t *ha = dkb_tp_host_copy(cpu, a), *hb = dkb_tp_host_copy(gpu, b);
    if (a->n && (!ha || !hb)) {
        CHECK(0, "%s n %lld: host copy failed", what, (long long)n);
        return;
    }
    for (int64_t i = 0; i < a->n; i++) {
        if (memcmp(ha + i * es, hb + i * es, es) == 0) continue;
        char va[96], vb[96];
        print_elem(va, sizeof va, a->dtype, ha + i * es);
        print_elem(vb, sizeof vb, b->dtype, hb + i * es);
        CHECK(0, "%s dtype %s n %lld: first difference at %lld: cpu %s, cuda %s", what, DT[a->dtype], (long long)n,
              (long long)i, va, vb);
        return;
    }
}

/* ---- inputs ---- */

/* n values of dtype t (host buffer), drawn from `domain` distinct values
 * (0: the whole range, extremes included). */
static void *make_values(dkb_tp_dtype t, int64_t n, int64_t domain) {
    size_t es = dkb_tp_dtype_size(t);
    uint8_t *buf = malloc(es * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        int64_t v = domain ? (int64_t)(r % (uint64_t)domain) - domain / 3 : (int64_t)r;
        if (!domain && r % 97 == 0) v = r % 2 ? INT64_MAX : INT64_MIN;
        uint8_t *p = buf + (size_t)i * es;
        switch (t) {
        case DKB_TP_BOOL: *p = (uint8_t)(v & 1); break;
        case DKB_TP_U8: *p = (uint8_t)v; break;
        case DKB_TP_I8: *(int8_t *)p = (int8_t)v; break;
        case DKB_TP_I16: { int16_t x = (int16_t)v; memcpy(p, &x, 2); break; }
        case DKB_TP_I32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
        case DKB_TP_I64: memcpy(p, &v, 8); break;
        case DKB_TP_I128: {
            __int128 x = domain ? (__int128)v : (__int128)v * (int64_t)(rnd() % 100000) + (int64_t)rnd();
            memcpy(p, &x, 16);
            break;
        }
        default: {
            double d = domain ? (double)v / 8 : (double)(int64_t)(r >> 11) / 1e3 * (r % 3 ? 1 : -1e-7);
            if (d == 0) d = 0; /* no -0.0: see cuda_agg.cu */
            memcpy(p, &d, 8);
            break;
        }
        }
    }
    return buf;
}

static dkb_tensor *put(dkb_tp *tp, dkb_tp_dtype t, int64_t n, const void *host, int scale) {
    dkb_tensor *x = dkb_tp_from_host(tp, t, n, host);
    if (x) x->scale = scale;
    return x;
}

/* ---- cases ---- */

static const char *const AGG[] = {"SUM", "COUNT", "MIN", "MAX", "AVG", "COUNT_DISTINCT"};

/* Group by nk keys of the given dtypes/domains, compare the groups, then
 * every aggregate of every value dtype over them, and every reduce. */
static void run_case(const char *name, int64_t n, int nk, const dkb_tp_dtype *kt, const int64_t *kdom,
                     bool aggregates) {
    void *kh[5];
    const dkb_tensor *kc[5], *kg[5];
    char what[160];
    for (int j = 0; j < nk; j++) {
        kh[j] = make_values(kt[j], n, kdom[j]);
        kc[j] = put(cpu, kt[j], n, kh[j], 0);
        kg[j] = put(gpu, kt[j], n, kh[j], 0);
    }
    dkb_groups gc = dkb_tp_group(cpu, kc, nk), gg = dkb_tp_group(gpu, kg, nk);
    snprintf(what, sizeof what, "group %s (key0 %s)", name, DT[kt[0]]);
    compare(what, n, gc.group_id, gg.group_id);
    snprintf(what, sizeof what, "group %s first_row (key0 %s)", name, DT[kt[0]]);
    compare(what, n, gc.first_row, gg.first_row);
    CHECK(gc.ngroups == gg.ngroups, "group %s n %lld: ngroups cpu %lld cuda %lld", name, (long long)n,
          (long long)gc.ngroups, (long long)gg.ngroups);
    for (int j = 0; j < nk; j++) free(kh[j]);
    if (!aggregates || !gc.group_id || !gg.group_id) return;

    snprintf(what, sizeof what, "aggregate COUNT(NULL) %s", name);
    compare(what, n, dkb_tp_aggregate(cpu, &gc, DKB_AGG_COUNT, NULL), dkb_tp_aggregate(gpu, &gg, DKB_AGG_COUNT, NULL));
    for (int t = DKB_TP_BOOL; t <= DKB_TP_F64; t++) {
        int scale = t == DKB_TP_I64 ? (int)(n % 3) * 2 : t == DKB_TP_I32 ? 2 : 0;
        for (int wide = 0; wide < 2; wide++) {
            void *vh = make_values((dkb_tp_dtype)t, n, wide ? 0 : 1000);
            dkb_tensor *vc = put(cpu, (dkb_tp_dtype)t, n, vh, scale), *vg = put(gpu, (dkb_tp_dtype)t, n, vh, scale);
            free(vh);
            for (int a = DKB_AGG_SUM; a <= DKB_AGG_COUNT_DISTINCT; a++) {
                if (a == DKB_AGG_COUNT_DISTINCT && t >= DKB_TP_I128) continue;
                snprintf(what, sizeof what, "aggregate %s of %s scale %d (%s values) by %s", AGG[a], DT[t], scale,
                         wide ? "wide" : "narrow", name);
                compare(what, n, dkb_tp_aggregate(cpu, &gc, (dkb_agg)a, vc), dkb_tp_aggregate(gpu, &gg, (dkb_agg)a, vg));
                snprintf(what, sizeof what, "reduce %s of %s scale %d (%s values)", AGG[a], DT[t], scale,
                         wide ? "wide" : "narrow");
                compare(what, n, dkb_tp_reduce(cpu, (dkb_agg)a, vc), dkb_tp_reduce(gpu, (dkb_agg)a, vg));
            }
        }
    }
}

/* Inputs the front end must refuse on both backends with the same code. */
static void failing_cases(void) {
    int64_t v[4] = {1, 2, 3, 4};
    double d[4] = {1, 2, 3, 4};
    dkb_tp *tps[2] = {cpu, gpu};
    int codes[2][4];
    for (int b = 0; b < 2; b++) {
        dkb_tp *tp = tps[b];
        const dkb_tensor *k2[2] = {dkb_tp_from_host(tp, DKB_TP_I64, 4, v), dkb_tp_from_host(tp, DKB_TP_I64, 3, v)};
        dkb_groups g = dkb_tp_group(tp, k2, 2); /* different lengths */
        codes[b][0] = dkb_tp_status(tp, NULL);
        dkb_tp_reset(tp);
        const dkb_tensor *kf[1] = {dkb_tp_from_host(tp, DKB_TP_F64, 4, d)};
        g = dkb_tp_group(tp, kf, 1); /* F64 key */
        codes[b][1] = dkb_tp_status(tp, NULL);
        dkb_tp_reset(tp);
        const dkb_tensor *k1[1] = {dkb_tp_from_host(tp, DKB_TP_I64, 4, v)};
        g = dkb_tp_group(tp, k1, 1);
        (void)dkb_tp_aggregate(tp, &g, DKB_AGG_COUNT_DISTINCT, dkb_tp_from_host(tp, DKB_TP_F64, 4, d));
        codes[b][2] = dkb_tp_status(tp, NULL);
        dkb_tp_reset(tp);
        (void)dkb_tp_reduce(tp, DKB_AGG_COUNT_DISTINCT, dkb_tp_from_host(tp, DKB_TP_I128, 2, v));
        codes[b][3] = dkb_tp_status(tp, NULL);
        dkb_tp_reset(tp);
    }
    static const char *const names[] = {"group keys of different lengths", "group F64 key",
                                        "aggregate COUNT_DISTINCT of F64", "reduce COUNT_DISTINCT of I128"};
    for (int c = 0; c < 4; c++)
        CHECK(codes[0][c] != 0 && codes[0][c] == codes[1][c], "%s: cpu error %d, cuda error %d", names[c],
              codes[0][c], codes[1][c]);
}

int main(void) {
    check_exact_avg();
    /* DKB_TEST_CUDA_GROUP_SELF=1: the "CUDA" side is a second CPU context
     * (checks this test itself on a machine without a GPU) */
    const char *self = getenv("DKB_TEST_CUDA_GROUP_SELF");
    bool self_check = self && *self == '1';
    if (!self_check && !dkb_tp_cuda_available()) {
        printf("test_cuda_group: no CUDA device; only the host check of cuda_avg.h ran (%s)\n",
               failures ? "FAILED" : "passed");
        return failures ? 1 : 77;
    }
    dkb_error err;
    if (dkb_tp_create(DKB_TP_CPU, 0, &cpu, &err)) {
        fprintf(stderr, "test_cuda_group: CPU context: %s\n", err.msg);
        return 1;
    }
    if (dkb_tp_create(self_check ? DKB_TP_CPU : DKB_TP_CUDA, 0, &gpu, &err)) {
        printf("test_cuda_group: no CUDA context (%s): skipped\n", err.msg);
        dkb_tp_destroy(cpu);
        return failures ? 1 : 77;
    }
    for (int si = 0; si < NCU_SIZES; si++) {
        int64_t n = CU_SIZES[si];
        bool big = n > 100000;
        /* one key of each dtype: small domain (direct table for 8/16 bits) */
        for (int t = DKB_TP_BOOL; t <= DKB_TP_I64; t++) {
            dkb_tp_dtype kt[1] = {(dkb_tp_dtype)t};
            int64_t dom[1] = {3};
            run_case("one small key", n, 1, kt, dom, t == DKB_TP_U8 || t == DKB_TP_I32);
            dkb_tp_reset(cpu), dkb_tp_reset(gpu);
            dom[0] = 0;
            run_case("one wide key", n, 1, kt, dom, false);
            dkb_tp_reset(cpu), dkb_tp_reset(gpu);
        }
        {
            dkb_tp_dtype kt[1] = {DKB_TP_I64};
            int64_t dom[1] = {1500};
            run_case("~1500 groups", n, 1, kt, dom, true);
            dkb_tp_reset(cpu), dkb_tp_reset(gpu);
            dom[0] = 5000;
            run_case("~5000 groups", n, 1, kt, dom, true);
            dkb_tp_reset(cpu), dkb_tp_reset(gpu);
            dom[0] = 0;
            run_case("~n groups", n, 1, kt, dom, !big);
            dkb_tp_reset(cpu), dkb_tp_reset(gpu);
        }
        {
            dkb_tp_dtype kt[2] = {DKB_TP_U8, DKB_TP_I8};
            int64_t dom[2] = {3, 2};
            run_case("U8 x I8 (direct)", n, 2, kt, dom, true);
            dkb_tp_reset(cpu), dkb_tp_reset(gpu);
            dkb_tp_dtype kh[2] = {DKB_TP_I32, DKB_TP_I64};
            int64_t dh[2] = {40, 50};
            run_case("I32 x I64 (hash)", n, 2, kh, dh, !big);
            dkb_tp_reset(cpu), dkb_tp_reset(gpu);
        }
        {
            dkb_tp_dtype kt[5] = {DKB_TP_I64, DKB_TP_U8, DKB_TP_I16, DKB_TP_I32, DKB_TP_BOOL};
            int64_t dom[5] = {0, 5, 7, 3, 2};
            run_case("five keys, one wide", n, 5, kt, dom, false);
            dkb_tp_reset(cpu), dkb_tp_reset(gpu);
            dom[0] = 4;
            run_case("five narrow keys", n, 5, kt, dom, !big);
            dkb_tp_reset(cpu), dkb_tp_reset(gpu);
        }
    }
    failing_cases();
    dkb_tp_destroy(cpu);
    dkb_tp_destroy(gpu);
    if (failures) fprintf(stderr, "test_cuda_group: %d failures\n", failures);
    else printf("test_cuda_group: CUDA group, aggregate and reduce match the CPU\n");
    return failures ? 1 : 0;
}
