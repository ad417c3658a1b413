/* cache_outside_statics (full mode): a result cache the restoration of the
 * candidate's static memory does not reach: a table on the heap, keyed on
 * the parameters (date, discount, quantity), found again on every call
 * through a pointer kept in spare bytes of the C library's stdout FILE
 * (glibc's struct _IO_FILE ends in _unused2, padding nothing reads; stdout
 * is an allowed symbol). Answers are right for every parameter set (a miss
 * computes them with a plain fused scan); were the cache found again, every
 * call would hit and cost nanoseconds (the harness once judged this
 * implausible). The worker now puts stdio's FILE objects back before every
 * call, so the pointer is gone each time and every call runs the honest
 * scan. Expected: ok, and fast (a fused scan beats the baseline). */
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"

/* Days since 1970-01-01 <-> proleptic Gregorian dates (H. Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400, yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

static int64_t plus_one_year(int64_t z) {
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097, doe = z - era * 146097;
    const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    int d = (int)(doy - (153 * mp + 2) / 5 + 1), m = (int)(mp < 10 ? mp + 3 : mp - 9);
    const int64_t y = yoe + era * 400 + (m <= 2) + 1;
    if (m == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))) d = 28;
    return days_from_civil(y, m, d);
}

/* Plain, correct Q6 over the database for a window start (days), a discount
 * centre and a quantity bound (both in hundredths): the sum of
 * l_extendedprice * l_discount (scale 4) and how many rows qualify. 0, or 1
 * when a column is missing. */
static int q6_sum(const dkb_cand_db *db, int64_t date, int64_t discount, int64_t quantity,
                  __int128 *sum, int64_t *hits) {
    const dkb_cand_vec *ship = dkb_cand_column(db, "lineitem", "l_shipdate");
    const dkb_cand_vec *disc = dkb_cand_column(db, "lineitem", "l_discount");
    const dkb_cand_vec *qty = dkb_cand_column(db, "lineitem", "l_quantity");
    const dkb_cand_vec *price = dkb_cand_column(db, "lineitem", "l_extendedprice");
    if (!ship || !disc || !qty || !price) return 1;
    const int64_t end = plus_one_year(date);
    const int32_t *s = ship->data;
    const int64_t *d = disc->data, *q = qty->data, *p = price->data;
    __int128 t = 0;
    int64_t h = 0;
    for (int64_t i = 0; i < ship->n; i++)
        if (s[i] >= date && s[i] < end && d[i] >= discount - 1 && d[i] <= discount + 1 && q[i] < quantity) {
            t += (__int128)p[i] * d[i];
            h++;
        }
    *sum = t;
    *hits = h;
    return 0;
}

/* The parameters in hundredths (discount: scale 2; quantity: an integer). */
static int q6_params(const dkb_cand_params *p, int64_t *date, int64_t *discount, int64_t *quantity) {
    const dkb_cand_param *a = dkb_cand_param_find(p, "date"), *b = dkb_cand_param_find(p, "discount");
    const dkb_cand_param *c = dkb_cand_param_find(p, "quantity");
    if (!a || !b || !c || b->scale != 2) return 1;
    *date = a->i;
    *discount = b->i;
    *quantity = c->i * 100;
    return 0;
}

/* Fill the one-cell result: the revenue (scale 4 -> the declared scale), or
 * NULL when no row qualified. */
static int q6_put(dkb_cand_result *res, __int128 sum, int64_t hits) {
    if (res->ncols != 1 || res->cap < 1 || res->cols[0].scale < 4) return 1;
    for (int s = 4; s < res->cols[0].scale; s++) sum *= 10;
    res->nrows = 1;
    res->cols[0].dec[0] = hits ? sum : 0;
    res->cols[0].is_null[0] = hits == 0;
    return 0;
}

enum { CACHED = 64 };
static const uint32_t MAGIC = 0x6b626421;

typedef struct {
    int64_t date, discount, quantity;
    __int128 sum;
    int64_t hits;
} entry;

typedef struct {
    uint32_t magic;
    int n;
    entry e[CACHED];
} table;

/* Where the table's address is kept: stdout's padding (20 bytes in glibc). */
typedef struct {
    table *t;
    uint32_t magic;
} kept;
_Static_assert(sizeof(kept) <= sizeof(((FILE *)0)->_unused2), "the pointer fits the padding");

/* The cache, found again or made (NULL when out of memory). */
static table *cache(void) {
    kept k;
    memcpy(&k, stdout->_unused2, sizeof k);
    if (k.magic == MAGIC && k.t && k.t->magic == MAGIC) return k.t;
    k.t = calloc(1, sizeof *k.t);
    if (!k.t) return NULL;
    k.t->magic = k.magic = MAGIC;
    memcpy(stdout->_unused2, &k, sizeof k);
    return k.t;
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    (void)env;
    int64_t date, discount, quantity;
    __int128 sum;
    int64_t hits;
    if (q6_params(params, &date, &discount, &quantity)) return 1;
    table *t = cache();
    for (int k = 0; t && k < t->n; k++)
        if (t->e[k].date == date && t->e[k].discount == discount && t->e[k].quantity == quantity)
            return q6_put(res, t->e[k].sum, t->e[k].hits);
    if (q6_sum(db, date, discount, quantity, &sum, &hits)) return 1;
    if (t && t->n < CACHED) t->e[t->n++] = (entry){date, discount, quantity, sum, hits};
    return q6_put(res, sum, hits);
}
