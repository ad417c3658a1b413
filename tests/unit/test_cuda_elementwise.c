/* test_cuda_elementwise.c: the CUDA backend's elementwise, arithmetic and
 * string operations against the CPU backend (differential): the same host
 * data goes into a CPU and a CUDA context, each operation runs on both, and
 * the results must agree exactly (dtype, n, scale, dict, every byte; STR
 * offsets and bytes), or both must fail with the same code and message.
 *
 * Covered: cmp (every dtype pair, scales 0/2/4), cmp_i64, cmp_f64, between,
 * in_i64, lookup_mask, and/or/not, arith (every op, every dtype pair),
 * arith_i64, rsub_i64, cast (every dtype to every dtype), where (typed and
 * mixed), year, pack2, like, substr, str_to_i64; sizes 0, 1, 7, 1000, 65537
 * and 3000017; edge values (INT64/INT128 extremes, NaN, -0.0, ties of the
 * int128 -> double rounding, empty strings); and the failing inputs
 * (overflow in arith / arith_i64 / rsub_i64 / cast / where / pack2 /
 * str_to_i64, the bad value last in a large array).
 *
 * Exits 77 (skipped) without a GPU. One line per failure: what ran, the
 * dtype and size, the first differing index and both values. */
#include <limits.h>
#include <math.h>

#include "test_cuda_util.h"
#include "test_tensor_util.h"

static dkb_tp *cpu, *gpu;
#define NSLOT 16
static dkb_tensor *in_cpu[NSLOT], *in_gpu[NSLOT];
static bool group_dead;     /* an error reset both contexts: skip the rest of the group */
static char what[320];      /* the case being run, for failure lines */
static int last_cpu_code;   /* the CPU's status after the last BOTH */
static int64_t cases;
static int64_t since_upload; /* cases since the standard inputs were uploaded */


/* Start a group of cases: both contexts empty and error-free. */
static void group_begin(void) {
    dkb_tp_reset(cpu);
    dkb_tp_reset(gpu);
    group_dead = false;
}

static void fmt_i128(char *buf, size_t cap, __int128 v) {
    char tmp[48];
    int k = 0;
    unsigned __int128 m = v < 0 ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    do {
        tmp[k++] = (char)('0' + (int)(m % 10));
        m /= 10;
    } while (m);
    size_t j = 0;
    if (v < 0 && j + 1 < cap) buf[j++] = '-';
    while (k && j + 1 < cap) buf[j++] = tmp[--k];
    buf[j] = '\0';
}

/* Element i of a host array of dtype t, printed. */
static void fmt_elem(char *buf, size_t cap, dkb_tp_dtype t, const void *p, int64_t i) {
    switch (t) {
    case DKB_TP_BOOL: case DKB_TP_U8: snprintf(buf, cap, "%u", ((const uint8_t *)p)[i]); break;
    case DKB_TP_I8: snprintf(buf, cap, "%d", ((const int8_t *)p)[i]); break;
    case DKB_TP_I16: snprintf(buf, cap, "%d", ((const int16_t *)p)[i]); break;
    case DKB_TP_I32: snprintf(buf, cap, "%d", ((const int32_t *)p)[i]); break;
    case DKB_TP_I64: snprintf(buf, cap, "%lld", (long long)((const int64_t *)p)[i]); break;
    case DKB_TP_I128: fmt_i128(buf, cap, ((const __int128 *)p)[i]); break;
    case DKB_TP_F64: snprintf(buf, cap, "%.17g (%a)", ((const double *)p)[i], ((const double *)p)[i]); break;
    default: snprintf(buf, cap, "?"); break;
    }
}

static void fail_ctx_reset(void) {
    group_begin();
    group_dead = true;
}

/* Compare the CPU result c with the CUDA result g of the case in `what`. */
static void compare(const dkb_tensor *c, const dkb_tensor *g) {
    cases++;
    since_upload++;
    dkb_error ec, eg;
    int rc = dkb_tp_status(cpu, &ec), rg = dkb_tp_status(gpu, &eg);
    last_cpu_code = rc;
    if (rc || rg) {
        CHECK(rc == rg && strcmp(ec.msg, eg.msg) == 0, "%s: CPU %s \"%s\", CUDA %s \"%s\"", what,
              rc ? dkb_err_name(rc) : "ok", rc ? ec.msg : "", rg ? dkb_err_name(rg) : "ok", rg ? eg.msg : "");
        fail_ctx_reset();
        return;
    }
    if (!c || !g) {
        CHECK(0, "%s: NULL result without an error (CPU %p, CUDA %p)", what, (const void *)c, (const void *)g);
        return;
    }
    if (c->dtype != g->dtype || c->n != g->n || c->scale != g->scale || c->dict != g->dict) {
        CHECK(0, "%s: header differs: CPU %s n %lld scale %d dict %p, CUDA %s n %lld scale %d dict %p", what,
              DT[c->dtype], (long long)c->n, c->scale, (const void *)c->dict, DT[g->dtype], (long long)g->n,
              g->scale, (const void *)g->dict);
        return;
    }
    int64_t n = c->n;
    if (c->dtype == DKB_TP_STR) {
        int64_t *oc = malloc(sizeof *oc * (size_t)(n + 1)), *og = malloc(sizeof *og * (size_t)(n + 1));
        dkb_tp_to_host(cpu, c, oc);
        dkb_tp_to_host(gpu, g, og);
        CHECK(og[0] == 0, "%s: CUDA STR offsets start at %lld, not 0", what, (long long)og[0]);
        int64_t i = 0;
        while (i <= n && oc[i] - oc[0] == og[i] - og[0]) i++;
        if (i <= n) {
            CHECK(0, "%s: STR n %lld: offset %lld differs: CPU %lld, CUDA %lld", what, (long long)n, (long long)i,
                  (long long)(oc[i] - oc[0]), (long long)(og[i] - og[0]));
        } else {
            int64_t nb = oc[n] - oc[0];
            char *bc = malloc((size_t)nb + 1), *bg = malloc((size_t)nb + 1);
            dkb_tp_str_to_host(cpu, c, bc);
            dkb_tp_str_to_host(gpu, g, bg);
            int64_t k = 0;
            while (k < nb && bc[k] == bg[k]) k++;
            if (k < nb) {
                int64_t row = 0;
                while (oc[row + 1] - oc[0] <= k) row++;
                CHECK(0, "%s: STR n %lld: byte %lld (row %lld) differs: CPU 0x%02x, CUDA 0x%02x", what, (long long)n,
                      (long long)k, (long long)row, (unsigned char)bc[k], (unsigned char)bg[k]);
            }
            free(bc);
            free(bg);
        }
        free(oc);
        free(og);
        expect_ok(gpu, what);
        return;
    }
    const char *hc = dkb_tp_host_copy(cpu, c), *hg = dkb_tp_host_copy(gpu, g);
    if (!hc || !hg) {
        CHECK(0, "%s: host_copy failed", what);
        return;
    }
    size_t es = dkb_tp_dtype_size(c->dtype);
    for (int64_t i = 0; i < n; i++)
        if (memcmp(hc + (size_t)i * es, hg + (size_t)i * es, es) != 0) {
            char vc[96], vg[96];
            fmt_elem(vc, sizeof vc, c->dtype, hc, i);
            fmt_elem(vg, sizeof vg, c->dtype, hg, i);
            CHECK(0, "%s: %s n %lld: first difference at %lld: CPU %s, CUDA %s", what, DT[c->dtype], (long long)n,
                  (long long)i, vc, vg);
            break;
        }
    expect_ok(gpu, what);
}

/* Run EXPR on both contexts (TP names the context, IN the inputs of that
 * context) and compare the results. */
#define BOTH(EXPR)                                    \
    do {                                              \
        if (group_dead) break;                        \
        dkb_tp *TP = cpu;                             \
        dkb_tensor **IN = in_cpu;                     \
        dkb_tensor *r_cpu_ = (EXPR);                  \
        TP = gpu;                                     \
        IN = in_gpu;                                  \
        dkb_tensor *r_gpu_ = (EXPR);                  \
        compare(r_cpu_, r_gpu_);                      \
    } while (0)

/* Like BOTH, and the CPU must have failed with code (the case tests what it says). */
#define BOTH_FAIL(code, EXPR)                                                              \
    do {                                                                                   \
        if (group_dead) break;                                                             \
        BOTH(EXPR);                                                                        \
        CHECK(last_cpu_code == (code), "%s: CPU status %d, expected %d", what, last_cpu_code, (code)); \
    } while (0)

#define WHAT(...) snprintf(what, sizeof what, __VA_ARGS__)

/* Upload host data into input slot k of both contexts. */
static void put(int k, dkb_tp_dtype t, int64_t n, const void *data, int scale, const dkb_tp_dict *dict) {
    in_cpu[k] = dkb_tp_from_host(cpu, t, n, data);
    in_gpu[k] = dkb_tp_from_host(gpu, t, n, data);
    if (!in_cpu[k] || !in_gpu[k]) {
        fprintf(stderr, "from_host failed (%s n %lld)\n", DT[t], (long long)n);
        exit(2);
    }
    in_cpu[k]->scale = in_gpu[k]->scale = scale;
    in_cpu[k]->dict = in_gpu[k]->dict = dict;
}

static void put_str(int k, int64_t n, const int64_t *off, const char *bytes) {
    in_cpu[k] = dkb_tp_from_host_str(cpu, n, off, bytes);
    in_gpu[k] = dkb_tp_from_host_str(gpu, n, off, bytes);
    if (!in_cpu[k] || !in_gpu[k]) {
        fprintf(stderr, "from_host_str failed (n %lld)\n", (long long)n);
        exit(2);
    }
}

/* ---- input data ---- */

enum { SMALL, TINY, FULL };

static __int128 rnd128(void) { return (__int128)(((unsigned __int128)rnd() << 64) | rnd()); }

/* A value of dtype t: SMALL: magnitudes up to about 1000, often multiples
 * of 10 or 100 (so values at different scales meet); TINY: 0..100 (fits
 * every integer dtype but BOOL); FULL: the whole range, extremes often. */
static __int128 rnd_int(dkb_tp_dtype t, int kind) {
    __int128 lo, hi;
    switch (t) {
    case DKB_TP_BOOL: lo = 0, hi = 1; break;
    case DKB_TP_U8: lo = 0, hi = 255; break;
    case DKB_TP_I8: lo = -128, hi = 127; break;
    case DKB_TP_I16: lo = INT16_MIN, hi = INT16_MAX; break;
    case DKB_TP_I32: lo = INT32_MIN, hi = INT32_MAX; break;
    case DKB_TP_I64: lo = INT64_MIN, hi = INT64_MAX; break;
    default: hi = (__int128)(((unsigned __int128)1 << 127) - 1), lo = -hi - 1; break;
    }
    __int128 v;
    if (kind == TINY) {
        v = rnd_in(0, 100);
    } else if (kind == SMALL) {
        static const int mul[] = {1, 10, 100};
        v = rnd_in(0, 3) == 0 ? rnd_in(-1000, 1000) : rnd_in(-10, 10) * mul[rnd_in(0, 2)];
    } else {
        int r = (int)rnd_in(0, 9);
        if (r == 0) v = lo;
        else if (r == 1) v = hi;
        else if (r == 2) v = rnd_in(-2, 2);
        else if (t == DKB_TP_I128 && r == 3) {
            /* ties and near-ties of the rounding to double */
            static const int sh[] = {64, 80, 100, 126};
            int s = sh[rnd_in(0, 3)];
            __int128 base = (__int128)1 << s, half = (__int128)1 << (s - 53);
            v = base + half * rnd_in(1, 3) + rnd_in(-1, 1);
            if (rnd_in(0, 1)) v = -v;
        } else if (t == DKB_TP_I128) v = rnd128();
        else v = (__int128)(int64_t)rnd();
    }
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    return v;
}

static double rnd_f64(int kind) {
    if (kind == TINY) return (double)rnd_in(0, 10000) / 100.0;
    if (kind == SMALL) return (double)rnd_in(-100000, 100000) / 100.0;
    static const double edge[] = {0.0, -0.0, 1.5, -1.5, 1e300, -1e300, 1.7e38, -1.69e38, 9.3e18, -9.2233720368547758e18,
                                  0.07, 123.999};
    int r = (int)rnd_in(0, 5);
    if (r == 0) return edge[rnd_in(0, 11)];
    if (r == 1) return NAN;
    if (r == 2) return rnd_in(0, 1) ? INFINITY : -INFINITY;
    return (double)(int64_t)rnd() / (double)(1 + rnd_in(0, 1000000));
}

/* n elements of dtype t (kind as rnd_int), malloc'ed. */
static void *gen(dkb_tp_dtype t, int64_t n, int kind) {
    size_t es = dkb_tp_dtype_size(t);
    char *p = malloc(es * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) {
        if (t == DKB_TP_F64) {
            ((double *)p)[i] = rnd_f64(kind);
            continue;
        }
        __int128 v = rnd_int(t, kind);
        switch (t) {
        case DKB_TP_BOOL: case DKB_TP_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
        case DKB_TP_I8: ((int8_t *)p)[i] = (int8_t)v; break;
        case DKB_TP_I16: ((int16_t *)p)[i] = (int16_t)v; break;
        case DKB_TP_I32: ((int32_t *)p)[i] = (int32_t)v; break;
        case DKB_TP_I64: ((int64_t *)p)[i] = (int64_t)v; break;
        default: ((__int128 *)p)[i] = v; break;
        }
    }
    return p;
}

/* The numeric slots 0..NNUM-1 of a standard input set: dtype and scale. */
#define NNUM 10
static const dkb_tp_dtype NUM_T[NNUM] = {DKB_TP_BOOL, DKB_TP_U8, DKB_TP_I8, DKB_TP_I16, DKB_TP_I32,
                                         DKB_TP_I64, DKB_TP_I128, DKB_TP_F64, DKB_TP_I64, DKB_TP_I32};
static const int NUM_SCALE[NNUM] = {0, 0, 0, 2, 0, 2, 4, 0, 0, 2};
#define SLOT_COND 10  /* a BOOL mask */
#define SLOT_MASK2 11 /* a second mask, U8 with bytes other than 0/1 */

/* Dictionary of 25 entries (codes 25..255 are beyond it). */
static const char *const DICT_STR[25] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m",
                                         "n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y"};
static const size_t DICT_LEN[25] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
static const dkb_tp_dict DICT = {25, DICT_STR, DICT_LEN};

/* Upload the standard input set of kind `kind` for n rows. */
static void put_standard(int64_t n, int kind) {
    for (int k = 0; k < NNUM; k++) {
        void *d = gen(NUM_T[k], n, kind);
        put(k, NUM_T[k], n, d, NUM_T[k] == DKB_TP_F64 ? 0 : NUM_SCALE[k], NUM_T[k] == DKB_TP_U8 ? &DICT : NULL);
        free(d);
    }
    void *c = gen(DKB_TP_BOOL, n, SMALL);
    put(SLOT_COND, DKB_TP_BOOL, n, c, 0, NULL);
    free(c);
    uint8_t *m = malloc((size_t)n + 1);
    for (int64_t i = 0; i < n; i++) m[i] = rnd_in(0, 2) ? 0 : (uint8_t)rnd_in(1, 255);
    put(SLOT_MASK2, DKB_TP_U8, n, m, 0, NULL);
    free(m);
}

static const char *const KIND[] = {"small", "tiny", "full"};

/* The standard input set of the running group, rebuilt (same seed, same
 * data) after an error reset both contexts, and every few cases on large
 * inputs so the contexts' memory stays bounded. */
static uint64_t std_seed;
static int64_t std_n;
static int std_kind;

static void std_begin(int64_t n, int kind) {
    std_seed = rng_state;
    std_n = n;
    std_kind = kind;
    group_begin();
    put_standard(n, kind);
    since_upload = 0;
}

static void std_refresh(void) {
    if (!group_dead && since_upload * (std_n + 1) < 40000000) return;
    uint64_t keep = rng_state;
    rng_state = std_seed;
    group_begin();
    put_standard(std_n, std_kind);
    rng_state = keep;
    since_upload = 0;
}

/* BOTH on the standard input set. */
#define SBOTH(EXPR)      \
    do {                 \
        std_refresh();   \
        BOTH(EXPR);      \
    } while (0)

/* ---- cases ---- */

static void cases_compare(int64_t n, int kind) {
    std_begin(n, kind);
    int nops = n > 100000 ? 2 : 6;
    static const dkb_cmp big_ops[] = {DKB_CMP_EQ, DKB_CMP_LT};
    bool big = n > 100000; /* fewer combinations on the large input */
    for (int i = 0; i < NNUM; i++) {
        for (int j = 0; j < NNUM; j++)
            for (int o = 0; o < nops; o++) {
                if (big && j != i && j != 5 && j != 7) continue;
                dkb_cmp op = nops == 6 ? (dkb_cmp)o : big_ops[o];
                WHAT("cmp op %d slot %d (%s scale %d) vs slot %d (%s scale %d) %s", op, i, DT[NUM_T[i]],
                     NUM_SCALE[i], j, DT[NUM_T[j]], NUM_SCALE[j], KIND[kind]);
                SBOTH(dkb_tp_cmp(TP, IN[i], op, IN[j]));
            }
        static const int64_t ival[] = {0, 1, -1, 100, 123, 255, -128, (int64_t)INT32_MAX + 1, INT32_MIN,
                                       INT64_MIN, INT64_MAX};
        for (int v = 0; v < 11; v++)
            for (int o = 0; o < nops; o++) {
                if (big && v % 3) continue;
                dkb_cmp op = nops == 6 ? (dkb_cmp)o : big_ops[o];
                WHAT("cmp_i64 op %d slot %d (%s) value %lld %s", op, i, DT[NUM_T[i]], (long long)ival[v], KIND[kind]);
                SBOTH(dkb_tp_cmp_i64(TP, IN[i], op, ival[v]));
            }
        static const double fval[] = {0.07, 1.5, -0.0, 1e300, 1.0, -2.5};
        for (int v = 0; v < 6; v++)
            for (int o = 0; o < nops; o++) {
                if (big && v % 2) continue;
                dkb_cmp op = nops == 6 ? (dkb_cmp)o : big_ops[o];
                WHAT("cmp_f64 op %d slot %d (%s) value %g %s", op, i, DT[NUM_T[i]], fval[v], KIND[kind]);
                SBOTH(dkb_tp_cmp_f64(TP, IN[i], op, fval[v]));
            }
        WHAT("cmp_f64 NaN slot %d (%s) %s", i, DT[NUM_T[i]], KIND[kind]);
        SBOTH(dkb_tp_cmp_f64(TP, IN[i], DKB_CMP_NE, NAN));
        static const int64_t bl[][2] = {{-100, 250}, {INT64_MIN, 0}, {5, 3}, {-1, INT64_MAX},
                                        {(int64_t)INT32_MIN - 1, (int64_t)INT32_MAX + 1}, {0, 0}};
        for (int v = 0; v < 6; v++) {
            if (big && v % 2) continue;
            WHAT("between slot %d (%s) [%lld, %lld] %s", i, DT[NUM_T[i]], (long long)bl[v][0], (long long)bl[v][1],
                 KIND[kind]);
            SBOTH(dkb_tp_between(TP, IN[i], bl[v][0], bl[v][1]));
        }
        if (NUM_T[i] != DKB_TP_F64) {
            int64_t rv[20];
            for (int k = 0; k < 20; k++) rv[k] = rnd_in(-1000, 1000);
            static const int64_t e1[] = {1}, e2[] = {0, 1, -1, 100, 200, -128, 127, 255},
                                 e3[] = {INT64_MIN, INT64_MAX, 1000, 10, -10};
            const int64_t *lists[] = {NULL, e1, e2, e3, rv};
            int lens[] = {0, 1, 8, 5, 20};
            for (int v = 0; v < 5; v++) {
                if (big && v < 2) continue;
                WHAT("in_i64 slot %d (%s) list %d (%d values) %s", i, DT[NUM_T[i]], v, lens[v], KIND[kind]);
                SBOTH(dkb_tp_in_i64(TP, IN[i], lists[v], lens[v]));
            }
        }
    }
    bool lut[25];
    for (int k = 0; k < 25; k++) lut[k] = rnd_in(0, 1);
    WHAT("lookup_mask U8 dict 25 %s", KIND[kind]);
    SBOTH(dkb_tp_lookup_mask(TP, IN[1], lut));
    int masks[] = {0, 1, SLOT_COND, SLOT_MASK2};
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) {
            WHAT("and slot %d slot %d %s", masks[i], masks[j], KIND[kind]);
            SBOTH(dkb_tp_and(TP, IN[masks[i]], IN[masks[j]]));
            WHAT("or slot %d slot %d %s", masks[i], masks[j], KIND[kind]);
            SBOTH(dkb_tp_or(TP, IN[masks[i]], IN[masks[j]]));
        }
        WHAT("not slot %d %s", masks[i], KIND[kind]);
        SBOTH(dkb_tp_not(TP, IN[masks[i]]));
    }
    for (int i = 0; i <= 5; i++) {
        if (kind == FULL && NUM_T[i] == DKB_TP_I64) continue; /* days beyond the algorithm's int64 range */
        WHAT("year slot %d (%s) %s", i, DT[NUM_T[i]], KIND[kind]);
        SBOTH(dkb_tp_year(TP, IN[i]));
    }
}

/* arith, arith_i64, rsub_i64, where, cast on values that never overflow. */
static void cases_arith(int64_t n, int kind) {
    std_begin(n, kind);
    bool big = n > 100000;
    for (int i = 0; i < NNUM; i++) {
        for (int j = 0; j < NNUM; j++) {
            if (big && i != j && j != 5 && j != 7) continue;
            for (int op = DKB_OP_ADD; op <= DKB_OP_MAX; op++) {
                WHAT("arith op %d slot %d (%s scale %d) slot %d (%s scale %d) %s", op, i, DT[NUM_T[i]], NUM_SCALE[i],
                     j, DT[NUM_T[j]], NUM_SCALE[j], KIND[kind]);
                SBOTH(dkb_tp_arith(TP, IN[i], (dkb_arith)op, IN[j]));
            }
            WHAT("where cond, slot %d (%s scale %d), slot %d (%s scale %d) %s", i, DT[NUM_T[i]], NUM_SCALE[i], j,
                 DT[NUM_T[j]], NUM_SCALE[j], KIND[kind]);
            SBOTH(dkb_tp_where(TP, IN[SLOT_COND], IN[i], IN[j]));
        }
        static const int64_t sv[][2] = {{100, 2}, {7, 0}, {-3, 4}, {0, 0}, {12345, 3}};
        for (int v = 0; v < 5; v++)
            for (int op = DKB_OP_ADD; op <= DKB_OP_MAX; op++) {
                if (big && v != 0 && v != 2) continue;
                WHAT("arith_i64 op %d slot %d (%s) value %lld scale %d %s", op, i, DT[NUM_T[i]], (long long)sv[v][0],
                     (int)sv[v][1], KIND[kind]);
                SBOTH(dkb_tp_arith_i64(TP, IN[i], (dkb_arith)op, sv[v][0], (int)sv[v][1]));
            }
        WHAT("rsub_i64 100 scale 2 - slot %d (%s) %s", i, DT[NUM_T[i]], KIND[kind]);
        SBOTH(dkb_tp_rsub_i64(TP, 100, 2, IN[i]));
        WHAT("rsub_i64 -7 scale 0 - slot %d (%s) %s", i, DT[NUM_T[i]], KIND[kind]);
        SBOTH(dkb_tp_rsub_i64(TP, -7, 0, IN[i]));
        /* casts that never fail: to F64, to BOOL, widening to I64 / I128 */
        WHAT("cast slot %d (%s) to F64 %s", i, DT[NUM_T[i]], KIND[kind]);
        SBOTH(dkb_tp_cast(TP, IN[i], DKB_TP_F64));
        WHAT("cast slot %d (%s) to BOOL %s", i, DT[NUM_T[i]], KIND[kind]);
        SBOTH(dkb_tp_cast(TP, IN[i], DKB_TP_BOOL));
        if (NUM_T[i] != DKB_TP_F64) {
            WHAT("cast slot %d (%s) to I128 %s", i, DT[NUM_T[i]], KIND[kind]);
            SBOTH(dkb_tp_cast(TP, IN[i], DKB_TP_I128));
            if (NUM_T[i] != DKB_TP_I128) {
                WHAT("cast slot %d (%s) to I64 %s", i, DT[NUM_T[i]], KIND[kind]);
                SBOTH(dkb_tp_cast(TP, IN[i], DKB_TP_I64));
            }
        }
    }
    WHAT("where U8 dict with itself %s", KIND[kind]);
    SBOTH(dkb_tp_where(TP, IN[SLOT_COND], IN[1], IN[1]));
    WHAT("where U8 dict with U8 without %s", KIND[kind]);
    SBOTH(dkb_tp_where(TP, IN[SLOT_COND], IN[1], IN[SLOT_MASK2]));
}

/* Every cast on TINY data (fits every target but BOOL, which never fails). */
static void cases_cast_tiny(int64_t n) {
    std_begin(n, TINY);
    for (int i = 0; i < NNUM; i++)
        for (int t = DKB_TP_BOOL; t <= DKB_TP_F64; t++) {
            WHAT("cast slot %d (%s scale %d) to %s tiny", i, DT[NUM_T[i]], NUM_SCALE[i], DT[t]);
            SBOTH(dkb_tp_cast(TP, IN[i], (dkb_tp_dtype)t));
        }
}

/* F64 -> integer casts of edge values that fit. */
static void cases_cast_f64_edges(int64_t n) {
    static const double ok_i128[] = {1.5e38, -1.6e38, 0x1p100, -0x1p100, 0x1p63, -0x1p63, 123.9, -0.5, -0.0, 9.0e18,
                                     -9.0e18, 8.99e18, 1.7e38, -1.7e38};
    double *d = malloc(sizeof *d * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) d[i] = ok_i128[rnd_in(0, 13)];
    group_begin();
    put(0, DKB_TP_F64, n, d, 0, NULL);
    WHAT("cast F64 edges to I128 n %lld", (long long)n);
    BOTH(dkb_tp_cast(TP, IN[0], DKB_TP_I128));
    for (int64_t i = 0; i < n; i++) d[i] = rnd_in(0, 1) ? -0x1p63 : (double)rnd_in(-1000000, 1000000) + 0.75;
    group_begin();
    put(0, DKB_TP_F64, n, d, 0, NULL);
    WHAT("cast F64 -2^63 and fractions to I64 n %lld", (long long)n);
    BOTH(dkb_tp_cast(TP, IN[0], DKB_TP_I64));
    free(d);
}

/* pack2 with b in [0, b_max]. */
static void cases_pack2(int64_t n) {
    int32_t *a = malloc(sizeof *a * (size_t)(n + 1));
    int64_t *b = malloc(sizeof *b * (size_t)(n + 1));
    uint8_t *u = malloc((size_t)n + 1);
    for (int64_t i = 0; i < n; i++) {
        a[i] = (int32_t)rnd_in(-2000000, 2000000);
        b[i] = rnd_in(0, 1000);
        u[i] = (uint8_t)rnd_in(0, 255);
    }
    group_begin();
    put(0, DKB_TP_I32, n, a, 0, NULL);
    put(1, DKB_TP_I64, n, b, 0, NULL);
    put(2, DKB_TP_U8, n, u, 0, NULL);
    WHAT("pack2 I32, I64 b_max 1000 n %lld", (long long)n);
    BOTH(dkb_tp_pack2(TP, IN[0], IN[1], 1000));
    WHAT("pack2 I32, U8 b_max 255 n %lld", (long long)n);
    BOTH(dkb_tp_pack2(TP, IN[0], IN[2], 255));
    WHAT("pack2 U8, I64 b_max 1000000 n %lld", (long long)n);
    BOTH(dkb_tp_pack2(TP, IN[2], IN[1], 1000000));
    free(a);
    free(b);
    free(u);
}

/* One failing case: an I64/I128/F64 array of n values where only the last
 * element is bad (`bad`), the rest `good`. */
static void fill_last(void *p, dkb_tp_dtype t, int64_t n, __int128 good, __int128 bad) {
    for (int64_t i = 0; i < n; i++) {
        __int128 v = i == n - 1 ? bad : good;
        if (t == DKB_TP_I64) ((int64_t *)p)[i] = (int64_t)v;
        else if (t == DKB_TP_I32) ((int32_t *)p)[i] = (int32_t)v;
        else ((__int128 *)p)[i] = v;
    }
}

static void cases_failing(int64_t n) {
    if (n == 0) return;
    const __int128 I128_MAX = (__int128)(((unsigned __int128)1 << 127) - 1);
    void *x = malloc(16 * (size_t)(n + 1)), *y = malloc(16 * (size_t)(n + 1));
    double *d = malloc(sizeof *d * (size_t)(n + 1));
    struct {
        const char *name;
        dkb_tp_dtype t;
        __int128 xg, xb, yg, yb;
        int xs, ys;
        dkb_arith op;
    } ar[] = {
        {"I64 add", DKB_TP_I64, 5, INT64_MAX, 7, 1, 0, 0, DKB_OP_ADD},
        {"I64 sub", DKB_TP_I64, 5, INT64_MIN, 7, 1, 0, 0, DKB_OP_SUB},
        {"I64 mul", DKB_TP_I64, 5, (int64_t)1 << 32, 7, (int64_t)1 << 32, 0, 0, DKB_OP_MUL},
        {"I64 min scale align", DKB_TP_I64, 5, (int64_t)1 << 62, 7, 1, 0, 2, DKB_OP_MIN},
        {"I64 add scale align", DKB_TP_I64, 5, 1, 7, (int64_t)1 << 62, 4, 0, DKB_OP_ADD},
        {"I128 add", DKB_TP_I128, 5, I128_MAX, 7, 1, 0, 0, DKB_OP_ADD},
        {"I128 sub", DKB_TP_I128, 5, -I128_MAX, 7, 2, 0, 0, DKB_OP_SUB},
        {"I128 mul", DKB_TP_I128, 5, (__int128)1 << 64, 7, (__int128)1 << 63, 0, 0, DKB_OP_MUL},
        {"I128 mul neg", DKB_TP_I128, 5, -((__int128)1 << 64), 7, -((__int128)1 << 64), 0, 0, DKB_OP_MUL},
        {"I128 max scale align", DKB_TP_I128, 5, (__int128)1 << 120, 7, 1, 0, 10, DKB_OP_MAX},
        {"I64 wide scale align (dx 20)", DKB_TP_I64, 5, 2000000000000000000LL, 7, 1, 0, 20, DKB_OP_ADD},
    };
    for (size_t c = 0; c < sizeof ar / sizeof ar[0]; c++) {
        fill_last(x, ar[c].t, n, ar[c].xg, ar[c].xb);
        fill_last(y, ar[c].t, n, ar[c].yg, ar[c].yb);
        group_begin();
        put(0, ar[c].t, n, x, ar[c].xs, NULL);
        put(1, ar[c].t, n, y, ar[c].ys, NULL);
        WHAT("arith %s overflow at the last of n %lld", ar[c].name, (long long)n);
        BOTH_FAIL(DKB_ERANGE, dkb_tp_arith(TP, IN[0], ar[c].op, IN[1]));
    }
    /* I128 products that just fit: -2^127 = -(2^64) * 2^63, and 10^18 * 10^20 */
    fill_last(x, DKB_TP_I128, n, 5, -((__int128)1 << 64));
    fill_last(y, DKB_TP_I128, n, 7, (__int128)1 << 63);
    group_begin();
    put(0, DKB_TP_I128, n, x, 0, NULL);
    put(1, DKB_TP_I128, n, y, 0, NULL);
    WHAT("arith I128 mul -2^127 fits n %lld", (long long)n);
    BOTH(dkb_tp_arith(TP, IN[0], DKB_OP_MUL, IN[1]));
    fill_last(x, DKB_TP_I64, n, 5, 1000000000000000000LL);
    fill_last(y, DKB_TP_I64, n, 7, 1);
    group_begin();
    put(0, DKB_TP_I64, n, x, 0, NULL);
    put(1, DKB_TP_I64, n, y, 20, NULL);
    WHAT("arith I64 wide scale align 10^38 fits n %lld", (long long)n);
    BOTH(dkb_tp_arith(TP, IN[0], DKB_OP_SUB, IN[1]));

    /* arith_i64 / rsub_i64 */
    fill_last(x, DKB_TP_I64, n, 5, INT64_MAX);
    group_begin();
    put(0, DKB_TP_I64, n, x, 0, NULL);
    WHAT("arith_i64 add 1 overflow n %lld", (long long)n);
    BOTH_FAIL(DKB_ERANGE, dkb_tp_arith_i64(TP, IN[0], DKB_OP_ADD, 1, 0));
    fill_last(x, DKB_TP_I64, n, 5, INT64_MIN);
    group_begin();
    put(0, DKB_TP_I64, n, x, 0, NULL);
    WHAT("rsub_i64 0 - INT64_MIN n %lld", (long long)n);
    BOTH_FAIL(DKB_ERANGE, dkb_tp_rsub_i64(TP, 0, 0, IN[0]));
    fill_last(x, DKB_TP_I64, n, 5, (int64_t)1 << 60);
    group_begin();
    put(0, DKB_TP_I64, n, x, 0, NULL);
    WHAT("arith_i64 mul by 100 scale 2 n %lld", (long long)n);
    BOTH_FAIL(DKB_ERANGE, dkb_tp_arith_i64(TP, IN[0], DKB_OP_MUL, 100, 2));
    group_begin();
    put(0, DKB_TP_I64, n, x, 0, NULL);
    WHAT("rsub_i64 1 scale 2 - (scale align) n %lld", (long long)n);
    BOTH_FAIL(DKB_ERANGE, dkb_tp_rsub_i64(TP, 1, 2, IN[0]));
    fill_last(x, DKB_TP_I64, n, 5, 10);
    group_begin();
    put(0, DKB_TP_I64, n, x, 0, NULL);
    WHAT("arith_i64 sub INT64_MAX scale 18 (scale align of the tensor) n %lld", (long long)n);
    BOTH_FAIL(DKB_ERANGE, dkb_tp_arith_i64(TP, IN[0], DKB_OP_SUB, INT64_MAX, 18));

    /* cast */
    struct {
        const char *name;
        dkb_tp_dtype from, to;
        __int128 good, bad;
    } ca[] = {
        {"I64 -> I32", DKB_TP_I64, DKB_TP_I32, 5, (int64_t)INT32_MAX + 1},
        {"I64 -> U8", DKB_TP_I64, DKB_TP_U8, 5, -1},
        {"I32 -> I8", DKB_TP_I32, DKB_TP_I8, 5, 128},
        {"I32 -> I16", DKB_TP_I32, DKB_TP_I16, 5, -32769},
        {"I128 -> I64", DKB_TP_I128, DKB_TP_I64, 5, (__int128)INT64_MIN - 1},
    };
    for (size_t c = 0; c < sizeof ca / sizeof ca[0]; c++) {
        fill_last(x, ca[c].from, n, ca[c].good, ca[c].bad);
        group_begin();
        put(0, ca[c].from, n, x, 2, NULL);
        WHAT("cast %s out of range at the last of n %lld", ca[c].name, (long long)n);
        BOTH_FAIL(DKB_ERANGE, dkb_tp_cast(TP, IN[0], ca[c].to));
    }
    struct {
        double bad;
        dkb_tp_dtype to;
    } cf[] = {{NAN, DKB_TP_I64}, {1e300, DKB_TP_I128}, {-1.0, DKB_TP_U8}, {0x1p63, DKB_TP_I64},
              {1.8e38, DKB_TP_I128}, {INFINITY, DKB_TP_I32}, {128.5, DKB_TP_I8}};
    for (size_t c = 0; c < sizeof cf / sizeof cf[0]; c++) {
        for (int64_t i = 0; i < n; i++) d[i] = i == n - 1 ? cf[c].bad : 1.25;
        group_begin();
        put(0, DKB_TP_F64, n, d, 0, NULL);
        WHAT("cast F64 %g to %s at the last of n %lld", cf[c].bad, DT[cf[c].to], (long long)n);
        BOTH_FAIL(DKB_ERANGE, dkb_tp_cast(TP, IN[0], cf[c].to));
    }

    /* where aligning scales: the unselected side counts too */
    fill_last(x, DKB_TP_I64, n, 5, (int64_t)1 << 62);
    fill_last(y, DKB_TP_I64, n, 7, 9);
    uint8_t *ones = malloc((size_t)n + 1);
    memset(ones, 0, (size_t)n + 1);
    group_begin();
    put(0, DKB_TP_I64, n, x, 0, NULL);
    put(1, DKB_TP_I64, n, y, 2, NULL);
    put(2, DKB_TP_BOOL, n, ones, 0, NULL);
    WHAT("where I64 scale 0 vs scale 2 overflow (unselected) n %lld", (long long)n);
    BOTH_FAIL(DKB_ERANGE, dkb_tp_where(TP, IN[2], IN[0], IN[1]));
    /* wide where wraps without an error, as the CPU */
    fill_last(x, DKB_TP_I128, n, 5, I128_MAX);
    fill_last(y, DKB_TP_I64, n, 7, 9);
    memset(ones, 1, (size_t)n + 1);
    group_begin();
    put(0, DKB_TP_I128, n, x, 0, NULL);
    put(1, DKB_TP_I64, n, y, 2, NULL);
    put(2, DKB_TP_BOOL, n, ones, 0, NULL);
    WHAT("where I128 scale 0 vs I64 scale 2 wraps n %lld", (long long)n);
    BOTH(dkb_tp_where(TP, IN[2], IN[0], IN[1]));
    free(ones);

    /* pack2 */
    struct {
        const char *name;
        __int128 ag, ab, bg, bb;
        int64_t b_max;
    } pk[] = {
        {"b above b_max", 3, 3, 7, 11, 10},
        {"b negative", 3, 3, 7, -1, 10},
        {"a * (b_max + 1) overflows", 3, INT64_MAX / 5, 7, 1, 10},
        {"a * (b_max + 1) + b overflows", 3, INT64_MAX / 11, 7, 10, 10},
    };
    for (size_t c = 0; c < sizeof pk / sizeof pk[0]; c++) {
        fill_last(x, DKB_TP_I64, n, pk[c].ag, pk[c].ab);
        fill_last(y, DKB_TP_I64, n, pk[c].bg, pk[c].bb);
        group_begin();
        put(0, DKB_TP_I64, n, x, 0, NULL);
        put(1, DKB_TP_I64, n, y, 0, NULL);
        WHAT("pack2 %s at the last of n %lld", pk[c].name, (long long)n);
        BOTH_FAIL(DKB_ERANGE, dkb_tp_pack2(TP, IN[0], IN[1], pk[c].b_max));
    }
    fill_last(x, DKB_TP_I64, n, 3, INT64_MAX / 11);
    fill_last(y, DKB_TP_I64, n, 7, INT64_MAX % 11);
    group_begin();
    put(0, DKB_TP_I64, n, x, 0, NULL);
    put(1, DKB_TP_I64, n, y, 0, NULL);
    WHAT("pack2 exactly INT64_MAX at the last of n %lld", (long long)n);
    BOTH(dkb_tp_pack2(TP, IN[0], IN[1], 10));
    free(x);
    free(y);
    free(d);
}

/* ---- strings ---- */

static const char *const SPECIAL[] = {"", "green", "%", "_", "greengreen", "gree", "special requests",
                                      "specialrequests", "x", "  -42", "+7", "13-456-789", "-9223372036854775808",
                                      "9223372036854775807", "00000000000000000000000123", "\t-0", "-", "abc",
                                      "green forest BRASS", "en"};
#define NSPECIAL ((int)(sizeof SPECIAL / sizeof SPECIAL[0]))

/* n strings: the random words of test_tensor_util.h, some special ones. */
static char *gen_strings(int64_t n, int64_t *off) {
    char *b = rand_strings(n, off);
    /* replace about one row in 8 by a special string (they are short) */
    size_t cap = (size_t)n * 64 + 16;
    char *o = malloc(cap);
    int64_t used = 0;
    int64_t *no = malloc(sizeof *no * (size_t)(n + 1));
    no[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        const char *s;
        int64_t len;
        if (rnd_in(0, 7) == 0) {
            s = SPECIAL[rnd_in(0, NSPECIAL - 1)];
            len = (int64_t)strlen(s);
        } else {
            s = b + off[i];
            len = off[i + 1] - off[i];
        }
        memcpy(o + used, s, (size_t)len);
        used += len;
        no[i + 1] = used;
    }
    memcpy(off, no, sizeof *no * (size_t)(n + 1));
    free(no);
    free(b);
    return o;
}

static void cases_strings(int64_t n) {
    int64_t *off = malloc(sizeof *off * (size_t)(n + 1));
    char *bytes = gen_strings(n, off);
    group_begin();
    put_str(0, n, off, bytes);
    /* the same strings at offsets not starting at 0 */
    put_str(1, n > 0 ? n - 1 : 0, n > 0 ? off + 1 : off, bytes);
    static const char *const pats[] = {"%green%", "%special%requests%", "green", "", "%", "%%", "_", "gre_n%",
                                       "%en", "b%", "%_e_%", "forest%green", "%BRASS", "x", "%x_%", "__",
                                       "g%n", "%e%e%e%", "%green %", "special%", "_%_", "%_"};
    for (size_t p = 0; p < sizeof pats / sizeof pats[0]; p++)
        for (int k = 0; k < 2; k++) {
            WHAT("like '%s' input %d n %lld", pats[p], k, (long long)n);
            BOTH(dkb_tp_like(TP, IN[k], pats[p]));
        }
    static const int ss[][2] = {{0, 2}, {0, 0}, {-3, 5}, {2, 100}, {5, -1}, {1000, 3}, {0, INT_MAX}, {3, 1},
                                {INT_MIN, 4}, {INT_MAX, INT_MAX}};
    for (size_t s = 0; s < sizeof ss / sizeof ss[0]; s++)
        for (int k = 0; k < 2; k++) {
            WHAT("substr start %d len %d input %d n %lld", ss[s][0], ss[s][1], k, (long long)n);
            BOTH(dkb_tp_substr(TP, IN[k], ss[s][0], ss[s][1]));
        }
    for (int k = 0; k < 2; k++) {
        WHAT("str_to_i64 input %d n %lld", k, (long long)n);
        BOTH(dkb_tp_str_to_i64(TP, IN[k]));
    }
    WHAT("str_to_i64 of substr(0, 2) n %lld", (long long)n);
    BOTH(dkb_tp_str_to_i64(TP, dkb_tp_substr(TP, IN[0], 0, 2)));
    free(off);
    free(bytes);
    /* overflow: the last string */
    if (n > 0) {
        static const char *const bad[] = {"9223372036854775808", "-9223372036854775809", "99999999999999999999999"};
        for (int b = 0; b < 3; b++) {
            int64_t *o2 = malloc(sizeof *o2 * (size_t)(n + 1));
            size_t bl = strlen(bad[b]);
            char *s2 = malloc((size_t)n * 2 + bl + 1);
            o2[0] = 0;
            for (int64_t i = 0; i < n; i++) {
                if (i == n - 1) {
                    memcpy(s2 + o2[i], bad[b], bl);
                    o2[i + 1] = o2[i] + (int64_t)bl;
                } else {
                    s2[o2[i]] = (char)('0' + i % 10);
                    o2[i + 1] = o2[i] + 1;
                }
            }
            group_begin();
            put_str(0, n, o2, s2);
            WHAT("str_to_i64 '%s' at the last of n %lld", bad[b], (long long)n);
            BOTH_FAIL(DKB_ERANGE, dkb_tp_str_to_i64(TP, IN[0]));
            free(o2);
            free(s2);
        }
    }
}

int main(void) {
    /* DKB_TEST_SELF=1: a second CPU context stands in for the CUDA one (a
     * check of this test itself on machines without a GPU: every case must
     * pass, the failing ones must fail on the CPU) */
    const char *self = getenv("DKB_TEST_SELF");
    bool self_check = self && strcmp(self, "1") == 0;
    if (!self_check && !dkb_tp_cuda_available()) {
        printf("test_cuda_elementwise: skipped: no CUDA backend or no GPU in this build/machine\n");
        return 77;
    }
    dkb_error err;
    if (dkb_tp_create(DKB_TP_CPU, 0, &cpu, &err)) {
        fprintf(stderr, "CPU context: %s\n", err.msg);
        return 2;
    }
    if (dkb_tp_create(self_check ? DKB_TP_CPU : DKB_TP_CUDA, 0, &gpu, &err)) {
        printf("test_cuda_elementwise: skipped: CUDA context: %s\n", err.msg);
        dkb_tp_destroy(cpu);
        return 77;
    }
    static const int64_t sizes[] = {0, 1, 7, 1000, 65537, 3000017};
    for (int s = 0; s < 6; s++) {
        int64_t n = sizes[s];
        for (int kind = SMALL; kind <= FULL; kind++) {
            if (kind == TINY) continue;
            cases_compare(n, kind);
            if (kind == SMALL || n <= 100000) cases_arith(n, kind); /* FULL arith mostly overflows: small n only */
        }
        cases_cast_tiny(n);
        cases_cast_f64_edges(n);
        cases_pack2(n);
        cases_failing(n);
        cases_strings(n);
        fprintf(stderr, "n %lld: %lld cases so far, %d failures\n", (long long)n, (long long)cases, failures);
    }
    dkb_tp_destroy(gpu);
    dkb_tp_destroy(cpu);
    printf("test_cuda_elementwise%s: %lld cases, %d failures\n", self_check ? " (CPU against CPU)" : "",
           (long long)cases, failures);
    return failures ? 1 : 0;
}
