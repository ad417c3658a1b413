/* q15.full.c: expert CPU candidate for TPC-H Q15 (Top Supplier).
 *
 *   with revenue0 (supplier_no, total_revenue) as (
 *       select l_suppkey, sum(l_extendedprice * (1 - l_discount)) from lineitem
 *       where l_shipdate >= date ':date' and l_shipdate < date ':date' + interval '3' month
 *       group by l_suppkey)
 *   select s_suppkey, s_name, s_address, s_phone, total_revenue
 *   from supplier, revenue0
 *   where s_suppkey = supplier_no and total_revenue = (select max(total_revenue) from revenue0)
 *   order by s_suppkey;
 *
 * Plan: one fused pass over lineitem: the window as one unsigned compare
 * makes a vectorized byte mask per block; its few set bytes become a list
 * of rows, visited with their columns prefetched a few rows ahead. Each
 * adds its revenue (scale 4, exact int64: one line is below 2^34 and a
 * supplier has a few hundred lines at any scale factor) into the thread's
 * array indexed by l_suppkey - 1 (supplier keys are dense 1..N), with a
 * "seen" flag per supplier (the group exists). The arrays are merged per
 * supplier in __int128, the maximum taken exactly, and the suppliers equal
 * to it come out in key order, their columns read at row suppkey - 1.
 *
 * Across ranks (DKB_CANDIDATE_RANKS): lineitem is split (supplier whole
 * on every rank) and a supplier's lines are on every rank, so each rank
 * sums its lines per supplier, the per-supplier exact sums, seen flags and
 * the error flag are summed over the ranks in one all-reduce of __int128
 * over the dense suppkeys, and the maximum is taken over the merged sums;
 * rank 0 writes.
 */
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_add_months, dkb_select_range_i32, dkb_put_dec,
                                       dkb_put_strcol */

/* work (rows) below which one thread does it all, as the baseline's backend */
enum { PAR_MIN = 262144, BLOCK = 1 << 13 };

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *ship, *lsupp, *price, *disc, *skey, *sname, *saddr, *sphone;
    const dkb_cand_param *pdate;
    dkb_cand_res_col *c_key, *c_name, *c_addr, *c_phone, *c_rev;
    if (DKB_BIND_COLS(db, "lineitem", "l_shipdate:i32 l_suppkey:i32 l_extendedprice:dec2 l_discount:dec2", &ship,
                      &lsupp, &price, &disc) ||
        DKB_BIND_COLS(db, "supplier", "s_suppkey:i32 s_name s_address s_phone", &skey, &sname, &saddr, &sphone) ||
        DKB_BIND_PARAMS(params, "date", &pdate) ||
        DKB_BIND_RES(res, "s_suppkey:int s_name:str s_address:str s_phone:str total_revenue:dec4", &c_key, &c_name,
                     &c_addr, &c_phone, &c_rev))
        return DKB_CAND_EINVAL;

    const int64_t ns = skey->n, n = ship->n;
    /* threads only for enough work (like the baseline): a region's barrier can wait
     * milliseconds for a second thread on a busy machine */
    const int nt = n < PAR_MIN ? 1 : (env->threads > 0 ? env->threads : 1);
    const int32_t lo = (int32_t)pdate->i;
    const int64_t hi = dkb_add_months(pdate->i, 3); /* [lo, hi) */
    int64_t *rev = malloc((size_t)nt * (size_t)(ns + 1) * sizeof(int64_t));
    uint8_t *seen = malloc((size_t)nt * (size_t)(ns + 1));
    __int128 *total = malloc((size_t)(ns + 1) * sizeof(__int128));
    if (!rev || !seen || !total) { free(rev); free(seen); free(total); return DKB_CAND_ENOMEM; }
    memset(rev, 0, (size_t)nt * (size_t)(ns + 1) * sizeof(int64_t)); /* all nt: the team may be smaller */
    memset(seen, 0, (size_t)nt * (size_t)(ns + 1));
    /* the whole columns, or under a memory budget lineitem load by load: the
     * window's revenue per supplier, per thread */
    static const char *const COLS[] = {"l_shipdate", "l_suppkey", "l_extendedprice", "l_discount"};
    int bad = 0;
    dkb_stream st;
    for (dkb_stream_begin(&st, db, env, 4, COLS); dkb_stream_next(&st);) {
        const int32_t *sd = st.cols[0].data, *sk = st.cols[1].data;
        const int64_t *pr = st.cols[2].data, *dc = st.cols[3].data;
        const int64_t nrow = st.cols[0].n, nblocks = (nrow + BLOCK - 1) / BLOCK;
        /* this load's rows decide the team (at most the nt the arrays have room for) */
        const int team = nrow < PAR_MIN ? 1 : nt;

#pragma omp parallel num_threads(team) reduction(| : bad)
        {
            int tid = 0;
#ifdef _OPENMP
            tid = omp_get_thread_num();
#endif
            int64_t *my = rev + (size_t)tid * (size_t)(ns + 1);
            uint8_t *my_seen = seen + (size_t)tid * (size_t)(ns + 1);
#pragma omp for schedule(dynamic, 8)
            for (int64_t b = 0; b < nblocks; b++) {
                /* the window's rows of the block (a vectorized mask, then its few set bytes) */
                const int64_t from = b * BLOCK, to = from + BLOCK < nrow ? from + BLOCK : nrow;
                const int len = (int)(to - from);
                int32_t sel[BLOCK + 16];
                const int nsel = dkb_select_range_i32(sd + from, len, lo, hi, sel);
                /* the sparse rows' columns, prefetched a few rows ahead */
                for (int k = 0; k < nsel; k++) {
                    if (k + 8 < nsel) {
                        const int64_t f = from + sel[k + 8];
                        __builtin_prefetch(sk + f);
                        __builtin_prefetch(pr + f);
                        __builtin_prefetch(dc + f);
                    }
                    const int64_t i = from + sel[k];
                    const uint32_t s = (uint32_t)sk[i] - 1u;
                    if (s >= (uint64_t)ns) { bad = 1; continue; }
                    my[s] += pr[i] * (100 - dc[i]);
                    my_seen[s] = 1;
                }
            }
        }
    }
    const int rc = dkb_stream_end(&st);
    if (rc) { free(rev); free(seen); free(total); return rc; }

    /* merge per supplier; the maximum over the suppliers seen */
    __int128 best = 0;
    int any = 0;
    for (int64_t s = 0; s < ns; s++) {
        __int128 t = 0;
        int was = 0;
        for (int k = 0; k < nt; k++) {
            t += rev[(size_t)k * (size_t)(ns + 1) + (size_t)s];
            was |= seen[(size_t)k * (size_t)(ns + 1) + (size_t)s];
        }
        total[s] = t;
        seen[s] = (uint8_t)was; /* thread 0's flags, now the merged ones */
        if (was && (!any || t > best)) best = t, any = 1;
    }
    if (dkb_ranks_many(env)) { /* the ranks' sums per supplier, summed; the maximum again */
        __int128 *w = malloc(((size_t)ns * 2 + 1) * sizeof *w);
        if (!w) { free(rev); free(seen); free(total); return DKB_CAND_ENOMEM; }
        for (int64_t s = 0; s < ns; s++) w[s] = total[s], w[ns + s] = seen[s];
        w[2 * ns] = bad;
        const int mrc = dkb_ranks_sum_i128(env, w, ns * 2 + 1);
        bad = w[2 * ns] != 0, any = 0, best = 0;
        for (int64_t s = 0; s < ns; s++) {
            total[s] = w[s], seen[s] = w[ns + s] != 0;
            if (seen[s] && (!any || total[s] > best)) best = total[s], any = 1;
        }
        free(w);
        if (mrc || !dkb_ranks_writes(env, res)) {
            free(rev); free(seen); free(total);
            return mrc ? mrc : bad ? DKB_CAND_EINTERNAL : 0;
        }
    }
    if (bad) { free(rev); free(seen); free(total); return DKB_CAND_EINTERNAL; }
    int64_t row = 0;
    const int32_t *keys = skey->data;
    for (int64_t s = 0; any && s < ns; s++) {
        if (!seen[s] || total[s] != best) continue;
        if (keys[s] != s + 1 || row >= res->cap || dkb_put_strcol(c_name, row, sname, s) ||
            dkb_put_strcol(c_addr, row, saddr, s) || dkb_put_strcol(c_phone, row, sphone, s)) {
            bad = 1;
            break;
        }
        c_key->i64[row] = keys[s];
        c_key->is_null[row] = 0;
        dkb_put_dec(c_rev, row, total[s], 4);
        row++;
    }
    free(rev);
    free(seen);
    free(total);
    if (bad) return DKB_CAND_EINTERNAL;
    res->nrows = row;
    return 0;
}
