/* q06.full.c: expert CPU candidate for TPC-H Q6 (Forecasting Revenue Change).
 *
 *   select sum(l_extendedprice * l_discount) as revenue from lineitem
 *   where l_shipdate >= date ':date' and l_shipdate < date ':date' + interval '1' year
 *     and l_discount between :discount - 0.01 and :discount + 0.01
 *     and l_quantity < :quantity;
 *
 * Plan: one branch-free fused filter-aggregate pass. Each range test is one
 * unsigned compare (x - lo <= hi - lo); the three masks are ANDed and the
 * product (scale 4, < 2^34) added under the mask, so the loop vectorizes.
 * Blocks of 8192 rows sum in int64 (cannot overflow), blocks fold into a
 * per-thread __int128 and the threads' sums are added at the end: exact.
 * The parameters are converted to the columns' units exactly (a discount
 * at any scale; an empty sum is NULL).
 *
 * Across ranks (DKB_CANDIDATE_RANKS): each rank sums its share of
 * lineitem; the sum and the count are summed over the ranks in one
 * all-reduce; rank 0 writes the row. */
#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_sum_mixed, dkb_ranks_writes */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_add_years, dkb_put_dec, dkb_rescale */

/* below this many rows one thread is faster than waking a team */
enum { PAR_MIN = 1 << 17 };

enum { BLOCK = 8192 };

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: each on its share of lineitem */

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *ship, *disc, *qty, *price;
    const dkb_cand_param *date, *discount, *quantity;
    dkb_cand_res_col *revenue;
    if (DKB_BIND_COLS(db, "lineitem", "l_shipdate:i32 l_discount:i64 l_quantity:i64 l_extendedprice:i64", &ship, &disc,
                      &qty, &price) ||
        DKB_BIND_PARAMS(params, "date discount quantity", &date, &discount, &quantity) ||
        DKB_BIND_RES(res, "revenue:dec", &revenue) || res->cap < 1)
        return DKB_CAND_EINVAL;

    const int64_t slo = date->i, shi = dkb_add_years(date->i, 1) - 1;
    int64_t centre, cent, qmax;
    if (!dkb_rescale(discount->i, discount->scale, disc->scale, &centre) || !dkb_rescale(1, 2, disc->scale, &cent) ||
        !dkb_rescale(quantity->i, 0, qty->scale, &qmax))
        return DKB_CAND_EINVAL;
    const int64_t dlo = centre - cent, dhi = centre + cent, qlt = qmax; /* locals the scan reads */
    const int out_scale = price->scale + disc->scale;
    if (revenue->scale < out_scale) return DKB_CAND_EINVAL;
    if (shi < slo || dhi < dlo) { /* empty window: nothing qualifies */
        res->nrows = 1;
        revenue->dec[0] = 0;
        revenue->is_null[0] = 1;
        return 0;
    }

    /* the whole columns, or under a memory budget lineitem load by load */
    const uint64_t sw = (uint64_t)(shi - slo), dw = (uint64_t)(dhi - dlo);
    const int nt = env->threads > 0 ? env->threads : 1;
    __int128 total = 0;
    int64_t hits = 0;
    static const char *const COLS[] = {"l_shipdate", "l_discount", "l_quantity", "l_extendedprice"};
    dkb_stream st;
    for (dkb_stream_begin(&st, db, env, 4, COLS); dkb_stream_next(&st);) {
        const int32_t *s = st.cols[0].data;
        const int64_t *d = st.cols[1].data, *q = st.cols[2].data, *p = st.cols[3].data;
        const int64_t n = st.cols[0].n, nblocks = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel num_threads(nt) if(n >= PAR_MIN)
        {
            __int128 my_total = 0;
            int64_t my_hits = 0;
#pragma omp for schedule(dynamic, 8)
            for (int64_t b = 0; b < nblocks; b++) {
                const int64_t lo = b * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
                int64_t sum = 0, cnt = 0;
                for (int64_t i = lo; i < hi; i++) {
                    const int64_t keep = ((uint64_t)((int64_t)s[i] - slo) <= sw) &
                                         ((uint64_t)(d[i] - dlo) <= dw) & (q[i] < qlt);
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
    }
    int rc = dkb_stream_end(&st);
    if (!rc) rc = dkb_ranks_sum_mixed(env, &hits, 1, &total, 1);
    if (rc || !dkb_ranks_writes(env, res)) return rc;
    res->nrows = 1;
    dkb_put_dec(revenue, 0, hits > 0 ? total : 0, out_scale);
    revenue->is_null[0] = hits == 0;
    return 0;
}
