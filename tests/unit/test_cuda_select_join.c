/* test_cuda_select_join.c: the CUDA backend's selection and joins against
 * the CPU backend, exactly (dtype, n, scale, dict and every byte).
 *
 * Selection: compress, nonzero and count over every dtype (scales 0/2/4, a
 * U8 column with a dictionary, I64 extremes, F64 NaN and -0, I128 beyond
 * int64, STR with empty strings), BOOL masks of densities 0/1/50/97/100 %
 * and U8 masks with any nonzero byte, views starting one element in (an
 * unaligned mask, STR offsets not starting at 0); gather with I64 and I32
 * indices, -1 giving the fill (truncated to the dtype) or the empty string,
 * and indices outside [-1, n) failing with the same error code.
 * Joins: INNER, LEFT and semi-joins on dense unique (PK) keys, dense keys
 * with duplicates, sparse 64-bit keys with and without duplicates, negative
 * keys, the int64 extremes (a span beyond 2^63), one key with many build
 * rows (warp-written fan-out), empty sides, and build/probe key dtypes that
 * differ (I32/I64, I16/I8, U8/BOOL).
 * Sizes 0, 1, 7, 1000, 65537 and ~3 million (ragged). Exit 77 without a GPU;
 * DKB_TEST_SELF=1 runs CPU against CPU (a check of the test itself). */
#include "test_cuda_util.h"
#include "test_tensor_util.h"

static dkb_tp *cpu, *gpu;
static const int64_t CU_SIZES[] = {0, 1, 7, 1000, 65537, 3000017};
#define NCU_SIZES ((int)(sizeof CU_SIZES / sizeof CU_SIZES[0]))

static const char *const DICT_STR[] = {"AIR", "MAIL", "SHIP"};
static const size_t DICT_LEN[] = {3, 4, 4};
static const dkb_tp_dict DICT = {3, DICT_STR, DICT_LEN};

/* ---- comparing the two backends ---- */

/* Both contexts agree on their error state; returns non-zero when either
 * failed (the caller then skips the comparison). */
static int same_status(const char *op, const char *what, int64_t n) {
    dkb_error ec, eg;
    int rc = dkb_tp_status(cpu, &ec), rg = dkb_tp_status(gpu, &eg);
    CHECK(rc == rg, "%s %s n=%" PRId64 ": cpu status %d (%s), cuda status %d (%s)", op, what, n, rc,
          rc ? ec.msg : "ok", rg, rg ? eg.msg : "ok");
    return rc | rg;
}

/* The CPU result c and the CUDA result g of op are the same tensor. */
static void same_tensor(const char *op, const char *what, int64_t n, const dkb_tensor *c, const dkb_tensor *g) {
    if (!c || !g) {
        CHECK(0, "%s %s n=%" PRId64 ": cpu result %p, cuda result %p", op, what, n, (void *)c, (void *)g);
        return;
    }
    const char *dt = (unsigned)c->dtype < DKB_TP_NTYPES ? DT[c->dtype] : "?";
    if (c->dtype != g->dtype || c->n != g->n || c->scale != g->scale || c->dict != g->dict) {
        CHECK(0, "%s %s dtype %s n=%" PRId64 ": cpu (dtype %d, n %" PRId64 ", scale %d, dict %p), cuda (dtype %d, n %" PRId64
                 ", scale %d, dict %p)",
              op, what, dt, n, (int)c->dtype, c->n, c->scale, (const void *)c->dict, (int)g->dtype, g->n, g->scale,
              (const void *)g->dict);
        return;
    }
    const uint8_t *hc = dkb_tp_host_copy(cpu, c), *hg = dkb_tp_host_copy(gpu, g);
    if (same_status(op, "host_copy", n) || !hc || !hg) return;
    char a[96], b[96];
    if (c->dtype == DKB_TP_STR) {
        const int64_t *oc = (const int64_t *)hc, *og = (const int64_t *)hg;
        for (int64_t i = 0; i <= c->n; i++)
            if (oc[i] != og[i]) {
                CHECK(0, "%s %s dtype STR n=%" PRId64 ": offset %" PRId64 " differs: cpu %" PRId64 ", cuda %" PRId64, op,
                      what, n, i, oc[i], og[i]);
                return;
            }
        const char *bc = (const char *)(oc + c->n + 1), *bg = (const char *)(og + c->n + 1);
        for (int64_t i = 0; i < c->n; i++)
            if (memcmp(bc + oc[i], bg + oc[i], (size_t)(oc[i + 1] - oc[i]))) {
                CHECK(0, "%s %s dtype STR n=%" PRId64 ": string %" PRId64 " differs: cpu \"%.*s\", cuda \"%.*s\"", op,
                      what, n, i, (int)(oc[i + 1] - oc[i]), bc + oc[i], (int)(og[i + 1] - og[i]), bg + og[i]);
                return;
            }
        return;
    }
    size_t es = dkb_tp_dtype_size(c->dtype);
    for (int64_t i = 0; i < c->n; i++)
        if (memcmp(hc + (size_t)i * es, hg + (size_t)i * es, es)) {
            print_elem(a, sizeof a, c->dtype, hc + (size_t)i * es);
            print_elem(b, sizeof b, c->dtype, hg + (size_t)i * es);
            CHECK(0, "%s %s dtype %s n=%" PRId64 ": first difference at %" PRId64 " of %" PRId64 ": cpu %s, cuda %s", op,
                  what, dt, n, i, c->n, a, b);
            return;
        }
}

static void reset_both(void) {
    dkb_tp_reset(cpu);
    dkb_tp_reset(gpu);
}

/* ---- host columns of every dtype ---- */

typedef struct hostcol {
    dkb_tp_dtype t;
    int scale;
    const dkb_tp_dict *dict;
    int64_t n;
    void *data;       /* n elements */
    int64_t *off;     /* STR: n + 1 offsets */
    char *bytes;      /* STR */
} hostcol;

static dkb_tensor *upload(dkb_tp *tp, const hostcol *h) {
    dkb_tensor *t = h->t == DKB_TP_STR ? dkb_tp_from_host_str(tp, h->n, h->off, h->bytes)
                                       : dkb_tp_from_host(tp, h->t, h->n, h->data);
    if (t) {
        t->scale = h->scale;
        t->dict = h->dict;
    }
    return t;
}

/* Random int64 with the extremes mixed in. */
static int64_t rnd_edge(void) {
    switch (rnd() % 16) {
    case 0: return INT64_MIN;
    case 1: return INT64_MAX;
    case 2: return 0;
    case 3: return -1;
    case 4: return rnd_in(-1000, 1000);
    default: return (int64_t)rnd();
    }
}

/* Column of dtype t with n random values (scale, dict as the dtype's test
 * uses them). */
static hostcol make_col(dkb_tp_dtype t, int64_t n) {
    hostcol h = {t, 0, NULL, n, NULL, NULL, NULL};
    size_t es = dkb_tp_dtype_size(t);
    if (t == DKB_TP_STR) {
        h.off = xmalloc_i64(n);
        h.bytes = rand_strings(n, h.off);
        return h;
    }
    uint8_t *p = malloc(es * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) {
        int64_t v = rnd_edge();
        uint8_t *e = p + (size_t)i * es;
        switch (t) {
        case DKB_TP_BOOL: *e = (uint8_t)(v & 1); break;
        case DKB_TP_U8: *e = (uint8_t)((uint64_t)v % 3); break;
        case DKB_TP_I8: *e = (uint8_t)(int8_t)v; break;
        case DKB_TP_I16: { int16_t x = (int16_t)v; memcpy(e, &x, sizeof x); break; }
        case DKB_TP_I32: { int32_t x = (int32_t)v; memcpy(e, &x, sizeof x); break; }
        case DKB_TP_I64: memcpy(e, &v, sizeof v); break;
        case DKB_TP_I128: {
            __int128 x = (__int128)(((unsigned __int128)rnd() << 64) | (uint64_t)v);
            memcpy(e, &x, sizeof x);
            break;
        }
        default: {
            double d = (double)v / 7.0;
            if (i % 97 == 5) d = -0.0;
            if (i % 89 == 3) memcpy(&d, &(uint64_t){0x7ff8000000000123ull}, sizeof d); /* a NaN payload */
            memcpy(e, &d, sizeof d);
            break;
        }
        }
    }
    h.data = p;
    h.scale = t == DKB_TP_I64 ? 2 : t == DKB_TP_I32 || t == DKB_TP_I128 ? 4 : 0;
    h.dict = t == DKB_TP_U8 ? &DICT : NULL;
    return h;
}

static void free_col(hostcol *h) {
    free(h->data);
    free(h->off);
    free(h->bytes);
}

/* A view of t without its first element (unaligned data; STR offsets
 * then start past 0). Lives in the context's arena. */
static dkb_tensor *skip_first(dkb_tp *tp, const dkb_tensor *t) {
    if (!t || t->n == 0) return NULL;
    dkb_tensor *v = dkb__tp_view(tp, "test view", t);
    if (!v) return NULL;
    v->data = (char *)t->data + dkb_tp_dtype_size(t->dtype);
    v->n = t->n - 1;
    return v;
}

/* ---- compress, nonzero, count ---- */

/* Mask kinds: BOOL of a density in percent, or (-1) U8 with any nonzero byte. */
static const int DENSITIES[] = {0, 1, 50, 97, 100, -1};
#define NDENS ((int)(sizeof DENSITIES / sizeof DENSITIES[0]))

static hostcol make_mask(int64_t n, int density) {
    hostcol h = {density < 0 ? DKB_TP_U8 : DKB_TP_BOOL, 0, NULL, n, NULL, NULL, NULL};
    uint8_t *m = malloc((size_t)n + 1);
    for (int64_t i = 0; i < n; i++)
        m[i] = density < 0 ? (rnd() % 3 ? (uint8_t)rnd_in(1, 255) : 0) : (uint8_t)((int64_t)(rnd() % 100) < density);
    h.data = m;
    return h;
}

static void run_compress(const char *what, int64_t n, dkb_tensor *const ca[2], dkb_tensor *const ma[2]) {
    dkb_tensor *c = dkb_tp_compress(cpu, ca[0], ma[0]), *g = dkb_tp_compress(gpu, ca[1], ma[1]);
    if (!same_status("compress", what, n)) same_tensor("compress", what, n, c, g);
}

static void test_compress(int64_t n) {
    hostcol cols[DKB_TP_NTYPES];
    for (int t = 0; t < DKB_TP_NTYPES; t++) cols[t] = make_col((dkb_tp_dtype)t, n);
    for (int di = 0; di < NDENS; di++) {
        hostcol hm = make_mask(n, DENSITIES[di]);
        char what[64];
        snprintf(what, sizeof what, "mask %s %d%%", DENSITIES[di] < 0 ? "U8" : "BOOL", DENSITIES[di]);
        dkb_tensor *m[2] = {upload(cpu, &hm), upload(gpu, &hm)};
        dkb_tensor *mv[2] = {skip_first(cpu, m[0]), skip_first(gpu, m[1])};
        for (int t = 0; t < DKB_TP_NTYPES; t++) {
            dkb_tensor *a[2] = {upload(cpu, &cols[t]), upload(gpu, &cols[t])};
            if (same_status("upload", DT[t], n)) break;
            run_compress(what, n, a, m);
            if (n > 0) { /* both one element in */
                dkb_tensor *av[2] = {skip_first(cpu, a[0]), skip_first(gpu, a[1])};
                char wv[96];
                snprintf(wv, sizeof wv, "%s, views from element 1", what);
                run_compress(wv, n, av, mv);
            }
        }
        dkb_tensor *nc = dkb_tp_nonzero(cpu, m[0]), *ng = dkb_tp_nonzero(gpu, m[1]);
        if (!same_status("nonzero", what, n)) same_tensor("nonzero", what, n, nc, ng);
        int64_t kc = dkb_tp_count(cpu, m[0]), kg = dkb_tp_count(gpu, m[1]);
        if (!same_status("count", what, n))
            CHECK(kc == kg, "count %s n=%" PRId64 ": cpu %" PRId64 ", cuda %" PRId64, what, n, kc, kg);
        if (n > 0) {
            nc = dkb_tp_nonzero(cpu, mv[0]), ng = dkb_tp_nonzero(gpu, mv[1]);
            if (!same_status("nonzero", "view from element 1", n)) same_tensor("nonzero", "view", n, nc, ng);
            kc = dkb_tp_count(cpu, mv[0]), kg = dkb_tp_count(gpu, mv[1]);
            if (!same_status("count", "view from element 1", n))
                CHECK(kc == kg, "count %s view n=%" PRId64 ": cpu %" PRId64 ", cuda %" PRId64, what, n, kc, kg);
        }
        free_col(&hm);
        reset_both();
    }
    for (int t = 0; t < DKB_TP_NTYPES; t++) free_col(&cols[t]);
}

/* ---- gather ---- */

/* Indices into an elements: mostly valid, some -1; bad != 0 puts that one
 * bad index (an, -2, INT64_MIN...) at a random place. */
static hostcol make_idx(dkb_tp_dtype t, int64_t n, int64_t an, int64_t bad) {
    hostcol h = {t, 0, NULL, n, NULL, NULL, NULL};
    int64_t *v = xmalloc_i64(n);
    for (int64_t i = 0; i < n; i++) v[i] = an == 0 || rnd() % 8 == 0 ? -1 : rnd_in(0, an - 1);
    if (bad && n) v[rnd_in(0, n - 1)] = bad;
    if (t == DKB_TP_I32) {
        int32_t *w = malloc(sizeof *w * (size_t)(n + 1));
        for (int64_t i = 0; i < n; i++) w[i] = (int32_t)v[i];
        free(v);
        h.data = w;
    } else {
        h.data = v;
    }
    return h;
}

static const int64_t FILLS[] = {0, -7, 300, 12345678901LL};

static void test_gather(int64_t an, int64_t n) {
    for (int it = 0; it < 2; it++) {
        dkb_tp_dtype it_t = it ? DKB_TP_I32 : DKB_TP_I64;
        hostcol hi = make_idx(it_t, n, an, 0);
        for (int t = 0; t < DKB_TP_NTYPES; t++) {
            hostcol ha = make_col((dkb_tp_dtype)t, an);
            int64_t fill = FILLS[(t + it) % 4];
            char what[96];
            snprintf(what, sizeof what, "%s indices into %" PRId64 " %s, fill %" PRId64, DT[it_t], an, DT[t], fill);
            dkb_tensor *a[2] = {upload(cpu, &ha), upload(gpu, &ha)}, *x[2] = {upload(cpu, &hi), upload(gpu, &hi)};
            dkb_tensor *c = dkb_tp_gather(cpu, a[0], x[0], fill), *g = dkb_tp_gather(gpu, a[1], x[1], fill);
            if (!same_status("gather", what, n)) same_tensor("gather", what, n, c, g);
            if (an > 0) { /* from element 1 on: STR offsets not starting at 0 */
                hostcol hv = make_idx(it_t, n, an - 1, 0);
                dkb_tensor *av[2] = {skip_first(cpu, a[0]), skip_first(gpu, a[1])};
                dkb_tensor *xv[2] = {upload(cpu, &hv), upload(gpu, &hv)};
                c = dkb_tp_gather(cpu, av[0], xv[0], fill), g = dkb_tp_gather(gpu, av[1], xv[1], fill);
                if (!same_status("gather", "view from element 1", n)) same_tensor("gather", what, n, c, g);
                free_col(&hv);
            }
            free_col(&ha);
            reset_both();
        }
        free_col(&hi);
    }
}

/* Indices outside [-1, an) fail on both with the same code. */
static void test_gather_errors(void) {
    const int64_t an = 1000, n = 65537;
    const int64_t bads[] = {an, -2, INT64_MIN, INT64_MAX, an + 1000000};
    for (int it = 0; it < 2; it++)
        for (int b = 0; b < 5; b++)
            for (int t = 0; t < DKB_TP_NTYPES; t += 4) { /* BOOL, I32, STR */
                dkb_tp_dtype it_t = it ? DKB_TP_I32 : DKB_TP_I64;
                int64_t bad = it_t == DKB_TP_I32 ? (int64_t)(int32_t)bads[b] : bads[b];
                if (bad >= -1 && bad < an) bad = -2;
                hostcol ha = make_col((dkb_tp_dtype)t, an), hi = make_idx(it_t, n, an, bad);
                dkb_tensor *a[2] = {upload(cpu, &ha), upload(gpu, &ha)}, *x[2] = {upload(cpu, &hi), upload(gpu, &hi)};
                dkb_tensor *c = dkb_tp_gather(cpu, a[0], x[0], 0), *g = dkb_tp_gather(gpu, a[1], x[1], 0);
                dkb_error ec, eg;
                int rc = dkb_tp_status(cpu, &ec), rg = dkb_tp_status(gpu, &eg);
                CHECK(rc == DKB_ERANGE && rg == DKB_ERANGE && !c && !g,
                      "gather %s index %" PRId64 " into %s: cpu %d (%s) result %p, cuda %d (%s) result %p", DT[it_t], bad,
                      DT[t], rc, rc ? ec.msg : "ok", (void *)c, rg, rg ? eg.msg : "ok", (void *)g);
                CHECK(rg == 0 || strstr(eg.msg, "gather"), "gather error message does not name the op: %s", eg.msg);
                free_col(&ha);
                free_col(&hi);
                reset_both();
            }
}

/* ---- joins ---- */

enum { K_PK, K_DUPS, K_SPARSE_DUPS, K_SPARSE_UNIQUE, K_EXTREME, K_FANOUT, K_NEGATIVE, K_NMODES };
static const char *const KMODE[] = {"dense unique", "dense dups", "sparse dups", "sparse unique",
                                    "int64 extremes", "fan-out", "negative"};

/* Key i of a side with nb build rows (probe: a slightly wider domain). */
static int64_t gen_key(int mode, int64_t nb, int64_t i, bool probe) {
    int64_t wide = probe ? 5 : 0;
    switch (mode) {
    case K_PK: return probe ? rnd_in(-2, nb + 3) : i + 1; /* build: shuffled below */
    case K_DUPS: return rnd_in(0, nb / 3 + 1 + wide);
    case K_SPARSE_DUPS: return (int64_t)(rnd() % (uint64_t)(nb / 2 + 2 + wide)) * 0x10000000F1LL - (1LL << 60);
    case K_SPARSE_UNIQUE: return probe ? (int64_t)(rnd() % (uint64_t)(nb + 3)) * 0x3000000007LL + 11
                                       : i * 0x3000000007LL + 11;
    case K_EXTREME: {
        static const int64_t ex[] = {INT64_MIN, INT64_MAX, INT64_MIN + 1, INT64_MAX - 1, -1, 0, 1};
        /* extremes repeat on both sides: keep their pairs few on large sides */
        return rnd() % (nb < 10000 ? 3 : 1024) == 0 ? ex[rnd() % 7] : (int64_t)rnd();
    }
    case K_FANOUT: return rnd_in(0, 4 + wide);
    default: return rnd_in(-nb - 10 - wide, -nb / 2 - 1);
    }
}

/* n keys as dtype t (values wrapped to its width, as both sides see them);
 * dom: the build side's size, which the keys' domain follows. */
static hostcol make_keys(dkb_tp_dtype t, int mode, int64_t n, int64_t dom, bool probe) {
    hostcol h = {t, 0, NULL, n, NULL, NULL, NULL};
    int64_t *v = xmalloc_i64(n);
    for (int64_t i = 0; i < n; i++) v[i] = gen_key(mode, dom, i, probe);
    if (mode == K_PK && !probe)
        for (int64_t i = n - 1; i > 0; i--) { /* a permutation of 1..n */
            int64_t j = rnd_in(0, i), s = v[i];
            v[i] = v[j], v[j] = s;
        }
    size_t es = dkb_tp_dtype_size(t);
    uint8_t *p = malloc(es * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) {
        uint8_t *e = p + (size_t)i * es;
        switch (t) {
        case DKB_TP_BOOL: *e = (uint8_t)(v[i] & 1); break;
        case DKB_TP_U8: case DKB_TP_I8: *e = (uint8_t)v[i]; break;
        case DKB_TP_I16: { int16_t x = (int16_t)v[i]; memcpy(e, &x, sizeof x); break; }
        case DKB_TP_I32: { int32_t x = (int32_t)v[i]; memcpy(e, &x, sizeof x); break; }
        default: memcpy(e, &v[i], sizeof v[i]); break;
        }
    }
    free(v);
    h.data = p;
    h.scale = t == DKB_TP_I64 ? 2 : 0; /* scales are ignored by joins */
    return h;
}

static void test_join(int mode, int64_t nb, int64_t np, dkb_tp_dtype bt, dkb_tp_dtype pt) {
    hostcol hb = make_keys(bt, mode, nb, nb, false), hp = make_keys(pt, mode, np, nb, true);
    char what[160];
    snprintf(what, sizeof what, "%s keys, build %s n=%" PRId64 ", probe %s n=%" PRId64, KMODE[mode], DT[bt], nb, DT[pt],
             np);
    dkb_tensor *b[2] = {upload(cpu, &hb), upload(gpu, &hb)}, *p[2] = {upload(cpu, &hp), upload(gpu, &hp)};
    if (!same_status("upload", what, np)) {
        for (int kind = DKB_JOIN_INNER; kind <= DKB_JOIN_LEFT; kind++) {
            const char *op = kind == DKB_JOIN_LEFT ? "left join" : "inner join";
            dkb_join_result jc = dkb_tp_join(cpu, b[0], p[0], (dkb_join_kind)kind);
            dkb_join_result jg = dkb_tp_join(gpu, b[1], p[1], (dkb_join_kind)kind);
            if (same_status(op, what, np)) break;
            char w2[200];
            snprintf(w2, sizeof w2, "%s: probe_idx", what);
            same_tensor(op, w2, np, jc.probe_idx, jg.probe_idx);
            snprintf(w2, sizeof w2, "%s: build_idx", what);
            same_tensor(op, w2, np, jc.build_idx, jg.build_idx);
            reset_both();
            b[0] = upload(cpu, &hb), b[1] = upload(gpu, &hb), p[0] = upload(cpu, &hp), p[1] = upload(gpu, &hp);
        }
        dkb_tensor *sc = dkb_tp_semi_join(cpu, b[0], p[0]), *sg = dkb_tp_semi_join(gpu, b[1], p[1]);
        if (!same_status("semi_join", what, np)) same_tensor("semi_join", what, np, sc, sg);
    }
    free_col(&hb);
    free_col(&hp);
    reset_both();
}

static void test_joins(void) {
    /* every mode over size pairs, I64 keys */
    static const int64_t PAIRS[][2] = {{0, 0},         {0, 7},          {7, 0},        {1, 1},
                                       {7, 1000},      {1000, 7},       {1000, 65537}, {65537, 65537},
                                       {65537, 3000017}, {3000017, 65537}, {3000017, 3000017}};
    for (int mode = 0; mode < K_NMODES; mode++)
        for (size_t s = 0; s < sizeof PAIRS / sizeof PAIRS[0]; s++) {
            int64_t nb = PAIRS[s][0], np = PAIRS[s][1];
            if (mode == K_FANOUT && (nb > 2000 || np > 65537)) continue; /* output ~ nb/5 * np pairs */
            test_join(mode, nb, np, DKB_TP_I64, DKB_TP_I64);
        }
    test_join(K_FANOUT, 2000, 20000, DKB_TP_I64, DKB_TP_I64);
    test_join(K_FANOUT, 20000, 3000, DKB_TP_I32, DKB_TP_I64);
    /* mixed key widths */
    static const dkb_tp_dtype WIDTHS[][2] = {{DKB_TP_I32, DKB_TP_I64}, {DKB_TP_I64, DKB_TP_I32},
                                             {DKB_TP_I32, DKB_TP_I32}, {DKB_TP_I16, DKB_TP_I8},
                                             {DKB_TP_U8, DKB_TP_BOOL}, {DKB_TP_BOOL, DKB_TP_U8},
                                             {DKB_TP_I8, DKB_TP_I16}};
    for (size_t w = 0; w < sizeof WIDTHS / sizeof WIDTHS[0]; w++)
        for (int mode = 0; mode < K_NMODES; mode++) {
            if (mode == K_FANOUT) continue;
            test_join(mode, 1000, 65537, WIDTHS[w][0], WIDTHS[w][1]);
            if (WIDTHS[w][0] >= DKB_TP_I32) test_join(mode, 65537, 3000017, WIDTHS[w][0], WIDTHS[w][1]);
        }
}

int main(void) {
    /* DKB_TEST_SELF=1: a second CPU context plays the CUDA one (checks the
     * test itself: no false failures, run time) on machines without a GPU */
    bool self = getenv("DKB_TEST_SELF") && !strcmp(getenv("DKB_TEST_SELF"), "1");
    if (!self && !dkb_tp_cuda_available()) {
        printf("test_cuda_select_join: skipped: no usable GPU (or a build without CUDA)\n");
        return 77;
    }
    dkb_error err;
    if (dkb_tp_create(DKB_TP_CPU, 0, &cpu, &err)) {
        fprintf(stderr, "test_cuda_select_join: CPU context: %s\n", err.msg);
        return 1;
    }
    if (dkb_tp_create(self ? DKB_TP_CPU : DKB_TP_CUDA, 0, &gpu, &err)) {
        printf("test_cuda_select_join: skipped: CUDA context: %s\n", err.msg);
        dkb_tp_destroy(cpu);
        return 77;
    }
    for (int s = 0; s < NCU_SIZES; s++) test_compress(CU_SIZES[s]);
    for (int s = 0; s < NCU_SIZES; s++) {
        test_gather(CU_SIZES[s], CU_SIZES[s]);
        test_gather(CU_SIZES[s], CU_SIZES[(s + 2) % NCU_SIZES]);
    }
    test_gather_errors();
    test_joins();
    dkb_tp_destroy(cpu);
    dkb_tp_destroy(gpu);
    if (failures) {
        fprintf(stderr, "test_cuda_select_join: %d failures\n", failures);
        return 1;
    }
    printf("test_cuda_select_join: all passed\n");
    return 0;
}
