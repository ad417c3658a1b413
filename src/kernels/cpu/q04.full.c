/* q04.full.c: expert CPU candidate for TPC-H Q4 (Order Priority Checking).
 *
 *   select o_orderpriority, count(*) as order_count from orders
 *   where o_orderdate >= date ':date' and o_orderdate < date ':date' + interval '3' month
 *     and exists (select * from lineitem
 *                 where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)
 *   group by o_orderpriority order by o_orderpriority;
 *
 * Plan: a partition-local merge of orders and lineitem. dbgen (and the
 * store) keeps lineitem grouped by orderkey in the same ascending order as
 * orders, so the orders are cut into chunks, each chunk's first lineitem is
 * found by binary search on l_orderkey, and each chunk reads its
 * orders once. The EXISTS is decided per order on its own run of line items
 * (stopping at the first late one); the run is only skipped, never read,
 * when the order is outside the window. Counts per priority code are kept
 * per chunk and added at the end (exact, deterministic); codes are in
 * string order, so the groups come out sorted.
 *
 * Join mechanics (the toolkit's walk): each chunk of orders (taken by the
 * threads as they come) selects the orders of the window branch-free
 * (dkb_select_range_i32, blocks of 512), then gallops forward in l_orderkey
 * to each selected order's run of items (dkb_walk_to), prefetching the
 * probable run start of the order 6 selections ahead (dkb_walk_guess); the
 * runs of other orders are never read. Orderkeys are int32 (the store
 * widens them only above SF ~357).
 *
 * Across ranks (DKB_CANDIDATE_RANKS): orders and lineitem are
 * co-partitioned by orderkey, so each rank finds its orders' late lines
 * locally; the counts per priority are summed over the ranks in one
 * all-reduce; rank 0 writes.
 */
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_add_months, dkb_put_dict, dkb_select_range_i32,
                              dkb_walk_init, dkb_walk_guess, dkb_walk_to */

/* below this many rows one thread is faster than waking a team */
enum { PAR_MIN = 1 << 17 };

enum { SUB = 512, AHEAD = 6 }; /* orders per selection block; prefetch distance */

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: orders and lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *okey, *odate, *oprio, *lkey, *lcommit, *lreceipt;
    const dkb_cand_param *date;
    dkb_cand_res_col *c_prio, *c_count;
    if (DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_orderdate:i32 o_orderpriority:dict", &okey, &odate, &oprio) ||
        DKB_BIND_COLS(db, "lineitem", "l_orderkey:i32 l_commitdate:i32 l_receiptdate:i32", &lkey, &lcommit,
                      &lreceipt) ||
        DKB_BIND_PARAMS(params, "date", &date) ||
        DKB_BIND_RES(res, "o_orderpriority:str order_count:int", &c_prio, &c_count))
        return DKB_CAND_EINVAL;

    const int32_t lo_day = (int32_t)date->i, hi_day = (int32_t)dkb_add_months(date->i, 3); /* [lo, hi) */
    const int64_t no = okey->n; /* the whole table's rows (also under a budget) */
    const int nt = env->threads > 0 ? env->threads : 1;
    const int64_t nchunks = no < 64 ? 1 : (int64_t)nt * 16;
    int64_t *counts = calloc((size_t)nchunks * 256, sizeof(int64_t));
    if (!counts) return DKB_CAND_ENOMEM;

    /* the whole columns, or under a memory budget orders and lineitem load by
     * load (co-partitioned by orderkey): the late orders into the chunks' counts */
    static const char *const COLS[] = {"o_orderkey", "o_orderdate",  "o_orderpriority",
                                       "l_orderkey", "l_commitdate", "l_receiptdate"};
    dkb_stream st;
    for (dkb_stream_begin(&st, db, env, 6, COLS); dkb_stream_next(&st);) {
        const int32_t *ok = st.cols[0].data, *od = st.cols[1].data, *lk = st.cols[3].data;
        const int32_t *cd = st.cols[4].data, *rd = st.cols[5].data;
        const uint8_t *pr = st.cols[2].data;
        const int64_t nol = st.cols[0].n, nll = st.cols[3].n;
        /* at most the whole tables' chunks, which counts has room for */
        const int64_t nch = nol < 64 ? 1 : nchunks;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if(nol >= PAR_MIN)
        for (int64_t c = 0; c < nch; c++) {
            dkb_walk w; /* this chunk's orders [o0, o1) and their line items */
            int64_t o0, o1;
            if (!dkb_walk_init(&w, ok, nol, lk, nll, c, nch, &o0, &o1)) continue;
            int64_t *cnt = counts + c * 256;
            int32_t sel[SUB + 16];
            for (int64_t b = o0; b < o1; b += SUB) {
                const int ns = dkb_select_range_i32(od + b, (int)(b + SUB < o1 ? SUB : o1 - b), lo_day, hi_day, sel);
                for (int x = 0; x < ns; x++) {
                    const int64_t g = dkb_walk_guess(&w, sel, ns, x, AHEAD); /* a later order's run, probably */
                    if (g >= 0) __builtin_prefetch(&lk[g]), __builtin_prefetch(&cd[g]), __builtin_prefetch(&rd[g]);
                    const int64_t o = b + sel[x];
                    int64_t j;
                    const int64_t e = dkb_walk_to(&w, ok[o], &j);
                    int late = 0;
                    for (; j < e && !late; j++) late = cd[j] < rd[j];
                    cnt[pr[o]] += late;
                }
            }
        }
    }
    const int rc = dkb_stream_end(&st);
    if (rc) {
        free(counts);
        return rc;
    }

    int64_t tot[256] = {0};
    for (int code = 0; code < oprio->dict->size && code < 256; code++)
        for (int64_t c = 0; c < nchunks; c++) tot[code] += counts[c * 256 + code];
    const int mrc = dkb_ranks_sum_i64(env, tot, 256);
    if (mrc || !dkb_ranks_writes(env, res)) {
        free(counts);
        return mrc;
    }
    int64_t r = 0;
    for (int code = 0; code < oprio->dict->size; code++) {
        const int64_t total = code < 256 ? tot[code] : 0;
        if (!total) continue;
        if (r >= res->cap || dkb_put_dict(c_prio, r, oprio->dict, code)) {
            free(counts);
            return DKB_CAND_ECAP;
        }
        c_count->i64[r] = total;
        c_count->is_null[r] = 0;
        r++;
    }
    free(counts);
    res->nrows = r;
    return 0;
}
