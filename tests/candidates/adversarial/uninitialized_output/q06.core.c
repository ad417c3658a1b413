/* uninitialized_output (core mode): accumulates straight into the output
 * element without zeroing it first, so the answer is whatever the buffer held
 * plus the sum. Correct only if the harness handed over a zeroed buffer; it
 * poisons outputs. Expected: wrong_answer. */
#include "dkb/candidate.h"


int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {
    (void)env;
    dkb_cand_vec *revenue = dkb_cand_vec_find(out, "revenue");
    const dkb_cand_vec *ship = dkb_cand_vec_find(in, "l_shipdate");
    const dkb_cand_vec *disc = dkb_cand_vec_find(in, "l_discount");
    const dkb_cand_vec *qty = dkb_cand_vec_find(in, "l_quantity");
    const dkb_cand_vec *price = dkb_cand_vec_find(in, "l_extendedprice");
    const dkb_cand_scalar *slo = dkb_cand_scalar_find(in, "ship_lo"), *shi = dkb_cand_scalar_find(in, "ship_hi");
    const dkb_cand_scalar *dlo = dkb_cand_scalar_find(in, "disc_lo"), *dhi = dkb_cand_scalar_find(in, "disc_hi");
    const dkb_cand_scalar *qlt = dkb_cand_scalar_find(in, "qty_lt");
    if (!revenue || !ship || !disc || !qty || !price || !slo || !shi || !dlo || !dhi || !qlt) return 1;
    const int32_t *s = ship->data;
    const int64_t *d = disc->data, *q = qty->data, *p = price->data;
    __int128 *acc = revenue->data;       /* bug: never set to 0 */
    revenue->n = 1;
    for (int64_t i = 0; i < ship->n; i++)
        if (s[i] >= slo->i && s[i] <= shi->i && d[i] >= dlo->i && d[i] <= dhi->i && q[i] < qlt->i)
            acc[0] += (__int128)p[i] * d[i];
    return 0;
}
