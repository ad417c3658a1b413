/* q14.full.c: expert CPU candidate for TPC-H Q14 (Promotion Effect).
 *
 *   select 100.00 * sum(case when p_type like 'PROMO%' then l_extendedprice * (1 - l_discount) else 0 end)
 *          / sum(l_extendedprice * (1 - l_discount)) as promo_revenue
 *   from lineitem, part
 *   where l_partkey = p_partkey
 *     and l_shipdate >= date ':date' and l_shipdate < date ':date' + interval '1' month;
 *
 * Plan: one fused pass over lineitem: the month as one unsigned compare on
 * l_shipdate makes a vectorized byte mask per block; its few set bytes
 * become a list of rows, visited with their columns prefetched a few rows
 * ahead. A line in the month looks up its part's type code directly at
 * p_type[l_partkey - 1] (part keys are dense 1..N) and a 256-entry mask of
 * the type codes whose string starts with PROMO (the LIKE evaluated once on
 * the dictionary). Revenue is price * (100 - discount) at scale 4, summed
 * in int64 per block of rows (a block cannot overflow) and the blocks in
 * __int128 per thread; the two exact sums are turned into the float ratio
 * with the same operations as the baseline (one division). No line: NULL.
 *
 * Across ranks (DKB_CANDIDATE_RANKS): each rank scans its share of
 * lineitem (part is whole on every rank); the two exact sums, the count and
 * the error flag are summed over the ranks in one all-reduce; rank 0 writes.
 */
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_add_months, dkb_select_range_i32 */

/* work (rows) below which one thread does it all, as the baseline's backend */
enum { PAR_MIN = 262144 };

enum { BLOCK = 1 << 12 };

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *ship, *lpart, *price, *disc, *ptype;
    const dkb_cand_param *pdate;
    dkb_cand_res_col *out;
    if (DKB_BIND_COLS(db, "lineitem", "l_shipdate:i32 l_partkey:i32 l_extendedprice:dec2 l_discount:dec2", &ship,
                      &lpart, &price, &disc) ||
        DKB_BIND_COLS(db, "part", "p_type:dict", &ptype) || DKB_BIND_PARAMS(params, "date", &pdate) ||
        DKB_BIND_RES(res, "promo_revenue:float", &out) || res->cap < 1)
        return DKB_CAND_EINVAL;

    uint8_t promo[256] = {0};
    for (int c = 0; c < ptype->dict->size && c < 256; c++)
        promo[c] = ptype->dict->len[c] >= 5 && memcmp(ptype->dict->str[c], "PROMO", 5) == 0;
    const int32_t lo = (int32_t)pdate->i;
    const int64_t hi = dkb_add_months(pdate->i, 1); /* [lo, hi) */
    const uint8_t *ty = ptype->data; /* p_type codes by part */
    const uint32_t nparts = (uint32_t)ptype->n;
    const int threads = env->threads > 0 ? env->threads : 1;
    __int128 promo_sum = 0, total = 0;
    int64_t hits = 0;
    int bad = 0;
    /* the whole columns, or under a memory budget lineitem load by load: the
     * month's revenue, all and PROMO */
    static const char *const COLS[] = {"l_shipdate", "l_partkey", "l_extendedprice", "l_discount"};
    dkb_stream st;
    for (dkb_stream_begin(&st, db, env, 4, COLS); dkb_stream_next(&st);) {
        const int32_t *sd = st.cols[0].data, *pk = st.cols[1].data;
        const int64_t *pr = st.cols[2].data, *dc = st.cols[3].data;
        const int64_t n = st.cols[0].n, nblocks = (n + BLOCK - 1) / BLOCK;
        /* threads only for enough work (like the baseline): a region's barrier can wait
         * milliseconds for a second thread on a busy machine */
        const int nt = n < PAR_MIN ? 1 : threads;
#pragma omp parallel num_threads(nt) reduction(| : bad)
        {
            __int128 my_promo = 0, my_total = 0;
            int64_t my_hits = 0;
#pragma omp for schedule(dynamic, 16)
            for (int64_t b = 0; b < nblocks; b++) {
                const int64_t from = b * BLOCK, to = from + BLOCK < n ? from + BLOCK : n;
                int64_t sp = 0, sa = 0, h = 0;
                /* the month's rows of the block (a vectorized mask, then its few set bytes) */
                const int len = (int)(to - from);
                int32_t sel[BLOCK + 16];
                const int nsel = dkb_select_range_i32(sd + from, len, lo, hi, sel);
                /* the sparse rows' columns, prefetched a few rows ahead */
                for (int k = 0; k < nsel; k++) {
                    if (k + 8 < nsel) {
                        const int64_t f = from + sel[k + 8];
                        __builtin_prefetch(pk + f);
                        __builtin_prefetch(pr + f);
                        __builtin_prefetch(dc + f);
                    }
                    const int64_t i = from + sel[k];
                    const uint32_t p = (uint32_t)pk[i] - 1u;
                    if (p >= nparts) { bad = 1; continue; }
                    const int64_t rev = pr[i] * (100 - dc[i]);
                    sa += rev;
                    sp += promo[ty[p]] ? rev : 0;
                    h++;
                }
                my_promo += sp;
                my_total += sa;
                my_hits += h;
            }
#pragma omp critical
            {
                promo_sum += my_promo;
                total += my_total;
                hits += my_hits;
            }
        }
    }
    int rc = dkb_stream_end(&st);
    int64_t cnt[2] = {hits, bad};
    __int128 sums[2] = {promo_sum, total};
    if (!rc) rc = dkb_ranks_sum_mixed(env, cnt, 2, sums, 2);
    if (rc) return rc;
    hits = cnt[0], promo_sum = sums[0], total = sums[1];
    if (cnt[1]) return DKB_CAND_EINTERNAL;
    if (!dkb_ranks_writes(env, res)) return 0;
    res->nrows = 1;
    if (hits == 0) {
        out->f64[0] = 0;
        out->is_null[0] = 1;
        return 0;
    }
    /* as the baseline: (promo * 100.00 at scale 6) / (total at scale 4), in doubles */
    const double x = (double)(promo_sum * 10000) / 1e6, y = (double)total / 1e4;
    out->f64[0] = x / y;
    out->is_null[0] = 0;
    return 0;
}
