/* qgen.c: seeded qgen-style parameter draws, the TPC-H value lists and the
 * parameter setters the plans' draw functions use (see qgen.h). */
#include "queries/qgen.h"

#include <stdio.h>
#include <string.h>


/* ---- generator: splitmix64 seeding, xoshiro256** ---- */

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void dkb__qgen_init(dkb__qgen *g, uint64_t seed, int query) {
    uint64_t x = seed;
    /* Mix the query number in first so q06 and q14 of one seed differ. */
    x ^= splitmix64(&(uint64_t){(uint64_t)query * 0x632be59bd9b4e019u});
    for (int i = 0; i < 4; i++) g->s[i] = splitmix64(&x);
}

uint64_t dkb__qgen_next(dkb__qgen *g) {
    uint64_t *s = g->s;
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

int64_t dkb__qgen_int(dkb__qgen *g, int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1; /* 0 means all 2^64 values */
    uint64_t r = dkb__qgen_next(g);
    if (span) {
        /* Reject the top partial bucket so every value is equally likely. */
        uint64_t limit = UINT64_MAX - UINT64_MAX % span;
        while (r >= limit) r = dkb__qgen_next(g);
        r %= span;
    }
    return (int64_t)((uint64_t)lo + r);
}

int64_t dkb__qgen_uniform(dkb__qgen *g, int64_t lo, int64_t hi) { return dkb__qgen_int(g, lo, hi); }

const char *dkb__qgen_pick(dkb__qgen *g, const char *const *list, int n) {
    return list[dkb__qgen_int(g, 0, n - 1)];
}

void dkb__qgen_pick2(dkb__qgen *g, int n, int *a, int *b) {
    *a = (int)dkb__qgen_int(g, 0, n - 1);
    do *b = (int)dkb__qgen_int(g, 0, n - 1);
    while (*b == *a && n > 1);
}

void dkb__qgen_shuffle(dkb__qgen *g, int *a, int n) {
    for (int i = n - 1; i > 0; i--) {
        int j = (int)dkb__qgen_int(g, 0, i), t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

void dkb__qgen_sample(dkb__qgen *g, int lo, int hi, int k, int *out) {
    int all[1024], n = hi - lo + 1;
    if (n < 0) n = 0;
    if (n > 1024) n = 1024;
    if (k > n) k = n;
    for (int i = 0; i < n; i++) all[i] = lo + i;
    dkb__qgen_shuffle(g, all, n);
    memcpy(out, all, (size_t)(k > 0 ? k : 0) * sizeof *out);
}

/* ---- dates ---- */

int32_t dkb__qgen_date(int y, int m, int d) { return dkb__days_from_civil(y, m, d); }

int32_t dkb__qgen_day(dkb__qgen *g, int32_t lo, int32_t hi) { return (int32_t)dkb__qgen_int(g, lo, hi); }

int32_t dkb__qgen_month(dkb__qgen *g, int y0, int m0, int y1, int m1) {
    int k = (int)dkb__qgen_int(g, 0, (y1 * 12 + m1) - (y0 * 12 + m0));
    return dkb__qgen_add_months(dkb__days_from_civil(y0, m0, 1), k);
}

int32_t dkb__qgen_year(dkb__qgen *g, int y0, int y1) {
    return dkb__days_from_civil((int)dkb__qgen_int(g, y0, y1), 1, 1);
}

int32_t dkb__qgen_add_months(int32_t days, int k) {
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y, m, d;
    dkb__civil_from_days(days, &y, &m, &d);
    int months = y * 12 + (m - 1) + k;
    y = months / 12 - (months % 12 < 0);
    m = months - y * 12 + 1;
    int last = mdays[m - 1] + (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0));
    return dkb__days_from_civil(y, m, d < last ? d : last);
}

void dkb__qgen_date_text(int32_t days, char *buf, size_t n) {
    int y, m, d;
    dkb__civil_from_days(days, &y, &m, &d);
    snprintf(buf, n, "%04d-%02d-%02d", y, m, d);
}

/* ---- lists ---- */

const char *const dkb__qgen_q13_word1[DKB__QGEN_NQ13] = {"special", "pending", "unusual", "express"};
const char *const dkb__qgen_q13_word2[DKB__QGEN_NQ13] = {"packages", "requests", "accounts", "deposits"};

int dkb__qgen_find(const char *const *list, int n, const char *s) {
    for (int i = 0; s && i < n; i++)
        if (!strcmp(list[i], s)) return i;
    return -1;
}

const char *dkb__qgen_region_of(const char *nation) {
    int i = dkb__qgen_find(dkb__qgen_nation, DKB__QGEN_NNATION, nation);
    return i < 0 ? NULL : dkb__qgen_region[dkb__qgen_nation_region[i]];
}

void dkb__qgen_type(dkb__qgen *g, char *buf, size_t n) {
    int t = (int)dkb__qgen_int(g, 0, DKB__QGEN_NTYPE - 1);
    snprintf(buf, n, "%s %s %s", dkb__qgen_type_syl1[t / 25], dkb__qgen_type_syl2[t / 5 % 5],
             dkb__qgen_type_syl3[t % 5]);
}

void dkb__qgen_type_prefix(dkb__qgen *g, char *buf, size_t n) {
    int t = (int)dkb__qgen_int(g, 0, 29);
    snprintf(buf, n, "%s %s", dkb__qgen_type_syl1[t / 5], dkb__qgen_type_syl2[t % 5]);
}

void dkb__qgen_container(dkb__qgen *g, char *buf, size_t n) {
    int c = (int)dkb__qgen_int(g, 0, DKB__QGEN_NCONTAINER - 1);
    snprintf(buf, n, "%s %s", dkb__qgen_container_syl1[c / 8], dkb__qgen_container_syl2[c % 8]);
}

void dkb__qgen_brand(dkb__qgen *g, char *buf, size_t n) {
    int m = (int)dkb__qgen_int(g, 1, 5);
    snprintf(buf, n, "Brand#%d%d", m, (int)dkb__qgen_int(g, 1, 5));
}

/* s is words[0] from list a, a space, then the rest; *rest points after. */
static int match_word(const char *s, const char *const *list, int n, const char **rest) {
    for (int i = 0; i < n; i++) {
        size_t len = strlen(list[i]);
        if (!strncmp(s, list[i], len) && (s[len] == ' ' || s[len] == 0)) {
            *rest = s[len] ? s + len + 1 : s + len;
            return s[len] == ' ' ? 1 : 2;  /* 1: more follows, 2: end of string */
        }
    }
    return 0;
}

int dkb__qgen_is_type_prefix(const char *s) {
    const char *r;
    return s && match_word(s, dkb__qgen_type_syl1, 6, &r) == 1 && match_word(r, dkb__qgen_type_syl2, 5, &r) == 2;
}

int dkb__qgen_is_type(const char *s) {
    const char *r;
    return s && match_word(s, dkb__qgen_type_syl1, 6, &r) == 1 && match_word(r, dkb__qgen_type_syl2, 5, &r) == 1 &&
           match_word(r, dkb__qgen_type_syl3, 5, &r) == 2;
}

int dkb__qgen_is_container(const char *s) {
    const char *r;
    return s && match_word(s, dkb__qgen_container_syl1, 5, &r) == 1 &&
           match_word(r, dkb__qgen_container_syl2, 8, &r) == 2;
}

int dkb__qgen_is_brand(const char *s) {
    return s && !strncmp(s, "Brand#", 6) && s[6] >= '1' && s[6] <= '5' && s[7] >= '1' && s[7] <= '5' && !s[8];
}

/* ---- setters ---- */

static dkb_param_value *put(dkb_params *out, const char *name, dkb_param_kind kind) {
    if (out->n < 0 || out->n >= DKB_MAX_PARAMS) return NULL;
    dkb_param_value *v = &out->v[out->n++];
    memset(v, 0, sizeof *v);
    v->name = name;
    v->kind = kind;
    return v;
}

void dkb__qgen_put_int(dkb_params *out, const char *name, int64_t i) {
    dkb_param_value *v = put(out, name, DKB_PARAM_INT);
    if (v) v->i = i;
}

void dkb__qgen_put_days(dkb_params *out, const char *name, int32_t days) {
    dkb_param_value *v = put(out, name, DKB_PARAM_DATE);
    if (v) v->i = days;
}

void dkb__qgen_put_date(dkb_params *out, const char *name, int y, int m, int d) {
    dkb__qgen_put_days(out, name, dkb__days_from_civil(y, m, d));
}

void dkb__qgen_put_dec(dkb_params *out, const char *name, int scale, int64_t i) {
    dkb_param_value *v = put(out, name, DKB_PARAM_DECIMAL);
    if (v) v->i = i, v->scale = scale;
}

void dkb__qgen_put_str(dkb_params *out, const char *name, const char *s) {
    dkb_param_value *v = put(out, name, DKB_PARAM_STRING);
    if (v) snprintf(v->s, sizeof v->s, "%s", s ? s : "");
}
