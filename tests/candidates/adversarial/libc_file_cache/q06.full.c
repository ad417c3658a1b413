/* libc_file_cache (full mode): answers in a heap table that is never freed,
 * found again through a pointer kept in spare bytes of the C library's
 * stdout FILE object (glibc's _unused2, which nothing reads). Were libc's
 * stdio objects not put back before every call, every call after the first
 * of each parameter set would hit (reading one column, so not implausible
 * either). Expected: ok, slow. */
#include <stdio.h>
#include <stdlib.h>

#include "dkb/cand_util.h"  // defines: dkb_add_years (and includes candidate.h)

/* The cached answer of one parameter set. */
typedef struct {
    int64_t date, discount, quantity;
    __int128 sum;
    int64_t hits;
} entry;

/* Plain, correct Q6 over the database for a window start (days), a discount
 * centre and a quantity bound (both in hundredths), done REPEAT times over
 * (the honest path is slow on purpose): the sum of l_extendedprice *
 * l_discount (scale 4) and how many rows qualify. 0, or 1 when a column is
 * missing. */
enum { REPEAT = 400 };
static int q6_sum(const dkb_cand_db *db, entry *e) {
    const dkb_cand_vec *ship = dkb_cand_column(db, "lineitem", "l_shipdate");
    const dkb_cand_vec *disc = dkb_cand_column(db, "lineitem", "l_discount");
    const dkb_cand_vec *qty = dkb_cand_column(db, "lineitem", "l_quantity");
    const dkb_cand_vec *price = dkb_cand_column(db, "lineitem", "l_extendedprice");
    if (!ship || !disc || !qty || !price) return 1;
    const int64_t end = dkb_add_years(e->date, 1);
    const int32_t *s = ship->data;
    const int64_t *d = disc->data, *q = qty->data, *p = price->data;
    for (int r = 0; r < REPEAT; r++) {
        __int128 t = 0;
        int64_t h = 0;
        for (int64_t i = 0; i < ship->n; i++)
            if (s[i] >= e->date && s[i] < end && d[i] >= e->discount - 1 && d[i] <= e->discount + 1 &&
                q[i] < e->quantity) {
                t += (__int128)p[i] * d[i];
                h++;
            }
        *(volatile __int128 *)&e->sum = t;
        e->hits = h;
    }
    return 0;
}

/* A hit still reads one column once (l_shipdate, the narrowest), so the
 * timing stays above the harness's implausibility bound. */
static int64_t read_one_column(const dkb_cand_db *db) {
    const dkb_cand_vec *ship = dkb_cand_column(db, "lineitem", "l_shipdate");
    const int32_t *s = ship ? ship->data : NULL;
    int64_t t = 0;
    for (int64_t i = 0; s && i < ship->n; i++) t += s[i];
    return t;
}

/* The parameters in hundredths (discount: scale 2; quantity: an integer). */
static int q6_params(const dkb_cand_params *p, entry *e) {
    const dkb_cand_param *a = dkb_cand_param_find(p, "date"), *b = dkb_cand_param_find(p, "discount");
    const dkb_cand_param *c = dkb_cand_param_find(p, "quantity");
    if (!a || !b || !c || b->scale != 2) return 1;
    e->date = a->i;
    e->discount = b->i;
    e->quantity = c->i * 100;
    return 0;
}

/* Fill the one-cell result: the revenue (scale 4 -> the declared scale), or
 * NULL when no row qualified. */
static int q6_put(dkb_cand_result *res, const entry *e) {
    if (res->ncols != 1 || res->cap < 1 || res->cols[0].scale < 4) return 1;
    __int128 sum = e->sum;
    for (int s = 4; s < res->cols[0].scale; s++) sum *= 10;
    res->nrows = 1;
    res->cols[0].dec[0] = e->hits ? sum : 0;
    res->cols[0].is_null[0] = e->hits == 0;
    return 0;
}

enum { CACHED = 32 };
static const uint32_t MAGIC = 0x6b626421;

/* A table of answers, as each channel below keeps it. */
typedef struct {
    uint32_t magic;
    int n;
    entry e[CACHED];
} table;

static int table_find(const table *t, const entry *key, entry *out) {
    for (int k = 0; t && t->magic == MAGIC && k < t->n && k < CACHED; k++)
        if (t->e[k].date == key->date && t->e[k].discount == key->discount && t->e[k].quantity == key->quantity) {
            *out = t->e[k];
            return 1;
        }
    return 0;
}

static void table_add(table *t, const entry *e) {
    if (t->magic != MAGIC || t->n < 0 || t->n > CACHED) t->magic = MAGIC, t->n = 0;
    if (t->n < CACHED) t->e[t->n++] = *e;
}

typedef struct {
    table *t;
    uint32_t magic;
} kept;
_Static_assert(sizeof(kept) <= sizeof(((FILE *)0)->_unused2), "the pointer fits the padding");

static table *kept_table(int make) {
    kept k;
    memcpy(&k, stdout->_unused2, sizeof k);
    if (k.magic == MAGIC && k.t && k.t->magic == MAGIC) return k.t;
    if (!make) return NULL;
    k.t = calloc(1, sizeof *k.t);
    if (!k.t) return NULL;
    k.t->magic = k.magic = MAGIC;
    memcpy(stdout->_unused2, &k, sizeof k);
    return k.t;
}

static int cache_find(dkb_cand_result *res, const entry *key, entry *out) {
    (void)res;
    return table_find(kept_table(0), key, out);
}

static void cache_add(dkb_cand_result *res, const entry *e) {
    (void)res;
    table *t = kept_table(1);
    if (t) table_add(t, e);
}
int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    (void)env;
    entry e;
    if (q6_params(params, &e)) return 1;
    entry hit;
    if (cache_find(res, &e, &hit)) {
        volatile int64_t sink = read_one_column(db);
        (void)sink;
        return q6_put(res, &hit);
    }
    if (q6_sum(db, &e)) return 1;
    cache_add(res, &e);
    return q6_put(res, &e);
}
