/* static_cache (core mode): remembers its answer in static variables, keyed
 * on nothing, and returns it on every later call; computing it is slow (the
 * plain scan 400 times over). Because the harness restores the candidate's
 * static memory before every call, the cache is always empty: every call
 * computes, so the answers are right for every seed and the timing is the
 * slow path's. Expected: ok, and slow (speedup < 1: not counted). Were
 * statics not restored, the cached seed-0 answer would come back for the
 * other seeds (wrong_answer) and the timed calls would be nearly free. */
#include "dkb/candidate.h"

/* Plain, correct Q6 core: the sum of l_extendedprice * l_discount (scale 4)
 * over the rows that qualify, and how many qualify. 0, or 1 when an input
 * is missing. */
static int q6_sum(const dkb_cand_set *in, __int128 *sum, int64_t *hits) {
    const dkb_cand_vec *ship = dkb_cand_vec_find(in, "l_shipdate");
    const dkb_cand_vec *disc = dkb_cand_vec_find(in, "l_discount");
    const dkb_cand_vec *qty = dkb_cand_vec_find(in, "l_quantity");
    const dkb_cand_vec *price = dkb_cand_vec_find(in, "l_extendedprice");
    const dkb_cand_scalar *slo = dkb_cand_scalar_find(in, "ship_lo"), *shi = dkb_cand_scalar_find(in, "ship_hi");
    const dkb_cand_scalar *dlo = dkb_cand_scalar_find(in, "disc_lo"), *dhi = dkb_cand_scalar_find(in, "disc_hi");
    const dkb_cand_scalar *qlt = dkb_cand_scalar_find(in, "qty_lt");
    if (!ship || !disc || !qty || !price || !slo || !shi || !dlo || !dhi || !qlt) return 1;
    const int32_t *s = ship->data;
    const int64_t *d = disc->data, *q = qty->data, *p = price->data;
    __int128 t = 0;
    int64_t h = 0;
    for (int64_t i = 0; i < ship->n; i++)
        if (s[i] >= slo->i && s[i] <= shi->i && d[i] >= dlo->i && d[i] <= dhi->i && q[i] < qlt->i) {
            t += (__int128)p[i] * d[i];
            h++;
        }
    *sum = t;
    *hits = h;
    return 0;
}

/* The slow path: the plain scan done REPEAT times over (an asm barrier
 * makes each pass really run). */
enum { REPEAT = 400 };

static int slow_sum(const dkb_cand_set *in, __int128 *sum, int64_t *hits) {
    for (int r = 0; r < REPEAT; r++) {
        __asm__ volatile("" ::: "memory");
        if (q6_sum(in, sum, hits)) return 1;
    }
    return 0;
}

static int cached;
static __int128 cached_sum;
static int64_t cached_hits;

int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {
    (void)env;
    dkb_cand_vec *revenue = dkb_cand_vec_find(out, "revenue");
    if (!revenue) return 1;
    if (!cached) {
        if (slow_sum(in, &cached_sum, &cached_hits)) return 1;
        cached = 1;
    }
    revenue->n = cached_hits > 0;
    if (cached_hits) ((__int128 *)revenue->data)[0] = cached_sum;
    return 0;
}
