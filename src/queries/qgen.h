/* qgen.h: helpers for the plans' parameter draw and check functions: a
 * seeded generator with qgen-style draws (uniform integers, picks from the
 * TPC-H value lists, month and year windows, samples of distinct values),
 * the value lists themselves (REGION, NATION, TYPE, SEGMENT, SHIPMODE,
 * CONTAINER, COLOR, BRAND and Q13's words, as params.md lists them), lookups
 * for check functions, and setters that append parameter values.
 *
 * Seed 0 is reserved for the qualification values: a draw function tests
 * `seed == 0` and puts those values without drawing. Any other seed seeds a
 * xoshiro256** generator (through splitmix64) mixed with the query number,
 * so every (seed, query) pair draws independently and reproducibly on every
 * platform. The draws are qgen-style (same ranges and lists), not qgen's
 * own random stream.
 *
 *     static void draw(uint64_t seed, double sf, dkb_params *out) {
 *         if (seed == 0) { dkb__qgen_put_date(out, "date", 1994, 1, 1); ...; return; }
 *         dkb__qgen g;
 *         dkb__qgen_init(&g, seed, 6);
 *         dkb__qgen_put_date(out, "date", (int)dkb__qgen_int(&g, 1993, 1997), 1, 1);
 *         dkb__qgen_put_dec(out, "discount", 2, dkb__qgen_int(&g, 2, 9));
 *         dkb__qgen_put_int(out, "quantity", dkb__qgen_int(&g, 24, 25));
 *     }
 *
 * The put functions append in call order: put the parameters in the order
 * of the query's dkb_param_def table (dkb_query_params checks that). */
#ifndef DKB_QUERIES_QGEN_H
#define DKB_QUERIES_QGEN_H

#include <stddef.h>
#include <stdint.h>

#include "common/date.h"  // defines: dkb__days_from_civil, dkb__civil_from_days
#include "dkb/query.h"    // defines: dkb_params, dkb_param_value
#include "gen/dists.h"    // defines: the value lists aliased below

/* ---- the generator ---- */

typedef struct dkb__qgen {
    uint64_t s[4];  /* xoshiro256** state */
} dkb__qgen;

/* Seed g for query number `query` (1..22) from seed (any value; 0 is only
 * special to the draw functions, which do not draw for it). */
void dkb__qgen_init(dkb__qgen *g, uint64_t seed, int query);
/* The next 64 random bits. */
uint64_t dkb__qgen_next(dkb__qgen *g);
/* Uniform integer in [lo, hi] (inclusive, unbiased); lo when hi <= lo. */
int64_t dkb__qgen_int(dkb__qgen *g, int64_t lo, int64_t hi);
/* The same as dkb__qgen_int (the brief's name for it). */
int64_t dkb__qgen_uniform(dkb__qgen *g, int64_t lo, int64_t hi);
/* One of list[0..n), uniformly. */
const char *dkb__qgen_pick(dkb__qgen *g, const char *const *list, int n);
/* Two different indices in [0, n), each uniform (the second redrawn until
 * it differs from the first, as qgen does for Q7 and Q12); n >= 2. */
void dkb__qgen_pick2(dkb__qgen *g, int n, int *a, int *b);
/* Shuffle a[0..n) uniformly (Fisher-Yates). */
void dkb__qgen_shuffle(dkb__qgen *g, int *a, int n);
/* The first k entries of a random permutation of lo..hi into out[0..k):
 * k distinct values in random order (Q16's sizes, Q22's codes); needs
 * 0 <= k <= hi - lo + 1 <= 1024. */
void dkb__qgen_sample(dkb__qgen *g, int lo, int hi, int k, int *out);

/* ---- dates (days since 1970-01-01) ---- */

/* Days of y-m-d. */
int32_t dkb__qgen_date(int y, int m, int d);
/* A day uniform in [lo, hi] (days). */
int32_t dkb__qgen_day(dkb__qgen *g, int32_t lo, int32_t hi);
/* The first day of a month uniform over the months y0-m0 .. y1-m1 inclusive
 * (params.md's "month in [A, B]"; e.g. Q4: 1993, 2, 1997, 11). */
int32_t dkb__qgen_month(dkb__qgen *g, int y0, int m0, int y1, int m1);
/* January 1 of a year uniform in [y0, y1]. */
int32_t dkb__qgen_year(dkb__qgen *g, int y0, int y1);
/* days + k months, the day clamped to the last day of the target month
 * (as SQL's `date + interval 'k' month`). */
int32_t dkb__qgen_add_months(int32_t days, int k);
/* "YYYY-MM-DD" into buf (at least 11 bytes). */
void dkb__qgen_date_text(int32_t days, char *buf, size_t n);

/* ---- value lists (dbgen's dists.dss; the data holds exactly these) ---- */

#define DKB__QGEN_NREGION 5
#define DKB__QGEN_NNATION 25
#define DKB__QGEN_NSEGMENT 5
#define DKB__QGEN_NSHIPMODE 7
#define DKB__QGEN_NCOLOR 92
#define DKB__QGEN_NTYPE 150  /* = 6 x 5 x 5 syllables */
#define DKB__QGEN_NCONTAINER 40  /* = 5 x 8 syllables */
#define DKB__QGEN_NQ13 4

/* Aliases of the generator's lists (gen/dists.h), so queries and data agree. */
#define dkb__qgen_region dkb__region_names         /* [5] AFRICA .. MIDDLE EAST */
#define dkb__qgen_nation dkb__nation_names         /* [25] by n_nationkey */
#define dkb__qgen_nation_region dkb__nation_region /* [25] region index of each nation */
#define dkb__qgen_segment dkb__segments            /* [5] AUTOMOBILE .. MACHINERY */
#define dkb__qgen_shipmode dkb__ship_modes         /* [7] REG AIR, AIR, RAIL, TRUCK, MAIL, FOB, SHIP */
#define dkb__qgen_color dkb__colors                /* [92] almond .. yellow */
#define dkb__qgen_type_syl1 dkb__type_syl1         /* [6] STANDARD SMALL MEDIUM LARGE ECONOMY PROMO */
#define dkb__qgen_type_syl2 dkb__type_syl2         /* [5] ANODIZED BURNISHED PLATED POLISHED BRUSHED */
#define dkb__qgen_type_syl3 dkb__type_syl3         /* [5] TIN NICKEL BRASS STEEL COPPER */
#define dkb__qgen_container_syl1 dkb__container_size /* [5] SM LG MED JUMBO WRAP */
#define dkb__qgen_container_syl2 dkb__container_kind /* [8] CASE BOX BAG JAR PACK PKG CAN DRUM */
extern const char *const dkb__qgen_q13_word1[DKB__QGEN_NQ13]; /* special pending unusual express */
extern const char *const dkb__qgen_q13_word2[DKB__QGEN_NQ13]; /* packages requests accounts deposits */

/* Index of s in list[0..n), or -1 (exact, case-sensitive). */
int dkb__qgen_find(const char *const *list, int n, const char *s);
/* Region name of a nation name, or NULL for an unknown nation. */
const char *dkb__qgen_region_of(const char *nation);

/* Random strings into buf (DKB_PARAM_STRLEN bytes is always enough):
 * a TYPE (uniform over 150), its first two words (uniform over 30), a
 * CONTAINER (uniform over 40), a BRAND "Brand#MN" (M, N uniform in 1..5). */
void dkb__qgen_type(dkb__qgen *g, char *buf, size_t n);
void dkb__qgen_type_prefix(dkb__qgen *g, char *buf, size_t n);
void dkb__qgen_container(dkb__qgen *g, char *buf, size_t n);
void dkb__qgen_brand(dkb__qgen *g, char *buf, size_t n);

/* Checks for check functions: s is one of the 150 TYPEs / one of the 30
 * two-word TYPE prefixes / one of the 40 CONTAINERs / a BRAND Brand#MN
 * with M, N in 1..5. */
int dkb__qgen_is_type(const char *s);
int dkb__qgen_is_type_prefix(const char *s);
int dkb__qgen_is_container(const char *s);
int dkb__qgen_is_brand(const char *s);

/* ---- parameter setters (append to out, in the def table's order) ---- */

void dkb__qgen_put_int(dkb_params *out, const char *name, int64_t v);
void dkb__qgen_put_date(dkb_params *out, const char *name, int y, int m, int d);
void dkb__qgen_put_days(dkb_params *out, const char *name, int32_t days);
/* A DECIMAL: v at `scale` digits (discount 0.06 = put_dec(out, "discount", 2, 6)). */
void dkb__qgen_put_dec(dkb_params *out, const char *name, int scale, int64_t v);
/* A STRING, copied (at most DKB_PARAM_STRLEN - 1 bytes). */
void dkb__qgen_put_str(dkb_params *out, const char *name, const char *s);

#endif
