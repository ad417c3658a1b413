/* q06.core.c: an honest core-mode candidate for TPC-H Q6 (the README's
 * worked example).
 *
 * The baseline's prepare step hands over four lineitem columns and five
 * scalars in the columns' units; the baseline's core makes three masks, ands
 * them, compresses two columns, multiplies and sums. This candidate does the
 * same in one pass: each row is tested and, if it qualifies, its product is
 * added, with no intermediate vector. Exact: products are int64 (scale 2 x
 * scale 2 = scale 4), summed in int64 over blocks of rows and the blocks in
 * __int128, so no overflow at any scale factor.
 *
 *   in:  l_shipdate I32 (days), l_discount, l_quantity, l_extendedprice
 *        I64 (hundredths); ship_lo, ship_hi (days, inclusive), disc_lo,
 *        disc_hi (hundredths, inclusive), qty_lt (hundredths)
 *   out: revenue I128 scale 4, one element, or none when no row qualifies
 *        (SQL's sum over no rows is NULL)
 *
 * Evaluate: build/dkb eval tests/candidates/honest --data data/sf1 --mode core */
#include "dkb/candidate.h"

enum { BLOCK = 1 << 14 };  /* rows summed in int64 before going to __int128 */

int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {
    const dkb_cand_vec *ship = dkb_cand_vec_find(in, "l_shipdate");
    const dkb_cand_vec *disc = dkb_cand_vec_find(in, "l_discount");
    const dkb_cand_vec *qty = dkb_cand_vec_find(in, "l_quantity");
    const dkb_cand_vec *price = dkb_cand_vec_find(in, "l_extendedprice");
    const dkb_cand_scalar *ship_lo = dkb_cand_scalar_find(in, "ship_lo");
    const dkb_cand_scalar *ship_hi = dkb_cand_scalar_find(in, "ship_hi");
    const dkb_cand_scalar *disc_lo = dkb_cand_scalar_find(in, "disc_lo");
    const dkb_cand_scalar *disc_hi = dkb_cand_scalar_find(in, "disc_hi");
    const dkb_cand_scalar *qty_lt = dkb_cand_scalar_find(in, "qty_lt");
    dkb_cand_vec *revenue = dkb_cand_vec_find(out, "revenue");
    if (!ship || !disc || !qty || !price || !ship_lo || !ship_hi || !disc_lo || !disc_hi || !qty_lt ||
        !revenue)
        return 1;
    if (ship->type != DKB_CAND_I32 || disc->type != DKB_CAND_I64 || qty->type != DKB_CAND_I64 ||
        price->type != DKB_CAND_I64 || revenue->type != DKB_CAND_I128 ||
        revenue->scale != price->scale + disc->scale || revenue->cap < 1)
        return 2;

    const int32_t *s = ship->data;
    const int64_t *d = disc->data, *q = qty->data, *p = price->data;
    const int64_t n = ship->n;
    const int64_t slo = ship_lo->i, dlo = disc_lo->i, qlt = qty_lt->i;
    if (ship_hi->i < slo || disc_hi->i < dlo) { /* an empty range: no row, NULL */
        revenue->n = 0;
        return 0;
    }
    /* lo <= x <= hi as one unsigned compare: x - lo <= hi - lo */
    const uint64_t sw = (uint64_t)ship_hi->i - (uint64_t)slo, dw = (uint64_t)disc_hi->i - (uint64_t)dlo;
    const int64_t nblocks = (n + BLOCK - 1) / BLOCK;

    __int128 total = 0;
    int64_t hits = 0;
#pragma omp parallel num_threads(env->threads > 0 ? env->threads : 1)
    {
        __int128 my_total = 0;
        int64_t my_hits = 0;
#pragma omp for schedule(static)
        for (int64_t b = 0; b < nblocks; b++) {
            const int64_t lo = b * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
            int64_t sum = 0, cnt = 0;
            for (int64_t i = lo; i < hi; i++) {
                const int64_t keep = ((uint64_t)s[i] - (uint64_t)slo <= sw) &
                                     ((uint64_t)d[i] - (uint64_t)dlo <= dw) & (q[i] < qlt);
                sum += -keep & (p[i] * d[i]);
                cnt += keep;
            }
            my_total += sum;
            my_hits += cnt;
        }
#pragma omp critical
        {
            total += my_total;
            hits += my_hits;
        }
    }

    /* the output holds garbage on entry: set n and every element reported */
    revenue->n = hits > 0;
    if (hits > 0) ((__int128 *)revenue->data)[0] = total;
    return 0;
}
