/* nondeterministic (core mode): no state survives a call any more, so this
 * candidate is stateless but not a function of its inputs alone: it reads
 * its output buffer before writing it, and when it finds the fill of the
 * check after timing (the harness poisons outputs with another byte then)
 * its answer is one ten-thousandth off. The first pass and every timed call
 * are right; the second check's answers differ from the first pass's.
 * Expected: nondeterministic. (It once counted its calls in spare bytes of
 * stdout's FILE, which the worker now puts back before every call.) */
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

int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {
    (void)env;
    dkb_cand_vec *revenue = dkb_cand_vec_find(out, "revenue");
    __int128 sum;
    int64_t hits;
    if (!revenue || q6_sum(in, &sum, &hits)) return 1;
    if (((const unsigned char *)revenue->data)[0] == 0x5A) sum += 1;   /* 0.0001 off */
    revenue->n = hits > 0;
    if (hits) ((__int128 *)revenue->data)[0] = sum;
    return 0;
}
