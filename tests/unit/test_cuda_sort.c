/* test_cuda_sort.c: the CUDA backend's sort and top-k against the CPU
 * backend on the same host data, compared exactly (dtype, length, every
 * row number). Keys of every dtype sort accepts (BOOL, U8, I8, I16, I32,
 * I64 with scale 2 and INT64 extremes, I128 narrow / wider than 2^64 /
 * extremes, F64 with -0.0, +0.0, NaNs of both signs, infinities and
 * subnormals, STR with empty strings, zero bytes, bytes >= 0x80, shared
 * prefixes and strings longer than 16 bytes), ascending and descending,
 * one to three keys, sizes 0, 1, 2, 7, 1000, 65537 and 3000017; top-k for
 * k = 0, 1, 10, 20, 100, n/3, n, n+5; and failing calls, whose error codes
 * must agree. Exits 77 without a usable GPU. */
#include <math.h>

#include "test_cuda_util.h"
#include "test_tensor_util.h"

static dkb_tp *g_cpu, *g_gpu;

/* A key column in host memory: its dtype, a flavour of values, and the
 * data (STR: offsets and bytes). */
typedef struct keycol {
    dkb_tp_dtype t;
    int flavour;
    bool desc;
    void *data;
    int64_t *off;
    char *bytes;
} keycol;

static double f64_special(void) {
    static const double sp[] = {0.0, -0.0, INFINITY, -INFINITY, 4.9e-324, -4.9e-324, 1e300, -1e300, 2.5, -2.5};
    int64_t k = rnd_in(0, 11);
    if (k < 10) return sp[k];
    union {
        uint64_t u;
        double d;
    } nan;
    nan.u = 0x7ff8000000000000ull | (rnd() & 0xfffff) | (k == 11 ? 0x8000000000000000ull : 0);
    return nan.d;
}

/* Random strings: words from a small alphabet (with "", a zero byte and
 * high bytes), or "Supplier#0000..." names, or long shared prefixes. */
static char *make_strings(int64_t n, int flavour, int64_t *off) {
    static const char *const W[] = {"a", "ab", "", "b", "\xff", "\x80z", "abcdefgh", "abcdefghi", "ZZ"};
    size_t cap = (size_t)n * 48 + 16, used = 0;
    char *b = malloc(cap);
    off[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        if (flavour == 1) {
            used += (size_t)sprintf(b + used, "Supplier#%09lld", (long long)rnd_in(0, 5000));
        } else if (flavour == 2) {
            memcpy(b + used, "common-prefix-of-20-", 20);
            used += 20;
            int extra = (int)rnd_in(0, 3);
            for (int j = 0; j < extra; j++) b[used++] = (char)rnd_in(0, 2); /* zero bytes too */
        } else {
            int nw = (int)rnd_in(0, 3);
            for (int w = 0; w < nw; w++) {
                int64_t k = rnd_in(0, 9);
                if (k == 9) {
                    b[used++] = '\0';
                    continue;
                }
                size_t l = strlen(W[k]);
                memcpy(b + used, W[k], l);
                used += l;
            }
        }
        off[i + 1] = (int64_t)used;
    }
    return b;
}

static void make_col(keycol *c, dkb_tp_dtype t, int flavour, bool desc, int64_t n) {
    memset(c, 0, sizeof *c);
    c->t = t;
    c->flavour = flavour;
    c->desc = desc;
    if (t == DKB_TP_STR) {
        c->off = xmalloc_i64(n);
        c->bytes = make_strings(n, flavour, c->off);
        return;
    }
    size_t es = dkb_tp_dtype_size(t);
    c->data = malloc(es * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) {
        switch (t) {
        case DKB_TP_BOOL: ((uint8_t *)c->data)[i] = (uint8_t)rnd_in(0, 1); break;
        case DKB_TP_U8: ((uint8_t *)c->data)[i] = (uint8_t)(flavour ? rnd_in(0, 255) : rnd_in(0, 3)); break;
        case DKB_TP_I8: ((int8_t *)c->data)[i] = (int8_t)rnd_in(-128, 127); break;
        case DKB_TP_I16: ((int16_t *)c->data)[i] = (int16_t)(flavour ? rnd_in(-32768, 32767) : rnd_in(-5, 5)); break;
        case DKB_TP_I32: ((int32_t *)c->data)[i] = (int32_t)(flavour ? (int32_t)rnd() : rnd_in(-3, 3)); break;
        case DKB_TP_I64: {
            int64_t v = flavour == 0 ? rnd_in(-1000000, 1000000) : (int64_t)rnd();
            if (flavour == 1 && rnd_in(0, 9) == 0) v = rnd_in(0, 1) ? INT64_MAX : INT64_MIN;
            ((int64_t *)c->data)[i] = v;
            break;
        }
        case DKB_TP_I128: {
            __int128 v;
            if (flavour == 0) v = (__int128)rnd_in(-50, 50) * 1000000007;
            else if (flavour == 1) v = (__int128)(int64_t)rnd() * (__int128)(int64_t)(rnd() % 1000) + (int64_t)rnd();
            else {
                __int128 mx = (__int128)(((unsigned __int128)1 << 127) - 1);
                int64_t k = rnd_in(0, 3);
                v = k == 0 ? mx : k == 1 ? -mx - 1 : (__int128)rnd_in(-3, 3);
            }
            ((__int128 *)c->data)[i] = v;
            break;
        }
        default: {
            double v = flavour ? f64_special() : (double)rnd_in(-100, 100) / 8.0;
            ((double *)c->data)[i] = v;
            break;
        }
        }
    }
}

static void free_col(keycol *c) { free(c->data), free(c->off), free(c->bytes); }

static dkb_tensor *put_col(dkb_tp *tp, const keycol *c, int64_t n) {
    if (c->t == DKB_TP_STR) return dkb_tp_from_host_str(tp, n, c->off, c->bytes);
    dkb_tensor *t = dkb_tp_from_host(tp, c->t, n, c->data);
    if (t && c->t == DKB_TP_I64) t->scale = 2; /* sorting ignores scales */
    return t;
}

static void describe(char *buf, size_t cap, const keycol *cols, int nk, int64_t n) {
    size_t u = 0;
    for (int j = 0; j < nk && u < cap; j++)
        u += (size_t)snprintf(buf + u, cap - u, "%s%s/%d %s", j ? ", " : "[", DT[cols[j].t], cols[j].flavour,
                              cols[j].desc ? "desc" : "asc");
    if (u < cap) snprintf(buf + u, cap - u, "] n %lld", (long long)n);
}

static bool status_ok(dkb_tp *tp, const char *side, const char *what) {
    dkb_error err;
    int rc = dkb_tp_status(tp, &err);
    CHECK(rc == 0, "%s on %s: unexpected error %d: %s", what, side, rc, rc ? err.msg : "");
    return rc == 0;
}

/* Compare two I64 results (want from the CPU, got from CUDA). */
static void compare(const char *what, dkb_tensor *want, dkb_tensor *got) {
    bool ok = status_ok(g_cpu, "cpu", what) & status_ok(g_gpu, "cuda", what);
    if (!ok || !want || !got) {
        CHECK(ok, "%s: missing result", what);
        return;
    }
    if (want->dtype != got->dtype || want->n != got->n || want->scale != got->scale || want->dict != got->dict) {
        CHECK(0, "%s: cpu dtype %d n %lld scale %d, cuda dtype %d n %lld scale %d", what, (int)want->dtype,
              (long long)want->n, want->scale, (int)got->dtype, (long long)got->n, got->scale);
        return;
    }
    const int64_t *a = dkb_tp_host_copy(g_cpu, want), *b = dkb_tp_host_copy(g_gpu, got);
    if (!a || !b) {
        CHECK(0, "%s: host copy failed", what);
        return;
    }
    for (int64_t i = 0; i < want->n; i++)
        if (a[i] != b[i]) {
            CHECK(0, "%s: first difference at index %lld: cpu row %lld, cuda row %lld", what, (long long)i,
                  (long long)a[i], (long long)b[i]);
            return;
        }
}

static void run_case(int64_t n, int nk, const dkb_tp_dtype *types, const int *flavours, const bool *desc) {
    keycol cols[3];
    dkb_sort_key kc[3], kg[3];
    for (int j = 0; j < nk; j++) {
        make_col(&cols[j], types[j], flavours[j], desc[j], n);
        kc[j].key = put_col(g_cpu, &cols[j], n);
        kg[j].key = put_col(g_gpu, &cols[j], n);
        kc[j].desc = kg[j].desc = desc[j];
    }
    char name[256], what[320];
    describe(name, sizeof name, cols, nk, n);
    snprintf(what, sizeof what, "sort %s", name);
    compare(what, dkb_tp_sort(g_cpu, kc, nk), dkb_tp_sort(g_gpu, kg, nk));
    int64_t ks[] = {0, 1, 10, 20, 100, n / 3, n, n + 5};
    for (int q = 0; q < (int)(sizeof ks / sizeof ks[0]); q++) {
        snprintf(what, sizeof what, "topk k %lld %s", (long long)ks[q], name);
        compare(what, dkb_tp_topk(g_cpu, kc, nk, ks[q]), dkb_tp_topk(g_gpu, kg, nk, ks[q]));
    }
    dkb_tp_reset(g_cpu);
    dkb_tp_reset(g_gpu);
    for (int j = 0; j < nk; j++) free_col(&cols[j]);
}

/* Calls that must fail: both backends give the same code. */
static void run_errors(void) {
    int64_t v[3] = {3, 1, 2}, w[2] = {1, 2};
    dkb_tp *tps[2] = {g_cpu, g_gpu};
    int codes[2][4];
    for (int s = 0; s < 2; s++) {
        dkb_tp *tp = tps[s];
        dkb_sort_key k3 = {dkb_tp_from_host(tp, DKB_TP_I64, 3, v), false};
        dkb_sort_key two[2] = {k3, {dkb_tp_from_host(tp, DKB_TP_I64, 2, w), true}};
        dkb_sort_key null_key = {NULL, false};
        for (int c = 0; c < 4; c++) {
            dkb_tensor *r = c == 0 ? dkb_tp_sort(tp, &k3, 0)
                          : c == 1 ? dkb_tp_sort(tp, two, 2)
                          : c == 2 ? dkb_tp_topk(tp, &k3, 1, -1)
                                   : dkb_tp_topk(tp, &null_key, 1, 2);
            codes[s][c] = dkb_tp_status(tp, NULL);
            CHECK(r == NULL && codes[s][c] != 0, "error case %d on %s: no failure", c, s ? "cuda" : "cpu");
            dkb_tp_reset(tp);
        }
    }
    for (int c = 0; c < 4; c++)
        CHECK(codes[0][c] == codes[1][c], "error case %d: cpu code %d, cuda code %d", c, codes[0][c], codes[1][c]);
}

static const int64_t CU_SIZES[] = {0, 1, 2, 7, 1000, 65537, 3000017};
#define CU_NSIZES ((int)(sizeof CU_SIZES / sizeof CU_SIZES[0]))
#define BIG ((int64_t)1000000)

int main(void) {
    if (!dkb_tp_cuda_available()) {
        printf("test_cuda_sort: skipped: no CUDA backend or no GPU\n");
        return 77;
    }
    dkb_error err;
    if (dkb_tp_create(DKB_TP_CPU, 0, &g_cpu, &err)) {
        fprintf(stderr, "test_cuda_sort: CPU context: %s\n", err.msg);
        return 2;
    }
    if (dkb_tp_create(DKB_TP_CUDA, 0, &g_gpu, &err)) {
        printf("test_cuda_sort: skipped: CUDA context: %s\n", err.msg);
        dkb_tp_destroy(g_cpu);
        return 77;
    }
    /* single keys: every dtype and flavour */
    static const struct {
        dkb_tp_dtype t;
        int flavour;
    } singles[] = {{DKB_TP_BOOL, 0}, {DKB_TP_U8, 0},  {DKB_TP_U8, 1},   {DKB_TP_I8, 0},   {DKB_TP_I16, 0},
                   {DKB_TP_I16, 1},  {DKB_TP_I32, 0}, {DKB_TP_I32, 1},  {DKB_TP_I64, 0},  {DKB_TP_I64, 1},
                   {DKB_TP_I128, 0}, {DKB_TP_I128, 1}, {DKB_TP_I128, 2}, {DKB_TP_F64, 0}, {DKB_TP_F64, 1},
                   {DKB_TP_STR, 0},  {DKB_TP_STR, 1}, {DKB_TP_STR, 2}};
    /* several keys (composites over 64 bits, STR between numbers) */
    static const struct {
        int nk;
        dkb_tp_dtype t[3];
        int flavour[3];
    } multis[] = {
        {2, {DKB_TP_I32, DKB_TP_I64}, {0, 0}},
        {2, {DKB_TP_I64, DKB_TP_I64}, {1, 1}},
        {3, {DKB_TP_U8, DKB_TP_I32, DKB_TP_F64}, {0, 0, 1}},
        {3, {DKB_TP_U8, DKB_TP_STR, DKB_TP_I32}, {0, 0, 0}},
        {2, {DKB_TP_STR, DKB_TP_I32}, {1, 0}},
        {3, {DKB_TP_I32, DKB_TP_I128, DKB_TP_U8}, {0, 1, 0}},
        {3, {DKB_TP_I128, DKB_TP_I32, DKB_TP_STR}, {0, 0, 2}},
        {2, {DKB_TP_F64, DKB_TP_STR}, {0, 0}},
        {2, {DKB_TP_BOOL, DKB_TP_I16}, {0, 0}},
    };
    int ns = (int)(sizeof singles / sizeof singles[0]), nm = (int)(sizeof multis / sizeof multis[0]);
    for (int s = 0; s < CU_NSIZES; s++) {
        int64_t n = CU_SIZES[s];
        for (int c = 0; c < ns; c++)
            for (int d = 0; d < 2; d++) {
                if (n > BIG && (d == 1 || c % 3 != 0)) continue; /* a sample of the big ones */
                bool desc = d == 1;
                run_case(n, 1, &singles[c].t, &singles[c].flavour, &desc);
            }
        for (int c = 0; c < nm; c++)
            for (int d = 0; d < 2; d++) {
                if (n > BIG && (d == 1 || c % 2 != 0)) continue;
                bool desc[3] = {(c + d) % 2 == 1, d == 1, (c & 2) != 0};
                run_case(n, multis[c].nk, multis[c].t, multis[c].flavour, desc);
            }
    }
    run_errors();
    dkb_tp_destroy(g_gpu);
    dkb_tp_destroy(g_cpu);
    if (failures) fprintf(stderr, "test_cuda_sort: %d failures\n", failures);
    else printf("test_cuda_sort: ok\n");
    return failures ? 1 : 0;
}
